"""Import released model outputs (JSONL or Parquet) as a samples table.

ALIAS releases "all model outputs" (Introduction); ``replay`` reads such a file back so
that the grading and statistics stages can run without querying any model.

Public API::

    replay(path, test_set_tasks, conditions=CONDITIONS) -> (DataFrame, list[ReplayError])
    CONDITIONS = frozenset({"original", "random", "meaningful"})

Input: one record per sample with the columns ``task_id``, ``condition``, ``model``,
``sample_idx`` and ``text``; any further columns are kept, as one JSON object, in the
``extra`` column. JSONL (``.jsonl``, ``.ndjson``, ``.json``; ``.gz`` allowed) holds one
JSON object per line; blank lines are skipped. Parquet (``.parquet``, ``.pq``) holds
one row per sample; its rows are numbered from 1 and reported as "lines" too.

Checks, each failure an entry of the error list (``ReplayError``: ``line``, ``kind``,
``message``, ``key``), never an exception, and never at the cost of another record
(every good line lands):

* ``encoding`` / ``json`` / ``not_object``: a line that is not UTF-8, not JSON, or not a
  JSON object.
* ``missing_field`` / ``bad_field``: a required column missing or ``null``; a
  ``task_id``/``model`` that is not a non-empty string; a ``sample_idx`` that is not
  a non-negative integer (``true``/``false`` and strings are rejected; an integral
  float such as ``3.0``, as pandas writes integer columns with gaps, is accepted);
  ``text`` that is not a string (the empty string is accepted).
* ``bad_condition``: a condition outside ``conditions``.
* ``unknown_task``: a ``task_id`` not in ``test_set_tasks`` (pass ``None`` to skip).
* ``duplicate``: a key ``(task_id, condition, model, sample_idx)`` seen before; the
  first record is kept and the error names the lines of both.
* ``columns`` (``line`` is ``None``): a Parquet file without a required column.

Records that fail any check are left out of the table. A file that cannot be read at
all (missing, unknown suffix, not Parquet) raises ``ReplayFileError``.

Output table columns: ``task_id``, ``condition``, ``model``, ``sample_idx`` (int64),
``text``, ``extra`` (JSON text, ``"{}"`` when there are no further columns, keys
sorted) and ``line``, in file order.
"""

from __future__ import annotations

import gzip
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

import pandas as pd
import pyarrow.parquet as pq

from alias.errors import AliasError

__all__ = ["replay", "ReplayError", "ReplayFileError", "CONDITIONS", "REQUIRED_COLUMNS", "OUTPUT_COLUMNS",
           "format_errors"]

CONDITIONS = frozenset({"original", "random", "meaningful"})
REQUIRED_COLUMNS = ("task_id", "condition", "model", "sample_idx", "text")
OUTPUT_COLUMNS = list(REQUIRED_COLUMNS) + ["extra", "line"]

_JSONL_SUFFIXES = {".jsonl", ".ndjson", ".json"}
_PARQUET_SUFFIXES = {".parquet", ".pq"}


class ReplayFileError(AliasError, ValueError):
    """The file as a whole cannot be read (missing, unknown format, not Parquet)."""


@dataclass(frozen=True)
class ReplayError:
    """One rejected record (or, with ``line=None``, a problem of the whole file)."""

    line: int | None
    kind: str
    message: str
    key: tuple | None = None

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line is not None else "file"
        return f"{where}: {self.kind}: {self.message}"


def format_errors(errors: Iterable[ReplayError], path: str | os.PathLike[str] | None = None) -> str:
    """The errors as text, one per line (``path:line: kind: message``)."""
    prefix = f"{path}:" if path is not None else ""
    out = []
    for e in errors:
        where = str(e.line) if e.line is not None else "-"
        out.append(f"{prefix}{where}: {e.kind}: {e.message}")
    return "\n".join(out)


def _format_of(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    last = suffixes[-1] if suffixes else ""
    if last in _JSONL_SUFFIXES:
        return "jsonl"
    if last in _PARQUET_SUFFIXES:
        return "parquet"
    raise ReplayFileError(f"{path}: unknown format (expected .jsonl, .ndjson, .json, .parquet or .pq)")


def _jsonl_records(path: Path) -> Iterator[tuple[int, Any, ReplayError | None]]:
    opener = gzip.open if path.suffix.lower() == ".gz" else open
    with opener(path, "rb") as f:
        for lineno, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                yield lineno, None, ReplayError(lineno, "encoding", f"not UTF-8 ({e.reason} at byte {e.start})")
                continue
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                snippet = line.strip()
                snippet = snippet if len(snippet) <= 60 else snippet[:57] + "..."
                yield lineno, None, ReplayError(lineno, "json", f"malformed JSON ({e.msg} at column {e.colno}): {snippet!r}")
                continue
            if not isinstance(rec, dict):
                yield lineno, None, ReplayError(lineno, "not_object", f"expected a JSON object, got {type(rec).__name__}")
                continue
            yield lineno, rec, None


def _parquet_records(path: Path) -> tuple[Iterator[tuple[int, Any, ReplayError | None]], list[ReplayError]]:
    try:
        table = pq.read_table(path)
    except Exception as e:  # noqa: BLE001 - any reader failure means the file is unusable
        raise ReplayFileError(f"{path}: cannot read as Parquet ({type(e).__name__}: {e})") from e
    missing = [c for c in REQUIRED_COLUMNS if c not in table.column_names]
    if missing:
        return iter(()), [ReplayError(None, "columns", f"missing required column(s): {', '.join(missing)}")]
    rows = table.to_pylist()
    return ((i, rec, None) for i, rec in enumerate(rows, start=1)), []


def _is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _sample_idx(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v if v >= 0 else None
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):  # numpy scalars
        try:
            return _sample_idx(v.item())
        except (TypeError, ValueError):
            return None
    if isinstance(v, float) and math.isfinite(v) and v.is_integer() and v >= 0:
        return int(v)
    return None


def _check(rec: dict, lineno: int, tasks: set[str] | None, conditions: frozenset[str]) -> tuple[dict | None, ReplayError | None]:
    missing = [c for c in REQUIRED_COLUMNS if c not in rec or _is_missing(rec[c])]
    if missing:
        what = ", ".join(f"{c!r}" for c in missing)
        return None, ReplayError(lineno, "missing_field", f"missing or null field(s): {what}")
    for c in ("task_id", "condition", "model"):
        v = rec[c]
        if not isinstance(v, str) or not v:
            return None, ReplayError(lineno, "bad_field", f"{c} must be a non-empty string, got {v!r}")
    idx = _sample_idx(rec["sample_idx"])
    if idx is None:
        return None, ReplayError(lineno, "bad_field", f"sample_idx must be a non-negative integer, got {rec['sample_idx']!r}")
    if not isinstance(rec["text"], str):
        return None, ReplayError(lineno, "bad_field", f"text must be a string, got {type(rec['text']).__name__}")
    key = (rec["task_id"], rec["condition"], rec["model"], idx)
    if rec["condition"] not in conditions:
        return None, ReplayError(lineno, "bad_condition",
                                 f"condition {rec['condition']!r} is not one of {sorted(conditions)}", key)
    if tasks is not None and rec["task_id"] not in tasks:
        return None, ReplayError(lineno, "unknown_task", f"task_id {rec['task_id']!r} is not in the test set", key)
    extra = {k: v for k, v in rec.items() if k not in REQUIRED_COLUMNS}
    row = {"task_id": key[0], "condition": key[1], "model": key[2], "sample_idx": idx, "text": rec["text"],
           "extra": json.dumps(extra, ensure_ascii=False, sort_keys=True, default=str), "line": lineno}
    return row, None


def replay(
    path: str | os.PathLike[str],
    test_set_tasks: set[str] | frozenset[str] | None,
    conditions: Iterable[str] = CONDITIONS,
) -> tuple[pd.DataFrame, list[ReplayError]]:
    """Read released outputs from ``path`` (JSONL or Parquet) into a samples table.

    Args:
        path: the file; its format is taken from its suffix (module docstring).
        test_set_tasks: the task ids of the test set; a record of another task is
            reported (``unknown_task``) and left out. ``None`` skips this check.
        conditions: the valid condition names.

    Returns:
        ``(table, errors)``: the good records in file order (columns
        ``OUTPUT_COLUMNS``) and the rejected ones, ordered by line.

    Raises:
        ReplayFileError: the file is missing or cannot be read at all.
    """
    p = Path(path)
    if not p.is_file():
        raise ReplayFileError(f"{p}: no such file")
    conds = frozenset(conditions)
    tasks = set(test_set_tasks) if test_set_tasks is not None else None
    fmt = _format_of(p)
    errors: list[ReplayError] = []
    if fmt == "jsonl":
        records: Iterable[tuple[int, Any, ReplayError | None]] = _jsonl_records(p)
    else:
        records, file_errors = _parquet_records(p)
        errors.extend(file_errors)

    rows: list[dict] = []
    first_line: dict[tuple, int] = {}
    for lineno, rec, err in records:
        if err is not None:
            errors.append(err)
            continue
        row, err = _check(rec, lineno, tasks, conds)
        if err is not None:
            errors.append(err)
            continue
        key = (row["task_id"], row["condition"], row["model"], row["sample_idx"])
        if key in first_line:
            errors.append(ReplayError(lineno, "duplicate",
                                      f"duplicate key {key}: line {lineno} has the key of line {first_line[key]}; "
                                      f"line {first_line[key]} is kept", key))
            continue
        first_line[key] = lineno
        rows.append(row)

    df = pd.DataFrame(rows, columns=OUTPUT_COLUMNS)
    df["sample_idx"] = df["sample_idx"].astype("int64")
    df["line"] = df["line"].astype("int64")
    errors.sort(key=lambda e: (e.line is not None, e.line or 0))
    return df, errors
