"""Provider backends on the official SDKs: Anthropic Message Batches and the OpenAI Batch API.

Each backend turns ``SampleRequest``s into provider request bodies, creates a batch,
reads its status and parses its result lines into ``ledger.ResultRow``s. The
orchestration (ledger, retries, resume) lives in ``batches.run_batch``.

Wire formats used (from the providers' API references):

Anthropic (``client.messages.batches``)
    create   POST /v1/messages/batches  ``{"requests": [{"custom_id", "params"}]}``,
             ``params`` = a Messages API body (model, max_tokens, messages, ...);
             custom_id 1-64 chars of ``[a-zA-Z0-9_-]``, unique within the batch.
    retrieve GET /v1/messages/batches/{id} -> MessageBatch: ``processing_status``
             in_progress | canceling | ended; ``request_counts`` (processing,
             succeeded, errored, canceled, expired); ``results_url`` once ended;
             ``created_at`` / ``ended_at`` RFC 3339.
    results  GET results_url -> JSONL, one ``{"custom_id", "result"}`` per request,
             in any order; ``result.type`` succeeded (``message``) | errored
             (``error``: an error response ``{"type": "error", "error": {"type",
             "message"}}``) | canceled | expired.

OpenAI (``client.files`` + ``client.batches``)
    input    JSONL, one ``{"custom_id", "method": "POST", "url": endpoint, "body"}``
             per line, uploaded with ``files.create(purpose="batch")``; one model
             per file.
    create   POST /v1/batches ``{"input_file_id", "endpoint", "completion_window":
             "24h", "metadata"}``.
    retrieve GET /v1/batches/{id} -> Batch: ``status`` validating | in_progress |
             finalizing | completed | failed | expired | cancelling | cancelled;
             ``output_file_id``, ``error_file_id``, ``errors`` (validation
             failures), Unix-second timestamps.
    results  ``files.content(output_file_id)`` and ``files.content(error_file_id)``:
             JSONL lines ``{"id", "custom_id", "response": {"status_code",
             "request_id", "body"} | null, "error": {"code", "message"} | null}``;
             ``error.code`` batch_expired | batch_cancelled | request_timeout | ...
"""

from __future__ import annotations

import abc
import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterable

from .ledger import ResultRow
from .types import MissingCredentials, SampleRequest

__all__ = [
    "BatchInfo",
    "Backend",
    "AnthropicBackend",
    "OpenAIBackend",
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "make_client",
    "make_backend",
    "CreateNotSent",
    "CreateAmbiguous",
]

API_KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
BASE_URL_ENV = {"anthropic": "ANTHROPIC_BASE_URL", "openai": "OPENAI_BASE_URL"}

OPENAI_ENDPOINTS = ("/v1/chat/completions", "/v1/responses")
ANTHROPIC_ENDPOINT = "/v1/messages"

# Anthropic error types that a resubmission cannot fix.
_ANTHROPIC_FINAL_ERRORS = frozenset({
    "invalid_request_error", "authentication_error", "permission_error", "not_found_error",
    "request_too_large", "billing_error",
})
# OpenAI per-request HTTP statuses worth retrying.
_OPENAI_RETRY_STATUS = frozenset({408, 409, 429})


def make_client(provider: str, *, base_url: str | None = None, max_retries: int = 2, timeout: float = 120.0):
    """An SDK client whose API key comes from the environment only.

    ``base_url`` defaults to the SDK's own environment variable
    (``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL``) and then to the public API.

    Raises:
        MissingCredentials: ``ANTHROPIC_API_KEY`` / ``OPENAI_API_KEY`` unset or empty.
    """
    env = API_KEY_ENV.get(provider)
    if env is None:
        raise ValueError(f"unknown provider {provider!r}")
    key = os.environ.get(env, "").strip()
    if not key:
        raise MissingCredentials(provider, env)
    base_url = base_url or os.environ.get(BASE_URL_ENV[provider]) or None
    if provider == "anthropic":
        import anthropic

        return anthropic.Anthropic(api_key=key, base_url=base_url, max_retries=max_retries, timeout=timeout)
    import openai

    return openai.OpenAI(api_key=key, base_url=base_url, max_retries=max_retries, timeout=timeout)


def _iso(value: Any) -> str | None:
    """Provider timestamp (RFC 3339 string, datetime or Unix seconds) -> ISO-8601 UTC."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, tz=timezone.utc).isoformat()
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).astimezone(timezone.utc).isoformat()
    text = str(value)
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc).isoformat()
    except ValueError:
        return text


def _as_dict(obj: Any) -> dict[str, Any]:
    """SDK model -> the JSON it was parsed from (fields the server sent, extras kept)."""
    if isinstance(obj, dict):
        return obj
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        return to_dict(mode="json")
    return obj.model_dump(mode="json", exclude_unset=True)


@dataclass
class BatchInfo:
    """A provider batch as last seen. ``terminal``: no further status change;
    ``failed``: the whole batch was rejected and none of its requests ran."""

    batch_id: str
    status: str
    terminal: bool
    failed: bool
    created_at: str | None
    ended_at: str | None
    raw: dict[str, Any]
    input_file_id: str | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class CreateNotSent(Exception):
    """The create call got a definite answer that no batch was created (an HTTP
    error response, or no connection was made)."""


class CreateAmbiguous(Exception):
    """The create call may have reached the provider (timeout, dropped connection)."""


def _classify_create_error(exc: BaseException, sdk: Any) -> Exception:
    """Map an SDK exception from a create call to CreateNotSent / CreateAmbiguous."""
    if isinstance(exc, sdk.APIStatusError):
        return CreateNotSent(f"HTTP {exc.status_code}: {exc.message}")
    if isinstance(exc, sdk.APITimeoutError):
        return CreateAmbiguous(f"timeout: {exc}")
    if isinstance(exc, sdk.APIConnectionError):
        cause = exc.__cause__
        names = {type(c).__name__ for c in _causes(cause)}
        if "ConnectError" in names:  # the TCP/TLS connection was never made
            return CreateNotSent(f"connection failed: {exc}")
        return CreateAmbiguous(f"connection error: {exc}")
    return CreateAmbiguous(f"{type(exc).__name__}: {exc}")


def _causes(exc: BaseException | None) -> Iterable[BaseException]:
    seen = 0
    while exc is not None and seen < 10:
        yield exc
        exc = exc.__cause__ or exc.__context__
        seen += 1


class Backend(abc.ABC):
    """Interface of a provider backend (see the two implementations)."""

    provider: str
    endpoint: str

    def __init__(self, client: Any = None, *, base_url: str | None = None):
        self._client = client
        self._base_url = base_url

    @property
    def client(self) -> Any:
        """The SDK client, built from the environment on first use (so a run whose
        ledger already holds every result needs no key)."""
        if self._client is None:
            self._client = make_client(self.provider, base_url=self._base_url)
        return self._client

    def secret(self) -> str | None:
        """The API key in use, only so the ledger can scrub it; never stored."""
        key = getattr(self._client, "api_key", None) if self._client is not None else None
        return key if isinstance(key, str) else os.environ.get(API_KEY_ENV[self.provider]) or None

    # provider-specific: AnthropicBackend and OpenAIBackend implement these
    @abc.abstractmethod
    def validate(self, req: SampleRequest) -> None:
        ...

    @abc.abstractmethod
    def build_body(self, req: SampleRequest) -> dict[str, Any]:
        ...

    @abc.abstractmethod
    def create(self, submission_id: str, items: list[tuple[str, dict[str, Any]]],
               note_input_file: Callable[[str], None]) -> BatchInfo:
        ...

    @abc.abstractmethod
    def recover(self, submission: Any) -> BatchInfo | None | bool:
        """For a submission whose create was sent but whose batch id was not
        recorded: the batch if found; ``False`` if no batch can exist (nothing was
        sent); ``None`` if it cannot be told."""
        ...

    @abc.abstractmethod
    def retrieve(self, batch_id: str) -> BatchInfo:
        ...

    @abc.abstractmethod
    def results(self, info: BatchInfo) -> Iterable[ResultRow]:
        ...

    def missing(self, info: BatchInfo, custom_id: str) -> ResultRow:
        """Outcome of a member the result files do not mention."""
        return ResultRow(custom_id, "errored", True, raw=None,
                         error={"type": "missing_result", "message": f"no result line in batch {info.batch_id}"})


class AnthropicBackend(Backend):
    """Anthropic Message Batches (``client.messages.batches``)."""

    provider = "anthropic"
    endpoint = ANTHROPIC_ENDPOINT

    def validate(self, req: SampleRequest) -> None:
        if not isinstance(req.max_tokens, int) or req.max_tokens < 1:
            raise ValueError(f"anthropic requests need max_tokens >= 1 ({req.key})")

    def build_body(self, req: SampleRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": req.model,
            "max_tokens": req.max_tokens,
            "messages": [{"role": "user", "content": req.prompt}],
        }
        if req.temperature is not None:
            body["temperature"] = req.temperature
        if req.top_p is not None:
            body["top_p"] = req.top_p
        return body

    def _info(self, b: Any) -> BatchInfo:
        raw = _as_dict(b)
        status = raw.get("processing_status", "")
        return BatchInfo(
            batch_id=raw["id"], status=status, terminal=status == "ended", failed=False,
            created_at=_iso(raw.get("created_at")), ended_at=_iso(raw.get("ended_at")), raw=raw,
        )

    def create(self, submission_id, items, note_input_file):
        import anthropic

        requests = [{"custom_id": cid, "params": body} for cid, body in items]
        try:
            # No SDK-level retry of the POST: a retried create could make a second batch.
            b = self.client.with_options(max_retries=0).messages.batches.create(requests=requests)
        except anthropic.AnthropicError as e:
            raise _classify_create_error(e, anthropic) from e
        return self._info(b)

    def recover(self, submission):
        return None  # a Message Batch carries no client tag to look it up by

    def retrieve(self, batch_id):
        return self._info(self.client.messages.batches.retrieve(batch_id))

    def results(self, info):
        for line in self.client.messages.batches.results(info.batch_id):
            yield self.parse_line(_as_dict(line))

    @staticmethod
    def parse_line(d: dict[str, Any]) -> ResultRow:
        cid = d["custom_id"]
        res = d.get("result") or {}
        kind = res.get("type")
        if kind == "succeeded":
            msg = res.get("message") or {}
            text = "".join(
                blk.get("text", "") for blk in msg.get("content") or [] if blk.get("type") == "text"
            )
            usage = msg.get("usage") or {}
            return ResultRow(cid, "succeeded", False, text=text, response_model=msg.get("model"),
                             input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"),
                             stop_reason=msg.get("stop_reason"), raw=d)
        if kind == "errored":
            err = res.get("error") or {}
            inner = err.get("error") if isinstance(err.get("error"), dict) else err
            etype = (inner or {}).get("type")
            return ResultRow(cid, "errored", etype not in _ANTHROPIC_FINAL_ERRORS, raw=d, error=err)
        if kind in ("expired", "canceled"):
            return ResultRow(cid, kind, True, raw=d, error={"type": kind})
        return ResultRow(cid, "errored", True, raw=d, error={"type": "unknown_result_type", "result_type": kind})


class OpenAIBackend(Backend):
    """OpenAI Batch API (``client.files`` + ``client.batches``), endpoint
    ``/v1/chat/completions`` (default) or ``/v1/responses``."""

    provider = "openai"

    def __init__(self, client: Any = None, *, base_url: str | None = None,
                 endpoint: str = "/v1/chat/completions"):
        super().__init__(client, base_url=base_url)
        if endpoint not in OPENAI_ENDPOINTS:
            raise ValueError(f"endpoint must be one of {OPENAI_ENDPOINTS}, got {endpoint!r}")
        self.endpoint = endpoint

    def validate(self, req: SampleRequest) -> None:
        if req.max_tokens is not None and (not isinstance(req.max_tokens, int) or req.max_tokens < 1):
            raise ValueError(f"max_tokens must be None or >= 1 ({req.key})")

    def build_body(self, req: SampleRequest) -> dict[str, Any]:
        message = {"role": "user", "content": req.prompt}
        if self.endpoint == "/v1/responses":
            body: dict[str, Any] = {"model": req.model, "input": [message]}
            if req.max_tokens is not None:
                body["max_output_tokens"] = req.max_tokens
        else:
            body = {"model": req.model, "messages": [message]}
            if req.max_tokens is not None:
                body["max_completion_tokens"] = req.max_tokens
        if req.temperature is not None:
            body["temperature"] = req.temperature
        if req.top_p is not None:
            body["top_p"] = req.top_p
        return body

    def _info(self, b: Any) -> BatchInfo:
        raw = _as_dict(b)
        status = raw.get("status", "")
        ended = raw.get("completed_at") or raw.get("failed_at") or raw.get("expired_at") or raw.get("cancelled_at")
        return BatchInfo(
            batch_id=raw["id"], status=status,
            terminal=status in ("completed", "failed", "expired", "cancelled"), failed=status == "failed",
            created_at=_iso(raw.get("created_at")), ended_at=_iso(ended), raw=raw,
            input_file_id=raw.get("input_file_id"), output_file_id=raw.get("output_file_id"),
            error_file_id=raw.get("error_file_id"),
        )

    def create(self, submission_id, items, note_input_file):
        import openai

        lines = [
            json.dumps({"custom_id": cid, "method": "POST", "url": self.endpoint, "body": body},
                       ensure_ascii=False, separators=(",", ":"))
            for cid, body in items
        ]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        try:
            f = self.client.files.create(file=(f"{submission_id}.jsonl", data, "application/jsonl"), purpose="batch")
        except openai.OpenAIError as e:
            # An upload sends no model request: retrying it later is always safe.
            raise CreateNotSent(f"input file upload failed: {e}") from e
        note_input_file(f.id)
        try:
            b = self.client.with_options(max_retries=0).batches.create(
                input_file_id=f.id, endpoint=self.endpoint, completion_window="24h",
                metadata={"alias_submission": submission_id},
            )
        except openai.OpenAIError as e:
            raise _classify_create_error(e, openai) from e
        return self._info(b)

    def recover(self, submission):
        """Find the batch by its input file id or its ``alias_submission`` tag; a
        submission without a recorded input file never sent a create call."""
        if not submission.input_file_id:
            return False
        since = datetime.fromisoformat(submission.created_at).timestamp() - 3600
        for b in self.client.batches.list(limit=100):
            raw = _as_dict(b)
            if raw.get("input_file_id") == submission.input_file_id or (
                (raw.get("metadata") or {}).get("alias_submission") == submission.submission_id
            ):
                return self._info(b)
            if (raw.get("created_at") or 0) < since:
                break  # the list is newest first
        # The batch list is the provider's record: no batch with this input file
        # (or tag) means the create call, if it was sent at all, created nothing.
        return False

    def retrieve(self, batch_id):
        return self._info(self.client.batches.retrieve(batch_id))

    def results(self, info):
        for fid in (info.output_file_id, info.error_file_id):
            if not fid:
                continue
            text = self.client.files.content(fid).text
            for line in text.splitlines():
                if line.strip():
                    yield self.parse_line(json.loads(line), self.endpoint)

    def missing(self, info, custom_id):
        if info.status == "expired":
            return ResultRow(custom_id, "expired", True,
                             error={"code": "batch_expired", "message": "no line in the output or error file"})
        if info.status == "cancelled":
            return ResultRow(custom_id, "canceled", True,
                             error={"code": "batch_cancelled", "message": "no line in the output or error file"})
        return super().missing(info, custom_id)

    @staticmethod
    def parse_line(d: dict[str, Any], endpoint: str) -> ResultRow:
        cid = d["custom_id"]
        resp = d.get("response") or None
        err = d.get("error") or None
        if resp is not None and resp.get("status_code") == 200 and err is None:
            body = resp.get("body") or {}
            if endpoint == "/v1/responses":
                parts = []
                for item in body.get("output") or []:
                    if item.get("type") == "message":
                        parts.extend(c.get("text", "") for c in item.get("content") or []
                                     if c.get("type") == "output_text")
                text = "".join(parts)
                usage = body.get("usage") or {}
                status = body.get("status")
                stop = ((body.get("incomplete_details") or {}).get("reason") if status == "incomplete" else status)
                return ResultRow(cid, "succeeded", False, text=text, response_model=body.get("model"),
                                 input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"),
                                 stop_reason=stop, raw=d)
            choice = (body.get("choices") or [{}])[0]
            content = (choice.get("message") or {}).get("content")
            usage = body.get("usage") or {}
            return ResultRow(cid, "succeeded", False, text=content if content is not None else "",
                             response_model=body.get("model"), input_tokens=usage.get("prompt_tokens"),
                             output_tokens=usage.get("completion_tokens"), stop_reason=choice.get("finish_reason"),
                             raw=d)
        if err is not None:
            code = err.get("code")
            outcome = {"batch_expired": "expired", "batch_cancelled": "canceled"}.get(code, "errored")
            return ResultRow(cid, outcome, True, raw=d, error=err)
        status = (resp or {}).get("status_code")
        body = (resp or {}).get("body") or {}
        error = body.get("error") if isinstance(body.get("error"), dict) else {"body": body}
        error = {"status_code": status, **error}
        retry = status is None or status in _OPENAI_RETRY_STATUS or status >= 500
        return ResultRow(cid, "errored", retry, raw=d, error=error)


def make_backend(provider: str, *, client: Any = None, endpoint: str | None = None,
                 base_url: str | None = None) -> Backend:
    """Backend for ``provider`` (``"anthropic"`` | ``"openai"``). ``client`` defaults
    to one built from the environment on first network use."""
    if provider == "anthropic":
        if endpoint not in (None, ANTHROPIC_ENDPOINT):
            raise ValueError(f"anthropic has one endpoint, {ANTHROPIC_ENDPOINT}")
        return AnthropicBackend(client, base_url=base_url)
    if provider == "openai":
        return OpenAIBackend(client, base_url=base_url, endpoint=endpoint or "/v1/chat/completions")
    raise ValueError(f"unknown provider {provider!r}; expected 'anthropic' or 'openai'")

