"""The ``continuation`` stage: the file-continuation recall test (paper, Appendix L).

``continuation_stage(params)`` writes ``data/continuation/``:

* ``continuations.parquet`` -- one row per continuation sample, exactly the columns of the
  store's ``continuations`` table (:class:`alias.store.models.Continuation`,
  :data:`alias.generate.continuation.CONTINUATION_COLUMNS`): ``task_id``, ``condition``
  (``original`` or ``random``), ``model`` (the key of ``params.generate.models``, as in
  the ``samples`` table, so ``v_continuation_paired`` joins the model's grades),
  ``sample_idx``, ``prefix_lines``, ``continuation`` (null for a failed sample),
  ``reference_remainder`` and ``longest_run`` (TLA+ tokens; null for a failed sample),
  computed by :func:`alias.generate.continuation.continuation_rows`; sorted by key.
* ``status.json`` -- ``{"models": {key: {"backend", "status": ok | partial | skipped,
  "reason", "requests", "samples", "failed"}}, "tasks", "n_samples", "rows"}``.
* provider models: ``<key>/ledger.sqlite``, the batch ledger of that model's continuation
  requests (apart from the generation ledger: the sample keys are the same), so a killed
  run resumes without paying twice (the DVC output is ``persist: true``).

Items: for each test-set task (:func:`alias.generate.stage.load_test_set`), the system
module of the original task (``data/ingest/modules.parquet``, role ``system``, with its
corpus path) and of its CIR-renamed copy (``data/rename/renamed_modules.parquet``, role
``system``; path :func:`~alias.generate.continuation.renamed_path` of the original path
with the task's renamed module names), each with ``params.continuation.repository``.
Prefix rule: the first 40% of lines, at least 8 and at most 60
(:func:`~alias.generate.continuation.prefix_line_count`).

Models (``params.continuation.models``: keys of ``params.generate.models``):

``anthropic`` / ``openai``
    :func:`alias.generate.batches.run_batch` with the entry's ``max_tokens``,
    ``temperature``, ``top_p``. Without the API key (and no ledger holding every result)
    the model is skipped: one line ``continuation KEY: skipped: ANTHROPIC_API_KEY is not
    set`` on stderr, no rows, its status says why.
``local``
    :func:`alias.generate.local.generate_local` with the entry's ``temperature``,
    ``top_p``, ``batch_size``, ``seed`` and ``params.continuation.max_new_tokens``;
    the prompt is given as it is (no separator: it already ends with the prefix's last
    line) and generation stops at the module's closing line.
``replay``
    skipped with a message: released continuations are not part of the replay files.

Raises :class:`alias.generate.stage.GenerateConfigError` for an unknown model key or a
bad entry, ``ValueError`` when a test-set task has no original or renamed system module,
``FileNotFoundError`` for a missing input table or model directory.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from alias.store.db import read_parquet, write_parquet

DATA = Path("data")
#: The conditions of the test: the published file and its CIR-renamed copy.
CONTINUATION_CONDITIONS = ("original", "random")
#: The repository named in the prompt when ``params.continuation.repository`` is absent.
DEFAULT_REPOSITORY = "tlaplus/Examples"

__all__ = ["CONTINUATION_CONDITIONS", "DEFAULT_REPOSITORY", "continuation_params", "continuation_items",
           "continuation_stage"]


def continuation_params(params: dict) -> dict[str, Any]:
    """``params.continuation`` with defaults: ``models`` (list of keys), ``n_samples``,
    ``max_new_tokens``, ``repository``. Raises ``ValueError`` for a bad value."""
    c = dict(params.get("continuation") or {})
    models = c.get("models") or []
    if isinstance(models, str) or not all(isinstance(m, str) and m for m in models):
        raise ValueError(f"continuation.models must be a list of generate.models keys, got {models!r}")
    n = int(c.get("n_samples", 1))
    mnt = int(c.get("max_new_tokens", 1024))
    if n < 1 or mnt < 1:
        raise ValueError("continuation.n_samples and continuation.max_new_tokens must be >= 1")
    return {"models": list(models), "n_samples": n, "max_new_tokens": mnt,
            "repository": str(c.get("repository") or DEFAULT_REPOSITORY)}


def continuation_items(ingest_dir: Path, rename_dir: Path, verify_dir: Path, repository: str) -> list:
    """Two :class:`~alias.generate.continuation.ContinuationItem` per test-set task
    (``original``, ``random``), in task order. Raises ``ValueError`` when a task lacks
    its original or renamed system module."""
    from alias.generate.continuation import continuation_item, renamed_path
    from alias.generate.stage import load_test_set

    tasks = load_test_set(ingest_dir, rename_dir, verify_dir)
    mods = read_parquet(Path(ingest_dir) / "modules.parquet")
    ren = read_parquet(Path(rename_dir) / "renamed_modules.parquet")
    items = []
    for t in tasks.itertuples():
        orig = mods[(mods.task_id == t.task_id) & (mods.role == "system")]
        rsys = ren[(ren.task_id == t.task_id) & (ren.role == "system")]
        if len(orig) != 1:
            raise ValueError(f"task {t.task_id}: {len(orig)} original system modules in {ingest_dir}/modules.parquet, need 1")
        if len(rsys) != 1:
            raise ValueError(f"task {t.task_id}: {len(rsys)} renamed system modules in {rename_dir}/renamed_modules.parquet, need 1")
        o, r = orig.iloc[0], rsys.iloc[0]
        names = dict(zip(ren.loc[ren.task_id == t.task_id, "original_module"],
                         ren.loc[ren.task_id == t.task_id, "module"]))
        items.append(continuation_item(t.task_id, "original", o.text, repository, o.path))
        items.append(continuation_item(t.task_id, "random", r.text, repository, renamed_path(o.path, names)))
    return items


def _provider_results(entry: dict, requests: list, ledger: Path) -> list:
    from alias.generate.backends import API_KEY_ENV
    from alias.generate.batches import load_results, run_batch
    from alias.generate.types import MissingCredentials

    provider = entry["backend"]
    env = API_KEY_ENV[provider]
    if not os.environ.get(env, "").strip():
        # a ledger that holds every result is read without a key; otherwise nothing is registered
        done = {r.custom_id for r in load_results(ledger) if r.ok} if ledger.exists() else set()
        from alias.generate.types import custom_id_for

        if not all(custom_id_for(q.task_id, q.condition, q.model, q.sample_idx) in done for q in requests):
            raise MissingCredentials(provider, env)
    ledger.parent.mkdir(parents=True, exist_ok=True)
    return run_batch(provider, requests, ledger, poll_interval_s=float(entry.get("poll_interval_s", 60)),
                     max_retries=int(entry.get("max_retries", 2)), endpoint=entry.get("endpoint") or None,
                     base_url=entry.get("base_url") or None,
                     timeout_s=None if entry.get("timeout_s") is None else float(entry["timeout_s"]))


def _local_results(entry: dict, requests: list, max_new_tokens: int) -> list:
    from alias.generate.local import generate_local

    if entry.get("threads"):
        import torch

        torch.set_num_threads(int(entry["threads"]))
    return generate_local(entry["model_dir"], requests, temperature=float(entry.get("temperature", 0.7)),
                          top_p=float(entry.get("top_p", 0.95)), max_new_tokens=max_new_tokens,
                          batch_size=int(entry.get("batch_size", 8)), stop_at_module_end=True,
                          adapter_dir=entry.get("adapter_dir") or None, seed=int(entry.get("seed", 0)),
                          device=entry.get("device") or None, prompt_separator="")


def continuation_stage(params: dict, ingest_dir: Path = DATA / "ingest", rename_dir: Path = DATA / "rename",
                       verify_dir: Path = DATA / "verify", out: Path = DATA / "continuation") -> dict[str, Any]:
    """Run the Appendix L continuation test for every model of ``params.continuation.models``
    on the test set; see the module docstring. Returns the ``status.json`` dict."""
    from alias.generate.continuation import CONTINUATION_COLUMNS, continuation_requests, continuation_rows
    from alias.generate.stage import model_entry
    from alias.generate.types import MissingCredentials
    from alias.progress import progress_bar

    cp = continuation_params(params)
    entries = {key: model_entry(params, key) for key in cp["models"]}  # bad keys fail before any work
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    items = continuation_items(ingest_dir, rename_dir, verify_dir, cp["repository"])
    frames, statuses = [], {}
    for key, entry in entries.items():
        backend = entry["backend"]
        st: dict[str, Any] = {"backend": backend, "status": "ok", "reason": None, "requests": 0, "samples": 0,
                              "failed": 0}
        statuses[key] = st
        if backend == "replay":
            msg = "skipped: replay files hold no released continuations"
            print(f"continuation {key}: {msg}", file=sys.stderr)
            st.update(status="skipped", reason=msg)
            continue
        if backend == "local":
            reqs = continuation_requests(items, key, n_samples=cp["n_samples"], max_tokens=cp["max_new_tokens"])
            with progress_bar(f"continuation {key}", total=None):
                results = _local_results(entry, reqs, cp["max_new_tokens"])
            samples = [{"task_id": r.task_id, "condition": r.condition, "model": key, "sample_idx": r.sample_idx,
                        "text": r.text, "status": "succeeded"} for r in results]
        else:
            reqs = continuation_requests(
                items, entry["model"], n_samples=cp["n_samples"],
                max_tokens=None if entry.get("max_tokens") is None else int(entry["max_tokens"]),
                temperature=None if entry.get("temperature") is None else float(entry["temperature"]),
                top_p=None if entry.get("top_p") is None else float(entry["top_p"]))
            try:
                results = _provider_results(entry, reqs, out / key / "ledger.sqlite")
            except MissingCredentials as e:
                msg = f"skipped: {e.env_var} is not set"
                print(f"continuation {key}: {msg}", file=sys.stderr)
                st.update(status="skipped", reason=msg, requests=len(reqs))
                continue
            samples = [{"task_id": r.task_id, "condition": r.condition, "model": key, "sample_idx": r.sample_idx,
                        "text": r.text, "status": r.status} for r in results]
        df = continuation_rows(items, samples)
        failed = int(df.longest_run.isna().sum())
        st.update(requests=len(reqs), samples=len(df), failed=failed, status="partial" if failed else "ok")
        frames.append(df)
    if frames:
        table = pd.concat(frames, ignore_index=True).sort_values(
            ["task_id", "condition", "model", "sample_idx"]).reset_index(drop=True)
    else:
        table = continuation_rows(items, [])
    table = table[CONTINUATION_COLUMNS]
    for c in ("task_id", "condition", "model", "continuation", "reference_remainder"):
        table[c] = table[c].astype("string")
    for c in ("sample_idx", "prefix_lines"):
        table[c] = table[c].astype("int64")
    table["longest_run"] = table["longest_run"].astype("Int64")
    write_parquet(table, out / "continuations.parquet")
    status = {"models": statuses, "tasks": len(items) // len(CONTINUATION_CONDITIONS),
              "n_samples": cp["n_samples"], "rows": len(table)}
    (out / "status.json").write_text(json.dumps(status, indent=2, sort_keys=True, default=str) + "\n",
                                     encoding="utf-8")
    return status
