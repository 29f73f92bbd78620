"""The push/pull round trip of a release, against a temporary local DVC remote.

A temporary git + DVC repository holds stage tables (samples, verdicts and the tables the
statistics views read, as Parquet at their TABLE_SOURCES paths, tracked with ``dvc add``),
the repository's ``sql/`` views, its ``.dvc/config`` (whose default remote ``release`` is the
folder ``release/`` inside the repository, committed with it) and a two-stage pipeline: the repository's own ``load`` and ``report`` stages
(``python -m alias load`` / ``python -m alias report``, with their outs, metrics and
plots as declared in ``dvc.yaml``). It is reproduced, pushed and committed (the remote folder with it). A ``git
clone`` of it then runs ``dvc pull`` with an empty cache and no other copy anywhere: the data must arrive
byte-identical, DVC must consider every stage up to date (``dvc repro`` runs nothing),
``alias report`` on the pulled store must reproduce the published reports without
regenerating any stage output, and ``dvc plots show`` must render the figures' data.
Everything runs in pytest's temporary directories; the repository's own DVC state is
never touched.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from alias.report.stats_tables import write_stats_reports
from alias.store.db import build_store, write_parquet
from conftest import folders_under, table_path

from test_stats_appendix import ARMS, appendix_tables  # tests/ is on sys.path under pytest

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DVC = BIN / "dvc"
B = 300                                   # bootstrap resamples in the report stage (params)
TRACKED = ("data/controls", "data/verify", "data/identifiers", "data/ingest", "data/rename", "data/exposure",
           "data/continuation")

pytestmark = pytest.mark.skipif(not DVC.exists() or shutil.which("git") is None,
                                reason="needs git and the virtualenv's dvc")


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        "PYTHONPATH": f"{REPO}{os.pathsep}{env.get('PYTHONPATH', '')}",  # this checkout's alias package
        "DVC_NO_ANALYTICS": "1",
        "DVC_SITE_CACHE_DIR": str(tmp / "dvc-site-cache"),
        "MPLCONFIGDIR": str(tmp / "mpl"),
        "GIT_AUTHOR_NAME": "ALIAS test", "GIT_AUTHOR_EMAIL": "alias-test@example.invalid",
        "GIT_COMMITTER_NAME": "ALIAS test", "GIT_COMMITTER_EMAIL": "alias-test@example.invalid",
        "GIT_TERMINAL_PROMPT": "0",
    })
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    return env


def _run(args: list, cwd: Path, env: dict) -> str:
    r = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, f"{args} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r.stdout + r.stderr


def _rel(table: str) -> str:
    return table_path(table).as_posix()


def _digests(root: Path, dirs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for d in dirs:
        for p in sorted((root / d).rglob("*")):
            if p.is_file():
                out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _declared_report_files(stage: dict) -> set[str]:
    """The report stage's outs, metrics and plots, ``${paths.X}`` resolved from params.yaml."""
    paths = yaml.safe_load((REPO / "params.yaml").read_text())["paths"]
    out = set()
    for kind in ("outs", "metrics", "plots"):
        for o in stage.get(kind, []):
            name = o if isinstance(o, str) else next(iter(o))
            out.add(re.sub(r"\$\{paths\.(\w+)\}", lambda m: paths[m.group(1)], name))
    return out


def _dvc_yaml() -> str:
    """The repository's load and report stages and its top-level plots, with deps on the
    tracked test tables (the corpus stages do not run here)."""
    project = yaml.safe_load((REPO / "dvc.yaml").read_text())
    load, report = dict(project["stages"]["load"]), dict(project["stages"]["report"])
    load["deps"] = [*TRACKED, "${paths.sql}"]
    report["deps"] = ["${paths.snapshot}"]
    return yaml.safe_dump({"stages": {"load": load, "report": report}, "plots": project["plots"]},
                          sort_keys=False)


def test_push_pull_round_trip(tmp_path):
    env = _env(tmp_path)
    origin, clone = tmp_path / "origin", tmp_path / "clone"
    remote = origin / "release"                  # the default remote: release/ inside the repository
    origin.mkdir()

    # ---- origin: tables (dvc add), the project's DVC config and pipeline (dvc repro), push
    _run(["git", "init", "-q"], origin, env)
    _run([DVC, "init", "-q"], origin, env)
    shutil.copy(REPO / ".dvc" / "config", origin / ".dvc" / "config")
    shutil.copytree(REPO / ".dvc" / "plots", origin / ".dvc" / "plots")
    shutil.copytree(REPO / "release", remote)
    assert _run([DVC, "remote", "default"], origin, env).strip() == "release"
    tables, _ = appendix_tables()
    for name, df in tables.items():
        write_parquet(df, origin / _rel(name))
    shutil.copytree(REPO / "sql", origin / "sql")
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["report"].update(n_resamples=B, exposure=ARMS)
    (origin / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    _run([DVC, "add", "-q", *TRACKED], origin, env)
    (origin / "dvc.yaml").write_text(_dvc_yaml())
    out = _run([DVC, "repro"], origin, env)
    assert "load" in out and "report" in out
    _run([DVC, "push"], origin, env)
    assert any(p.is_file() and p.name != "README.md" for p in remote.rglob("*")), "nothing pushed"
    _run(["git", "add", "-A"], origin, env)
    _run(["git", "commit", "-q", "-m", "release"], origin, env)
    assert "nothing to commit" in _run(["git", "status"], origin, env)  # no tracked file left dirty

    # every file the report stage writes is declared in dvc.yaml (outs, metrics or plots)
    report_stage = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]["report"]
    written = {str(p.relative_to(origin)) for p in (origin / "reports").rglob("*")
               if p.is_file() and p.name != ".gitignore"}
    assert written == _declared_report_files(report_stage)
    published = _digests(origin, (*TRACKED, "data/store", "reports"))
    assert {f"{_rel(t)}" for t in ("samples", "verdicts", "test_set", "split", "loglik", "continuations")} \
        <= set(published)
    assert {"reports/table_1.md", "reports/table_V1.md", "reports/table_2.md", "reports/figures/figure_T1.png",
            "reports/plots/figure_T1b.csv"} <= set(published)

    # ---- clone with an empty cache; the origin's cache is gone, so data can only come from the remote
    _run(["git", "clone", "-q", origin, clone], tmp_path, env)
    shutil.rmtree(origin / ".dvc" / "cache")
    assert not (clone / "data" / "controls").exists()
    _run([DVC, "pull"], clone, env)
    assert _digests(clone, (*TRACKED, "data/store", "reports")) == published

    # nothing to regenerate: every stage and tracked file is up to date, repro runs no stage
    status = _run([DVC, "status"], clone, env)
    assert "up to date" in status.lower(), status
    repro = _run([DVC, "repro"], clone, env)
    assert "Running stage" not in repro, repro
    assert _digests(clone, (*TRACKED, "data/store", "reports")) == published

    # `alias report` on the pulled store rewrites the published reports byte for byte and
    # touches no stage output
    for p in (clone / "reports").rglob("*"):
        if p.is_file() and p.name != ".gitignore":
            p.unlink()
    _run([sys.executable, "-m", "alias", "report"], clone, env)
    assert _digests(clone, (*TRACKED, "data/store", "reports")) == published
    assert "up to date" in _run([DVC, "status"], clone, env).lower()

    # dvc plots show renders the figures and their data
    shown = json.loads(_run([DVC, "plots", "show", "--json", "-o", tmp_path / "plots_html"], clone, env))["data"]
    for name in ("figure_S1.png", "figure_T1.png", "figure_U1.png"):
        assert shown[f"reports/figures/{name}"][0]["type"] == "image"
    for title in ("Figure S.1", "Figure T.1a", "Figure T.1b", "Figure T.1c", "Figure U.1"):
        (key,) = [k for k in shown if k.startswith(title + ",")]
        assert shown[key] and shown[key][0]["type"] == "vega", key     # rendered with data

    # the pulled tables build a store that gives the published statistics reports
    db = tmp_path / "rebuilt" / "alias.duckdb"
    build_store(db, folders_under(clone), clone / "sql")
    res = write_stats_reports(db, tmp_path / "rebuilt" / "reports", n_resamples=B)
    for name, path in res["files"].items():
        assert Path(path).read_bytes() == (clone / "reports" / name).read_bytes(), name
    assert res["stats"]["opus-4.8/name/test set/tasks"] == 6
