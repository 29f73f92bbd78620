"""The grading benchmark on the CI fixture (three TLA+-Bench tasks, five outputs): the
naive procedure and ALIAS (cold, warm, on Dask) give the same verdict on every output."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RELEASE = REPO.parent / "shared" / "corpus" / "tlabench-release"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_grade", REPO / "benchmarks" / "grade.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.tlc
@pytest.mark.skipif(not RELEASE.is_dir(), reason="needs ../shared/corpus/tlabench-release")
def test_grade_benchmark_on_the_fixture(tmp_path, capsys):
    res = _bench().main(["--ids", str(REPO / "tests/fixtures/tlabench_ids.json"), "--tlc-timeout", "120",
                         "--workers", "2", "--dask", "2", "--work", str(tmp_path)])
    assert res["outputs"] == 5 and res["timeouts"] == []
    assert res["differences"] == [], res["differences"]
    runs = {r["label"]: r for r in res["runs"]}
    assert runs["cold"]["tool_runs"] > 0 and runs["warm"]["tool_runs"] == 0     # warm: all from the cache
    assert runs["dask LocalCluster of 2"]["differences_vs_local"] == []
    assert all(v["sany_pass"] in (True, False) for v in res["naive_verdicts"].values())
    out = capsys.readouterr().out
    assert "(a) naive" in out and "verdict differences, naive vs ALIAS: 0" in out
