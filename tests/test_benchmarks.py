"""The grading benchmark on the CI fixture (three TLA+-Bench tasks, five outputs): the
naive procedure and ALIAS (cold, warm, on Dask, with the confinement off) give the same
verdict on every output."""
from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RELEASE = REPO.parent / "shared" / "corpus" / "tlabench-release"


def _bench(name: str = "grade"):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "benchmarks" / f"{name}.py")
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
    assert runs["cold, confinement off"]["differences_vs_naive"] == 0 and runs["cold, confinement off"]["tool_runs"] > 0
    assert all(v["sany_pass"] in (True, False) for v in res["naive_verdicts"].values())
    out = capsys.readouterr().out
    assert "(a) naive" in out and "verdict differences, naive vs ALIAS: 0" in out


@pytest.mark.skipif(not RELEASE.is_dir(), reason="needs ../shared/corpus/tlabench-release")
def test_the_speed_sample_is_drawn_again_from_its_seed():
    bench = _bench()
    ids = bench.drawn_ids(RELEASE, 24, 33)
    assert len(set(ids)) == 24 and ids == bench.drawn_ids(RELEASE, 24, 33)
    assert {"1568", "1578", "1600", "784"} <= set(ids)      # the outputs the speed figures name
    rows = bench.outputs(RELEASE, ["claude-opus-4-5", "gemini-2-5-pro"], regimes=("default", "cfgaware"),
                         keep=set(ids))
    assert {r["task_id"] for r in rows} <= set(ids) and len(rows) == 89   # 85 of them in the test set


def test_the_verify_ratio_ceiling_is_the_cores_over_the_cores_one_process_keeps_busy(monkeypatch):
    verify = _bench("verify")
    monkeypatch.setattr(verify.os, "cpu_count", lambda: 2)
    assert verify._ceiling(100.0, 125.0) == pytest.approx(1.6)   # one process keeps 1.25 cores busy
    assert verify._ceiling(100.0, 80.0) == 2.0                   # never more than the processes
    monkeypatch.setattr(verify.os, "cpu_count", lambda: 16)
    assert verify._ceiling(100.0, 125.0, processes=4) == 4.0


@pytest.mark.skipif(not Path("/proc/stat").is_file(), reason="needs /proc/stat")
def test_busy_cpu_seconds_count_a_busy_loop():
    verify = _bench("verify")
    before = verify.busy_cpu_s()
    t = time.process_time()
    while time.process_time() - t < 0.5:
        pass
    assert verify.busy_cpu_s() - before >= 0.4   # the loop's own 0.5 s, seen machine-wide


def test_the_paper_grades_split_by_the_refinement_verdict_sum_each_outputs_own_seconds():
    bench = _bench()
    a, b, c = ("1", "m"), ("2", "m"), ("3", "m")
    seconds = {"name": {a: 10.0, b: 2.0, c: 3.0}, "behavior_renaming": {a: 5.0, b: 4.0, c: 3.0},
               "behavior": {a: 45.0, b: 6.0, c: 9.0}}
    accepted, rejected = bench.by_verdict(seconds, {a: True, b: False, c: False})
    assert (accepted["outputs"], accepted["name_s"], accepted["behavior_over_name"]) == (1, 10.0, 4.5)
    assert (rejected["outputs"], rejected["behavior_s"], rejected["behavior_renaming_over_name"]) == (2, 15.0, 1.4)
    lines = bench.paper_lines({"outputs": 3, "by_verdict": [accepted, rejected]} |
                              {f"{k}_{x}": 1.0 for k in seconds for x in ("s", "per_min")} |
                              {f"{k}_passed": 1 for k in seconds})
    assert lines[-2].split()[:2] == ["accepted", "1"] and lines[-1].split()[-1] == "3.00"
