"""Meaningful names (Appendix R): proposed maps applied and re-verified (paths.meaningful)."""

from __future__ import annotations

import shutil
import sys
from typing import Any

from alias.config import Config, Paths
from alias.corpus.testset import TestSet
from alias.generate.registry import ModelDisabled
from alias.generate.types import MissingCredentials
from alias.progress import progress_bar
from alias.rename import meaningful_run as mr
from alias.rename.proposers import propose, proposer_model
from alias.stages.common import executor, tool_config, worker_tools, write_status
from alias.store.db import write_table
from alias.store.models import MeaningfulMapRow, MeaningfulModule, MeaningfulProposal, MeaningfulTask

NAME = "meaningful"


def run(config: Config, paths: Paths) -> dict[str, Any]:
    """One proposed name map per test-set task (``meaningful.proposer``), applied and
    re-verified with SANY + TLC; writes proposals, meaningful_tasks, meaningful_map,
    meaningful_modules (+ the files of verified copies) and ``status.json``. A provider
    proposer's batch ledger lives under ``paths.work`` (a rerun resumes, never pays
    twice). Without the proposer's API key (or with the proposer disabled) the tables are
    written empty and the status says why."""
    m, out = config.meaningful, paths.meaningful
    testset = TestSet.load(paths)
    base = {"proposer": m.proposer.backend, "model": proposer_model(m.proposer), "view": m.view}
    run_, requests = mr.naming_requests(testset, m.view, set(m.tasks), base)
    if (out / "files").exists():
        shutil.rmtree(out / "files")
    try:
        replies = propose(requests, m.proposer, ledger=paths.work / "ledgers" / f"{NAME}.sqlite",
                          poll_interval_s=m.poll_interval_s,
                          timeout_s=m.batch_timeout_s or None)
    except (MissingCredentials, ModelDisabled) as e:
        print(f"meaningful: skipped, {e}", file=sys.stderr)
        _write(paths, mr.MeaningfulRun(base))
        return _status(paths, base | {"status": "missing_credentials" if isinstance(e, MissingCredentials)
                                      else "disabled", "message": f"meaningful: skipped, {e}"}
                       | mr.MeaningfulRun(base).status())
    mr.apply_replies(run_, requests, replies, m.view)
    if run_.results:
        with progress_bar("meaningful", total=len(run_.results)) as bar, executor(config, config.tla.parallel) as ex:
            mr.verify_copies(run_, testset, worker_tools(config, tool_config(config)), ex, progress=bar.advance)
    mr.write_verified_files(run_, testset, out / "files")
    _write(paths, run_)
    return _status(paths, base | {"status": "ok", "message": None} | run_.status())


def _write(paths: Paths, run_: mr.MeaningfulRun) -> None:
    out = paths.meaningful
    write_table(sorted(run_.proposals, key=lambda r: r["task_id"]), MeaningfulProposal, out / "proposals.parquet")
    write_table(sorted(run_.tasks.values(), key=lambda r: r["task_id"]), MeaningfulTask,
                out / "meaningful_tasks.parquet")
    write_table(sorted(run_.maps, key=lambda r: (r["task_id"], r["old"])), MeaningfulMapRow,
                out / "meaningful_map.parquet")
    write_table(run_.modules, MeaningfulModule, out / "meaningful_modules.parquet")


def _status(paths: Paths, status: dict[str, Any]) -> dict[str, Any]:
    write_status(paths.meaningful / "status.json", status)
    return status
