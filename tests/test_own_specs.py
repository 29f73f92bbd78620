"""Your own specifications, end to end (README "Your own specifications"): a folder of
hand-written specs (``tests/fixtures/own_specs``, one case per folder) through
``alias-cir init-pipeline`` and ``dvc repro`` in a temporary git + DVC repository holding a
copy of this checkout's package, params and views; then ``grade-file`` against the
pipeline's store from the repository root and from the pipeline folder, and a bad
``dvc exp run -S`` value that must cost no output."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"
BIN = Path(sys.executable).parent
DVC = BIN / "dvc"

pytestmark = [pytest.mark.tlc, pytest.mark.skipif(not DVC.exists() or shutil.which("git") is None,
                                                  reason="needs git and the virtualenv's dvc")]

#: Every case of the fixture corpus: (model module, cfg) -> (status, reason) after ingest.
CANDIDATES = {
    ("unicode/Unicode.tla", "unicode/Unicode.cfg"): ("task", None),
    ("toolbox/Lamp.toolbox/Model_1/MC.tla", "toolbox/Lamp.toolbox/Model_1/MC.cfg"): ("task", None),
    ("toolbox/Lamp.tla", ""): ("excluded", "no_cfg"),
    ("nocfg/Orphan.tla", ""): ("excluded", "no_cfg"),
    ("undefined_op/Undef.tla", "undefined_op/Undef.cfg"): ("task", None),
    ("deadlock/Halt.tla", "deadlock/Halt.cfg"): ("task", None),
    ("values/Chan.tla", "values/Chan.cfg"): ("task", None),
    ("multi/Multi.tla", "multi/Multi.cfg"): ("task", None),
    ("fails/Broken.tla", "fails/Broken.cfg"): ("task", None),
    ("library/Doubler.tla", "library/Doubler.cfg"): ("task", None),
    ("", "ambiguous/Model.cfg"): ("excluded", "ambiguous_cfg"),
    ("ambiguous/Left.tla", ""): ("excluded", "no_cfg"),
    ("ambiguous/Right.tla", ""): ("excluded", "no_cfg"),
}
#: The verify stage's verdict per task folder: in the test set, or the reason.
VERIFIED = {"unicode": None, "toolbox_Lamp": None, "undefined_op": "tlc_original_config_error",
            "deadlock": None, "values": None, "multi": None, "fails": "tlc_original_invariant_violated",
            "library": None}
STAGES = "check_params,ingest,rename,verify,identifiers,load,audit"


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}", "PYTHONPATH": str(REPO), "DVC_NO_ANALYTICS": "1",
                "DVC_SITE_CACHE_DIR": str(tmp / "dvc-site-cache"), "GIT_AUTHOR_NAME": "t",
                "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
                "GIT_COMMITTER_EMAIL": "t@example.invalid"})
    env.pop("GIT_DIR", None)
    return env


def _run(args: list, cwd: Path, env: dict, ok: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    if ok:
        assert r.returncode == 0, f"{args} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A repository with ``pipelines/own`` built by ``dvc repro``: ``(repo, env)``."""
    tmp = tmp_path_factory.mktemp("own")
    repo, env = tmp / "repo", _env(tmp)
    repo.mkdir()
    shutil.copytree(REPO / "alias", repo / "alias", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "sql", repo / "sql")
    for f in ("params.yaml", "dvc.yaml"):
        shutil.copy(REPO / f, repo / f)
    shutil.copytree(FIXTURES / "own_specs", repo / "specs")
    shutil.copytree(FIXTURES / "own_specs_lib", repo / "specs_lib")
    _run(["git", "init", "-q"], repo, env)
    _run([DVC, "init", "-q"], repo, env)
    out = _run([sys.executable, "-m", "alias", "init-pipeline", "own", "--corpus", "specs", "--library", "specs_lib",
                "--timeout", "60", "--stages", STAGES], repo, env).stdout
    assert "pipelines/own" in out
    params = repo / "pipelines" / "own" / "params.yaml"   # the library spec needs a property
    params.write_text(params.read_text().replace("tla:\n", "tla:\n  properties: {alias.own.flag: 'on'}\n"))
    _run([DVC, "repro"], repo / "pipelines" / "own", env)
    _run(["git", "add", "-A"], repo, env)
    _run(["git", "commit", "-q", "-m", "own specs"], repo, env)
    return repo, env


def test_every_case_kept_or_excluded_with_its_reason(built):
    repo, _ = built
    data = repo / "pipelines" / "own" / "data"
    cand = pd.read_parquet(data / "ingest" / "candidates.parquet")
    got = {(r.model_module_path, r.cfg_path): (r.status, r.reason if isinstance(r.reason, str) else None)
           for r in cand.itertuples()}
    assert got == CANDIDATES
    ts = pd.read_parquet(data / "verify" / "test_set.parquet")
    verdicts = {t.split(".")[0]: (None if ok else reason) for t, ok, reason in zip(ts.task_id, ts.in_test_set, ts.reason)}
    assert verdicts == VERIFIED
    tasks = pd.read_parquet(data / "ingest" / "tasks.parquet").set_index("task_id")
    assert tasks.loc["values.Chan.Chan", "description_source"] == "sidecar"
    assert "Greeting" in tasks.loc["values.Chan.Chan", "description"]
    # the Toolbox annotation of the renamed cfg carries the renamed constant, not MaxToggles
    renamed = pd.read_parquet(data / "rename" / "renamed_tasks.parquet").set_index("task_id")
    cfg = renamed.loc["toolbox_Lamp.toolbox_Model_1.Lamp.MC", "cfg_text"]
    assert "@modelParameterConstants:0" in cfg and "MaxToggles" not in cfg
    assert renamed.n_leftover.sum() == 0


def test_audit_summary_and_views(built):
    repo, env = built
    folder = repo / "pipelines" / "own"
    summary = pd.read_csv(folder / "reports" / "audit_summary.csv").iloc[0]
    assert (summary.candidates, summary.tasks, summary.verified, summary.leftover_names) == (13, 8, 6, 0)
    assert summary.tasks_with_hidden_names == 6 and summary.hidden_names == 9
    audit = pd.read_csv(folder / "reports" / "audit_tasks.csv").set_index("task_id")
    assert audit.loc["fails.Broken.Broken", "reason"] == "tlc_original_invariant_violated"
    assert audit.loc["deadlock.Halt.Halt", "add_to_description"] == "NonNegative (invariant), Start (constant)"
    out = _run([sys.executable, "-m", "alias", "query", "--params", "../../params.yaml", "--params", "params.yaml",
                "--csv", "SELECT count(*) AS n FROM v_leftover_names"], folder, env).stdout
    assert out.split() == ["n", "0"]


def _grade(args: list, cwd: Path, env: dict) -> list[dict]:
    out = _run([sys.executable, "-m", "alias", "grade-file", *args, "--json"], cwd, env).stdout
    return [{k: v for k, v in r.items() if k not in ("wall_s", "run_keys")} for r in json.loads(out)]


def test_grade_file_from_the_root_uses_the_store_settings(built, tmp_path):
    """The library task needs the pipeline's Java property (tla.properties): graded from the
    root against the pipeline's store, it passes as inside the folder; with the root's
    params TLC stops at its ASSUME."""
    repo, env = built
    folder = repo / "pipelines" / "own"
    output = tmp_path / "out.tla"
    output.write_text((repo / "specs" / "library" / "Doubler.tla").read_text())
    args = [output, "--task", "library.Doubler.Doubler"]
    inside = _grade(args + ["--params", "../../params.yaml", "--params", "params.yaml"], folder, env)
    root = _grade(args + ["--store", "pipelines/own/data"], repo, env)
    assert root == inside and all(v["passed"] for v in root)
    plain = _grade(args + ["--store", "pipelines/own/data", "--params", "params.yaml"], repo, env)
    assert [(v["grade"], v["passed"]) for v in plain][:2] == [("parse", True), ("name", False)]
    r = _run([sys.executable, "-m", "alias", "grade-file", output, "--task", "nope", "--store", "pipelines/own/data"],
             repo, env, ok=False)
    assert r.returncode == 1 and str(folder / "data") in r.stderr


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and "alias.duckdb" not in p.name}


def test_a_bad_parameter_costs_no_output(built):
    """``dvc exp run -S tla.timeout_s=abc`` stops at check_params: every output stays."""
    repo, env = built
    folder = repo / "pipelines" / "own"
    before = _digests(folder / "data") | _digests(folder / "reports")
    r = _run([DVC, "exp", "run", "-S", "tla.timeout_s=abc"], folder, env, ok=False)
    assert r.returncode != 0
    assert "tla.timeout_s: expected a number, got 'abc'" in r.stdout + r.stderr
    assert _digests(folder / "data") | _digests(folder / "reports") == before
    _run(["git", "checkout", "pipelines/own/params.yaml"], repo, env)
    assert "up to date" in _run([DVC, "status", "dvc.yaml"], folder, env).stdout.lower()


def test_params_yaml_keeps_a_corpus_outside_the_repository_absolute(tmp_path):
    """``init-pipeline --corpus DIR``: a folder outside the clone is written absolute (the
    pipeline survives moving the clone), one inside it relative to the pipeline folder."""
    import yaml

    from alias.pipelines import params_yaml

    outside = tmp_path / "specs"
    outside.mkdir()
    folder = REPO / "pipelines" / "mine"
    got = yaml.safe_load(params_yaml(REPO, folder, outside, descriptions=str(FIXTURES / "own_specs")))
    assert got["corpus"]["path"] == str(outside.resolve())
    assert got["corpus"]["descriptions"] == "../../tests/fixtures/own_specs"
    assert got["paths"]["sql"] == "../../sql"
