"""Verification of the renamed test set (Methods "Test set"): strict SANY then TLC on the
original and on the CIR-renamed copy of every task; a task enters the test set when both
parse, both succeed under TLC and the renamed copy reports the original's distinct states
and depth.

:func:`verify_tasks` returns the rows of the ``tlc_runs`` and ``test_set`` tables
(:mod:`alias.store.models`) and writes each run's log under a folder.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import pandas as pd

from alias.corpus.testset import TestSet
from alias.tla.executor import Executor, LocalExecutor
from alias.tla.cfg import CfgError, for_jar, parse_cfg
from alias.tla.lexer import tokens
from alias.tla.tlc_output import stable_log
from alias.tla.tools import ToolConfig, run_sany, run_tlc, supports_check_deadlock, tool_version

__all__ = ["Copy", "RANDOM_OPERATORS", "random_operators", "VerifyJob", "VerifyContext", "verify_job", "verify_task", "verify_tasks", "write_logs", "manifest_note"]


@dataclass(frozen=True)
class Copy:
    """One copy of a task to check: its files (``Module.tla -> text``), the module TLC
    runs and the cfg text."""

    files: dict[str, str]
    main: str
    cfg_text: str


def _float(v: Any) -> float:
    try:
        return 0.0 if v is None or pd.isna(v) else float(v)
    except (TypeError, ValueError):
        return 0.0


def _int(v: Any) -> int | None:
    try:
        return None if v is None or pd.isna(v) else int(v)
    except (TypeError, ValueError):
        return None


def _run_row(tool: str, main: str, res: Any, config: ToolConfig, logs: Path, flags: tuple[str, ...] = ()) -> dict:
    """The ``tlc_runs`` row of one SANY or TLC result (with its ``wall_s``, which the stage
    moves to its timings file, and, under ``_log``, the run's log, normalized
    (:func:`stable_log`) and gzipped without a timestamp, for ``logs/<run_key>.log.gz``:
    :func:`write_logs` writes it)."""
    log = logs / f"{res.run_key}.log.gz"
    return {
        "_log": gzip.compress(_library_relative(stable_log(res.output or ""), config).encode("utf-8"), mtime=0),
        "tool": tool, "main_module": main, "run_key": res.run_key, "kind": res.kind,
        "exit_code": res.exit_code, "ok_exit": getattr(res, "ok_exit", None),
        "ok_strict": getattr(res, "ok_strict", None), "distinct_states": getattr(res, "distinct_states", None),
        "states_generated": getattr(res, "states_generated", None), "depth": getattr(res, "depth", None),
        "wall_s": round(float(res.wall_s), 3), "tool_version": tool_version(config), "flags": " ".join(flags),
        "log_path": log.as_posix(),
        "error_message": _stable_text(getattr(res, "error_message", None) or "; ".join(getattr(res, "errors", []) or [])),
    }


def _library_relative(log: str, config: ToolConfig) -> str:
    """``log`` with each library folder (``config.library``, absolute on this machine)
    written ``<library>/<folder name>``: TLC names the library files it parses."""
    for d in sorted(config.library, key=len, reverse=True):
        log = log.replace(str(d), f"<library>/{Path(d).name}")
    return log


def _stable_text(text: str | None) -> str | None:
    """A tool message without dates, wall times or temp folders (:func:`stable_log`)."""
    return stable_log(text) if text else None


#: Operators whose value TLC draws at random (module TLC and the Randomization module).
RANDOM_OPERATORS = frozenset({"RandomElement", "RandomSubset", "RandomSetOfSubsets", "RandomSubsetSet",
                              "TestRandomSubset", "TestRandomSetOfSubsets"})


def random_operators(copy: Copy) -> list[str]:
    """The random-draw operators (:data:`RANDOM_OPERATORS`) that the code of ``copy``'s
    modules uses, sorted (comments and strings do not count)."""
    used = {t for text in copy.files.values() for t in tokens(text)}
    return sorted(used & RANDOM_OPERATORS)


def check_copy(copy: Copy, config: ToolConfig, logs: Path, seed: int | None = None) -> tuple[dict, dict]:
    """Strict SANY then TLC on one copy of a task; returns the two ``tlc_runs`` rows (the
    TLC row is ``{}`` when SANY rejects the copy). A copy that draws at random
    (:func:`random_operators`) runs with TLC's ``-seed seed`` when ``seed`` is given, so that
    its state count is reproducible."""
    sany = run_sany(copy.files, copy.main, config)
    srow = _run_row("sany", copy.main, sany, config, logs)
    if not sany.ok_strict:
        return srow, {}
    try:
        modern = supports_check_deadlock(config)  # TLC >= 2.16 also knows ALIAS
        cfg_out, flags = for_jar(parse_cfg(copy.cfg_text), modern, supports_alias=modern, text=copy.cfg_text)
    except CfgError as e:
        return srow, {"tool": "tlc", "main_module": copy.main, "kind": "config_error", "run_key": "",
                      "error_message": str(e), "wall_s": 0.0, "tool_version": "", "flags": "", "log_path": ""}
    if seed is not None and random_operators(copy):
        flags = tuple(flags) + ("-seed", str(int(seed)))
    tlc = run_tlc(copy.files, copy.main, cfg_out, config, extra_flags=flags)
    return srow, _run_row("tlc", copy.main, tlc, config, logs, flags=flags)


def _sany_reason(condition: str, row: dict) -> str:
    """``sany_<condition>`` for a module SANY rejects; ``..._timeout``/``..._crash`` when
    SANY did not finish, so a tool failure is never read as a parse failure."""
    kind = row.get("kind")
    return f"sany_{condition}_{kind}" if kind in ("timeout", "crash") else f"sany_{condition}"


def _original_outcome(ts: dict, s: dict, t: dict) -> bool:
    """Record the original's outcome in the ``test_set`` row; whether it may go on."""
    if t:
        ts.update(original_kind=t["kind"], original_distinct_states=t.get("distinct_states"),
                  original_states_generated=t.get("states_generated"), original_depth=t.get("depth"))
        md = ts["manifest_distinct_states"]
        if md is not None and t.get("kind") == "success" and t.get("distinct_states") is not None:
            ts["manifest_match"] = bool(md == t["distinct_states"])
    if not s.get("ok_strict"):
        ts.update(reason=_sany_reason("original", s), detail=s.get("error_message"))
    elif t.get("kind") != "success":
        ts.update(reason=f"tlc_original_{t.get('kind')}", detail=t.get("error_message"))
    return ts["reason"] is None


def _renamed_outcome(ts: dict, t: dict, s2: dict, t2: dict, drawn: list[str] = ()) -> None:
    """Record the renamed copy's outcome and the task's membership; ``drawn``: the random
    operators the task uses (a state mismatch is then ``state_mismatch_randomized``: TLC's
    draws depend on the order of values, which renaming changes)."""
    if t2:
        ts.update(renamed_kind=t2["kind"], renamed_distinct_states=t2.get("distinct_states"),
                  renamed_depth=t2.get("depth"))
    if not s2.get("ok_strict"):
        ts.update(reason=_sany_reason("renamed", s2), detail=s2.get("error_message"))
    elif t2.get("kind") != "success":
        ts.update(reason=f"tlc_renamed_{t2.get('kind')}", detail=t2.get("error_message"))
    elif (t2.get("distinct_states"), t2.get("depth")) != (t.get("distinct_states"), t.get("depth")):
        detail = (f"original {t.get('distinct_states')}/{t.get('depth')} vs renamed "
                  f"{t2.get('distinct_states')}/{t2.get('depth')} (distinct/depth)")
        if drawn:
            detail += (f"; the spec draws with {', '.join(drawn)}: with the same -seed TLC draws other "
                       "values once renaming reorders the values drawn from")
        ts.update(reason="state_mismatch_randomized" if drawn else "state_mismatch", detail=detail)
    else:
        ts["in_test_set"] = True


def verify_task(task: Any, original: Copy, renamed: Copy | None, config: ToolConfig,
                logs: Path, seed: int | None = None) -> tuple[list[dict], dict]:
    """Verify one task (a ``tasks`` row): SANY (strict) + TLC on the original and the
    renamed copy (``None`` when renaming failed), with TLC's ``-seed seed`` for a task that
    draws at random. Returns the ``tlc_runs`` rows and the ``test_set`` row, with a reason
    code when the task is excluded."""
    runs: list[dict] = []
    ts: dict[str, Any] = {"task_id": task.task_id, "in_test_set": False, "reason": None, "detail": None,
                          "manifest_distinct_states": _int(task.expected_distinct_states)}
    s, t = check_copy(original, config, logs, seed)
    runs += [r | {"task_id": task.task_id, "condition": "original"} for r in (s, t) if r]
    if not _original_outcome(ts, s, t):
        return runs, ts
    if renamed is None:
        ts.update(reason="rename_error", detail=None)
        return runs, ts
    s2, t2 = check_copy(renamed, config, logs, seed)
    runs += [r | {"task_id": task.task_id, "condition": "random"} for r in (s2, t2) if r]
    _renamed_outcome(ts, t, s2, t2, random_operators(original))
    return runs, ts


def _copies(testset: TestSet, task: Any) -> tuple[Copy, Copy | None]:
    """The original and (when renaming succeeded) the renamed copy of a task, each with
    the task's library modules."""
    lib = {f"{m}.tla": t for m, t in testset.module_texts(task.task_id, library=True).items()}
    own = {f"{m}.tla": t for m, t in testset.module_texts(task.task_id, library=False).items()}
    original = Copy(own | lib, task.model_module, task.cfg_text)
    rt = testset.renamed_ok()
    if task.task_id not in rt.index:
        return original, None
    rm = testset.renamed_modules[testset.renamed_modules.task_id == task.task_id]
    files = {f"{r.module}.tla": r.text for r in rm.itertuples()}
    return original, Copy(files | lib, rt.loc[task.task_id, "model_module"], rt.loc[task.task_id, "cfg_text"])


@dataclass(frozen=True)
class VerifyJob:
    """One task to verify, self-contained (its ``test_set`` seed fields and both copies with
    every module text), so that any worker can run it."""

    task_id: str
    expected_distinct_states: Any
    original: Copy
    renamed: Copy | None


@dataclass(frozen=True)
class VerifyContext:
    """What every verify job shares: the tool settings, the log folder's name and TLC's
    ``-seed`` for tasks that draw at random."""

    tools: ToolConfig
    logs: Path
    seed: int | None = None


def verify_job(ctx: VerifyContext, job: VerifyJob) -> tuple[list[dict], dict]:
    """:func:`verify_task` in a worker; a check that raises excludes the task with reason
    ``verify_error`` (and loses no other task's rows)."""
    task = SimpleNamespace(task_id=job.task_id, expected_distinct_states=job.expected_distinct_states)
    try:
        return verify_task(task, job.original, job.renamed, ctx.tools, ctx.logs, ctx.seed)
    except Exception as e:
        return [], {"task_id": job.task_id, "in_test_set": False, "reason": "verify_error",
                    "detail": f"{type(e).__name__}: {e}"}


def _jobs(testset: TestSet) -> list[VerifyJob]:
    """The verify jobs of every ingested task, longest expected TLC run first."""
    jobs = []
    for task in testset.tasks.itertuples():
        original, renamed = _copies(testset, task)
        jobs.append(VerifyJob(task.task_id, _int(task.expected_distinct_states), original, renamed))
    runtime = {t: _float(v) for t, v in zip(testset.tasks.task_id, testset.tasks.get("manifest_runtime_s", []))}
    return sorted(jobs, key=lambda j: -runtime.get(j.task_id, 0.0))


def write_logs(runs: list[dict]) -> None:
    """Write (in the driver) each run's gzipped log (``_log``) to its ``log_path``."""
    for r in runs:
        data = r.pop("_log", None)
        if data is not None and r.get("log_path"):
            Path(r["log_path"]).parent.mkdir(parents=True, exist_ok=True)
            Path(r["log_path"]).write_bytes(data)


def verify_tasks(testset: TestSet, config: ToolConfig, logs: Path, executor: Executor | None = None,
                 progress: Callable[[], None] | None = None, seed: int | None = None) -> tuple[list[dict], list[dict]]:
    """:func:`verify_task` over every ingested task on ``executor`` (default: one local
    thread), longest expected run first; writes the logs under ``logs`` and returns the
    ``tlc_runs`` and ``test_set`` rows, sorted. A task whose check raises is excluded with
    reason ``verify_error``; no other row is lost."""
    errors = testset.renamed_tasks.set_index("task_id")["error"].to_dict()
    jobs = _jobs(testset)
    runs: list[dict] = []
    rows: list[dict] = []
    for _i, (r, ts) in (executor or LocalExecutor(1)).run(verify_job, VerifyContext(config, Path(logs), seed), jobs):
        write_logs(r)
        runs += r
        if ts.get("reason") == "rename_error":
            ts["detail"] = errors.get(ts["task_id"])
        rows.append(ts)
        if progress is not None:
            progress()
    for row in rows:
        row["manifest_note"] = manifest_note(row)
    runs.sort(key=lambda r: (r["task_id"], r["condition"], r["tool"]))
    rows.sort(key=lambda r: r["task_id"])
    return runs, rows


def manifest_note(row: dict) -> str | None:
    """Why a task has no manifest comparison, or how its count differs (None when equal)."""
    if row.get("manifest_distinct_states") is None:
        return "manifest gives no distinctStates"
    if row.get("manifest_match") is None or bool(row["manifest_match"]):
        return None  # equal, or the original did not succeed (its reason says why)
    return (f"TLC here found {row.get('original_distinct_states')} distinct states, the manifest "
            f"{row['manifest_distinct_states']}")
