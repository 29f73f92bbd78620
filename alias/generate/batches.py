"""Run sample requests through a provider's batch API, durably and resumably.

Public API::

    run_batch(provider, requests, ledger_path, *, poll_interval_s=60.0, max_retries=2,
              client=None, endpoint=None, base_url=None, max_requests_per_batch=None,
              timeout_s=None) -> list[SampleResult]
    load_results(ledger_path, provider=None) -> list[SampleResult]
    resolve_unconfirmed(ledger_path, submission_id, batch_id) -> None

See ``types.SampleRequest`` / ``types.SampleResult`` for the shapes, ``ledger`` for
the file, ``backends`` for the wire formats.

Guarantees:

* One custom_id per sample (``types.custom_id_for``); results are mapped back by
  custom_id, never by position.
* Before any create call the ledger holds a ``pending`` submission with its
  custom_ids; the batch id is written as soon as the create call answers and before
  the first poll. A rerun after a crash polls the recorded batch and never creates it
  again. A create call whose answer was lost is looked up at the provider (OpenAI:
  by input file id / metadata tag); if that is impossible (Anthropic) the run stops
  with ``UnconfirmedSubmission`` instead of risking a duplicate.
* The SDK's own HTTP retries are off for create calls (they carry no idempotency
  key); reads (retrieve, results, file content) keep them.
* Errored (when retryable), expired and canceled requests go alone into a new
  batch, at most ``max_retries`` times per request.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections import defaultdict
from typing import Any, Callable, Sequence

from .backends import Backend, BatchInfo, CreateAmbiguous, CreateNotSent, make_backend
from .ledger import Ledger, ResultRow, SubmissionRow, utcnow
from .types import (
    BatchFailed,
    PollTimeout,
    SampleRequest,
    SampleResult,
    UnconfirmedSubmission,
)

__all__ = ["run_batch", "load_results", "resolve_unconfirmed", "DEFAULT_MAX_REQUESTS_PER_BATCH"]

log = logging.getLogger(__name__)

#: Provider limits are 100,000 (Anthropic) and 50,000 (OpenAI) requests per batch;
#: smaller batches finish sooner and lose less to one expiry.
DEFAULT_MAX_REQUESTS_PER_BATCH = {"anthropic": 10_000, "openai": 10_000}


def _fingerprint(provider: str, endpoint: str, body: dict[str, Any]) -> str:
    canon = json.dumps({"provider": provider, "endpoint": endpoint, "body": body},
                       ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


def run_batch(
    provider: str | Backend,
    requests: Sequence[SampleRequest],
    ledger_path: str | os.PathLike[str],
    *,
    poll_interval_s: float = 60.0,
    max_retries: int = 2,
    client: Any = None,
    endpoint: str | None = None,
    base_url: str | None = None,
    max_requests_per_batch: int | None = None,
    timeout_s: float | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> list[SampleResult]:
    """Generate every request through ``provider``'s batch API and return one
    ``SampleResult`` per request, in the order of ``requests``.

    Args:
        provider: ``"anthropic"``, ``"openai"`` or a ``backends.Backend``.
        requests: the samples; sample keys (task_id, condition, model, sample_idx)
            must be unique.
        ledger_path: the SQLite ledger (created if absent). Reuse it to resume.
        poll_interval_s: seconds between status polls while nothing finished.
        max_retries: how many more batches one failed request may get (0: none).
        client: an ``anthropic.Anthropic`` / ``openai.OpenAI``; default: built from
            ``ANTHROPIC_API_KEY`` / ``OPENAI_API_KEY`` when a network call is first
            needed (a ledger that already holds every result needs no key).
        endpoint: OpenAI only: ``"/v1/chat/completions"`` (default) or
            ``"/v1/responses"``.
        base_url: override of the API base URL for a default client.
        max_requests_per_batch: chunk size (default 10,000). Requests are also
            grouped by model (OpenAI: one model per input file).
        timeout_s: give up polling after this many seconds with ``PollTimeout``
            (the ledger keeps the batch ids; call again to resume). ``None``: wait.
        sleep: the sleep function (tests pass a no-op).

    Returns:
        ``SampleResult`` per request. ``status`` is ``"succeeded"`` or the outcome
        of the last attempt once retries are spent or the error is final (e.g. an
        Anthropic ``invalid_request_error``, an OpenAI HTTP 400 line).

    Raises:
        MissingCredentials: a network call is needed and the key env var is unset.
        LedgerConflict: a sample key is in the ledger with another request body.
        LedgerBusy: another process is running on this ledger.
        UnconfirmedSubmission: a create call's outcome is unknown (see its text).
        BatchFailed: the provider refused a create call or failed a whole batch.
        PollTimeout: ``timeout_s`` passed.
    """
    if max_retries < 0:
        raise ValueError("max_retries must be >= 0")
    backend = provider if isinstance(provider, Backend) else make_backend(
        provider, client=client, endpoint=endpoint, base_url=base_url)
    pname = backend.provider
    chunk = max_requests_per_batch or DEFAULT_MAX_REQUESTS_PER_BATCH[pname]
    if chunk < 1:
        raise ValueError("max_requests_per_batch must be >= 1")

    by_cid, bodies = _checked_bodies(backend, requests)
    started = time.monotonic()
    with Ledger(ledger_path, secrets=[backend.secret() or ""]) as led:
        led.register(
            {
                "custom_id": cid, "provider": pname, "endpoint": backend.endpoint, "task_id": r.task_id,
                "condition": r.condition, "model": r.model, "sample_idx": r.sample_idx,
                "request_sha256": _fingerprint(pname, backend.endpoint, bodies[cid]), "body": bodies[cid],
                "settings": r.settings(), "prompt_version": r.prompt_version,
            }
            for cid, r in by_cid.items()
        )
        ids = list(by_cid)
        while True:
            _resolve_pending(led, backend, ids)
            _submit_needed(led, backend, ids, by_cid, bodies, max_retries, chunk)
            open_subs = led.submissions(states=("submitted",), custom_ids=ids, provider=pname)
            if not open_subs:
                break
            if not any([_poll_once(led, backend, sub) for sub in open_subs]):
                _wait(open_subs, pname, started, timeout_s, poll_interval_s, sleep)
        return [_result(led, r.custom_id) for r in requests]


def _checked_bodies(backend: Backend, requests: Sequence[SampleRequest]) -> tuple[dict, dict]:
    """``(request by custom_id, request body by custom_id)``; ``ValueError`` for a
    duplicate sample key or a custom_id collision, the backend's error for an invalid
    request."""
    seen: dict[tuple, SampleRequest] = {}
    for r in requests:
        if r.key in seen:
            raise ValueError(f"duplicate sample key {r.key}")
        backend.validate(r)
        seen[r.key] = r
    by_cid = {r.custom_id: r for r in requests}
    if len(by_cid) != len(requests):  # 64-bit hash collision: never silently merge samples
        raise ValueError("custom_id collision between distinct sample keys")
    return by_cid, {cid: backend.build_body(r) for cid, r in by_cid.items()}


def _wait(open_subs: list, pname: str, started: float, timeout_s: float | None, poll_interval_s: float,
          sleep: Callable[[float], None]) -> None:
    """Sleep one poll interval, or raise ``PollTimeout`` once ``timeout_s`` has passed."""
    if timeout_s is not None and time.monotonic() - started > timeout_s:
        raise PollTimeout(
            f"{pname}: {len(open_subs)} batch(es) still running after {timeout_s}s: "
            + ", ".join(s.batch_id or "?" for s in open_subs)
        )
    sleep(poll_interval_s)


def _resolve_pending(led: Ledger, backend: Backend, ids: list[str]) -> None:
    """Settle submissions whose create call was sent but not confirmed."""
    for sub in led.submissions(states=("pending",), custom_ids=ids, provider=backend.provider):
        found = backend.recover(sub)
        if found is False:
            log.info("%s: submission %s created no batch; its requests will be sent again",
                     backend.provider, sub.submission_id)
            led.close_submission(sub.submission_id, "rejected", error="recovered: no batch was created")
        elif found is None:
            raise UnconfirmedSubmission(sub.submission_id, backend.provider, list(sub.custom_ids))
        else:
            log.info("%s: submission %s recovered as batch %s", backend.provider, sub.submission_id, found.batch_id)
            led.attach_batch(sub.submission_id, found.batch_id, status=found.status,
                             submitted_at=found.created_at, raw=found.raw)


def _needs_submission(led: Ledger, cid: str, max_retries: int, busy: set[str]) -> int | None:
    """The attempt number to submit ``cid`` with now, or None."""
    if cid in busy:
        return None
    made = led.attempts_made(cid)
    if made == 0:
        return 1
    last = led.latest_result(cid)
    if last is None:  # created but not yet ended: handled by polling
        return None
    if last["outcome"] == "succeeded" or not last["retryable"] or made > max_retries:
        return None
    return made + 1


def _submit_needed(led: Ledger, backend: Backend, ids: list[str], by_cid: dict[str, SampleRequest],
                   bodies: dict[str, dict], max_retries: int, chunk: int) -> None:
    busy = {c for s in led.submissions(states=("pending", "submitted"), custom_ids=ids) for c in s.custom_ids}
    todo: dict[str, dict[str, int]] = defaultdict(dict)  # model -> custom_id -> attempt
    for cid in ids:
        n = _needs_submission(led, cid, max_retries, busy)
        if n is not None:
            todo[by_cid[cid].model][cid] = n
    for model, attempts in todo.items():
        cids = list(attempts)
        for i in range(0, len(cids), chunk):
            part = {c: attempts[c] for c in cids[i:i + chunk]}
            _submit(led, backend, model, part, bodies)


def _submit(led: Ledger, backend: Backend, model: str, attempts: dict[str, int], bodies: dict[str, dict]) -> None:
    sid = led.begin_submission(backend.provider, backend.endpoint, model, attempts)
    items = [(c, bodies[c]) for c in attempts]
    try:
        info = backend.create(sid, items, lambda fid: led.note_input_file(sid, fid))
    except CreateNotSent as e:
        led.close_submission(sid, "rejected", error=str(e))
        raise BatchFailed(f"{backend.provider}: batch create refused ({len(items)} requests): "
                          f"{led.scrub(str(e))}") from None
    except CreateAmbiguous as e:
        # Leave the submission pending: the next run looks it up before sending anything.
        found = backend.recover(led.submission(sid))
        if found is False:
            led.close_submission(sid, "rejected", error=str(e))
            raise BatchFailed(f"{backend.provider}: batch create failed: {led.scrub(str(e))}") from None
        if found is None:
            raise UnconfirmedSubmission(sid, backend.provider, list(attempts), detail=led.scrub(str(e)) or "") from None
        info = found
    led.attach_batch(sid, info.batch_id, status=info.status, submitted_at=info.created_at, raw=info.raw)
    log.info("%s: submitted batch %s (%s, %d requests, attempts %s)", backend.provider, info.batch_id, model,
             len(items), sorted(set(attempts.values())))


def _poll_once(led: Ledger, backend: Backend, sub: SubmissionRow) -> bool:
    """Retrieve one batch; when it has ended, store its results. True if it ended."""
    assert sub.batch_id is not None
    info: BatchInfo = backend.retrieve(sub.batch_id)
    if not info.terminal:
        if info.status != sub.status:
            led.update_status(sub.submission_id, info.status, info.raw)
            log.info("%s: batch %s is %s", backend.provider, info.batch_id, info.status)
        return False
    if info.failed:
        errors = (info.raw.get("errors") or {}).get("data") if isinstance(info.raw.get("errors"), dict) else None
        led.close_submission(sub.submission_id, "failed", error=json.dumps(errors, default=str),
                             status=info.status, raw=info.raw, ended_at=info.ended_at)
        raise BatchFailed(f"{backend.provider}: batch {info.batch_id} failed: {led.scrub(json.dumps(errors))}")
    members = set(sub.custom_ids)
    rows: dict[str, ResultRow] = {}
    for row in backend.results(info):
        if row.custom_id not in members:
            log.warning("%s: batch %s returned unknown custom_id %r; ignored",
                        backend.provider, info.batch_id, row.custom_id)
            continue
        if row.custom_id in rows and rows[row.custom_id].outcome == "succeeded":
            continue  # a success line wins over a duplicate error line
        rows[row.custom_id] = row
    for cid in members - rows.keys():
        rows[cid] = backend.missing(info, cid)
    led.record_results(sub.submission_id, info.batch_id, list(rows.values()), status=info.status,
                       ended_at=info.ended_at, raw=info.raw)
    counts: dict[str, int] = defaultdict(int)
    for r in rows.values():
        counts[r.outcome] += 1
    log.info("%s: batch %s %s: %s", backend.provider, info.batch_id, info.status, dict(counts))
    return True


def _result(led: Ledger, custom_id: str) -> SampleResult:
    req = led.request_row(custom_id)
    res = led.latest_result(custom_id)
    if res is None:
        raise RuntimeError(f"no result for {custom_id} although no batch is open")  # pragma: no cover
    return SampleResult(
        task_id=req["task_id"], condition=req["condition"], model=req["model"], sample_idx=req["sample_idx"],
        custom_id=custom_id, provider=req["provider"], status=res["outcome"], text=res["text"],
        response_model=res["response_model"], settings=json.loads(req["settings_json"]),
        input_tokens=res["input_tokens"], output_tokens=res["output_tokens"], stop_reason=res["stop_reason"],
        raw_response=json.loads(res["raw_json"]) if res["raw_json"] else None,
        error=json.loads(res["error_json"]) if res["error_json"] else None,
        batch_id=res["batch_id"], attempt=res["attempt"], request_sha256=req["request_sha256"],
        prompt_version=req["prompt_version"], submitted_at=res["submitted_at"], ended_at=res["ended_at"],
        received_at=res["received_at"], endpoint=req["endpoint"],
    )


def load_results(ledger_path: str | os.PathLike[str], provider: str | None = None) -> list[SampleResult]:
    """Every request in the ledger that has a result (latest attempt; a success wins),
    in registration order, without any network call."""
    with Ledger(ledger_path, lock=False) as led:
        return [_result(led, cid) for cid in led.all_custom_ids(provider) if led.latest_result(cid) is not None]


def resolve_unconfirmed(ledger_path: str | os.PathLike[str], submission_id: str, batch_id: str | None) -> None:
    """Settle an ``UnconfirmedSubmission`` by hand: ``batch_id`` is the batch found in
    the provider console for it (it will be polled), or ``None`` to declare that no
    batch was created (its requests will be sent again)."""
    with Ledger(ledger_path) as led:
        sub = led.submission(submission_id)
        if sub.state != "pending":
            raise ValueError(f"submission {submission_id} is {sub.state}, not pending")
        if batch_id is None:
            led.close_submission(submission_id, "rejected", error="resolved by hand: no batch was created")
        else:
            led.attach_batch(submission_id, batch_id, status=None, submitted_at=None,
                             raw={"resolved_by_hand_at": utcnow()})
