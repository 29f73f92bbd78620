"""Where SANY/TLC work runs (alias.tla.executor): the local pool of processes or threads,
a Dask cluster; a worker killed mid-run loses and duplicates nothing; an unreachable
scheduler is one line naming its address."""
from __future__ import annotations

import json
import os
import signal
import threading
import time

import pandas as pd
import pytest

from alias.errors import AliasError
from alias.grade.cache import ToolRunner
from alias.grade.run import GRADES, grade_samples, read_journal
from alias.tla.executor import DaskExecutor, LocalExecutor, make_executor
from test_grade import embedded_reference, kill_samples


def _times(ctx: int, item: int) -> tuple[int, int]:
    return ctx * item, os.getpid()


@pytest.mark.parametrize("workers,threads", [(2, False), (2, True), (1, False)])
def test_local_executor_returns_every_item_once(workers, threads):
    got = list(LocalExecutor(workers, threads).run(_times, 3, [1, 2, 3, 4, 5]))
    assert sorted((i, r[0]) for i, r in got) == [(0, 3), (1, 6), (2, 9), (3, 12), (4, 15)]
    pids = {r[1] for _i, r in got}
    # a process pool runs the items outside this process; threads (or one worker) inside it
    assert (os.getpid() in pids) == (threads or workers == 1)


def test_make_executor_names_the_kinds():
    assert isinstance(make_executor("local", workers=3), LocalExecutor)
    with pytest.raises(AliasError, match="unknown executor kind 'slurm': local or dask"):
        make_executor("slurm")


def test_an_unreachable_scheduler_is_one_line_naming_its_address():
    t0 = time.monotonic()
    with pytest.raises(AliasError) as e:
        DaskExecutor("tcp://127.0.0.1:9", connect_timeout_s=3)
    msg = str(e.value)
    assert msg.startswith("cannot reach the Dask scheduler at tcp://127.0.0.1:9: ") and "\n" not in msg
    assert time.monotonic() - t0 < 30


def _kill_one_worker_when(ex: DaskExecutor, journal, min_lines: int, killed: dict) -> None:
    """SIGKILL one Dask worker process once the journal holds ``min_lines`` samples."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if journal.exists() and len(journal.read_text().splitlines()) >= min_lines:
            break
        time.sleep(0.1)
    pids = ex.client.run(os.getpid)
    addr, pid = sorted(pids.items())[0]
    killed.update(addr=addr, pid=pid, lines=len(journal.read_text().splitlines()))
    os.kill(pid, signal.SIGKILL)


@pytest.mark.tlc
def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(tool_config, tmp_path):
    """Grade six samples on a local Dask cluster of two worker processes, SIGKILL one
    worker after the first verdict: the scheduler gives its item to another worker; the
    journal holds each sample once and the verdicts equal the local executor's."""
    ref = embedded_reference("TrafficLight", "TrafficLight")
    refs = {(ref.task_id, "original"): ref}
    samples = kill_samples(ref)
    out = tmp_path / "dask"
    killed: dict = {}
    with DaskExecutor(local_workers=2) as ex:
        before = set(ex.client.run(os.getpid).values())
        killer = threading.Thread(target=_kill_one_worker_when, args=(ex, out / "journal.jsonl", 1, killed))
        killer.start()
        dask = grade_samples(samples, refs, ToolRunner(tool_config, tmp_path / "c2"), out, executor=ex)
        killer.join()
        after = set(ex.client.run(os.getpid).values())
    # the local executor's verdicts on the tool runs the Dask run cached (a cold cache would
    # only run the same TLC again; the Dask run itself needs one, so the kill lands mid-run)
    local = grade_samples(samples, refs, ToolRunner(tool_config, tmp_path / "c2"), tmp_path / "local",
                          executor=LocalExecutor(2))
    assert killed["pid"] in before and killed["pid"] not in after, "the worker was killed and replaced"
    assert 1 <= killed["lines"] < len(samples), "the kill landed mid-run"
    keys = [json.loads(x)["key"][3] for x in (out / "journal.jsonl").read_text().splitlines()]
    assert sorted(keys) == list(range(len(samples))), "each sample journaled exactly once"
    assert len(read_journal(out / "journal.jsonl")) == len(samples) and len(dask) == len(samples) * len(GRADES)
    cols = ["task_id", "sample_idx", "grade", "passed", "reason", "tlc_kind", "distinct_states"]
    pd.testing.assert_frame_equal(dask[cols], local[cols])
    assert dask[dask.grade == "behavior"].passed.tolist() == [True, False, False, False, True, False]
