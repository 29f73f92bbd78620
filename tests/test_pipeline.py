"""The whole test-set pipeline on the embedded corpus, with the real SANY and TLC:
ingest -> rename -> verify -> identifiers -> load -> report, plus `alias query`."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import os
import shutil
from pathlib import Path

import pandas as pd
import yaml
import pytest
from click.testing import CliRunner

from alias.corpus import verify as verify_mod
from alias.stages import identifiers, ingest, load, rename, report, verify
from conftest import embedded_config

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.tlc


def _config(**overrides):
    return embedded_config({"tla.timeout_s": 60, "tla.memory_mb": 512, "tla.parallel": 2} | overrides)


def _digest(folder: Path) -> dict[str, str]:
    return {str(f.relative_to(folder)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(folder.rglob("*")) if f.is_file()}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A working directory in which every stage has run once on the embedded corpus."""
    wd = tmp_path_factory.mktemp("pipeline")
    shutil.copytree(REPO / "sql", wd / "sql")
    old = os.getcwd()
    os.chdir(wd)
    try:
        c = _config()
        summary = {m.NAME: m.run(c, c.paths) for m in (ingest, rename, verify, identifiers, load, report)}
        yield wd, c, summary
    finally:
        os.chdir(old)


def test_every_embedded_task_enters_the_test_set(workdir):
    wd, _, summary = workdir
    ts = pd.read_parquet(wd / "data/verify/test_set.parquet")
    assert summary["verify"]["test_set"] == 6, ts[["task_id", "reason", "detail"]]
    assert ts.in_test_set.all()
    # renamed copies keep the TLC result, distinct states and depth of the originals
    assert (ts.original_kind == ts.renamed_kind).all()
    assert (ts.original_distinct_states == ts.renamed_distinct_states).all()
    assert (ts.original_depth == ts.renamed_depth).all()
    # and the originals match the manifest's numbers
    assert ts.manifest_match.all()
    clock = ts.set_index("task_id").loc["Clock.Clock.Clock"]
    assert (clock.original_distinct_states, clock.original_depth) == (48, 48)


def test_tlc_runs_are_recorded_with_logs(workdir):
    wd, _, _ = workdir
    runs = pd.read_parquet(wd / "data/verify/tlc_runs.parquet")
    assert len(runs) == 6 * 4  # SANY + TLC, original + renamed
    assert set(runs.tool) == {"sany", "tlc"} and set(runs.condition) == {"original", "random"}
    assert runs.run_key.str.len().eq(64).all() and runs.run_key.is_unique
    assert runs.tool_version.str.match(r"TLC2 Version (2\.15 |2026\.)").all()
    for log in runs.log_path:
        assert (wd / log).exists()
    assert runs[runs.tool == "sany"].ok_strict.all()


def test_rename_stage_is_byte_identical_on_rerun(workdir):
    wd, p, _ = workdir
    before = _digest(wd / "data/rename")
    rename.run(p, p.paths)  # the fixture ran with the relative paths, in wd
    assert _digest(wd / "data/rename") == before


def test_identifiers_and_hidden_names(workdir):
    wd, _, summary = workdir
    ids = pd.read_parquet(wd / "data/identifiers/identifiers.parquet")
    assert set(ids.category) <= {"domain", "convention", "abbreviation"}
    assert (ids.old.str.len() == ids.new.str.len()).all()
    req = pd.read_parquet(wd / "data/identifiers/required_names.parquet")
    clock = req[req.task_id == "Clock.Clock.Clock"]
    assert len(clock) > 0 and not clock.hidden.any()  # its description states every name
    inv = req[req.task_id == "Inventory.Inventory.Inventory"].set_index("name")
    assert bool(inv.loc["TypeOK", "hidden"])
    assert not bool(inv.loc["Capacity", "hidden"]) and inv.loc["Capacity", "cfg_kind"] == "constant"
    assert not set(req.name) & {"Init", "Next", "Spec"}


def test_store_answers_the_issue_queries(workdir):
    wd, _, _ = workdir
    from alias.store.db import query

    db = wd / "data/alias.duckdb"
    assert query("SELECT count(*) AS n FROM v_test_set", db).n[0] == 6
    med = query("SELECT median(n_renamed) AS m FROM v_identifiers_per_task", db).m[0]
    ids = pd.read_parquet(wd / "data/identifiers/identifiers.parquet")
    assert med == ids.groupby("task_id").size().median()
    cats = query("SELECT category, n FROM v_identifier_categories", db).set_index("category").n
    assert cats.sum() == len(ids)
    n_hidden = query("SELECT count(*) AS n FROM v_hidden_names_per_task WHERE n_hidden > 0", db).n[0]
    assert n_hidden == 5  # every embedded task but Clock has a hidden required name


def test_report_files_and_metrics(workdir):
    wd, c, _ = workdir
    metrics = json.loads((wd / "reports/metrics.json").read_text())
    assert metrics["test_set_tasks"] == 6
    assert metrics["tasks_with_hidden_name"] == 5
    k1 = (wd / "reports/table_K1.md").read_text()
    assert "Pass SANY and TLC after CIR (test set) | 6 |" in k1
    c1 = (wd / "reports/table_C1.md").read_text()
    assert "| domain |" in c1 and "| total |" in c1
    # every report file dvc.yaml declares is written (tables, figures, plot data)
    stage = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]["report"]
    declared = [o if isinstance(o, str) else next(iter(o)) for k in ("outs", "metrics") for o in stage.get(k, [])]
    declared = [re.sub(r"\$\{paths\.(\w+)\}", lambda m: getattr(c.paths, m.group(1)).as_posix(), d) for d in declared]
    assert len(declared) > 20
    for rel in declared:
        assert (wd / rel).is_file() and (wd / rel).stat().st_size > 0, rel
    assert metrics["known_name_tasks_fixed"] == 1          # Peterson's algorithm
    assert "no data" in (wd / "reports/table_V1.md").read_text()   # no model samples yet


def test_cli_query_prints_a_table(workdir):
    wd, _, _ = workdir
    from alias.cli import main

    res = CliRunner().invoke(main, ["query", "SELECT count(*) AS tasks FROM v_test_set",
                                    "--db", str(wd / "data/alias.duckdb")])
    assert res.exit_code == 0, res.output
    assert "tasks" in res.output and "6" in res.output
    bad = CliRunner().invoke(main, ["query", "SELECT nope FROM v_test_set", "--db", str(wd / "data/alias.duckdb")])
    assert bad.exit_code != 0 and "nope" in bad.output
    empty = CliRunner().invoke(main, ["query", "  ", "--db", str(wd / "data/alias.duckdb")])
    assert empty.exit_code == 1 and "empty SQL" in empty.output
    csv = CliRunner().invoke(main, ["query", "SELECT task_id FROM v_test_set ORDER BY 1", "--csv",
                                    "--db", str(wd / "data/alias.duckdb")])
    assert csv.exit_code == 0 and csv.output.splitlines()[:2] == ["task_id", "BoundedBuffer.BoundedBuffer.BoundedBuffer"]


def test_timeout_and_crash_lose_no_rows(workdir, tmp_path, monkeypatch):
    """A TLC timeout on one task and a crash of another leave every other row intact."""
    wd, p, _ = workdir
    out = tmp_path / "verify"
    # a task whose state space cannot be explored in 8 s
    tasks = pd.read_parquet(wd / "data/ingest/tasks.parquet")
    mods = pd.read_parquet(wd / "data/ingest/modules.parquet")
    big = ("---- MODULE Big ----\nEXTENDS Naturals\nVARIABLES a, b, c\n"
           "Init == a = 0 /\\ b = 0 /\\ c = 0\n"
           "Next == \\/ a' = (a + 1) % 100000 /\\ UNCHANGED <<b, c>>\n"
           "        \\/ b' = (b + 1) % 100000 /\\ UNCHANGED <<a, c>>\n"
           "        \\/ c' = (c + 1) % 1000 /\\ UNCHANGED <<a, b>>\n====\n")
    extra = tasks.iloc[0].copy()
    extra["task_id"], extra["system_module"], extra["model_module"] = "Big.Big.Big", "Big", "Big"
    extra["wrapper_module"], extra["cfg_text"] = None, "INIT Init\nNEXT Next\n"
    ing = tmp_path / "ingest"
    ing.mkdir()
    pd.concat([tasks, extra.to_frame().T]).to_parquet(ing / "tasks.parquet")
    pd.concat([mods, pd.DataFrame([{"task_id": "Big.Big.Big", "module": "Big", "role": "system",
                                    "path": "x", "text": big, "sha256": "0"}])]).to_parquet(ing / "modules.parquet")
    # a crash: the JVM of one task dies at once (java replaced by /bin/false), and the
    # checking code of another raises
    real_check = verify_mod.check_copy

    def flaky(copy, config, logs, seed=None):
        if copy.main == "Inventory":
            return real_check(copy, dataclasses.replace(config, java="/bin/false"), logs, seed)
        if copy.main == "Clock":
            raise RuntimeError("simulated failure in the checking code")
        return real_check(copy, config, logs, seed)

    monkeypatch.setattr(verify_mod, "check_copy", flaky)
    c2 = _config(**{"tla.timeout_s": 8, "tla.parallel": 1})  # one thread: the patched check_copy applies
    paths = dataclasses.replace(c2.paths, ingest=ing, rename=wd / "data/rename", verify=out)
    summary = verify.run(c2, paths)
    ts = pd.read_parquet(out / "test_set.parquet").set_index("task_id")
    assert len(ts) == 7
    assert ts.loc["Big.Big.Big", "reason"] == "tlc_original_timeout"
    assert ts.loc["Inventory.Inventory.Inventory", "reason"] == "sany_original_crash"
    assert ts.loc["Clock.Clock.Clock", "reason"] == "verify_error"
    assert "simulated failure" in ts.loc["Clock.Clock.Clock", "detail"]
    assert summary["test_set"] == 4
    assert ts.loc[["BoundedBuffer.BoundedBuffer.BoundedBuffer", "Peterson.Peterson.Peterson"], "in_test_set"].all()
    runs = pd.read_parquet(out / "tlc_runs.parquet")
    assert runs[runs.task_id == "Inventory.Inventory.Inventory"].kind.tolist() == ["crash"]


@pytest.mark.corpus
def test_real_corpus_rename_stage_twice_identical_and_clean(corpus_root, deps_dirs, tmp_path):
    """On the real corpus: the rename stage is byte-identical on re-run, every task
    renames, and the leftover scan finds no original author identifier in any module."""
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        c = _config(**{"corpus.path": str(corpus_root),
                       "corpus.descriptions": str(corpus_root.parent / "tlabench" / "TLA_Description.json"),
                       "corpus.library": list(deps_dirs), "corpus.max_expected_runtime_s": 30})
        ingest.run(c, c.paths)
        first = rename.run(c, c.paths)
        digest = _digest(tmp_path / "data/rename")
        rename.run(c, c.paths)
        assert _digest(tmp_path / "data/rename") == digest
    finally:
        os.chdir(old)
    rt = pd.read_parquet(tmp_path / "data/rename/renamed_tasks.parquet")
    assert first["tasks"] >= 100 and first["errors"] == 0, rt[rt.status != "ok"][["task_id", "error"]]
    assert (rt.n_leftover == 0).all()
    rmap = pd.read_parquet(tmp_path / "data/rename/rename_map.parquet")
    assert (rmap.old.str.len() == rmap.new.str.len()).all()
    assert not (rmap.old == rmap.new).any()
    # renamed files exist for every module row and carry the new module name in their header
    rmods = pd.read_parquet(tmp_path / "data/rename/renamed_modules.parquet")
    from alias.tla.syntax import module_info

    for r in rmods.itertuples():
        assert module_info(r.text).name == r.module


def test_grade_file_prints_the_verdicts_of_an_output(workdir, tmp_path):
    """``alias-cir grade-file`` on the built store: the reference in a Markdown fence passes
    all three grades with its distinct states; a broken copy fails with TLC's error text."""
    wd, c, _ = workdir
    from alias.cli import main

    ref = (REPO / "alias/corpus/embedded/specifications/Clock/Clock.tla").read_text()
    good = tmp_path / "good.md"
    good.write_text("Here is the spec:\n```tla\n" + ref + "```\n")
    res = CliRunner().invoke(main, ["grade-file", str(good), "--task", "Clock.Clock.Clock", "--json",
                                    "--store", str(wd / "data/alias.duckdb"), "--params", str(REPO / "params.yaml")])
    assert res.exit_code == 0, res.output
    verdicts = {v["grade"]: v for v in json.loads(res.output)}
    assert [verdicts[g]["passed"] for g in ("parse", "name", "behavior")] == [True, True, True]
    assert verdicts["name"]["distinct_states"] == 48 and verdicts["name"]["tlc_kind"] == "success"
    assert verdicts["behavior"]["mapping"]["variables"] == {"hr": "hr", "qtr": "qtr"}
    assert verdicts["name"]["cfg_changes"] == [] and verdicts["name"]["error_text"] is None
    res = CliRunner().invoke(main, ["grade-file", str(good), "--task", "Clock.Clock.Clock", "--json", "--grades",
                                    "parse,name,behavior,tlabench", "--store", str(wd / "data/alias.duckdb"),
                                    "--params", str(REPO / "params.yaml")])
    assert res.exit_code == 0, res.output
    every = json.loads(res.output)
    assert [v["grade"] for v in every] == ["parse", "name", "behavior", "tlabench"]
    assert [v["passed"] for v in every] == [True] * 4  # TLA+-Bench's procedure: SANY ignores the prose
    assert every[3]["distinct_states"] == 48 and every[3]["tlc_kind"] == "success"
    bad = tmp_path / "bad.tla"
    bad.write_text(ref.replace("THEN IF hr = 12 THEN 1 ELSE hr + 1", "THEN hr + 1"))  # TypeOK fails
    res = CliRunner().invoke(main, ["grade-file", str(bad), "--task", "Clock.Clock.Clock", "--json", "--grades",
                                    "name", "--store", str(wd / "data/alias.duckdb"),
                                    "--params", str(REPO / "params.yaml")])
    assert res.exit_code == 0, res.output
    (name,) = json.loads(res.output)
    assert name["passed"] is False and name["reason"].startswith("tlc_") and name["error_text"]
    undefined = tmp_path / "undefined.tla"  # the cfg's INVARIANT TypeOK is not defined
    undefined.write_text(ref.replace("TypeOK ==", "TypeOk =="))
    res = CliRunner().invoke(main, ["grade-file", str(undefined), "--task", "Clock.Clock.Clock", "--json", "--grades",
                                    "name", "--store", str(wd / "data/alias.duckdb"),
                                    "--params", str(REPO / "params.yaml")])
    (name,) = json.loads(res.output)
    assert "TypeOK" in name["error_text"] and "not defined" in name["error_text"], name
    assert not re.search(r"\d{4}-\d\d-\d\d|\d\d:\d\d:\d\d", name["error_text"]), name["error_text"]  # byte-stable
    res = CliRunner().invoke(main, ["grade-file", str(bad), "--task", "Nope", "--store",
                                    str(wd / "data/alias.duckdb"), "--params", str(REPO / "params.yaml")])
    assert res.exit_code == 1 and "no original reference for task 'Nope'" in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_console_script_is_alias_cir():
    import shutil
    import subprocess
    import sys

    exe = shutil.which("alias-cir") or str(Path(sys.executable).parent / "alias-cir")
    if not Path(exe).exists():
        pytest.skip("alias-cir is not installed in this environment")
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "grade-file" in out.stdout and "generate-provider" in out.stdout
    lines = [ln.split()[0] for ln in out.stdout.split("Commands:")[1].splitlines() if ln.strip()]
    assert lines[:4] == ["check-params", "ingest", "rename", "verify"]  # pipeline order


@pytest.mark.parametrize("argv", [["query", "--limit", "-1", "SELECT 1"], ["query", "--limit", "0", "SELECT 1"],
                                  ["grade-file", "x.tla", "--task", "T", "--grades", "nope"]])
def test_invalid_cli_numbers_and_choices_are_one_line_errors(argv):
    """``alias-cir`` rejects a bad argument with exit status 2 and one line on stderr."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "alias", *argv], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("alias-cir ") and ": error: " in lines[0], r.stderr
