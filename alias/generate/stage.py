"""The ``generate`` stage (one per model key) and the ``grade`` stage.

``generate_stage(params, key)`` writes ``data/samples/<key>/``:

* ``samples.parquet`` -- one row per sample (:data:`SAMPLE_COLUMNS`), sorted by the key
  ``(task_id, condition, model, sample_idx)``;
* ``status.json`` -- ``{"model_key", "backend", "status": ok | partial | skipped,
  "reason", "requests", "samples", "failed", "truncated", ...}``;
* provider backends: ``ledger.sqlite`` (the batch ledger, :mod:`alias.generate.ledger`),
  so a killed run resumes without resubmitting or paying twice;
* replay: ``replay_errors.txt`` (``path:line: kind: message`` per rejected record).

Requests: one per test-set task (``data/verify/test_set.parquet``), condition in
``params.generate.conditions`` and ``sample_idx`` in ``0 .. n_samples-1``, with the prompt
of :func:`alias.generate.prompts.build_prompt` for that condition's description (the
``original`` description from ``data/ingest/tasks.parquet``, the ``random`` one -- the
CIR-renamed description -- from ``data/rename/renamed_tasks.parquet``). Frontier
backends (``anthropic``, ``openai``) use the Appendix A prompt, ``local`` the Appendix E
prompt; an entry's ``prompt`` setting overrides this.

Backends (``params.generate.models.<key>.backend``):

``anthropic`` / ``openai``
    :func:`alias.generate.batches.run_batch` (Message Batches / Batch API). Without the
    API key in the environment the model is *skipped*: one line ``skipped:
    ANTHROPIC_API_KEY is not set`` is printed, an empty but valid samples table and a
    ``status.json`` saying why are written, nothing fails. (A ledger that already holds
    every result is read without a key.) With the key, ``dvc repro`` submits real,
    paid batches.
``local``
    :func:`alias.generate.local.generate_local` (temperature, top-p, ``max_new_tokens``,
    stop at the module's closing line, optional LoRA adapter).
``replay``
    :func:`alias.generate.replay.replay` of released outputs (JSONL/Parquet), checked
    against the test set and conditions; rejected records are printed with their line
    numbers and written to ``replay_errors.txt``, every good record is kept.

Per-sample columns beyond the key and ``text``: ``extracted_module`` / ``extraction``
(what :func:`alias.grade.extract.extract_module` made of the text, with the condition's
system module as expected name -- the grader does the same), ``output_tokens``,
``stop_reason``, ``hit_token_limit`` (a token-limit stop reason; ``None`` when the source
does not say), ``has_closing_line`` (extraction found a module with its ``====`` line),
``truncated`` (= ``hit_token_limit`` or no closing line; paper Appendix N), ``backend``,
``prompt_version``, ``settings`` (JSON) and the provider's ``response_model``,
``input_tokens``, ``batch_id``, ``custom_id``.

``grade_stage(params)`` grades every sample of ``data/samples/<key>/samples.parquet`` (for
the keys in ``params.generate.models``; the ``alias grade`` command adds the exposure stage's
``data/exposure/samples.parquet``) by parse, name and behavior
(:func:`alias.grade.run.grade_samples`), with its journal and tool-run cache under
``data/grades`` (a killed run resumes), and writes ``data/grades/verdicts.parquet``.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from alias.progress import progress_bar
from alias.store.db import read_parquet, write_parquet

DATA = Path("data")
BACKENDS = ("anthropic", "openai", "local", "replay")
SAMPLE_KEY = ["task_id", "condition", "model", "sample_idx"]
#: Columns of ``samples.parquet`` (the store's ``samples`` table, :class:`alias.store.models.Sample`).
SAMPLE_COLUMNS = SAMPLE_KEY + [
    "text", "model_key", "backend", "prompt_kind", "prompt_version", "settings", "response_model",
    "input_tokens", "output_tokens", "stop_reason", "hit_token_limit", "has_closing_line", "truncated",
    "extracted_module", "extraction", "batch_id", "custom_id", "source_line", "extra",
]
_INT_COLS = ("input_tokens", "output_tokens", "source_line")
_BOOL_COLS = ("hit_token_limit", "has_closing_line", "truncated")
#: Stop reasons that mean "the output-token limit was reached": Anthropic ``max_tokens``,
#: OpenAI chat ``length``, OpenAI responses ``max_output_tokens``, local ``max_new_tokens``.
TOKEN_LIMIT_REASONS = frozenset({"max_tokens", "length", "max_output_tokens", "max_new_tokens"})
_PROMPT_KIND = {"anthropic": "frontier", "openai": "frontier", "local": "finetuned"}


class GenerateConfigError(ValueError):
    """A ``params.generate`` entry that cannot run (unknown key or backend, missing setting)."""


# ------------------------------------------------------------------------------ inputs
def model_entry(params: dict, key: str) -> dict[str, Any]:
    """The ``params.generate.models[key]`` entry, checked. Raises :class:`GenerateConfigError`."""
    models = (params.get("generate") or {}).get("models") or {}
    if key not in models:
        raise GenerateConfigError(f"no model {key!r} in params generate.models (have: {', '.join(sorted(models)) or 'none'})")
    e = dict(models[key] or {})
    b = e.get("backend")
    if b not in BACKENDS:
        raise GenerateConfigError(f"generate.models.{key}.backend must be one of {BACKENDS}, got {b!r}")
    need = {"anthropic": ("model", "max_tokens"), "openai": ("model",), "local": ("model_dir",),
            "replay": ("path",)}[b]
    missing = [n for n in need if e.get(n) in (None, "")]
    if missing:
        raise GenerateConfigError(f"generate.models.{key} ({b}) needs {', '.join(missing)}")
    return e


def load_test_set(ingest_dir: Path, rename_dir: Path, verify_dir: Path,
                  meaningful_dir: Path | None = None) -> pd.DataFrame:
    """One row per test-set task: ``task_id``, ``system_module`` / ``description``
    (original), ``random_system_module`` / ``random_description`` (CIR-renamed) and
    ``meaningful_system_module`` / ``meaningful_description`` (Appendix R; null unless the
    task's meaningful copy verified in ``meaningful_dir``), sorted."""
    ts = read_parquet(Path(verify_dir) / "test_set.parquet")
    keep = set(ts.loc[ts.in_test_set.astype(bool), "task_id"])
    tasks = read_parquet(Path(ingest_dir) / "tasks.parquet")
    rt = read_parquet(Path(rename_dir) / "renamed_tasks.parquet")
    rt = rt[rt.status == "ok"][["task_id", "system_module", "description"]].rename(
        columns={"system_module": "random_system_module", "description": "random_description"})
    df = tasks[tasks.task_id.isin(keep)][["task_id", "system_module", "description"]].merge(rt, on="task_id", how="left")
    mt_path = Path(meaningful_dir) / "meaningful_tasks.parquet" if meaningful_dir is not None else None
    if mt_path is not None and mt_path.exists():
        mt = read_parquet(mt_path)
        mt = mt[mt.verified.astype(bool)][["task_id", "system_module", "description"]].rename(
            columns={"system_module": "meaningful_system_module", "description": "meaningful_description"})
        df = df.merge(mt, on="task_id", how="left")
    else:
        df["meaningful_system_module"] = None
        df["meaningful_description"] = None
    return df.sort_values("task_id").reset_index(drop=True)


def build_requests(tasks: pd.DataFrame, conditions: list[str], n_samples: int, model: str,
                   prompt_kind: str, entry: dict) -> list:
    """One :class:`~alias.generate.types.SampleRequest` per (task, condition, sample_idx)."""
    from alias.generate.prompts import PROMPT_VERSION, build_prompt
    from alias.generate.types import SampleRequest

    out = []
    for t in tasks.itertuples():
        for cond in conditions:
            desc = {"original": t.description, "random": t.random_description,
                    "meaningful": t.meaningful_description}.get(cond)
            if cond == "meaningful" and not isinstance(t.meaningful_system_module, str):
                continue  # the third condition covers the tasks whose map verified (Appendix R)
            if not isinstance(desc, str) or not desc.strip():
                raise GenerateConfigError(f"task {t.task_id}: no {cond!r} description to prompt with")
            prompt = build_prompt(prompt_kind, desc)
            for k in range(n_samples):
                out.append(SampleRequest(task_id=t.task_id, condition=cond, model=model, sample_idx=k,
                                         prompt=prompt, max_tokens=_opt_int(entry.get("max_tokens")),
                                         temperature=_opt_float(entry.get("temperature")),
                                         top_p=_opt_float(entry.get("top_p")), prompt_version=PROMPT_VERSION))
    return out


def _opt_int(v) -> int | None:
    return None if v is None else int(v)


def _opt_float(v) -> float | None:
    return None if v is None else float(v)


# ----------------------------------------------------------------------------- columns
def describe_text(text: str | None, expected_module: str | None) -> dict[str, Any]:
    """``extracted_module``, ``extraction`` (JSON) and ``has_closing_line`` of one raw text."""
    from alias.grade.extract import extract_module

    if text is None:
        return {"extracted_module": None, "has_closing_line": False,
                "extraction": json.dumps({"ok": False, "actions": [], "error": "no_text: the request failed"})}
    ext = extract_module(text, expected_module if isinstance(expected_module, str) else None)
    info = {"ok": ext.ok, "actions": ext.actions, "error": ext.error, "module_name": ext.module_name,
            "truncated": bool(ext.truncated)}
    return {"extracted_module": ext.module_text if ext.ok else None, "extraction": json.dumps(info),
            "has_closing_line": bool(ext.ok and not ext.truncated)}


def _hit_limit(stop_reason: Any) -> bool | None:
    return None if not isinstance(stop_reason, str) else stop_reason in TOKEN_LIMIT_REASONS


def samples_frame(rows: list[dict], expected: dict[tuple[str, str], str]) -> pd.DataFrame:
    """The samples table from backend rows (key, ``text`` and any of
    :data:`SAMPLE_COLUMNS`): adds extraction, closing-line and truncation columns, types
    every column and sorts by key. ``expected``: ``(task_id, condition) -> system module``."""
    out = []
    for r in rows:
        row = {c: None for c in SAMPLE_COLUMNS} | r
        row |= describe_text(row["text"], expected.get((row["task_id"], row["condition"])))
        if row["hit_token_limit"] is None:
            row["hit_token_limit"] = _hit_limit(row["stop_reason"])
        row["truncated"] = bool(row["hit_token_limit"]) or not row["has_closing_line"]
        for c in ("settings", "extra"):
            if row[c] is not None and not isinstance(row[c], str):
                row[c] = json.dumps(row[c], sort_keys=True, default=str)
        out.append(row)
    df = pd.DataFrame(out, columns=SAMPLE_COLUMNS)
    df["sample_idx"] = df["sample_idx"].astype("int64")
    for c in _INT_COLS:
        df[c] = df[c].astype("Int64")
    for c in _BOOL_COLS:
        df[c] = df[c].astype("boolean")
    for c in SAMPLE_COLUMNS:
        if c not in _INT_COLS and c not in _BOOL_COLS and c != "sample_idx":
            df[c] = df[c].astype("string")
    return df.sort_values(SAMPLE_KEY).reset_index(drop=True)


# ---------------------------------------------------------------------------- backends
def _provider_rows(key: str, entry: dict, requests: list, out: Path) -> tuple[list[dict], dict]:
    from alias.generate.backends import API_KEY_ENV
    from alias.generate.batches import load_results, run_batch
    from alias.generate.types import MissingCredentials

    provider = entry["backend"]
    env = API_KEY_ENV[provider]
    ledger = out / "ledger.sqlite"
    have_key = bool(os.environ.get(env, "").strip())
    if not have_key:
        # a ledger holding every result is read without a key; otherwise nothing is
        # registered (a params change must not conflict with never-sent requests)
        done = {r.custom_id for r in load_results(ledger) if r.ok} if ledger.exists() else set()
        if not all(r.custom_id in done for r in requests):
            raise MissingCredentials(provider, env)
    results = run_batch(provider, requests, ledger, poll_interval_s=float(entry.get("poll_interval_s", 60)),
                        max_retries=int(entry.get("max_retries", 2)), endpoint=entry.get("endpoint") or None,
                        base_url=entry.get("base_url") or None,
                        timeout_s=_opt_float(entry.get("timeout_s")))
    rows, failed = [], {}
    for r in results:
        if not r.ok:
            failed[r.status] = failed.get(r.status, 0) + 1
            continue
        rows.append({"task_id": r.task_id, "condition": r.condition, "model": key, "sample_idx": r.sample_idx,
                     "text": r.text or "", "model_key": key, "backend": provider,
                     "prompt_version": r.prompt_version, "settings": r.settings | {"provider_model": r.model},
                     "response_model": r.response_model, "input_tokens": r.input_tokens,
                     "output_tokens": r.output_tokens, "stop_reason": r.stop_reason, "batch_id": r.batch_id,
                     "custom_id": r.custom_id})
    return rows, {"failed": failed}


def _local_rows(key: str, entry: dict, requests: list) -> tuple[list[dict], dict]:
    from alias.generate.local import generate_local

    threads = entry.get("threads")
    if threads:
        import torch

        torch.set_num_threads(int(threads))
    results = generate_local(
        entry["model_dir"], requests, temperature=float(entry.get("temperature", 0.7)),
        top_p=float(entry.get("top_p", 0.95)), max_new_tokens=int(entry.get("max_new_tokens", 1024)),
        batch_size=int(entry.get("batch_size", 8)), stop_at_module_end=bool(entry.get("stop_at_closing_line", True)),
        adapter_dir=entry.get("adapter_dir") or None, seed=int(entry.get("seed", 0)),
        device=entry.get("device") or None)
    rows = [{"task_id": r.task_id, "condition": r.condition, "model": key, "sample_idx": r.sample_idx,
             "text": r.text, "model_key": key, "backend": "local", "prompt_version": r.prompt_version,
             "settings": r.settings | {"model_dir": str(entry["model_dir"]), "adapter_dir": r.adapter_dir},
             "response_model": r.model_name, "input_tokens": r.input_tokens, "output_tokens": r.output_tokens,
             "stop_reason": r.stop_reason, "hit_token_limit": bool(r.hit_token_limit)} for r in results]
    return rows, {}


#: Fields of a released record (its ``extra``) that fill a samples column of the same name.
_REPLAY_FIELDS = ("output_tokens", "input_tokens", "stop_reason", "hit_token_limit", "response_model",
                  "prompt_version", "settings", "batch_id")


def _replay_rows(key: str, entry: dict, task_ids: set[str], conditions: list[str], out: Path) -> tuple[list[dict], dict]:
    from alias.generate.replay import format_errors, replay

    path = Path(entry["path"])
    df, errors = replay(path, task_ids, conditions)
    err_file = out / "replay_errors.txt"
    text = format_errors(errors, path)
    err_file.write_text(text + ("\n" if text else ""), encoding="utf-8")
    for line in text.splitlines()[:50]:
        print(f"replay {key}: {line}", file=sys.stderr)
    if len(errors) > 50:
        print(f"replay {key}: ... {len(errors) - 50} more in {err_file}", file=sys.stderr)
    wanted = set(entry.get("models") or [])
    rows = []
    for r in df.itertuples():
        if wanted and r.model not in wanted:
            continue
        extra = json.loads(r.extra)
        row = {"task_id": r.task_id, "condition": r.condition, "model": r.model, "sample_idx": int(r.sample_idx),
               "text": r.text, "model_key": key, "backend": "replay", "source_line": int(r.line),
               "extra": r.extra, "settings": {"path": str(path)}}
        for f in _REPLAY_FIELDS:
            v = extra.get(f)
            if v is None:
                continue
            if f in ("output_tokens", "input_tokens"):
                v = int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
            elif f == "hit_token_limit":
                v = v if isinstance(v, bool) else None
            elif f == "settings":
                v = v if isinstance(v, dict) else {"value": v}
            else:
                v = str(v)
            if v is not None:
                row[f] = v
        rows.append(row)
    return rows, {"replay_errors": len(errors), "replay_error_kinds": _count(e.kind for e in errors),
                  "errors_file": str(err_file)}


def _count(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in items:
        out[i] = out.get(i, 0) + 1
    return dict(sorted(out.items()))


# ------------------------------------------------------------------------------ stage
def generate_stage(params: dict, key: str, ingest_dir: Path = DATA / "ingest", rename_dir: Path = DATA / "rename",
                   verify_dir: Path = DATA / "verify", out: Path | None = None,
                   meaningful_dir: Path | None = DATA / "meaningful") -> dict[str, Any]:
    """Generate (or import) the samples of model ``key``; see the module docstring.

    Returns the ``status.json`` dict. Raises :class:`GenerateConfigError` for a bad
    entry, ``FileNotFoundError`` for a missing model directory or replay file.
    """
    from alias.generate.types import MissingCredentials

    entry = model_entry(params, key)
    gen = params["generate"]
    conditions = list(gen.get("conditions") or ["original", "random"])
    n = int(gen.get("n_samples", 5))
    out = Path(out) if out is not None else DATA / "samples" / key
    out.mkdir(parents=True, exist_ok=True)
    tasks = load_test_set(ingest_dir, rename_dir, verify_dir, meaningful_dir)
    # a task is posed by its description: a test-set task the corpus gives none (neither
    # TLA+-Bench nor module comments) cannot be prompted and is listed, not sampled
    from alias.generate.prompts import has_description

    has_desc = tasks.description.map(has_description)
    no_description = sorted(tasks.loc[~has_desc, "task_id"])
    tasks = tasks[has_desc].reset_index(drop=True)
    expected = {}
    for t in tasks.itertuples():
        expected[(t.task_id, "original")] = t.system_module
        if isinstance(t.random_system_module, str):
            expected[(t.task_id, "random")] = t.random_system_module
        if isinstance(t.meaningful_system_module, str):
            expected[(t.task_id, "meaningful")] = t.meaningful_system_module
    backend = entry["backend"]
    kind = entry.get("prompt") or _PROMPT_KIND.get(backend)
    status: dict[str, Any] = {"model_key": key, "backend": backend, "status": "ok", "reason": None,
                              "conditions": conditions, "n_samples": n, "tasks": len(tasks),
                              "no_description": no_description}
    info: dict[str, Any] = {}
    requests = []
    if backend == "replay":
        rows, info = _replay_rows(key, entry, set(tasks.task_id), conditions, out)
    else:
        model_name = entry["model"] if backend in ("anthropic", "openai") else key
        requests = build_requests(tasks, conditions, n, model_name, kind, entry)
        status["requests"] = len(requests)
        try:
            if backend == "local":
                with progress_bar(f"generate {key}", total=None):
                    rows, info = _local_rows(key, entry, requests)
            else:
                rows, info = _provider_rows(key, entry, requests, out)
        except MissingCredentials as e:
            msg = f"skipped: {e.env_var} is not set"
            print(f"generate {key}: {msg}", file=sys.stderr)
            rows, info = [], {}
            status.update(status="skipped", reason=msg)
    if backend != "replay":
        for r in rows:
            r["prompt_kind"] = kind
    df = samples_frame(rows, expected)
    write_parquet(df, out / "samples.parquet")
    status.update(info)
    status["samples"] = len(df)
    status["truncated"] = int(df.truncated.fillna(False).sum())
    status["hit_token_limit"] = int(df.hit_token_limit.fillna(False).sum())
    if status["status"] == "ok" and (info.get("failed") or info.get("replay_errors")):
        status["status"] = "partial"
    (out / "status.json").write_text(json.dumps(status, indent=2, sort_keys=True, default=str) + "\n",
                                     encoding="utf-8")
    return status


def tiny_model_stage(params: dict, out: Path = Path("models") / "tiny") -> dict[str, Any]:
    """Build the tiny local model of the embedded default
    (:func:`alias.generate.tiny.build_tiny_model` on the embedded corpus, ``params.tiny_model``
    seed and train_steps) into ``models/tiny``: the offline ``local`` entry of
    ``params.generate.models``. Same params, same files."""
    import shutil

    from alias.generate.tiny import build_tiny_model, embedded_texts

    t = params.get("tiny_model") or {}
    if out.exists():
        shutil.rmtree(out)
    build_tiny_model(embedded_texts(), out, seed=int(t.get("seed", 0)), train_steps=int(t.get("train_steps", 60)))
    return {"model_dir": str(out), "files": sorted(p.name for p in out.iterdir())}


def load_samples(params: dict, samples_dir: Path = DATA / "samples", extra: Sequence[Path] = ()) -> pd.DataFrame:
    """Every generated sample of the model keys in ``params.generate.models``
    (``<samples_dir>/<key>/samples.parquet``) and of the ``extra`` samples tables (e.g. the
    exposure stage's ``data/exposure/samples.parquet``), one frame.

    Raises :class:`StoreError` for a missing table and ``ValueError`` when two tables hold
    the same sample key (e.g. two replay files naming one model)."""
    frames = []
    seen: dict[tuple, str] = {}
    paths = [Path(samples_dir) / key / "samples.parquet"
             for key in sorted((params.get("generate") or {}).get("models") or {})] + [Path(x) for x in extra]
    for p in paths:
        df = read_parquet(p)
        for k in zip(df.task_id, df.condition, df.model, df.sample_idx):
            k = (k[0], k[1], k[2], int(k[3]))
            if k in seen:
                raise ValueError(f"sample {k} is in both {seen[k]} and {p}")
            seen[k] = str(p)
        frames.append(df)
    if not frames:
        return pd.DataFrame(columns=SAMPLE_COLUMNS)
    return pd.concat(frames, ignore_index=True)


def grade_stage(params: dict, samples_dir: Path = DATA / "samples", ingest_dir: Path = DATA / "ingest",
                rename_dir: Path = DATA / "rename", verify_dir: Path = DATA / "verify",
                out: Path = DATA / "grades", meaningful_dir: Path | None = DATA / "meaningful",
                extra_samples: Sequence[Path] = ()) -> dict[str, Any]:
    """Grade every generated sample by parse, name and behavior (Methods "Name-based grade",
    "Behavior-based grade"); journal, tool-run cache and ``verdicts.parquet`` under ``out``.
    ``extra_samples``: further samples tables to grade with those of ``samples_dir`` (the
    ``alias grade`` command passes the exposure stage's ``data/exposure/samples.parquet``).

    Returns ``{"samples", "verdicts", "passed": {model: {grade: "k/n"}}}``.
    """
    from alias.grade.cache import ToolRunner
    from alias.grade.reference import load_references
    from alias.grade.run import grade_samples
    from alias.stages import grade_tool_config
    from alias.tla.tools import check_java

    samples = load_samples(params, samples_dir, extra_samples)
    config = grade_tool_config(params)
    check_java(config)
    md = Path(meaningful_dir) if meaningful_dir is not None else None
    refs = load_references(ingest_dir, rename_dir, verify_dir,
                           meaningful_dir=md if md is not None and (md / "meaningful_tasks.parquet").exists() else None)
    runner = ToolRunner(config, Path(out) / "cache")
    rows = [{"task_id": r.task_id, "condition": r.condition, "model": r.model, "sample_idx": int(r.sample_idx),
             "text": r.text if isinstance(r.text, str) else ""} for r in samples.itertuples()]
    g = params["grade"]
    with progress_bar("grade", total=len(rows)) as bar:
        verdicts = grade_samples(rows, refs, runner, Path(out), parallel=int(g["parallel"]),
                                 max_maps=int(g["max_maps"]), progress=bar.advance)
    passed: dict[str, dict[str, str]] = {}
    for (model, grade), grp in verdicts.groupby(["model", "grade"]):
        passed.setdefault(model, {})[grade] = f"{int(grp.passed.fillna(False).sum())}/{len(grp)}"
    return {"samples": len(rows), "verdicts": len(verdicts), "passed": passed}
