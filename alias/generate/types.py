"""Value types, errors and the custom_id scheme of the batch clients."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from alias.errors import AliasError

__all__ = [
    "Provider",
    "Outcome",
    "PROVIDERS",
    "SampleRequest",
    "SampleResult",
    "custom_id_for",
    "CUSTOM_ID_RE",
    "BatchError",
    "MissingCredentials",
    "LedgerConflict",
    "LedgerBusy",
    "UnconfirmedSubmission",
    "BatchFailed",
    "PollTimeout",
]

Provider = Literal["anthropic", "openai"]
PROVIDERS: tuple[str, ...] = ("anthropic", "openai")

#: Per-request outcome, named as Anthropic names its result types; OpenAI lines are
#: mapped onto them (see ``backends.OpenAIBackend``).
Outcome = Literal["succeeded", "errored", "expired", "canceled"]

#: Anthropic's rule for custom_id (OpenAI accepts any string; this subset fits both).
CUSTOM_ID_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

_HASH_LEN = 16  # hex digits of SHA-256 kept in a custom_id (64 bits)
_SLUG_MAX = 64 - 1 - _HASH_LEN


def custom_id_for(task_id: str, condition: str, model: str, sample_idx: int) -> str:
    """Stable custom_id of one sample, valid for both providers.

    Shape: ``<slug>-<h>`` where ``h`` is the first 16 hex digits of the SHA-256 of the
    canonical JSON ``[task_id, condition, model, sample_idx]`` and ``slug`` is a
    readable, sanitized and truncated ``<condition>_<sample_idx>_<task_id>`` (at most
    47 characters of ``[a-zA-Z0-9_-]``). The hash makes the id unique however the slug
    was cut; the ledger keeps the full mapping custom_id -> sample key.
    """
    if not isinstance(sample_idx, int) or isinstance(sample_idx, bool) or sample_idx < 0:
        raise ValueError(f"sample_idx must be a non-negative int, got {sample_idx!r}")
    for name, value in (("task_id", task_id), ("condition", condition), ("model", model)):
        if not isinstance(value, str) or not value:
            raise ValueError(f"{name} must be a non-empty string")
    canon = json.dumps([task_id, condition, model, sample_idx], ensure_ascii=False, separators=(",", ":"))
    digest = hashlib.sha256(canon.encode("utf-8")).hexdigest()[:_HASH_LEN]
    slug = re.sub(r"[^a-zA-Z0-9_-]+", "_", f"{condition}_{sample_idx}_{task_id}")[:_SLUG_MAX].strip("_-")
    cid = f"{slug}-{digest}" if slug else digest
    assert CUSTOM_ID_RE.match(cid), cid
    return cid


@dataclass(frozen=True)
class SampleRequest:
    """One sample to generate: one provider request, one custom_id.

    Attributes:
        task_id, condition, model, sample_idx: the sample key (DESIGN.md "Keys").
            ``model`` is the provider's model name, sent as is.
        prompt: the full user message (see ``prompts.build_prompt``).
        max_tokens: output-token limit. Required by Anthropic; for OpenAI ``None``
            leaves the provider default (sent as ``max_completion_tokens`` on
            /v1/chat/completions and ``max_output_tokens`` on /v1/responses).
        temperature, top_p: ``None`` (default) sends nothing, i.e. the provider's
            default sampling, as in the paper (Appendix A).
        prompt_version: recorded with the result (e.g. ``prompts.PROMPT_VERSION``).
        context: what an offline backend reads besides the prompt (the lexicon proposer:
            the listed identifiers and the names to avoid); never sent, not compared.
    """

    task_id: str
    condition: str
    model: str
    sample_idx: int
    prompt: str
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    prompt_version: str | None = None
    context: Any = field(default=None, compare=False, repr=False)

    @property
    def custom_id(self) -> str:
        return custom_id_for(self.task_id, self.condition, self.model, self.sample_idx)

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.task_id, self.condition, self.model, self.sample_idx)

    def settings(self) -> dict[str, Any]:
        """Provider settings as requested: ``{"temperature", "top_p", "max_tokens"}``;
        ``None`` means "not sent, provider default"."""
        return {"temperature": self.temperature, "top_p": self.top_p, "max_tokens": self.max_tokens}


@dataclass
class SampleResult:
    """What the ledger holds for one sample after its last attempt.

    Attributes:
        task_id, condition, model, sample_idx: the sample key.
        custom_id: the id the provider saw (``custom_id_for`` of the key).
        provider: ``"anthropic"`` or ``"openai"``.
        status: outcome of the last attempt (``succeeded``, ``errored``,
            ``expired``, ``canceled``).
        text: the raw model text (Anthropic: text blocks joined; OpenAI chat:
            ``choices[0].message.content``; responses: ``output_text`` parts joined);
            ``None`` unless succeeded.
        response_model: the model name the provider reports in its response.
        settings: ``{"temperature", "top_p", "max_tokens"}`` as sent (``None`` = not
            sent, provider default).
        input_tokens, output_tokens: usage reported by the provider.
        stop_reason: Anthropic ``stop_reason``; OpenAI chat ``finish_reason``;
            OpenAI responses ``status`` or ``incomplete_details.reason``.
        raw_response: the whole result line as JSON (Anthropic results line,
            OpenAI output/error file line), or a synthesized marker for a request the
            provider never answered.
        error: the error object for a failed attempt, else ``None``.
        batch_id: the provider batch of the last attempt.
        attempt: 1 for the first batch, 2 for the first retry, ...
        request_sha256: fingerprint of the provider request body.
        prompt_version: as given in the request.
        submitted_at, ended_at, received_at: ISO-8601 UTC: batch created (as the
            provider reports it), batch ended (provider), results written locally.
        endpoint: OpenAI batch endpoint (``/v1/chat/completions``,
            ``/v1/responses``); ``/v1/messages`` for Anthropic.
    """

    task_id: str
    condition: str
    model: str
    sample_idx: int
    custom_id: str
    provider: str
    status: str
    text: str | None
    response_model: str | None
    settings: dict[str, Any]
    input_tokens: int | None
    output_tokens: int | None
    stop_reason: str | None
    raw_response: dict[str, Any] | None
    error: dict[str, Any] | None
    batch_id: str
    attempt: int
    request_sha256: str
    prompt_version: str | None
    submitted_at: str | None
    ended_at: str | None
    received_at: str
    endpoint: str

    @property
    def ok(self) -> bool:
        return self.status == "succeeded"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class BatchError(AliasError, RuntimeError):
    """Base class of the errors raised by ``alias.generate``."""


class MissingCredentials(BatchError):
    """The provider's API key is not in the environment.

    ``env_var`` names the variable; a DVC stage can catch this, print the message
    and skip that model.
    """

    def __init__(self, provider: str, env_var: str):
        self.provider = provider
        self.env_var = env_var
        super().__init__(f"{provider}: no API key; set {env_var} in the environment to query this provider")


class LedgerConflict(BatchError):
    """A sample key is already in the ledger with a different request body (for
    example, another prompt text or other settings). Use another ledger file, or
    remove the old one on purpose."""


class LedgerBusy(BatchError):
    """Another process holds the ledger's lock file."""


class UnconfirmedSubmission(BatchError):
    """A batch create call was sent but its batch id was never recorded, and the
    provider's batch list cannot tell whether it was created. Nothing is resubmitted
    until an operator calls ``batches.resolve_unconfirmed``."""

    def __init__(self, submission_id: str, provider: str, custom_ids: list[str], detail: str = ""):
        self.submission_id = submission_id
        self.provider = provider
        self.custom_ids = custom_ids
        msg = (
            f"{provider}: submission {submission_id} ({len(custom_ids)} requests) may or may not have "
            "created a batch; check the provider console and call "
            "alias.generate.batches.resolve_unconfirmed(ledger_path, submission_id, batch_id_or_None)"
        )
        super().__init__(msg + (f" [{detail}]" if detail else ""))


class BatchFailed(BatchError):
    """The provider rejected a whole batch (OpenAI status ``failed``, or a create
    call answered with an error). No request of it ran; a later run may submit them
    again after the cause is fixed."""


class PollTimeout(BatchError):
    """``timeout_s`` passed while batches were still running. The ledger keeps their
    ids: call ``run_batch`` again with the same ledger to go on polling."""
