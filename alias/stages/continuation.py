"""File continuation (Appendix L): each model of continuation.models continues the first
40% of every test-set file and of its renamed copy (paths.continuation)."""

from __future__ import annotations

import sys
from typing import Any

import pandas as pd

from alias.config import Config, Paths
from alias.corpus.testset import TestSet
from alias.generate.continuation import continuation_items, continuation_requests, continuation_rows
from alias.generate.registry import ModelDisabled, Options, get_backend
from alias.generate.types import MissingCredentials
from alias.progress import progress_bar
from alias.stages.common import write_status
from alias.store.db import write_table
from alias.store.models import Continuation

NAME = "continuation"


def _one_model(config: Config, paths: Paths, key: str, items: list) -> tuple[pd.DataFrame | None, dict]:
    """The continuation rows of model ``key`` (``None`` when skipped) and its status."""
    entry, c = config.generate.entry(key), config.continuation
    st: dict[str, Any] = {"backend": entry.backend, "status": "ok", "reason": None, "requests": 0, "samples": 0,
                          "failed": 0}
    if entry.backend == "replay":
        st.update(status="skipped", reason="skipped: replay files hold no released continuations")
        return None, st
    local = entry.backend == "local"
    reqs = continuation_requests(items, key if local else entry.model, n_samples=c.n_samples,
                                 max_tokens=c.max_new_tokens if local else entry.max_tokens,
                                 temperature=None if local else entry.temperature, top_p=None if local else entry.top_p)
    options = Options(ledger=paths.work / "ledgers" / f"{NAME}-{key}.sqlite", max_new_tokens=c.max_new_tokens,
                      stop_at_closing_line=True, prompt_separator="")
    try:
        with progress_bar(f"continuation {key}", total=None):
            done = get_backend(entry.backend).complete(entry, reqs, options)
    except (MissingCredentials, ModelDisabled) as e:
        reason = f"skipped: {e.env_var} is not set" if isinstance(e, MissingCredentials) else str(e)
        st.update(status="skipped", reason=reason, requests=len(reqs))
        return None, st
    df = continuation_rows(items, [{"task_id": d.task_id, "condition": d.condition, "model": key,
                                    "sample_idx": d.sample_idx, "text": d.text, "status": d.status} for d in done])
    failed = int(df.longest_run.isna().sum())
    st.update(requests=len(reqs), samples=len(df), failed=failed, status="partial" if failed else "ok")
    return df, st


def run(config: Config, paths: Paths) -> dict[str, Any]:
    """Continue every test-set system module and its renamed copy with each model of
    ``continuation.models``; writes ``continuations.parquet`` and ``status.json``
    (per model: ``ok``, ``partial`` or ``skipped`` with the reason)."""
    items = continuation_items(TestSet.load(paths), config.continuation.repository)
    frames, statuses = [], {}
    for key in config.continuation.models:
        df, statuses[key] = _one_model(config, paths, key, items)
        if statuses[key]["status"] == "skipped":
            print(f"continuation {key}: {statuses[key]['reason']}", file=sys.stderr)
        if df is not None:
            frames.append(df)
    rows = pd.concat(frames, ignore_index=True) if frames else continuation_rows(items, [])
    table = write_table(rows.sort_values(["task_id", "condition", "model", "sample_idx"]), Continuation,
                        paths.continuation / "continuations.parquet")
    status = {"models": statuses, "tasks": len(items) // 2, "n_samples": config.continuation.n_samples,
              "rows": len(table)}
    write_status(paths.continuation / "status.json", status)
    return status
