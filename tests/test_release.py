"""The push/pull round trip of a release, against a temporary local DVC remote.

A temporary git + DVC repository holds stage tables (samples, verdicts and the tables the
statistics views read, as Parquet at their TABLE_SOURCES paths, tracked with ``dvc add``)
and a two-stage pipeline (``load``: build the DuckDB store; ``report``: the statistics
reports). It is reproduced, committed and pushed to a local directory remote. A
``git clone`` of it then runs ``dvc pull`` with an empty cache: the data must arrive
byte-identical, DVC must consider every stage up to date (``dvc repro`` runs nothing),
and a store built from the pulled Parquet files must give the same reports.
Everything runs in pytest's temporary directories; the repository's own DVC state is
never touched.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from alias.report.stats_tables import write_stats_reports
from alias.store.db import build_store, write_parquet
from alias.store.models import TABLE_SOURCES

from test_stats_views import synthetic_tables  # tests/ is on sys.path under pytest

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
DVC = BIN / "dvc"
B = 300                                   # bootstrap resamples in the report stage
TRACKED = ("data/controls", "data/verify", "data/identifiers")

pytestmark = pytest.mark.skipif(not DVC.exists() or shutil.which("git") is None,
                                reason="needs git and the virtualenv's dvc")


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        "DVC_NO_ANALYTICS": "1",
        "DVC_SITE_CACHE_DIR": str(tmp / "dvc-site-cache"),
        "GIT_AUTHOR_NAME": "ALIAS test", "GIT_AUTHOR_EMAIL": "alias-test@example.invalid",
        "GIT_COMMITTER_NAME": "ALIAS test", "GIT_COMMITTER_EMAIL": "alias-test@example.invalid",
        "GIT_TERMINAL_PROMPT": "0",
    })
    env.pop("GIT_DIR", None)
    env.pop("GIT_WORK_TREE", None)
    return env


def _run(args: list, cwd: Path, env: dict) -> str:
    r = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, f"{args} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r.stdout + r.stderr


def _rel(table: str) -> str:
    rel = TABLE_SOURCES[table][1]
    return rel if isinstance(rel, str) else rel[0]


def _digests(root: Path, dirs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for d in dirs:
        for p in sorted((root / d).rglob("*")):
            if p.is_file():
                out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _dvc_yaml() -> str:
    py = sys.executable
    load = ("from alias.store.db import build_store; "
            "build_store('data/alias.duckdb', '.', 'sql')")
    report = ("from alias.report.stats_tables import write_stats_reports; "
              f"write_stats_reports('data/alias.duckdb', 'reports', n_resamples={B})")
    stages = {
        "load": {"cmd": f'{py} -c "{load}"', "deps": [*TRACKED, "sql"], "outs": ["data/alias.duckdb"]},
        "report": {"cmd": f'{py} -c "{report}"', "deps": ["data/alias.duckdb"], "outs": ["reports"]},
    }
    return yaml.safe_dump({"stages": stages}, sort_keys=False)

def test_push_pull_round_trip(tmp_path):
    env = _env(tmp_path)
    origin, remote, clone = tmp_path / "origin", tmp_path / "remote", tmp_path / "clone"
    origin.mkdir()
    remote.mkdir()

    # ---- origin: tables (dvc add), pipeline (dvc repro), local remote, push
    _run(["git", "init", "-q"], origin, env)
    _run([DVC, "init", "-q"], origin, env)
    for name, df in synthetic_tables().items():
        write_parquet(df, origin / _rel(name))
    shutil.copytree(REPO / "sql", origin / "sql")
    _run([DVC, "add", "-q", *TRACKED], origin, env)
    (origin / "dvc.yaml").write_text(_dvc_yaml())
    out = _run([DVC, "repro"], origin, env)
    assert "load" in out and "report" in out
    _run([DVC, "remote", "add", "-d", "local", remote], origin, env)
    _run(["git", "add", ".dvc/config", ".dvcignore", ".gitignore", "data", "dvc.yaml", "dvc.lock", "sql"],
         origin, env)
    _run(["git", "commit", "-q", "-m", "release"], origin, env)
    _run([DVC, "push"], origin, env)
    assert any(p.is_file() for p in remote.rglob("*")), "nothing pushed to the remote"
    assert "nothing to commit" in _run(["git", "status"], origin, env)  # no tracked file left dirty

    published = _digests(origin, (*TRACKED, "data/alias.duckdb", "reports"))
    assert {f"{_rel(t)}" for t in ("samples", "verdicts", "test_set", "required_names")} <= set(published)
    assert {"reports/table_1.md", "reports/table_U_hidden.md", "reports/table_P_disagreements.md"} <= set(published)

    # ---- clone with an empty cache; the origin's cache is gone, so data can only come from the remote
    _run(["git", "clone", "-q", origin, clone], tmp_path, env)
    shutil.rmtree(origin / ".dvc" / "cache")
    assert not (clone / "data" / "controls").exists()
    _run([DVC, "pull"], clone, env)
    assert _digests(clone, (*TRACKED, "data/alias.duckdb", "reports")) == published

    # nothing to regenerate: every stage and tracked file is up to date, repro runs no stage
    status = _run([DVC, "status"], clone, env)
    assert "up to date" in status.lower(), status
    repro = _run([DVC, "repro"], clone, env)
    assert "Running stage" not in repro, repro
    assert _digests(clone, (*TRACKED, "data/alias.duckdb", "reports")) == published

    # the pulled tables build a store and give the published reports
    db = tmp_path / "rebuilt" / "alias.duckdb"
    build_store(db, clone, clone / "sql")
    res = write_stats_reports(db, tmp_path / "rebuilt" / "reports", n_resamples=B)
    for name, path in res["files"].items():
        assert Path(path).read_bytes() == (clone / "reports" / name).read_bytes(), name
    assert res["stats"]["opus-4.8/name/test set/tasks"] == 6
