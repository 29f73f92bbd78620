"""Batch clients against loopback servers that speak each provider's batch wire format.

The servers follow the API references: Anthropic Message Batches
(POST/GET /v1/messages/batches[/{id}[/results]]) and the OpenAI Batch API
(POST /v1/files multipart, POST/GET /v1/batches[/{id}], GET /v1/files/{id}/content).
The real SDK clients talk to them through ``base_url``.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from dataclasses import asdict
from datetime import datetime, timedelta, timezone
from email.parser import BytesParser
from email.policy import default as email_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlparse

import pytest

from alias.generate import (
    LedgerBusy,
    LedgerConflict,
    MissingCredentials,
    PollTimeout,
    SampleRequest,
    UnconfirmedSubmission,
    custom_id_for,
    load_results,
    resolve_unconfirmed,
    run_batch,
)
from alias.generate.backends import make_client
from alias.generate.ledger import Ledger
from alias.generate.prompts import PROMPT_VERSION, build_prompt

ANTHROPIC_KEY = "sk-ant-api03-TESTKEY-" + "q" * 24 + "-never-in-ledger"
OPENAI_KEY = "sk-proj-TESTKEY-" + "z" * 24 + "-never-in-ledger"
CUSTOM_ID_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
REPO = Path(__file__).resolve().parents[1]


def _now_rfc3339(offset_s: float = 0) -> str:
    return (datetime.now(timezone.utc) + timedelta(seconds=offset_s)).isoformat().replace("+00:00", "Z")


# --------------------------------------------------------------------------- servers
class FakeServer:
    """A loopback HTTP server; subclasses implement ``route``."""

    api_key: str

    def __init__(self, api_key: str):
        self.api_key = api_key
        self.lock = threading.Lock()
        self.hold = False  # True: batches never end
        self.plan = lambda custom_id, attempt: "succeeded"
        self.attempts: dict[str, int] = {}  # custom_id -> number of batches it was created in
        self.creates: list[dict] = []  # {"batch_id", "custom_ids", "body"}
        self.retrieves = 0
        self.requests = 0  # every HTTP request, of any kind
        self.unauthorized = 0
        self.leak_key_in_errors = False
        self.create_delay_s = 0.0  # answer create calls this late (client timeouts)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in two writes

            def log_message(self, *a):  # keep test output clean
                pass

            def _reply(self, code, payload, ctype="application/json"):
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method):
                with fake.lock:
                    fake.requests += 1
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                try:
                    code, payload, ctype = fake.route(method, self.path, self.headers, body)
                except Exception as e:  # pragma: no cover - a bug in the fake
                    code, payload, ctype = 500, {"error": repr(e)}, "application/json"
                if method == "POST" and self.path.rstrip("/").endswith("/batches") and fake.create_delay_s:
                    time.sleep(fake.create_delay_s)  # the batch exists; the answer comes late
                try:
                    self._reply(code, payload, ctype)
                except OSError:  # the client gave up waiting
                    pass

            def do_GET(self):
                self._handle("GET")

            def do_POST(self):
                self._handle("POST")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _next_attempt(self, cid: str) -> int:
        self.attempts[cid] = self.attempts.get(cid, 0) + 1
        return self.attempts[cid]

    def route(self, method, path, headers, body):  # pragma: no cover - abstract
        raise NotImplementedError


class FakeAnthropic(FakeServer):
    """Anthropic Message Batches: create / retrieve / results."""

    polls_to_end = 2  # retrieves of a batch before it reports processing_status "ended"

    def __init__(self, api_key=ANTHROPIC_KEY):
        super().__init__(api_key)
        self.batches: dict[str, dict] = {}

    @property
    def base_url(self) -> str:
        return self.root

    def route(self, method, path, headers, body):
        # x-api-key (API reference); SDK 2.x sends the key as a bearer token instead.
        if self.api_key not in (headers.get("x-api-key"), (headers.get("Authorization") or "")[len("Bearer "):]):
            self.unauthorized += 1
            return 401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}, \
                "application/json"
        assert headers.get("anthropic-version"), "the SDK sends anthropic-version"
        parts = urlparse(path).path.rstrip("/").split("/")
        with self.lock:
            if method == "POST" and parts == ["", "v1", "messages", "batches"]:
                return self._create(json.loads(body))
            if method == "GET" and len(parts) == 5 and parts[:4] == ["", "v1", "messages", "batches"]:
                return self._retrieve(parts[4])
            if method == "GET" and len(parts) == 6 and parts[5] == "results":
                return self._results(parts[4])
        return 404, {"type": "error", "error": {"type": "not_found_error", "message": path}}, "application/json"

    def _create(self, payload):
        reqs = payload["requests"]
        ids = [r["custom_id"] for r in reqs]
        bad = [c for c in ids if not CUSTOM_ID_RE.match(c)]
        if bad or len(set(ids)) != len(ids) or not reqs:
            return 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                    "message": f"bad custom_id(s) {bad}"}}, "application/json"
        for r in reqs:
            p = r["params"]
            assert {"model", "max_tokens", "messages"} <= set(p), p
        bid = "msgbatch_" + uuid.uuid4().hex[:24]
        outcomes = {}
        for r in reqs:
            outcomes[r["custom_id"]] = self.plan(r["custom_id"], self._next_attempt(r["custom_id"]))
        self.batches[bid] = {"requests": reqs, "outcomes": outcomes, "polls": 0, "created_at": _now_rfc3339(),
                             "ended": False}
        self.creates.append({"batch_id": bid, "custom_ids": ids, "body": payload})
        return 200, self._batch_json(bid), "application/json"

    def _batch_json(self, bid):
        b = self.batches[bid]
        n = len(b["requests"])
        counts = {"processing": n, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if b["ended"]:
            counts["processing"] = 0
            for o in b["outcomes"].values():
                counts[{"errored_final": "errored"}.get(o, o)] += 1
        return {
            "id": bid, "type": "message_batch",
            "processing_status": "ended" if b["ended"] else "in_progress",
            "request_counts": counts,
            "created_at": b["created_at"], "expires_at": _now_rfc3339(86400),
            "ended_at": b.get("ended_at"), "archived_at": None, "cancel_initiated_at": None,
            "results_url": f"{self.root}/v1/messages/batches/{bid}/results" if b["ended"] else None,
        }

    def _retrieve(self, bid):
        if bid not in self.batches:
            return 404, {"type": "error", "error": {"type": "not_found_error", "message": bid}}, "application/json"
        self.retrieves += 1
        b = self.batches[bid]
        b["polls"] += 1
        if not self.hold and not b["ended"] and b["polls"] >= self.polls_to_end:
            b["ended"], b["ended_at"] = True, _now_rfc3339()
        return 200, self._batch_json(bid), "application/json"

    def _results(self, bid):
        b = self.batches[bid]
        if not b["ended"]:
            return 400, {"type": "error", "error": {"type": "invalid_request_error", "message": "not ended"}}, \
                "application/json"
        lines = []
        for r in reversed(b["requests"]):  # results come in any order
            cid, p, outcome = r["custom_id"], r["params"], b["outcomes"][r["custom_id"]]
            if outcome == "succeeded":
                prompt = p["messages"][0]["content"]
                result = {"type": "succeeded", "message": {
                    "id": "msg_" + uuid.uuid4().hex[:20], "type": "message", "role": "assistant",
                    "model": p["model"] + "-20990101",
                    "content": [{"type": "text", "text": "---- MODULE M ----\n"},
                                {"type": "text", "text": f"\\* answer to: {prompt[-40:]}\n===="}],
                    "stop_reason": "end_turn", "stop_sequence": None,
                    "usage": {"input_tokens": len(prompt) // 4, "output_tokens": 17},
                }}
            elif outcome in ("errored", "errored_final"):
                etype = "api_error" if outcome == "errored" else "invalid_request_error"
                msg = "Internal server error" + (f" key={self.api_key}" if self.leak_key_in_errors else "")
                result = {"type": "errored", "error": {"type": "error", "error": {"type": etype, "message": msg},
                                                       "request_id": "req_" + uuid.uuid4().hex[:12]}}
            else:
                result = {"type": outcome}  # "expired" | "canceled"
            lines.append(json.dumps({"custom_id": cid, "result": result}))
        return 200, ("\n".join(lines) + "\n").encode(), "application/x-jsonl"


class FakeOpenAI(FakeServer):
    """OpenAI Batch API: files (multipart upload, content) and batches (create, retrieve, list)."""

    steps = ("validating", "in_progress", "finalizing")  # statuses before the terminal one

    def __init__(self, api_key=OPENAI_KEY):
        super().__init__(api_key)
        self.files: dict[str, dict] = {}
        self.batches: dict[str, dict] = {}
        self.uploads = 0

    @property
    def base_url(self) -> str:
        return self.root + "/v1"

    def route(self, method, path, headers, body):
        if headers.get("Authorization") != f"Bearer {self.api_key}":
            self.unauthorized += 1
            return 401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                   "param": None, "code": "invalid_api_key"}}, "application/json"
        parts = urlparse(path).path.rstrip("/").split("/")
        with self.lock:
            if method == "POST" and parts == ["", "v1", "files"]:
                return self._upload(headers, body)
            if method == "GET" and len(parts) == 5 and parts[2] == "files" and parts[4] == "content":
                f = self.files[parts[3]]
                return 200, f["content"], "application/octet-stream"
            if method == "POST" and parts == ["", "v1", "batches"]:
                return self._create(json.loads(body))
            if method == "GET" and parts == ["", "v1", "batches"]:
                data = [self._batch_json(b) for b in reversed(list(self.batches))]  # newest first
                return 200, {"object": "list", "data": data, "first_id": data[0]["id"] if data else None,
                             "last_id": data[-1]["id"] if data else None, "has_more": False}, "application/json"
            if method == "GET" and len(parts) == 4 and parts[2] == "batches":
                return self._retrieve(parts[3])
        return 404, {"error": {"message": f"no route {method} {path}", "type": "invalid_request_error"}}, \
            "application/json"

    def _new_file(self, content: bytes, filename: str, purpose: str) -> dict:
        fid = "file-" + uuid.uuid4().hex[:24]
        self.files[fid] = {"id": fid, "object": "file", "bytes": len(content), "created_at": int(time.time()),
                           "filename": filename, "purpose": purpose, "status": "processed", "content": content}
        return self.files[fid]

    def _upload(self, headers, body):
        msg = BytesParser(policy=email_policy).parsebytes(
            b"Content-Type: " + headers["Content-Type"].encode() + b"\r\n\r\n" + body)
        fields, filename, content = {}, None, b""
        for part in msg.iter_parts():
            name = part.get_param("name", header="content-disposition")
            if name == "file":
                filename, content = part.get_filename(), part.get_payload(decode=True)
            else:
                fields[name] = part.get_payload(decode=True).decode()
        assert fields.get("purpose") == "batch", fields
        self.uploads += 1
        f = self._new_file(content, filename, "batch")
        return 200, {k: v for k, v in f.items() if k != "content"}, "application/json"

    def _create(self, payload):
        assert payload["completion_window"] == "24h"
        f = self.files[payload["input_file_id"]]
        lines = [json.loads(x) for x in f["content"].decode().splitlines() if x.strip()]
        errors = []
        ids = [ln.get("custom_id") for ln in lines]
        models = {ln["body"].get("model") for ln in lines}
        for i, ln in enumerate(lines, 1):
            if ln.get("method") != "POST" or ln.get("url") != payload["endpoint"]:
                errors.append({"code": "invalid_url", "message": "url must match endpoint", "line": i})
        if len(set(ids)) != len(ids):
            errors.append({"code": "duplicate_custom_id", "message": "duplicate custom_id", "line": None})
        if len(models) != 1:
            errors.append({"code": "mixed_models", "message": "one model per file", "line": None})
        bid = "batch_" + uuid.uuid4().hex[:24]
        outcomes = {}
        if not errors:
            for ln in lines:
                outcomes[ln["custom_id"]] = self.plan(ln["custom_id"], self._next_attempt(ln["custom_id"]))
        self.batches[bid] = {"payload": payload, "lines": lines, "outcomes": outcomes, "polls": 0,
                             "created_at": int(time.time()), "status": "validating", "errors": errors,
                             "output_file_id": None, "error_file_id": None}
        self.creates.append({"batch_id": bid, "custom_ids": ids, "body": payload, "lines": lines})
        return 200, self._batch_json(bid), "application/json"

    def _batch_json(self, bid):
        b = self.batches[bid]
        n = len(b["lines"])
        done = b["status"] in ("completed", "expired", "cancelled", "failed")
        failed = sum(1 for o in b["outcomes"].values() if o != "succeeded") if done else 0
        out = {
            "id": bid, "object": "batch", "endpoint": b["payload"]["endpoint"],
            "input_file_id": b["payload"]["input_file_id"], "completion_window": "24h",
            "status": b["status"], "created_at": b["created_at"], "expires_at": b["created_at"] + 86400,
            "output_file_id": b["output_file_id"], "error_file_id": b["error_file_id"],
            "request_counts": {"total": n, "completed": n - failed if done else 0, "failed": failed},
            "metadata": b["payload"].get("metadata"),
            "errors": {"object": "list", "data": b["errors"]} if b["errors"] else None,
        }
        if done:
            out[{"completed": "completed_at", "expired": "expired_at", "cancelled": "cancelled_at",
                 "failed": "failed_at"}[b["status"]]] = int(time.time())
        return out

    def _retrieve(self, bid):
        self.retrieves += 1
        b = self.batches[bid]
        b["polls"] += 1
        if b["status"] in ("completed", "expired", "cancelled", "failed"):
            return 200, self._batch_json(bid), "application/json"
        if b["errors"]:
            b["status"] = "failed"
        elif self.hold:
            b["status"] = "in_progress"
        elif b["polls"] <= len(self.steps) - 1:
            b["status"] = self.steps[b["polls"]]
        else:
            self._finish(bid)
        return 200, self._batch_json(bid), "application/json"

    def _finish(self, bid):
        b = self.batches[bid]
        endpoint = b["payload"]["endpoint"]
        out, err = [], []
        for ln in b["lines"]:
            cid, body, o = ln["custom_id"], ln["body"], b["outcomes"][ln["custom_id"]]
            line = {"id": "batch_req_" + uuid.uuid4().hex[:16], "custom_id": cid, "response": None, "error": None}
            prompt = (body.get("messages") or body.get("input"))[0]["content"]
            if o == "succeeded":
                text = f"---- MODULE M ----\n\\* answer to: {prompt[-40:]}\n===="
                if endpoint == "/v1/responses":
                    rbody = {"id": "resp_" + uuid.uuid4().hex[:12], "object": "response", "created_at": 1,
                             "status": "completed", "incomplete_details": None, "model": body["model"] + "-2099",
                             "output": [{"type": "reasoning", "id": "rs_1", "summary": []},
                                        {"type": "message", "id": "msg_1", "status": "completed",
                                         "role": "assistant",
                                         "content": [{"type": "output_text", "text": text, "annotations": []}]}],
                             "usage": {"input_tokens": 11, "output_tokens": 22, "total_tokens": 33}}
                else:
                    rbody = {"id": "chatcmpl-" + uuid.uuid4().hex[:12], "object": "chat.completion", "created": 1,
                             "model": body["model"] + "-2099",
                             "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                          "finish_reason": "stop"}],
                             "usage": {"prompt_tokens": 11, "completion_tokens": 22, "total_tokens": 33}}
                line["response"] = {"status_code": 200, "request_id": "req_" + uuid.uuid4().hex[:8], "body": rbody}
                out.append(line)
                continue
            if o == "errored":
                line["response"] = {"status_code": 500, "request_id": "req_x", "body": {"error": {
                    "message": "The server had an error while processing your request.", "type": "server_error",
                    "param": None, "code": None}}}
            elif o == "errored_final":
                line["response"] = {"status_code": 400, "request_id": "req_y", "body": {"error": {
                    "message": "Unsupported parameter", "type": "invalid_request_error", "param": "x",
                    "code": "unsupported_parameter"}}}
            elif o == "timeout":
                line["error"] = {"code": "request_timeout", "message": "The request timed out."}
            elif o == "expired":
                line["error"] = {"code": "batch_expired",
                                 "message": "This request could not be executed before the completion window "
                                            "expired."}
            elif o == "canceled":
                line["error"] = {"code": "batch_cancelled", "message": "This request was cancelled."}
            err.append(line)
        outcomes = set(b["outcomes"].values())
        b["status"] = "expired" if "expired" in outcomes else "cancelled" if "canceled" in outcomes else "completed"
        if out:
            b["output_file_id"] = self._new_file(("\n".join(map(json.dumps, reversed(out))) + "\n").encode(),
                                                 "batch_output.jsonl", "batch_output")["id"]
        if err:
            b["error_file_id"] = self._new_file(("\n".join(map(json.dumps, err)) + "\n").encode(),
                                                "batch_errors.jsonl", "batch_output")["id"]


# --------------------------------------------------------------------------- helpers
@pytest.fixture
def fake_anthropic():
    with FakeAnthropic() as srv:
        yield srv


@pytest.fixture
def fake_openai():
    with FakeOpenAI() as srv:
        yield srv


def anthropic_client(srv):
    import anthropic

    return anthropic.Anthropic(api_key=srv.api_key, base_url=srv.base_url, max_retries=0)


def openai_client(srv):
    import openai

    return openai.OpenAI(api_key=srv.api_key, base_url=srv.base_url, max_retries=0)


def make_requests(model: str, tasks=("Barrier", "HourClock"), conditions=("original", "random"), n=5,
                  max_tokens: int | None = 4096) -> list[SampleRequest]:
    out = []
    for t in tasks:
        for c in conditions:
            desc = f"The {t} system, condition {c}: processes wait at a barrier."
            for i in range(n):
                out.append(SampleRequest(task_id=f"tlaplus-examples/{t}/{t}.tla", condition=c, model=model,
                                         sample_idx=i, prompt=build_prompt("frontier", desc), max_tokens=max_tokens,
                                         prompt_version=PROMPT_VERSION))
    return out


def run(provider, srv, reqs, ledger, **kw):
    client = anthropic_client(srv) if provider == "anthropic" else openai_client(srv)
    kw.setdefault("poll_interval_s", 0.0)
    return run_batch(provider, reqs, ledger, client=client, **kw)


def assert_no_key(ledger: Path, key: str):
    for p in ledger.parent.iterdir():
        if p.name.startswith(ledger.name):
            assert key.encode() not in p.read_bytes(), p


# --------------------------------------------------------------------------- custom ids
def test_custom_ids_are_stable_valid_and_distinct():
    cid = custom_id_for("tlaplus-examples/Barrier/Barrier.tla", "random", "claude-opus-4-8", 3)
    assert cid == custom_id_for("tlaplus-examples/Barrier/Barrier.tla", "random", "claude-opus-4-8", 3)
    assert CUSTOM_ID_RE.match(cid) and cid.startswith("random_3_tlaplus-examples_Barrier")
    # Pinned: a change here orphans every existing ledger.
    assert cid == "random_3_tlaplus-examples_Barrier_Barrier_tla-" + cid.rsplit("-", 1)[1]
    assert len(cid.rsplit("-", 1)[1]) == 16
    long = custom_id_for("x" * 300 + "/ünïcødé spec.tla", "meaningful", "gpt-5.1", 4)
    assert CUSTOM_ID_RE.match(long) and len(long) == 64
    keys = [(t, c, m, i) for t in ("a.b", "a_b", "a/b", "a b") for c in ("original", "random")
            for m in ("gpt-5", "gpt_5") for i in range(5)]
    ids = {custom_id_for(*k) for k in keys}
    assert len(ids) == len(keys)  # sanitizing collisions are told apart by the hash
    with pytest.raises(ValueError):
        custom_id_for("t", "original", "m", -1)


# --------------------------------------------------------------------------- Anthropic
def test_anthropic_submit_poll_and_map_by_custom_id(fake_anthropic, tmp_path):
    reqs = make_requests("claude-opus-4-8")
    ledger = tmp_path / "anthropic.sqlite"
    results = run("anthropic", fake_anthropic, reqs, ledger)

    assert len(fake_anthropic.creates) == 1
    create = fake_anthropic.creates[0]
    sent = {r["custom_id"]: r["params"] for r in create["body"]["requests"]}
    assert set(sent) == {r.custom_id for r in reqs}
    p = sent[reqs[0].custom_id]
    assert p == {"model": "claude-opus-4-8", "max_tokens": 4096,
                 "messages": [{"role": "user", "content": reqs[0].prompt}]}  # default sampling: nothing else sent
    assert fake_anthropic.retrieves >= FakeAnthropic.polls_to_end  # polled until ended

    assert [r.custom_id for r in results] == [q.custom_id for q in reqs]  # input order
    for q, r in zip(reqs, results):
        assert (r.task_id, r.condition, r.model, r.sample_idx) == q.key
        assert r.status == "succeeded" and r.ok and r.attempt == 1
        assert r.text.startswith("---- MODULE M ----\n") and r.text.endswith(q.prompt[-40:] + "\n====")
        assert r.provider == "anthropic" and r.endpoint == "/v1/messages"
        assert r.response_model == "claude-opus-4-8-20990101"
        assert r.settings == {"temperature": None, "top_p": None, "max_tokens": 4096}
        assert r.input_tokens == len(q.prompt) // 4 and r.output_tokens == 17
        assert r.stop_reason == "end_turn"
        assert r.raw_response["custom_id"] == q.custom_id
        assert r.raw_response["result"]["message"]["content"][0]["type"] == "text"
        assert r.batch_id == create["batch_id"] and r.error is None
        assert r.submitted_at and r.ended_at and r.received_at and r.prompt_version == PROMPT_VERSION
    assert [asdict(r) for r in load_results(ledger)] == [asdict(r) for r in results]

    # Running again with the complete ledger sends nothing and needs no key.
    again = run_batch("anthropic", reqs, ledger, client=None, poll_interval_s=0)
    assert len(fake_anthropic.creates) == 1
    assert [r.text for r in again] == [r.text for r in results]
    assert_no_key(ledger, ANTHROPIC_KEY)


def test_anthropic_partial_failure_retried_alone(fake_anthropic, tmp_path):
    reqs = make_requests("claude-opus-4-8")
    ids = [r.custom_id for r in reqs]
    first_fail = {ids[1]: "errored", ids[4]: "expired", ids[7]: "canceled", ids[12]: "errored"}
    fake_anthropic.plan = lambda cid, attempt: first_fail.get(cid, "succeeded") if attempt == 1 else "succeeded"

    results = run("anthropic", fake_anthropic, reqs, tmp_path / "l.sqlite", max_retries=2)

    assert len(fake_anthropic.creates) == 2
    assert sorted(fake_anthropic.creates[1]["custom_ids"]) == sorted(first_fail)  # the failed ones, alone
    assert all(n == (2 if c in first_fail else 1) for c, n in fake_anthropic.attempts.items())
    by = {r.custom_id: r for r in results}
    assert all(r.ok for r in results)
    for cid in first_fail:
        assert by[cid].attempt == 2 and by[cid].batch_id == fake_anthropic.creates[1]["batch_id"]
    assert by[ids[0]].attempt == 1 and by[ids[0]].batch_id == fake_anthropic.creates[0]["batch_id"]


def test_anthropic_final_errors_and_bounded_retries(fake_anthropic, tmp_path):
    reqs = make_requests("claude-opus-4-8", tasks=("Barrier",), conditions=("original",), n=3)
    ids = [r.custom_id for r in reqs]
    plan = {ids[0]: "errored_final", ids[1]: "errored"}  # ids[1] fails every time
    fake_anthropic.plan = lambda cid, attempt: plan.get(cid, "succeeded")

    results = run("anthropic", fake_anthropic, reqs, tmp_path / "l.sqlite", max_retries=2)

    assert fake_anthropic.attempts == {ids[0]: 1, ids[1]: 3, ids[2]: 1}  # 1 + max_retries
    assert [r.status for r in results] == ["errored", "errored", "succeeded"]
    assert results[0].error["error"]["type"] == "invalid_request_error" and results[0].attempt == 1
    assert results[1].error["error"]["type"] == "api_error" and results[1].attempt == 3
    assert results[0].text is None


def test_anthropic_batch_expiry_resubmits_everything(fake_anthropic, tmp_path):
    reqs = make_requests("claude-opus-4-8", tasks=("Barrier",), n=2)
    fake_anthropic.plan = lambda cid, attempt: "expired" if attempt == 1 else "succeeded"
    results = run("anthropic", fake_anthropic, reqs, tmp_path / "l.sqlite", max_retries=1)
    assert len(fake_anthropic.creates) == 2
    assert sorted(fake_anthropic.creates[1]["custom_ids"]) == sorted(r.custom_id for r in reqs)
    assert all(r.ok and r.attempt == 2 for r in results)

    # With no retries left, expiry is what the caller gets back.
    fake_anthropic.plan = lambda cid, attempt: "expired"
    reqs2 = make_requests("claude-opus-4-8", tasks=("Paxos",), n=2)
    results2 = run("anthropic", fake_anthropic, reqs2, tmp_path / "l2.sqlite", max_retries=0)
    assert {r.status for r in results2} == {"expired"}


# --------------------------------------------------------------------------- OpenAI
@pytest.mark.parametrize("endpoint", ["/v1/chat/completions", "/v1/responses"])
def test_openai_submit_poll_and_map_by_custom_id(fake_openai, tmp_path, endpoint):
    reqs = make_requests("gpt-5", max_tokens=None) + make_requests("gpt-5-mini", tasks=("Paxos",), n=2,
                                                                      max_tokens=2048)
    ledger = tmp_path / "openai.sqlite"
    results = run("openai", fake_openai, reqs, ledger, endpoint=endpoint)

    assert len(fake_openai.creates) == 2  # one input file per model
    for create in fake_openai.creates:
        assert create["body"]["endpoint"] == endpoint and create["body"]["completion_window"] == "24h"
        assert create["body"]["metadata"]["alias_submission"].startswith("sub_")
        assert {ln["method"] for ln in create["lines"]} == {"POST"}
        assert {ln["url"] for ln in create["lines"]} == {endpoint}
        assert len({ln["body"]["model"] for ln in create["lines"]}) == 1
    lines = {ln["custom_id"]: ln["body"] for c in fake_openai.creates for ln in c["lines"]}
    first, last = lines[reqs[0].custom_id], lines[reqs[-1].custom_id]
    msg = [{"role": "user", "content": reqs[0].prompt}]
    if endpoint == "/v1/responses":
        assert first == {"model": "gpt-5", "input": msg}
        assert last["max_output_tokens"] == 2048
    else:
        assert first == {"model": "gpt-5", "messages": msg}  # default settings: nothing else sent
        assert last["max_completion_tokens"] == 2048
    assert fake_openai.retrieves >= 2 * len(FakeOpenAI.steps)

    for q, r in zip(reqs, results):
        assert r.custom_id == q.custom_id and r.ok and r.provider == "openai" and r.endpoint == endpoint
        assert r.text.endswith(q.prompt[-40:] + "\n====")
        assert r.response_model == q.model + "-2099"
        assert (r.input_tokens, r.output_tokens) == (11, 22)
        assert r.stop_reason == ("completed" if endpoint == "/v1/responses" else "stop")
        assert r.raw_response["response"]["status_code"] == 200
        assert r.settings["max_tokens"] == q.max_tokens
        assert r.submitted_at and r.ended_at
    assert_no_key(ledger, OPENAI_KEY)


def test_openai_partial_failure_retried_alone(fake_openai, tmp_path):
    reqs = make_requests("gpt-5", max_tokens=None)
    ids = [r.custom_id for r in reqs]
    first = {ids[2]: "errored", ids[3]: "timeout", ids[9]: "errored_final"}
    fake_openai.plan = lambda cid, attempt: first.get(cid, "succeeded") if attempt == 1 else "succeeded"

    results = run("openai", fake_openai, reqs, tmp_path / "l.sqlite", max_retries=3)

    assert len(fake_openai.creates) == 2
    assert sorted(fake_openai.creates[1]["custom_ids"]) == sorted([ids[2], ids[3]])  # HTTP 400 is final
    by = {r.custom_id: r for r in results}
    assert by[ids[2]].ok and by[ids[2]].attempt == 2
    assert by[ids[3]].ok and by[ids[3]].attempt == 2
    assert by[ids[9]].status == "errored" and by[ids[9]].error["status_code"] == 400
    assert by[ids[9]].error["code"] == "unsupported_parameter"
    assert sum(r.ok for r in results) == len(reqs) - 1


def test_openai_batch_expiry(fake_openai, tmp_path):
    reqs = make_requests("gpt-5", tasks=("Barrier",))
    ids = [r.custom_id for r in reqs]
    late = set(ids[5:])
    fake_openai.plan = lambda cid, attempt: "expired" if (cid in late and attempt == 1) else "succeeded"
    ledger = tmp_path / "l.sqlite"
    results = run("openai", fake_openai, reqs, ledger)
    first_batch = fake_openai.batches[fake_openai.creates[0]["batch_id"]]
    assert first_batch["status"] == "expired"
    assert first_batch["output_file_id"] and first_batch["error_file_id"]
    assert sorted(fake_openai.creates[1]["custom_ids"]) == sorted(late)
    assert all(r.ok for r in results)
    assert {r.attempt for r in results if r.custom_id in late} == {2}
    with Ledger(ledger, lock=False) as led:
        sub = led.submissions(states=("ended",))[0]
        assert sub.status == "expired"


def test_openai_failed_batch_raises_and_runs_nothing(fake_openai, tmp_path):
    from alias.generate import BatchFailed
    from alias.generate.backends import OpenAIBackend

    class BadUrl(OpenAIBackend):  # writes lines whose url does not match the endpoint
        def create(self, submission_id, items, note_input_file):
            self.endpoint, real = "/v1/responses", self.endpoint
            try:
                lines = [json.dumps({"custom_id": c, "method": "POST", "url": "/v1/embeddings", "body": b})
                         for c, b in items]
                f = self.client.files.create(file=("x.jsonl", "\n".join(lines).encode()), purpose="batch")
                note_input_file(f.id)
                return self._info(self.client.batches.create(input_file_id=f.id, endpoint=real,
                                                             completion_window="24h"))
            finally:
                self.endpoint = real

    reqs = make_requests("gpt-5", tasks=("Barrier",), conditions=("original",), n=2)
    with pytest.raises(BatchFailed, match="invalid_url"):
        run_batch(BadUrl(openai_client(fake_openai)), reqs, tmp_path / "l.sqlite", poll_interval_s=0)
    assert fake_openai.attempts == {}  # no request ran


# --------------------------------------------------------------------------- resume
CHILD = r"""
import json, sys
from alias.generate import SampleRequest, run_batch
provider, ledger, reqfile = sys.argv[1:4]
reqs = [SampleRequest(**d) for d in json.load(open(reqfile))]
run_batch(provider, reqs, ledger, poll_interval_s=0.05)
print("FINISHED", flush=True)
"""


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_resume_after_kill_between_submit_and_download(provider, tmp_path):
    srv_cls = FakeAnthropic if provider == "anthropic" else FakeOpenAI
    with srv_cls() as srv:
        srv.hold = True
        reqs = make_requests("claude-opus-4-8" if provider == "anthropic" else "gpt-5", n=3)
        ledger = tmp_path / "ledger.sqlite"
        (tmp_path / "child.py").write_text(CHILD)
        (tmp_path / "reqs.json").write_text(json.dumps([asdict(r) for r in reqs]))
        env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
        prefix = provider.upper()
        env.update({f"{prefix}_API_KEY": srv.api_key, f"{prefix}_BASE_URL": srv.base_url,
                    "PYTHONPATH": str(REPO)})
        child = subprocess.Popen([sys.executable, str(tmp_path / "child.py"), provider, str(ledger),
                                  str(tmp_path / "reqs.json")], env=env, cwd=tmp_path,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 45
            while srv.retrieves < 2 and time.monotonic() < deadline and child.poll() is None:
                time.sleep(0.05)
            assert srv.retrieves >= 2, child.communicate(timeout=5)
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=10)
        assert b"FINISHED" not in child.stdout.read()
        assert len(srv.creates) == 1
        batch_id = srv.creates[0]["batch_id"]
        with Ledger(ledger, lock=False) as led:
            (sub,) = led.submissions(states=("submitted",))
            assert sub.batch_id == batch_id and set(sub.custom_ids) == {r.custom_id for r in reqs}
        assert_no_key(ledger, srv.api_key)

        srv.hold = False
        polled_before = srv.retrieves
        results = run(provider, srv, reqs, ledger)
        assert len(srv.creates) == 1  # the same batch was polled, not created again
        assert all(n == 1 for n in srv.attempts.values()) and len(srv.attempts) == len(reqs)
        assert srv.retrieves > polled_before
        assert all(r.ok and r.batch_id == batch_id for r in results)


def test_openai_crash_after_create_before_ledger_write_recovers_by_listing(fake_openai, tmp_path, monkeypatch):
    reqs = make_requests("gpt-5", tasks=("Barrier",), n=2)
    ledger = tmp_path / "l.sqlite"

    def crash(*a, **k):
        raise KeyboardInterrupt("killed right after batches.create")

    with monkeypatch.context() as m:
        m.setattr(Ledger, "attach_batch", crash)
        with pytest.raises(KeyboardInterrupt):
            run("openai", fake_openai, reqs, ledger)
    assert len(fake_openai.creates) == 1
    with Ledger(ledger, lock=False) as led:
        (sub,) = led.submissions(states=("pending",))
        assert sub.input_file_id == fake_openai.creates[0]["body"]["input_file_id"]

    results = run("openai", fake_openai, reqs, ledger)
    assert len(fake_openai.creates) == 1 and fake_openai.uploads == 1
    assert all(r.ok and r.batch_id == fake_openai.creates[0]["batch_id"] for r in results)


def test_openai_crash_after_upload_before_create_resubmits_safely(fake_openai, tmp_path, monkeypatch):
    reqs = make_requests("gpt-5", tasks=("Barrier",), n=1)
    ledger = tmp_path / "l.sqlite"
    import openai.resources.batches as ob

    with monkeypatch.context() as m:
        m.setattr(ob.Batches, "create", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt()))
        with pytest.raises(KeyboardInterrupt):
            run("openai", fake_openai, reqs, ledger)
    assert fake_openai.creates == [] and fake_openai.uploads == 1
    results = run("openai", fake_openai, reqs, ledger)
    assert len(fake_openai.creates) == 1 and all(r.ok for r in results)


def test_anthropic_unconfirmed_create_is_not_resent(fake_anthropic, tmp_path, monkeypatch):
    reqs = make_requests("claude-opus-4-8", tasks=("Barrier",), n=2)
    ledger = tmp_path / "l.sqlite"
    with monkeypatch.context() as m:
        m.setattr(Ledger, "attach_batch", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt()))
        with pytest.raises(KeyboardInterrupt):
            run("anthropic", fake_anthropic, reqs, ledger)
    assert len(fake_anthropic.creates) == 1

    with pytest.raises(UnconfirmedSubmission) as ei:
        run("anthropic", fake_anthropic, reqs, ledger)
    assert len(fake_anthropic.creates) == 1  # nothing was sent twice
    assert set(ei.value.custom_ids) == {r.custom_id for r in reqs}

    resolve_unconfirmed(ledger, ei.value.submission_id, fake_anthropic.creates[0]["batch_id"])
    results = run("anthropic", fake_anthropic, reqs, ledger)
    assert len(fake_anthropic.creates) == 1
    assert all(r.ok and r.batch_id == fake_anthropic.creates[0]["batch_id"] for r in results)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_create_timeout_is_never_blindly_resent(provider, tmp_path):
    """The create call reaches the server but its answer is lost (client timeout)."""
    import anthropic
    import openai

    srv_cls = FakeAnthropic if provider == "anthropic" else FakeOpenAI
    with srv_cls() as srv:
        srv.create_delay_s = 1.0
        sdk = anthropic.Anthropic if provider == "anthropic" else openai.OpenAI
        client = sdk(api_key=srv.api_key, base_url=srv.base_url, max_retries=3, timeout=0.3)
        reqs = make_requests("claude-opus-4-8" if provider == "anthropic" else "gpt-5", n=2)
        ledger = tmp_path / "l.sqlite"
        if provider == "anthropic":
            # A Message Batch cannot be looked up by a client tag: stop, do not resend.
            with pytest.raises(UnconfirmedSubmission) as ei:
                run_batch(provider, reqs, ledger, client=client, poll_interval_s=0)
            assert len(srv.creates) == 1  # the SDK did not retry the POST either
            with pytest.raises(UnconfirmedSubmission):
                run_batch(provider, reqs, ledger, client=client, poll_interval_s=0)
            assert len(srv.creates) == 1
            resolve_unconfirmed(ledger, ei.value.submission_id, srv.creates[0]["batch_id"])
        # OpenAI finds its batch in batches.list by input file id and goes on polling it.
        srv.create_delay_s = 0.0
        results = run_batch(provider, reqs, ledger, client=client, poll_interval_s=0)
        assert len(srv.creates) == 1
        assert all(r.ok and r.batch_id == srv.creates[0]["batch_id"] for r in results)


def test_requests_are_chunked_per_model(fake_openai, tmp_path):
    reqs = make_requests("gpt-5", tasks=("Barrier",), conditions=("original",), n=7) + make_requests(
        "gpt-5-mini", tasks=("Barrier",), conditions=("original",), n=2)
    results = run("openai", fake_openai, reqs, tmp_path / "l.sqlite", max_requests_per_batch=3)
    assert sorted(len(c["custom_ids"]) for c in fake_openai.creates) == [1, 2, 3, 3]
    assert all(r.ok for r in results)


def test_poll_timeout_then_resume(fake_anthropic, tmp_path):
    reqs = make_requests("claude-opus-4-8", tasks=("Barrier",), n=1)
    ledger = tmp_path / "l.sqlite"
    fake_anthropic.hold = True
    with pytest.raises(PollTimeout):
        run("anthropic", fake_anthropic, reqs, ledger, poll_interval_s=0.01, timeout_s=0.2)
    fake_anthropic.hold = False
    results = run("anthropic", fake_anthropic, reqs, ledger)
    assert len(fake_anthropic.creates) == 1 and all(r.ok for r in results)


# --------------------------------------------------------------------------- ledger rules
def test_changed_prompt_under_same_key_is_a_conflict(fake_anthropic, tmp_path):
    reqs = make_requests("claude-opus-4-8", tasks=("Barrier",), conditions=("original",), n=1)
    ledger = tmp_path / "l.sqlite"
    run("anthropic", fake_anthropic, reqs, ledger)
    changed = [SampleRequest(**{**asdict(reqs[0]), "prompt": reqs[0].prompt + " "})]
    with pytest.raises(LedgerConflict):
        run("anthropic", fake_anthropic, changed, ledger)
    with pytest.raises(ValueError, match="duplicate"):
        run("anthropic", fake_anthropic, reqs + reqs, tmp_path / "other.sqlite")
    assert len(fake_anthropic.creates) == 1


def test_ledger_is_locked_while_a_run_holds_it(fake_anthropic, tmp_path):
    ledger = tmp_path / "l.sqlite"
    with Ledger(ledger):
        with pytest.raises(LedgerBusy):
            run("anthropic", fake_anthropic, make_requests("claude-opus-4-8", n=1), ledger)
    assert fake_anthropic.creates == []


# --------------------------------------------------------------------------- credentials
def test_missing_credentials(monkeypatch, tmp_path):
    for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    for provider, var in (("anthropic", "ANTHROPIC_API_KEY"), ("openai", "OPENAI_API_KEY")):
        with pytest.raises(MissingCredentials) as ei:
            run_batch(provider, make_requests("m", n=1), tmp_path / f"{provider}.sqlite", poll_interval_s=0)
        assert ei.value.provider == provider and ei.value.env_var == var and var in str(ei.value)
        with pytest.raises(MissingCredentials):
            make_client(provider)
    monkeypatch.setenv("OPENAI_API_KEY", "  ")
    with pytest.raises(MissingCredentials):
        make_client("openai")


def test_key_from_environment_never_stored_or_logged(fake_anthropic, fake_openai, tmp_path, monkeypatch, caplog):
    caplog.set_level("DEBUG", logger="alias")
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    # The fake echoes the key inside error messages, so the scrubber is exercised too.
    fake_anthropic.leak_key_in_errors = True
    fake_anthropic.plan = lambda cid, attempt: "errored" if attempt == 1 else "succeeded"
    ledger = tmp_path / "both.sqlite"
    res_a = run_batch("anthropic", make_requests("claude-opus-4-8", n=2), ledger, poll_interval_s=0)
    res_o = run_batch("openai", make_requests("gpt-5", n=2), ledger, poll_interval_s=0)
    assert fake_anthropic.unauthorized == 0 and fake_openai.unauthorized == 0  # the env keys were sent
    assert all(r.ok for r in res_a + res_o)
    assert_no_key(ledger, ANTHROPIC_KEY)
    assert_no_key(ledger, OPENAI_KEY)
    assert b"[REDACTED]" in ledger.read_bytes()  # the echoed key was blanked
    dumped = repr(res_a + res_o) + json.dumps([asdict(r) for r in res_a + res_o])
    assert ANTHROPIC_KEY not in dumped and OPENAI_KEY not in dumped
    assert ANTHROPIC_KEY not in caplog.text and OPENAI_KEY not in caplog.text
    assert "submitted batch" in caplog.text
    assert {r.provider for r in load_results(ledger)} == {"anthropic", "openai"}


def test_wrong_key_is_a_clean_batch_failure(fake_anthropic, tmp_path):
    import anthropic

    from alias.generate import BatchFailed

    client = anthropic.Anthropic(api_key="sk-ant-wrong", base_url=fake_anthropic.base_url, max_retries=0)
    ledger = tmp_path / "l.sqlite"
    with pytest.raises(BatchFailed, match="401"):
        run_batch("anthropic", make_requests("claude-opus-4-8", n=1), ledger, client=client, poll_interval_s=0)
    # The refused create is recorded as rejected; a run with the right key sends the requests.
    results = run("anthropic", fake_anthropic, make_requests("claude-opus-4-8", n=1), ledger)
    assert len(fake_anthropic.creates) == 1 and all(r.ok and r.attempt == 1 for r in results)
    assert_no_key(ledger, "sk-ant-wrong")
