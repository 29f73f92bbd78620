"""Model outputs as the store's ``samples`` table (:class:`alias.store.models.Sample`):
requests per task, condition and sample index, the completions of any backend, and the
columns every sample gets (extraction, closing line, truncation; Appendix N).

Requests: one per test-set task with a description, condition of ``generate.conditions``
and ``sample_idx`` in ``0 .. n_samples-1``, with the prompt of
:func:`alias.generate.prompts.build_prompt` for that condition's description (the
``original`` description, the CIR-renamed one for ``random``, the meaningful one for
``meaningful`` where that copy verified). Provider models get the Appendix A prompt,
local models the Appendix E prompt; an entry's ``prompt`` setting overrides this.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Iterable, Sequence

import pandas as pd

from alias.config import ModelEntry
from alias.corpus.testset import TestSet, has_description
from alias.generate.inspect_logs import inspect_records
from alias.generate.prompts import PROMPT_VERSION, build_prompt
from alias.generate.registry import PROMPT_KIND, Completion, Options, get_backend
from alias.generate.replay import format_errors, replay
from alias.generate.tlabench import external_verdict_rows, generation_records
from alias.generate.types import SampleRequest
from alias.store.db import read_parquet, table_frame, write_parquet
from alias.store.models import Sample
from alias.tla.extract import extract_module

__all__ = ["TOKEN_LIMIT_REASONS", "SAMPLE_KEY", "build_requests", "condition_prompts", "describe_text",
           "samples_frame", "completion_rows", "sample_completions", "replay_rows", "tlabench_rows", "inspect_rows",
           "entry_model",
           "load_samples", "write_samples"]

SAMPLE_KEY = ["task_id", "condition", "model", "sample_idx"]
#: Stop reasons that mean "the output-token limit was reached": Anthropic ``max_tokens``,
#: OpenAI chat ``length``, OpenAI responses ``max_output_tokens``, local ``max_new_tokens``.
TOKEN_LIMIT_REASONS = frozenset({"max_tokens", "length", "max_output_tokens", "max_new_tokens"})
#: Fields of a released record (its ``extra``) that fill a samples column of the same name.
_REPLAY_FIELDS = ("output_tokens", "input_tokens", "stop_reason", "hit_token_limit", "response_model",
                  "prompt_version", "settings", "batch_id")


#: What a report says of a model's outputs when its entry gives no ``label``.
_SOURCE = {"anthropic": "provider model (Anthropic batch API)", "openai": "provider model (OpenAI batch API)",
           "local": "local model", "replay": "released outputs"}


def source_label(entry: ModelEntry) -> str:
    """Where a model entry's outputs come from, as the reports say it."""
    return entry.label or _SOURCE.get(entry.backend, entry.backend)


def condition_prompts(tasks: pd.DataFrame, conditions: Sequence[str], prompt_kind: str) -> list[tuple[str, str, str]]:
    """``(task_id, condition, prompt)`` per task of a :meth:`TestSet.conditions_table` (tasks
    with a description) and condition: the prompt of :func:`build_prompt` for that
    condition's description. The ``meaningful`` condition covers the tasks whose meaningful
    copy verified (Appendix R). The one source of prompt text for the generate stages and
    the Inspect tasks (:mod:`alias.inspect`)."""
    out = []
    for t in tasks.itertuples():
        for cond in conditions:
            if cond == "meaningful" and not isinstance(t.meaningful_system_module, str):
                continue
            desc = {"original": t.description, "random": t.random_description,
                    "meaningful": t.meaningful_description}[cond]
            if not has_description(desc):
                raise ValueError(f"task {t.task_id}: no {cond!r} description to prompt with")
            out.append((t.task_id, cond, build_prompt(prompt_kind, desc)))
    return out


def build_requests(tasks: pd.DataFrame, conditions: Sequence[str], n_samples: int, model: str,
                   prompt_kind: str, entry: ModelEntry) -> list[SampleRequest]:
    """One request per (task, condition, sample_idx) of :func:`condition_prompts`."""
    return [SampleRequest(task_id=task_id, condition=cond, model=model, sample_idx=k, prompt=prompt,
                          max_tokens=entry.max_tokens, temperature=entry.temperature, top_p=entry.top_p,
                          prompt_version=PROMPT_VERSION)
            for task_id, cond, prompt in condition_prompts(tasks, conditions, prompt_kind) for k in range(n_samples)]


def describe_text(text: str | None, expected_module: str | None) -> dict[str, Any]:
    """``extracted_module``, ``extraction`` (JSON) and ``has_closing_line`` of one raw text."""
    if text is None:
        return {"extracted_module": None, "has_closing_line": False,
                "extraction": json.dumps({"ok": False, "actions": [], "error": "no_text: the request failed"})}
    ext = extract_module(text, expected_module if isinstance(expected_module, str) else None)
    info = {"ok": ext.ok, "actions": ext.actions, "error": ext.error, "module_name": ext.module_name,
            "truncated": bool(ext.truncated)}
    return {"extracted_module": ext.module_text if ext.ok else None, "extraction": json.dumps(info),
            "has_closing_line": bool(ext.ok and not ext.truncated)}


def samples_frame(rows: Iterable[dict], expected: dict[tuple[str, str], str]) -> pd.DataFrame:
    """The ``samples`` table from rows holding the key, ``text`` and any other column:
    adds extraction, closing-line and truncation columns, types every column by
    :class:`~alias.store.models.Sample` and sorts by key. ``expected``:
    ``(task_id, condition) -> system module`` (what extraction looks for)."""
    out = []
    for r in rows:
        row = dict(r)
        row |= describe_text(row.get("text"), expected.get((row["task_id"], row["condition"])))
        if row.get("hit_token_limit") is None:
            sr = row.get("stop_reason")
            row["hit_token_limit"] = None if not isinstance(sr, str) else sr in TOKEN_LIMIT_REASONS
        row["truncated"] = bool(row["hit_token_limit"]) or not row["has_closing_line"]
        for c in ("settings", "extra"):
            if row.get(c) is not None and not isinstance(row[c], str):
                row[c] = json.dumps(row[c], sort_keys=True, default=str)
        out.append(row)
    out.sort(key=lambda r: (r["task_id"], r["condition"], r["model"], int(r["sample_idx"])))
    return table_frame(out, Sample)


def completion_rows(completions: Iterable[Completion], key: str, backend: str, prompt_kind: str | None,
                    model: str | None = None) -> tuple[list[dict], dict[str, int]]:
    """``samples`` rows of the successful completions and the count of failed ones per
    status. ``key`` fills ``model_key``; the ``model`` column is ``model`` when given (the
    generate stages: the model key), else each completion's own model."""
    rows, failed = [], {}
    for c in completions:
        if not c.ok:
            failed[c.status] = failed.get(c.status, 0) + 1
            continue
        rows.append({"task_id": c.task_id, "condition": c.condition, "model": model or c.model,
                     "sample_idx": c.sample_idx, "text": c.text or "", "model_key": key, "backend": backend,
                     "prompt_kind": prompt_kind, "prompt_version": c.prompt_version, "settings": c.settings,
                     "response_model": c.response_model, "input_tokens": c.input_tokens,
                     "output_tokens": c.output_tokens, "stop_reason": c.stop_reason,
                     "hit_token_limit": c.hit_token_limit, "batch_id": c.batch_id, "custom_id": c.custom_id})
    return rows, failed


def sample_completions(testset: TestSet, entry: ModelEntry, key: str, conditions: Sequence[str], n_samples: int,
                       ledger: Path | None) -> tuple[list[dict], dict[str, Any]]:
    """Ask model ``key`` for every request of the test set; returns the ``samples`` rows and
    the status fields (``tasks``, ``no_description``, ``requests``, ``failed``). Raises the
    backend's errors (:class:`~alias.generate.types.MissingCredentials`,
    :class:`~alias.generate.registry.ModelDisabled`, ...)."""
    table = testset.conditions_table()
    has = table.description.map(has_description)
    kind = entry.prompt or PROMPT_KIND[entry.backend]
    model_name = entry.model if entry.backend in ("anthropic", "openai") else key
    requests = build_requests(table[has], conditions, n_samples, model_name, kind, entry)
    info = {"tasks": int(has.sum()), "no_description": sorted(table.loc[~has, "task_id"]), "requests": len(requests)}
    completions = get_backend(entry.backend).complete(entry, requests, Options(ledger=ledger))
    rows, failed = completion_rows(completions, key, entry.backend, kind, model=key)
    for r in rows:
        r["source"] = source_label(entry)
    return rows, info | {"failed": failed}


def _replay_value(f: str, v: Any) -> Any:
    if f in ("output_tokens", "input_tokens"):
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
    if f == "hit_token_limit":
        return v if isinstance(v, bool) else None
    if f == "settings":
        return v if isinstance(v, dict) else {"value": v}
    return str(v)


def replay_rows(key: str, entry: ModelEntry, task_ids: set[str], conditions: Sequence[str],
                errors_file: Path) -> tuple[list[dict], dict[str, Any]]:
    """``samples`` rows of a released-outputs file (``entry.path``, JSONL or Parquet),
    checked against the test set and conditions; rejected records are printed with their
    line numbers and written to ``errors_file``; every good record is kept."""
    path = Path(entry.path)
    df, errors = replay(path, task_ids, list(conditions))
    text = format_errors(errors, path)
    errors_file.parent.mkdir(parents=True, exist_ok=True)
    errors_file.write_text(text + ("\n" if text else ""), encoding="utf-8")
    for line in text.splitlines()[:50]:
        print(f"replay {key}: {line}", file=sys.stderr)
    if len(errors) > 50:
        print(f"replay {key}: ... {len(errors) - 50} more in {errors_file}", file=sys.stderr)
    wanted = set(entry.models or ())
    rows = []
    for r in df.itertuples():
        if wanted and r.model not in wanted:
            continue
        extra = json.loads(r.extra)
        row = {"task_id": r.task_id, "condition": r.condition, "model": r.model, "sample_idx": int(r.sample_idx),
               "text": r.text, "model_key": key, "backend": "replay", "source_line": int(r.line),
               "extra": r.extra, "settings": {"path": path.as_posix()}, "source": source_label(entry)}
        row |= {f: v for f in _REPLAY_FIELDS if extra.get(f) is not None
                and (v := _replay_value(f, extra[f])) is not None}
        rows.append(row)
    kinds: dict[str, int] = {}
    for e in errors:
        kinds[e.kind] = kinds.get(e.kind, 0) + 1
    return rows, {"replay_errors": len(errors), "replay_error_kinds": dict(sorted(kinds.items())),
                  "errors_file": errors_file.as_posix()}


def entry_model(key: str, model: str) -> str:
    """The ``model`` of a sample that replay entry ``key`` read from a source naming its model
    ``model`` (a TLA+-Bench folder, an Inspect log): ``<key>/<model>``, so the same model
    under two entries (two regimes, two sources) gives two sample sets, never one key twice."""
    return f"{key}/{model}"


def tlabench_rows(key: str, entry: ModelEntry, test_ids: set[str]) -> tuple[list[dict], dict[str, Any], list[dict]]:
    """``samples`` rows of a TLA+-Bench generations folder (``entry.path``: the release's
    ``outputs/``; ``regime``; ``models``, all when absent), the status fields and the
    benchmark's own verdicts (``external_verdicts`` rows, ``sample_model`` naming the
    samples they judge). Each sample's model is :func:`entry_model` of the release's model
    name. Every file becomes a sample, an empty or truncated one too, and so does a task
    outside the test set (graded without a reference: it fails, and is counted apart); a
    task the verdicts list but the release has no file for is counted under ``lacking``."""
    records, lacking = generation_records(entry.path, entry.regime, entry.models or ())
    rows = [{k: r[k] for k in ("task_id", "condition", "sample_idx", "text", "extra")}
            | {"model": entry_model(key, r["model"]), "model_key": key, "backend": "replay",
               "source": source_label(entry),
               "settings": {"path": Path(entry.path).as_posix(), "regime": entry.regime, "layout": "tlabench"}}
            for r in records]
    outside = sorted({r["task_id"] for r in records} - test_ids, key=lambda s: (len(s), s))
    verdicts = [v | {"sample_model": entry_model(key, v["model"])} for v in external_verdict_rows(
        entry.path, entry.regime, sorted({r["model"] for r in records}) or list(entry.models or ()))]
    info = {"layout": "tlabench", "regime": entry.regime, "files": len(records),
            "empty_files": sum(1 for r in records if not r["text"].strip()),
            "outside_test_set": outside, "lacking": lacking, "external_verdicts": len(verdicts)}
    return rows, info, verdicts


def inspect_rows(key: str, entry: ModelEntry, task_ids: set[str], conditions: Sequence[str],
                 errors_file: Path) -> tuple[list[dict], dict[str, Any]]:
    """``samples`` rows of Inspect eval logs (``entry.path``: a log or a folder of logs;
    ``models``: Inspect model names to keep, all when absent; :mod:`alias.generate.inspect_logs`):
    one per sample of a test-set task (``task_ids``) and condition of ``conditions``, its model
    :func:`entry_model` of the log's model. A rejected sample (errored, no task, a task or
    condition outside the test set, a key seen in an earlier log) is written to
    ``errors_file`` with its log and sample id; every good one is kept."""
    rows, errors, seen = [], [], {}
    for r in inspect_records(entry.path, entry.models or ()):
        key4 = (r.task_id, r.condition, entry_model(key, r.model), r.sample_idx)
        why = (r.error or (f"unknown_task: {r.task_id!r} is not a test-set task with a description"
                           if r.task_id not in task_ids else None)
               or (f"unknown_condition: {r.condition!r}" if r.condition not in conditions else None)
               or (f"duplicate: the same sample is in {seen[key4]}" if key4 in seen else None))
        if why:
            errors.append(f"{r.log} sample {r.sample_id} epoch {r.sample_idx + 1}: {why}")
            continue
        seen[key4] = r.log
        rows.append({"task_id": r.task_id, "condition": r.condition, "model": key4[2], "sample_idx": r.sample_idx,
                     "text": r.text, "model_key": key, "backend": "replay", "extra": r.extra,
                     "settings": {"path": Path(entry.path).as_posix(), "layout": "inspect"},
                     "source": source_label(entry)})
    errors_file.parent.mkdir(parents=True, exist_ok=True)
    errors_file.write_text("".join(e + "\n" for e in errors), encoding="utf-8")
    for line in errors[:50]:
        print(f"replay {key}: {line}", file=sys.stderr)
    return rows, {"layout": "inspect", "replay_errors": len(errors), "errors_file": errors_file.as_posix()}


def load_samples(samples_dir: Path, keys: Iterable[str], extra: Sequence[Path] = ()) -> pd.DataFrame:
    """Every sample of the model ``keys`` (``<samples_dir>/<key>/samples.parquet``) and of
    the ``extra`` samples tables (the exposure stage's), one frame. Raises
    :class:`~alias.store.db.StoreError` for a missing table and ``ValueError`` when two
    tables hold the same sample key (e.g. two replay files naming one model)."""
    frames, seen = [], {}
    for p in [Path(samples_dir) / k / "samples.parquet" for k in sorted(keys)] + [Path(x) for x in extra]:
        df = read_parquet(p)
        for k in zip(df.task_id, df.condition, df.model, df.sample_idx):
            k = (k[0], k[1], k[2], int(k[3]))
            if k in seen:
                raise ValueError(f"sample {k} is in both {seen[k]} and {p}")
            seen[k] = str(p)
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else table_frame([], Sample)


def write_samples(rows: Iterable[dict], expected: dict[tuple[str, str], str], out: Path,
                  status: dict[str, Any]) -> dict[str, Any]:
    """Write ``out/samples.parquet`` (:func:`samples_frame`) and ``out/status.json``; the
    status gains ``samples``, ``truncated``, ``hit_token_limit`` and becomes ``partial``
    when requests failed or records were rejected. Returns the status."""
    df = samples_frame(rows, expected)
    out.mkdir(parents=True, exist_ok=True)
    write_parquet(df, out / "samples.parquet")
    status = dict(status)
    status["samples"] = len(df)
    status["truncated"] = int(df.truncated.fillna(False).sum())
    status["hit_token_limit"] = int(df.hit_token_limit.fillna(False).sum())
    if status.get("status") == "ok" and (status.get("failed") or status.get("replay_errors")):
        status["status"] = "partial"
    (out / "status.json").write_text(json.dumps(status, indent=2, sort_keys=True, default=str) + "\n",
                                     encoding="utf-8")
    return status
