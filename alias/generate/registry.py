"""The model backends by name: one registry for every stage that asks a model for text
(``generate_*``, ``continuation``, ``meaningful`` and ``exposure``).

A backend turns :class:`~alias.generate.types.SampleRequest` s into one
:class:`Completion` each, in request order. It owns the rules every caller shares:

``anthropic`` / ``openai``
    The Message Batches / Batch API through :func:`alias.generate.batches.run_batch`
    with a SQLite ledger (``Options.ledger``), so a killed run resumes without paying
    twice. **The credential rule**: without ``ANTHROPIC_API_KEY`` / ``OPENAI_API_KEY``
    nothing is registered or sent; a ledger that already holds every result is read, any
    other case raises :class:`~alias.generate.types.MissingCredentials`. An entry with
    ``enabled: false`` raises :class:`ModelDisabled` before anything else.
``local``
    A local causal LM (transformers, optional LoRA adapter) through
    :func:`alias.generate.local.generate_local`.
``replay``
    Released texts: a JSONL file (``path``) of objects with ``task_id`` and ``text`` (or
    ``reply``), optionally ``condition`` and ``sample_idx``; a request without a line
    gets a failed completion (``status`` missing).
``lexicon``
    The offline stand-in of the meaningful-names proposer, registered by
    :mod:`alias.rename.proposers` (it reads ``SampleRequest.context``).

:func:`register` adds a backend; :func:`get_backend` looks one up by name.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from alias.config import ModelEntry
from alias.errors import AliasError
from alias.generate.backends import API_KEY_ENV
from alias.generate.batches import load_results, run_batch
from alias.generate.local import generate_local
from alias.generate.types import MissingCredentials, SampleRequest

__all__ = ["Completion", "Options", "Backend", "ModelDisabled", "register", "get_backend", "backend_names",
           "PROMPT_KIND"]

#: The prompt each backend's models get by default (Appendix A frontier, Appendix E fine-tuned).
PROMPT_KIND = {"anthropic": "frontier", "openai": "frontier", "local": "finetuned"}


class ModelDisabled(AliasError):
    """A provider model whose entry says ``enabled: false``: nothing is sent."""


@dataclass
class Completion:
    """One sample's text from a backend. ``text`` is ``None`` when the request failed
    (``status`` says why: errored, expired, canceled, missing); ``settings`` are the
    sampling settings as sent; the rest as the backend reported them."""

    task_id: str
    condition: str
    model: str
    sample_idx: int
    text: str | None
    status: str = "succeeded"
    error: str | None = None
    response_model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    stop_reason: str | None = None
    hit_token_limit: bool | None = None
    batch_id: str | None = None
    custom_id: str | None = None
    prompt_version: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.text is not None


@dataclass(frozen=True)
class Options:
    """Per-call settings: the batch ``ledger`` file (provider backends); a token limit and
    stop rule overriding the entry's (local: ``max_new_tokens``, ``stop_at_closing_line``,
    ``prompt_separator`` between prompt and output); ``poll_interval_s`` / ``timeout_s``
    overriding the entry's polling; ``model_and_tokenizer``: an already loaded local model."""

    ledger: Path | None = None
    max_new_tokens: int | None = None
    stop_at_closing_line: bool | None = None
    prompt_separator: str = "\n"
    poll_interval_s: float | None = None
    timeout_s: float | None = None
    model_and_tokenizer: Any = None


@dataclass(frozen=True)
class Backend:
    """A named backend: ``complete(entry, requests, options) -> completions``;
    ``credential_env`` the API-key variable (``None``: needs none)."""

    name: str
    complete: Callable[[ModelEntry, Sequence[SampleRequest], Options], list[Completion]]
    credential_env: str | None = None


_REGISTRY: dict[str, Backend] = {}


def register(backend: Backend) -> Backend:
    """Add (or replace) a backend under its name; returns it."""
    _REGISTRY[backend.name] = backend
    return backend


def get_backend(name: str) -> Backend:
    """The backend registered as ``name``; :class:`AliasError` naming the known ones."""
    if name not in _REGISTRY:
        raise AliasError(f"no model backend {name!r} (known: {', '.join(backend_names())})")
    return _REGISTRY[name]


def backend_names() -> list[str]:
    return sorted(_REGISTRY)


# ----------------------------------------------------------------------------- providers
def _provider_completions(entry: ModelEntry, requests: Sequence[SampleRequest], options: Options) -> list[Completion]:
    if entry.enabled is False:
        raise ModelDisabled(f"model {entry.model!r} ({entry.backend}) is disabled: set enabled: true to send it")
    env = API_KEY_ENV[entry.backend]
    ledger = options.ledger
    if ledger is None:
        raise AliasError(f"backend {entry.backend} needs a ledger file")
    if not os.environ.get(env, "").strip():
        done = {r.custom_id for r in load_results(ledger) if r.ok} if ledger.exists() else set()
        if not all(q.custom_id in done for q in requests):
            raise MissingCredentials(entry.backend, env)  # nothing is registered or sent
    ledger.parent.mkdir(parents=True, exist_ok=True)
    poll = options.poll_interval_s if options.poll_interval_s is not None else entry.poll_interval_s
    timeout = options.timeout_s if options.timeout_s is not None else entry.timeout_s
    results = run_batch(entry.backend, requests, ledger, poll_interval_s=60.0 if poll is None else poll,
                        max_retries=2 if entry.max_retries is None else entry.max_retries,
                        endpoint=entry.endpoint or None, base_url=entry.base_url or None, timeout_s=timeout)
    return [Completion(r.task_id, r.condition, r.model, r.sample_idx, r.text if r.ok else None, r.status,
                       None if r.ok else (json.dumps(r.error, sort_keys=True) if r.error else r.status),
                       r.response_model, r.input_tokens, r.output_tokens, r.stop_reason, None, r.batch_id,
                       r.custom_id, r.prompt_version, r.settings | {"provider_model": r.model})
            for r in results]


# ----------------------------------------------------------------------------- local
def _local_completions(entry: ModelEntry, requests: Sequence[SampleRequest], options: Options) -> list[Completion]:
    if entry.threads:
        import torch  # heavy, optional: only a local model needs it

        torch.set_num_threads(int(entry.threads))
    stop = options.stop_at_closing_line if options.stop_at_closing_line is not None else entry.stop_at_closing_line
    results = generate_local(
        entry.model_dir, requests, temperature=entry.temperature, top_p=entry.top_p,
        max_new_tokens=options.max_new_tokens or entry.max_new_tokens, batch_size=entry.batch_size,
        stop_at_module_end=True if stop is None else stop, adapter_dir=entry.adapter_dir or None, seed=entry.seed,
        device=entry.device or None, prompt_separator=options.prompt_separator,
        model_and_tokenizer=options.model_and_tokenizer)
    return [Completion(r.task_id, r.condition, r.model, r.sample_idx, r.text, "succeeded", None, r.model_name,
                       r.input_tokens, r.output_tokens, r.stop_reason, bool(r.hit_token_limit),
                       prompt_version=r.prompt_version,
                       settings=r.settings | {"model_dir": str(entry.model_dir), "adapter_dir": r.adapter_dir})
            for r in results]


# ----------------------------------------------------------------------------- replay
def read_replay_texts(path: str | Path) -> dict[tuple, str]:
    """``(task_id, condition, sample_idx) -> text`` of a JSONL file of released texts
    (``text`` or ``reply``; ``condition``/``sample_idx`` optional, stored as ``None``);
    raises :class:`AliasError` naming the line of a malformed or repeated record and
    ``FileNotFoundError`` when the file is absent."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no replay file {p}")
    out: dict[tuple, str] = {}
    for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise AliasError(f"{p}:{i}: not JSON ({e})") from e
        text = obj.get("text", obj.get("reply")) if isinstance(obj, dict) else None
        if not isinstance(obj, dict) or not isinstance(obj.get("task_id"), str) or not isinstance(text, str):
            raise AliasError(f"{p}:{i}: expected an object with string task_id and text (or reply)")
        key = (obj["task_id"], obj.get("condition"), obj.get("sample_idx"))
        if key in out:
            raise AliasError(f"{p}:{i}: task {obj['task_id']} given twice")
        out[key] = text
    return out


def _replay_completions(entry: ModelEntry, requests: Sequence[SampleRequest], options: Options) -> list[Completion]:
    texts = read_replay_texts(entry.path)
    out = []
    for q in requests:
        text = next((texts[k] for k in ((q.task_id, q.condition, q.sample_idx), (q.task_id, q.condition, None),
                                         (q.task_id, None, None)) if k in texts), None)
        out.append(Completion(q.task_id, q.condition, q.model, q.sample_idx, text,
                              "succeeded" if text is not None else "missing",
                              None if text is not None else f"no record for {q.task_id} in {entry.path}",
                              response_model=entry.model or Path(str(entry.path)).name,
                              prompt_version=q.prompt_version))
    return out


register(Backend("anthropic", _provider_completions, API_KEY_ENV["anthropic"]))
register(Backend("openai", _provider_completions, API_KEY_ENV["openai"]))
register(Backend("local", _local_completions))
register(Backend("replay", _replay_completions))
