"""Inspect eval logs as samples: the replay layout ``inspect`` (README "Using ALIAS from Inspect").

Logs are read through :mod:`inspect_ai.log` (``.eval`` and ``.json`` alike, never parsed by
hand; the ``inspect`` extra). One record per sample of every log: ``task_id`` and
``condition`` from the sample's metadata (what the ``alias_cir`` tasks put there; a
sample of another task may name them in its metadata too), ``model`` the log's model
(``eval.model``, e.g. ``openai/gpt-4o``), ``sample_idx`` the epoch minus one, ``text`` the
completion. A sample that errored or names no task is a rejected record with its reason.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from alias.errors import AliasError

__all__ = ["LogRecord", "log_files", "inspect_records"]


@dataclass(frozen=True)
class LogRecord:
    """One sample of a log: its key fields, text and where it came from (``log``, ``id``);
    ``error`` says why it was rejected (``None``: a good record)."""

    task_id: str | None
    condition: str | None
    model: str
    sample_idx: int
    text: str
    log: str
    sample_id: str
    error: str | None = None
    extra: str | None = None


def log_files(path: str | Path) -> list[Path]:
    """The Inspect logs at ``path``: the file itself, or every ``.eval``/``.json`` log
    below the folder (sorted). Raises :class:`AliasError` when there is none."""
    from inspect_ai.log import list_eval_logs

    p = Path(path)
    if p.is_file():
        return [p]
    if not p.is_dir():
        raise AliasError(f"{p}: no Inspect log file or folder")
    files = sorted(Path(info.name.removeprefix("file://")) for info in list_eval_logs(str(p), recursive=True))
    if not files:
        raise AliasError(f"{p}: no Inspect logs (.eval or .json) in this folder")
    return files


def _record(log_name: str, model: str, s) -> LogRecord:
    md = s.metadata or {}
    # an errored sample's output may have no choice at all (its completion and stop
    # reason properties then raise IndexError)
    choices = s.output.choices if s.output is not None else []
    text = s.output.completion if choices else ""
    extra = json.dumps({"log": log_name, "sample_id": str(s.id), "epoch": s.epoch,
                        "stop_reason": choices[0].stop_reason if choices else None}, sort_keys=True)
    error = (f"sample_error: {str(s.error.message)[:200]}" if s.error is not None
             else None if md.get("task_id") and md.get("condition") else "no_task: the sample's metadata names no "
             "task_id and condition (an alias_cir task's samples do)")
    return LogRecord(md.get("task_id"), md.get("condition"), model, int(s.epoch) - 1, text or "", log_name,
                     str(s.id), error, extra)


def inspect_records(path: str | Path, models: Iterable[str] = ()) -> list[LogRecord]:
    """Every sample of the logs at ``path`` (:func:`log_files`) whose model is in
    ``models`` (all when empty), in log and sample order. Raises :class:`AliasError` for an
    unreadable log (naming it)."""
    from inspect_ai.log import read_eval_log

    wanted = set(models)
    out: list[LogRecord] = []
    for f in log_files(path):
        try:
            log = read_eval_log(str(f))
        except Exception as e:
            raise AliasError(f"{f}: not a readable Inspect log ({type(e).__name__}: {e})") from e
        if wanted and log.eval.model not in wanted:
            continue
        out += [_record(f.name, log.eval.model, s) for s in log.samples or []]
    return out
