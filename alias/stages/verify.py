"""SANY + TLC on the original and renamed copy of every task -> the test set (paths.verify)."""

from __future__ import annotations

import shutil
from typing import Any

from alias.config import Config, Paths
from alias.corpus.testset import TestSet
from alias.corpus.verify import verify_tasks
from alias.progress import progress_bar
from alias.stages.common import executor, tool_config, worker_tools, write_timings
from alias.store.db import write_table
from alias.store.models import Membership, TlcRun

NAME = "verify"


def run(config: Config, paths: Paths) -> dict[str, Any]:
    """Verify every task on ``config.executor`` (locally: ``tla.parallel`` processes); writes
    ``tlc_runs``, ``test_set`` and the run logs (``logs/<run_key>.log.gz``); the wall
    times go to the timings file under ``paths.work``."""
    testset = TestSet.load(paths, verified=False)
    tools = worker_tools(config, tool_config(config))
    logs = paths.verify / "logs"
    if logs.exists():
        shutil.rmtree(logs)
    with progress_bar("verify", total=len(testset.tasks)) as bar, executor(config, config.tla.parallel) as ex:
        runs, rows = verify_tasks(testset, tools, logs, ex, progress=bar.advance, seed=config.tla.seed)
    write_timings(paths.work, NAME, [{k: r.get(k) for k in ("task_id", "condition", "tool", "run_key", "wall_s")}
                                     for r in runs])
    write_table(runs, TlcRun, paths.verify / "tlc_runs.parquet")
    ts = write_table(rows, Membership, paths.verify / "test_set.parquet")
    return {"tasks": len(ts), "test_set": int(ts.in_test_set.sum()),
            "excluded": ts.loc[~ts.in_test_set, "reason"].value_counts().to_dict(),
            "manifest_mismatch": int((ts.manifest_match == False).sum())}  # noqa: E712
