"""The generate stages (local, replay, provider, skip) and the grade stage on the embedded corpus."""
from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from alias.config import ModelEntry
from alias.corpus.testset import TestSet
from alias.exposure import experiment
from alias.generate.samples import build_requests, load_samples
from alias.stages import generate_local, generate_provider, generate_replay, grade
from alias.store.db import build_store, columns, query, read_parquet, write_parquet
from alias.store.models import Sample
from conftest import embedded_config

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "data" / "replay" / "embedded_outputs.jsonl"
KEY = ["task_id", "condition", "model", "sample_idx"]
SAMPLE_COLUMNS = columns(Sample)
_STAGE = {"local": generate_local, "providers": generate_provider, "replay": generate_replay}


@pytest.fixture(scope="module")
def inputs(embedded_stage_inputs):
    """The embedded corpus's ingest/rename outputs and an all-tasks test set (conftest)."""
    return embedded_stage_inputs


def _group(entry: dict) -> str:
    return {"local": "local", "replay": "replay"}.get(entry["backend"], "providers")


def _params(base, models: dict, **over):
    """The embedded config with exactly ``models`` (key -> entry), paths under the inputs' folder."""
    groups = {"local": {}, "providers": {}, "replay": {}}
    for k, e in models.items():
        groups[_group(e)][k] = e
    c = embedded_config({f"generate.{g}": m for g, m in groups.items()} | {
        "continuation.models": [], "tla.timeout_s": 60, "tla.memory_mb": 512, "grade.parallel": 2} | over)
    return dataclasses.replace(c, paths=dataclasses.replace(base.paths))


def _gen(wd: Path, c, key: str, out: Path | None = None) -> dict:
    """Run the generate stage of model ``key`` writing ``out`` (default paths.samples/key)."""
    paths = c.paths if out is None else dataclasses.replace(c.paths, samples=out.parent, work=out.parent / "work")
    assert out is None or out.name == key
    group = next(g for g in ("local", "providers", "replay") if key in getattr(c.generate, g))
    return _STAGE[group].run(c, paths, key)


def _grade(c, samples: Path, out: Path) -> dict:
    return grade.run(c, dataclasses.replace(c.paths, samples=samples, grades=out, work=out.parent / "work"))


def _n_tasks(wd: Path) -> int:
    return len(TestSet.load(_params_paths(wd)).task_ids())


def _params_paths(wd: Path):
    return embedded_config().paths.under(wd)


# ----------------------------------------------------------------------- replay (b)
def test_replay_fixture_lands_every_record(inputs, tmp_path):
    wd, base = inputs
    p = _params(base, {"fixture": {"backend": "replay", "path": str(FIXTURE)}})
    st = _gen(wd, p, "fixture", tmp_path / "fixture")
    n = _n_tasks(wd)
    assert n == 6
    assert st["status"] == "ok" and st["replay_errors"] == 0 and st["samples"] == 2 * 2 * 5 * n
    df = read_parquet(tmp_path / "fixture/samples.parquet")
    assert list(df.columns) == SAMPLE_COLUMNS and len(df) == 120
    assert df.groupby(["model", "condition"]).size().to_dict() == {
        (m, c): 5 * n for m in ("fixture-a", "fixture-b") for c in ("original", "random")}
    assert not df.duplicated(KEY).any()
    assert (df.backend == "replay").all() and (df.model_key == "fixture").all()
    assert df.source_line.min() == 1 and df.source_line.max() == 120
    variant = df.extra.map(lambda e: json.loads(e)["variant"])
    # the variants give the columns their meaning
    fenced = df[variant == "fenced"]
    assert fenced.has_closing_line.all() and not fenced.truncated.any()
    assert fenced.extracted_module.str.match(r"-{4,} MODULE \w+ -{4,}\n").all()
    assert (fenced.stop_reason == "end_turn").all() and not fenced.hit_token_limit.any()
    trunc = df[variant == "truncated"]
    assert len(trunc) and trunc.truncated.all() and trunc.hit_token_limit.all()
    assert (trunc.stop_reason == "max_tokens").all() and not trunc.has_closing_line.any()
    assert trunc.extraction.map(lambda e: "add_closing_line" in json.loads(e)["actions"]).all()
    prose = df[variant == "prose"]
    assert len(prose) and prose.extracted_module.isna().all() and prose.truncated.all()
    assert prose.extraction.map(lambda e: json.loads(e)["error"].startswith("no_module_header")).all()
    assert df.output_tokens.isna().all()  # the fixture gives no token counts
    # fixture-a does better on the original names (more clean references)
    a = df[df.model == "fixture-a"]
    assert (variant[a.index][a.condition == "original"] == "fenced").sum() > \
        (variant[a.index][a.condition == "random"] == "fenced").sum()


def test_replay_malformed_line_reported_with_number_rest_kept(inputs, tmp_path, capsys):
    wd, base = inputs
    lines = FIXTURE.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[6] = '{"task_id": "Clock.Clock.Clock", "condition": "original", \n'  # line 7: cut JSON
    bad = json.loads(lines[10])
    bad["task_id"] = "Nope.Nope.Nope"
    lines.append(json.dumps(bad) + "\n")  # line 121: a task outside the test set
    f = tmp_path / "outputs.jsonl"
    f.write_text("".join(lines), encoding="utf-8")
    p = _params(base, {"rel": {"backend": "replay", "path": str(f)}})
    st = _gen(wd, p, "rel", tmp_path / "rel")
    assert st["status"] == "partial" and st["replay_errors"] == 2
    assert st["replay_error_kinds"] == {"json": 1, "unknown_task": 1}
    assert st["samples"] == 119
    errs = (tmp_path / "rel/replay_errors.txt").read_text().splitlines()
    assert errs[0].startswith(f"{f}:7: json: malformed JSON") and errs[1].startswith(f"{f}:121: unknown_task")
    assert f"{f}:7: json" in capsys.readouterr().err
    df = read_parquet(tmp_path / "rel/samples.parquet")
    assert 7 not in set(df.source_line) and set(df.source_line) == set(range(1, 121)) - {7}


# ----------------------------------------------------------------- credentials (c)
def test_missing_credentials_skip_and_others_still_run(inputs, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from alias.cli import main

    wd, base = inputs
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    raw["generate"]["providers"] = {"opus": {"backend": "anthropic", "enabled": True, "model": "claude-opus-4-8",
                                             "max_tokens": 1024},
                                    "gpt5": {"backend": "openai", "enabled": True, "model": "gpt-5", "max_tokens": 1024}}
    raw["generate"]["replay"] = {"fixture": {"backend": "replay", "path": str(FIXTURE)}}
    work = tmp_path / "repo"
    shutil.copytree(wd / "data", work / "data")
    (work / "params.yaml").write_text(yaml.safe_dump(raw))
    monkeypatch.chdir(work)
    outs = {}
    for cmd, key in (("generate-provider", "opus"), ("generate-provider", "gpt5"), ("generate-replay", "fixture")):
        res = CliRunner().invoke(main, [cmd, "--model", key])
        assert res.exit_code == 0, res.output
        outs[key] = res.output
    assert "generate opus: skipped: ANTHROPIC_API_KEY is not set" in outs["opus"]
    assert "generate gpt5: skipped: OPENAI_API_KEY is not set" in outs["gpt5"]
    for key, env in (("opus", "ANTHROPIC_API_KEY"), ("gpt5", "OPENAI_API_KEY")):
        st = json.loads((work / f"data/samples/{key}/status.json").read_text())
        assert st["status"] == "skipped" and st["reason"] == f"skipped: {env} is not set"
        assert st["samples"] == 0
        df = read_parquet(work / f"data/samples/{key}/samples.parquet")
        assert len(df) == 0 and list(df.columns) == SAMPLE_COLUMNS
        assert not (work / f".alias/ledgers/generate_provider-{key}.sqlite").exists()  # nothing registered
    assert json.loads((work / "data/samples/fixture/status.json").read_text())["samples"] == 120
    # an unknown key is a one-line error
    res = CliRunner().invoke(main, ["generate-provider", "--model", "nope"])
    assert res.exit_code == 1 and "no model 'nope'" in res.output
    # the store loads the generated samples next to control samples that lack the new columns
    write_parquet(pd.DataFrame({"task_id": ["Clock.Clock.Clock"], "condition": ["original"],
                                "model": ["control:self"], "sample_idx": [0], "text": ["x"]}),
                  work / "data/controls/1/samples.parquet")
    shutil.copytree(REPO / "sql", work / "sql")
    folders = {k: work / v for k, v in dataclasses.asdict(embedded_config().paths).items()}
    counts = build_store(work / "data/alias.duckdb", folders, work / "sql")
    assert counts["samples"] == 121
    got = query("SELECT coalesce(model_key, '-') AS k, count(*) AS n, count(backend) AS b, "
                "count(truncated) AS nt, coalesce(sum(truncated::INT), 0) AS t FROM samples GROUP BY ALL ORDER BY k",
                work / "data/alias.duckdb")
    assert got.values.tolist() == [["-", 1, 0, 0, 0], ["fixture", 120, 120, 120, 20]]


def test_provider_batch_through_the_stage(inputs, tmp_path, monkeypatch):
    """An Anthropic entry against the loopback Message Batches server of test_batches."""
    from test_batches import ANTHROPIC_KEY, FakeAnthropic

    wd, base = inputs
    with FakeAnthropic() as srv:
        entry = {"backend": "anthropic", "enabled": True, "model": "claude-opus-4-8", "max_tokens": 512,
                 "poll_interval_s": 0, "base_url": srv.base_url}
        p = _params(base, {"opus": entry})
        monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
        st = _gen(wd, p, "opus", tmp_path / "opus")
        assert len(srv.creates) == 1
    assert st["status"] == "ok" and st["samples"] == 60 and st["failed"] == {}
    df = read_parquet(tmp_path / "opus/samples.parquet")
    assert (df.model == "opus").all() and (df.response_model == "claude-opus-4-8-20990101").all()
    assert (df.output_tokens == 17).all() and (df.stop_reason == "end_turn").all()
    assert df.has_closing_line.all() and not df.truncated.any() and not df.hit_token_limit.any()
    assert df.batch_id.str.startswith("msgbatch_").all() and df.custom_id.notna().all()
    s = json.loads(df.settings.iloc[0])
    assert s["max_tokens"] == 512 and s["provider_model"] == "claude-opus-4-8" and s["temperature"] is None
    assert (df.prompt_kind == "frontier").all()
    # the random condition is prompted with the renamed description
    rt = read_parquet(wd / "data/rename/renamed_tasks.parquet").set_index("task_id")
    row = df[(df.condition == "random")].iloc[0]
    assert rt.loc[row.task_id, "description"][-30:] in row.text
    # without the key, a ledger holding every result is read again, nothing is sent
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    st2 = _gen(wd, p, "opus", tmp_path / "opus")
    assert st2["status"] == "ok"
    pd.testing.assert_frame_equal(read_parquet(tmp_path / "opus/samples.parquet"), df)


# ------------------------------------------------------------ local + grade (a)
@pytest.mark.tlc
def test_tiny_local_model_generates_and_every_sample_is_graded(inputs, tmp_path):
    torch = pytest.importorskip("torch")
    from alias.generate.tiny import build_tiny_model, embedded_texts

    wd, base = inputs
    tiny = build_tiny_model(embedded_texts(), tmp_path / "tiny", train_steps=40)
    entry = {"backend": "local", "model_dir": str(tiny), "max_new_tokens": 24, "batch_size": 10,
             "seed": 0, "threads": 1, "temperature": 0.7, "top_p": 0.95, "stop_at_closing_line": True}
    p = _params(base, {"tiny": entry})
    n_threads = torch.get_num_threads()
    try:
        st = _gen(wd, p, "tiny", tmp_path / "samples/tiny")
    finally:
        torch.set_num_threads(n_threads)
    n = _n_tasks(wd)
    assert st["status"] == "ok" and st["requests"] == st["samples"] == n * 2 * 5
    df = read_parquet(tmp_path / "samples/tiny/samples.parquet")
    assert df.groupby(["task_id", "condition"]).size().eq(5).all() and len(df) == 60
    assert df.output_tokens.between(1, 24).all() and (df.prompt_kind == "finetuned").all()
    assert (df.hit_token_limit == (df.stop_reason == "max_new_tokens")).all()
    assert (df.truncated == (df.hit_token_limit | ~df.has_closing_line)).all()
    assert df.settings.map(lambda s: json.loads(s)["max_new_tokens"] == 24).all()

    out = tmp_path / "grades"
    summary = _grade(p, tmp_path / "samples", out)
    v = read_parquet(out / "verdicts.parquet")
    assert summary["samples"] == 60 and summary["verdicts"] == len(v) == 180
    grades = v.groupby(KEY).grade.apply(lambda g: tuple(sorted(g)))
    assert len(grades) == 60 and grades.map(lambda g: g == ("behavior", "name", "parse")).all()
    assert set(map(tuple, v[KEY].drop_duplicates().values)) == set(map(tuple, df[KEY].values))
    unparsable = df[df.extracted_module.isna()]
    assert len(unparsable) > 0
    bad = v.merge(unparsable[KEY], on=KEY)
    assert len(bad) == 3 * len(unparsable) and not bad.passed.any()
    assert bad.reason.str.startswith("extraction_failed: ").all()


# ------------------------------------------------------------------ resume (d)
@pytest.mark.tlc
def test_killed_grade_run_resumes_without_loss_or_duplicates(inputs, tmp_path):
    wd, base = inputs
    task = "Clock.Clock.Clock"
    recs = [json.loads(x) for x in FIXTURE.read_text().splitlines()]
    f = tmp_path / "clock.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in recs if r["task_id"] == task and r["condition"] == "original"))
    p = _params(base, {"fx": {"backend": "replay", "path": str(f)}})
    _gen(wd, p, "fx", tmp_path / "samples/fx")
    args = (tmp_path / "samples", tmp_path / "grades")
    _grade(p, *args)
    journal = tmp_path / "work/grade/journal.jsonl"
    first = read_parquet(tmp_path / "grades/verdicts.parquet")
    assert len(first) == 30 and first.passed.any() and not first.passed.all()
    lines = journal.read_bytes().splitlines(keepends=True)
    assert len(lines) == 10
    # a process killed while writing the line of a sample that ran SANY/TLC: the other
    # samples' lines are whole, half of this one is on disk
    ran = [i for i, x in enumerate(lines) if any(v["tool_runs"] for v in json.loads(x)["verdicts"])]
    assert ran
    torn = lines[ran[-1]]
    rest = [x for i, x in enumerate(lines) if i != ran[-1]]
    journal.write_bytes(b"".join(rest) + torn[: len(torn) // 2])
    (tmp_path / "grades/verdicts.parquet").unlink()
    _grade(p, *args)
    again = read_parquet(tmp_path / "grades/verdicts.parquet")
    assert len(again) == 30 and not again.duplicated(KEY + ["grade"]).any()
    cols = KEY + ["grade", "passed", "reason", "method", "mapping", "tlc_kind"]
    pd.testing.assert_frame_equal(again[cols], first[cols])
    relines = journal.read_bytes().splitlines()
    assert len(relines) == 10 and all(json.loads(x) for x in relines)
    # the re-graded sample cost no new SANY/TLC run: every run came from the cache
    redone = json.loads(relines[-1])
    assert redone["key"] == json.loads(torn)["key"]
    assert all(r["tool_runs"] == 0 for r in redone["verdicts"])
    assert sum(r["cached_runs"] for r in redone["verdicts"]) > 0
    # the samples of every model key are read together; a key clash names both files
    shutil.copytree(tmp_path / "samples/fx", tmp_path / "samples/fy")
    with pytest.raises(ValueError, match="is in both"):
        load_samples(tmp_path / "samples", ["fx", "fy"])


def test_meaningful_condition_covers_only_verified_tasks(inputs, tmp_path):
    """Appendix R: the third condition is prompted with the meaningful description, and only
    for the tasks whose meaningful copy verified (``data/meaningful/meaningful_tasks``)."""
    paths = dataclasses.replace(inputs[1].paths, meaningful=tmp_path / "meaningful")
    ts = TestSet.load(paths, meaningful=True).conditions_table()
    assert ts.meaningful_system_module.isna().all()  # no meaningful stage output: no third condition
    first, second = ts.task_id.iloc[0], ts.task_id.iloc[1]
    mdir = tmp_path / "meaningful"
    write_parquet(pd.DataFrame({"task_id": [first, second], "verified": [True, False],
                                "system_module": ["CounterModuleName", "Other"],
                                "description": ["A meaningful description of the counter.", "unused"]}),
                  mdir / "meaningful_tasks.parquet")
    write_parquet(pd.DataFrame(columns=["task_id", "module", "text"]), mdir / "meaningful_modules.parquet")
    ts = TestSet.load(paths, meaningful=True).conditions_table()
    assert ts.set_index("task_id").meaningful_system_module.dropna().to_dict() == {first: "CounterModuleName"}
    reqs = build_requests(ts, ["original", "random", "meaningful"], 5, "m", "frontier",
                          ModelEntry(backend="anthropic", model="m", max_tokens=100, enabled=True))
    meaningful = [r for r in reqs if r.condition == "meaningful"]
    assert len(reqs) == 2 * 5 * len(ts) + 5 and len(meaningful) == 5
    assert {r.task_id for r in meaningful} == {first}
    assert all("A meaningful description of the counter." in r.prompt for r in meaningful)


def test_cli_params_file_errors_are_one_line(tmp_path):
    """A mistyped --params is an error, not a silent run on the defaults; a malformed
    params file is one line, not a traceback."""
    from click.testing import CliRunner

    from alias.cli import main

    r = CliRunner().invoke(main, ["generate-replay", "--model", "fixture", "--params", str(tmp_path / "nosuch.yaml")])
    assert r.exit_code == 1 and "params file" in r.output and "not found" in r.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("generate: [unclosed\n")
    r = CliRunner().invoke(main, ["load", "--params", str(bad)])
    assert r.exit_code == 1 and "bad.yaml" in r.output and "not valid YAML" in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1
    # a wrong value names its key
    good = yaml.safe_load((REPO / "params.yaml").read_text())
    good["grade"]["timeout_s"] = "soon"
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(yaml.safe_dump(good))
    r = CliRunner().invoke(main, ["load", "--params", str(wrong)])
    assert r.exit_code == 1 and "grade.timeout_s: expected a number, got 'soon'" in r.output


def test_a_task_without_description_is_listed_not_prompted(inputs, tmp_path):
    """A test-set task whose corpus gives no description (10 on the real corpus) cannot be
    posed: the generate stage lists it under ``no_description`` and samples the others;
    the exposure stage leaves it out of the split and the scored items."""
    wd, base = inputs
    d = tmp_path / "data"
    shutil.copytree(wd / "data", d)
    tasks = read_parquet(d / "ingest/tasks.parquet")
    tid = sorted(tasks.task_id)[0]
    tasks.loc[tasks.task_id == tid, "description"] = None
    write_parquet(tasks, d / "ingest/tasks.parquet")
    p = _params(base, {"fixture": {"backend": "replay", "path": str(FIXTURE)}})
    p = dataclasses.replace(p, paths=_params_paths(tmp_path))
    st = _gen(tmp_path, p, "fixture")
    assert st["no_description"] == [tid] and st["tasks"] == 5
    df = read_parquet(d / "samples/fixture/samples.parquet")
    assert tid not in set(df.task_id) and df.task_id.nunique() == 5 and len(df) == 2 * 2 * 5 * 5
    assert st["replay_errors"] == 20  # the fixture's records of that task: unknown_task
    testset = TestSet.load(p.paths)
    assert testset.described_ids()[1] == [tid]
    test_ids, items = experiment.test_items(testset)
    assert tid not in test_ids and len(test_ids) == 5 and tid not in {i["task_id"] for i in items}
