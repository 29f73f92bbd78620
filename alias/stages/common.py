"""What several stage modules share: the TLA+ tool settings and the status file."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from alias.config import Config
from alias.tla.executor import Executor, make_executor
from alias.tla.tools import (ToolConfig, capabilities, check_java, confined, confinement, default_jvm_cache, find_jar,
                             overrides_jar)

__all__ = ["tool_config", "grade_tool_config", "executor", "worker_tools", "write_status", "write_timings"]


def tool_config(config: Config, *, check: bool = True) -> ToolConfig:
    """The :class:`~alias.tla.tools.ToolConfig` of ``config.tla`` with the corpus's library
    folders; ``check``: start Java once so that a missing Java is one setup error, not a
    failed run per task (raises :class:`~alias.tla.tools.ToolError`)."""
    t = config.tla
    tc = ToolConfig(java=t.java, jar=find_jar(t.jar or None),
                    library=tuple(str(Path(p).resolve()) for p in config.corpus.library),
                    timeout_s=t.timeout_s, memory_mb=t.memory_mb, workers=t.workers,
                    jvm_cache=default_jvm_cache(), cds=t.cds, sany_server=t.sany_server,
                    tlc_server=t.tlc_server, short_run_flags=t.short_run_flags,
                    confine=t.confine, disk_mb=t.disk_mb, max_processes=t.max_processes,
                    overrides_jar=str(Path(t.overrides_jar).resolve()) if t.overrides_jar else "", seed=t.seed,
                    properties=tuple(sorted(t.properties.items())))
    if check:
        check_java(tc)
        _warn_if_fallback(tc)
        _warn_if_unconfined(tc)  # confine: on where the kernel refuses stops here, in one line
        overrides_jar(tc)  # a missing jar or one that cannot be repaired: one setup error, not a failed run per task
    return tc


_WARNED: set[str] = set()


def _warn_if_fallback(tc: ToolConfig) -> None:
    """One line on stderr per process when the tools are the 2020 fallback jar (TLC 2.15)."""
    caps = capabilities(tc)
    if caps.fallback and str(tc.jar) not in _WARNED:
        _WARNED.add(str(tc.jar))
        print(f"alias: TLA+ tools fallback in use ({caps.version}, {tc.jar}); results are reported with "
              "v1.8.0: set ALIAS_TLA2TOOLS or tla.jar to its tla2tools.jar (README, TLA+ tools)", file=sys.stderr)


def _warn_if_unconfined(tc: ToolConfig) -> None:
    """One line on stderr per process when ``confine: auto`` finds that this machine cannot
    confine the runs (they run as before, unconfined and without the overrides jar), or
    when it confines them but cannot limit their processes (root without a pids cgroup)."""
    is_confined = confined(tc)  # confine: on where the kernel refuses: the stage stops here, in one line
    if "unconfined" in _WARNED:
        return
    detail = confinement(tc.java).detail
    if not is_confined and tc.confine == "auto":
        _WARNED.add("unconfined")
        print(f"alias: SANY/TLC runs are NOT confined ({detail}): they run unconfined"
              + (" and without the Community Modules' Java overrides" if tc.overrides_jar else "")
              + " (README, Confinement; tla.confine: on stops instead)", file=sys.stderr)
    elif is_confined and "NOT limited" in detail:
        _WARNED.add("unconfined")
        print(f"alias: SANY/TLC runs are confined, but their {detail.split('; ', 1)[1]} (README, Confinement)",
              file=sys.stderr)


def grade_tool_config(config: Config, *, check: bool = True) -> ToolConfig:
    """:func:`tool_config` with the grading time limit ``grade.timeout_s``."""
    return dataclasses.replace(tool_config(config, check=check), timeout_s=config.grade.timeout_s)


def executor(config: Config, parallel: int) -> Executor:
    """The :class:`~alias.tla.executor.Executor` of ``config.executor``; a local one runs
    ``parallel`` processes (the stage's own setting)."""
    e = config.executor
    return make_executor(e.kind, workers=parallel, dask_address=e.dask.address, dask_local_workers=e.dask.local_workers)


def worker_tools(config: Config, tools: ToolConfig) -> ToolConfig:
    """``tools`` as the workers run them: on a Dask cluster with ``executor.worker_jar``, that
    jar."""
    e = config.executor
    return dataclasses.replace(tools, jar=e.dask.worker_jar) if e.kind == "dask" and e.dask.worker_jar else tools


def write_status(path: Path, status: dict[str, Any]) -> None:
    """Write a stage's ``status.json`` (sorted keys, one trailing newline)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(status, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")


def write_timings(work: Path, stage: str, rows: list[dict[str, Any]]) -> Path:
    """Write a stage's run timings (wall seconds, throughput: machine facts, not results)
    as JSON lines to ``<work>/timings/<stage>.jsonl``, outside every DVC-tracked output."""
    path = work / "timings" / f"{stage}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, sort_keys=True, default=str) + "\n" for r in rows), encoding="utf-8")
    return path
