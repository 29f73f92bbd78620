"""The durable batch ledger: one SQLite file per generation run (path chosen by the caller).

Every state change is one SQLite transaction with ``synchronous=FULL`` (so it is on
disk when ``commit`` returns), written before the network step that depends on it:

1. ``register``: each request's sample key, custom_id and body fingerprint.
2. ``begin_submission``: a submission row in state ``pending`` with its member
   custom_ids, BEFORE the batch create call is sent.
3. ``note_input_file`` (OpenAI): the uploaded input file id, before ``batches.create``.
4. ``attach_batch``: the provider's batch id (state ``submitted``), BEFORE polling.
5. ``record_results``: every member's outcome and the submission state ``ended``,
   in one transaction.

A run that is killed anywhere resumes from the file: a ``submitted`` batch is polled
again, never created again; a ``pending`` one is looked up at the provider (see
``batches.run_batch``). A lock file ``<ledger>.lock`` (``flock``) keeps two processes
from driving one ledger at once.

Tables (all text columns hold UTF-8; JSON columns hold one JSON document):

``requests``    custom_id (PK), provider, endpoint, task_id, condition, model,
                sample_idx, request_sha256, body_json, settings_json,
                prompt_version, created_at
``submissions`` submission_id (PK), provider, endpoint, model, state
                (pending | submitted | ended | failed | rejected), batch_id (unique),
                input_file_id, created_at (local), submitted_at (provider),
                ended_at, status (provider status), batch_json, error
``members``     (submission_id, custom_id) PK, attempt
``results``     (submission_id, custom_id) PK, batch_id, attempt, outcome,
                retryable, text, response_model, input_tokens, output_tokens,
                stop_reason, raw_json, error_json, received_at

No API key is ever written: the ledger holds request bodies, provider answers and
ids only, and every string passes ``scrub`` (which blanks any registered secret)
on its way in.
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator

from .types import LedgerBusy, LedgerConflict

try:  # POSIX advisory lock; elsewhere the ledger still works, unlocked.
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = ["Ledger", "SubmissionRow", "ResultRow", "utcnow"]

SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS requests(
    custom_id TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    task_id TEXT NOT NULL,
    condition TEXT NOT NULL,
    model TEXT NOT NULL,
    sample_idx INTEGER NOT NULL,
    request_sha256 TEXT NOT NULL,
    body_json TEXT NOT NULL,
    settings_json TEXT NOT NULL,
    prompt_version TEXT,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS submissions(
    submission_id TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    endpoint TEXT NOT NULL,
    model TEXT NOT NULL,
    state TEXT NOT NULL,
    batch_id TEXT UNIQUE,
    input_file_id TEXT,
    created_at TEXT NOT NULL,
    submitted_at TEXT,
    ended_at TEXT,
    status TEXT,
    batch_json TEXT,
    error TEXT
);
CREATE TABLE IF NOT EXISTS members(
    submission_id TEXT NOT NULL REFERENCES submissions(submission_id),
    custom_id TEXT NOT NULL REFERENCES requests(custom_id),
    attempt INTEGER NOT NULL,
    PRIMARY KEY(submission_id, custom_id)
);
CREATE INDEX IF NOT EXISTS members_custom_id ON members(custom_id);
CREATE TABLE IF NOT EXISTS results(
    submission_id TEXT NOT NULL REFERENCES submissions(submission_id),
    custom_id TEXT NOT NULL REFERENCES requests(custom_id),
    batch_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    retryable INTEGER NOT NULL,
    text TEXT,
    response_model TEXT,
    input_tokens INTEGER,
    output_tokens INTEGER,
    stop_reason TEXT,
    raw_json TEXT,
    error_json TEXT,
    received_at TEXT NOT NULL,
    PRIMARY KEY(submission_id, custom_id)
);
CREATE INDEX IF NOT EXISTS results_custom_id ON results(custom_id);
"""

#: Submission states whose batch exists at the provider and whose requests ran.
CREATED_STATES = ("submitted", "ended")


def utcnow() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, default=str)


@dataclass(frozen=True)
class SubmissionRow:
    submission_id: str
    provider: str
    endpoint: str
    model: str
    state: str
    batch_id: str | None
    input_file_id: str | None
    created_at: str
    submitted_at: str | None
    ended_at: str | None
    status: str | None
    custom_ids: tuple[str, ...]


@dataclass(frozen=True)
class ResultRow:
    """One member's outcome as ``record_results`` takes it."""

    custom_id: str
    outcome: str
    retryable: bool
    text: str | None = None
    response_model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    stop_reason: str | None = None
    raw: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class Ledger:
    """SQLite ledger. Use as a context manager: ``with Ledger(path) as led: ...``.

    ``lock=True`` takes an exclusive ``flock`` on ``<path>.lock`` for the lifetime of
    the context (``LedgerBusy`` if another process holds it); readers pass
    ``lock=False``.
    """

    def __init__(self, path: str | os.PathLike[str], *, lock: bool = True, secrets: Iterable[str] = ()):
        self.path = Path(path)
        self._lock = lock
        self._lock_fd: int | None = None
        self._secrets = [s for s in secrets if s]
        self.conn: sqlite3.Connection | None = None

    # -- lifecycle ----------------------------------------------------------------
    def __enter__(self) -> "Ledger":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self._lock and fcntl is not None:
            fd = os.open(str(self.path) + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise LedgerBusy(f"ledger {self.path} is in use by another process") from None
            self._lock_fd = fd
        conn = sqlite3.connect(str(self.path), isolation_level=None, timeout=30)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.executescript(_SCHEMA)
        conn.execute("INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', ?)", (SCHEMA_VERSION,))
        self.conn = conn
        return self

    def __exit__(self, *exc: object) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        if self._lock_fd is not None:
            if fcntl is not None:
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    def add_secret(self, secret: str | None) -> None:
        if secret and secret not in self._secrets:
            self._secrets.append(secret)

    def scrub(self, text: str | None) -> str | None:
        """``text`` with every registered secret replaced by ``[REDACTED]``."""
        if text is None:
            return None
        for s in self._secrets:
            text = text.replace(s, "[REDACTED]")
        return text

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        assert self.conn is not None, "use Ledger as a context manager"
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        else:
            self.conn.execute("COMMIT")

    # -- requests -------------------------------------------------------------------
    def register(self, rows: Iterable[dict[str, Any]]) -> None:
        """Insert request rows (keys as in table ``requests`` minus created_at, with
        ``body`` and ``settings`` as objects). A custom_id already present must have
        the same provider, endpoint and request_sha256, else ``LedgerConflict``."""
        now = utcnow()
        with self._tx() as c:
            for r in rows:
                old = c.execute(
                    "SELECT provider, endpoint, request_sha256 FROM requests WHERE custom_id=?", (r["custom_id"],)
                ).fetchone()
                if old is None:
                    c.execute(
                        "INSERT INTO requests(custom_id, provider, endpoint, task_id, condition, model, sample_idx,"
                        " request_sha256, body_json, settings_json, prompt_version, created_at)"
                        " VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
                        (
                            r["custom_id"], r["provider"], r["endpoint"], r["task_id"], r["condition"], r["model"],
                            r["sample_idx"], r["request_sha256"], self.scrub(_dumps(r["body"])),
                            _dumps(r["settings"]), r.get("prompt_version"), now,
                        ),
                    )
                elif (old["provider"], old["endpoint"], old["request_sha256"]) != (
                    r["provider"], r["endpoint"], r["request_sha256"]
                ):
                    raise LedgerConflict(
                        f"sample {r['task_id']}/{r['condition']}/{r['model']}/{r['sample_idx']} "
                        f"(custom_id {r['custom_id']}) is in {self.path} with another request "
                        f"({old['provider']} {old['endpoint']} {old['request_sha256'][:12]}; now "
                        f"{r['provider']} {r['endpoint']} {r['request_sha256'][:12]})"
                    )

    def request_row(self, custom_id: str) -> sqlite3.Row:
        assert self.conn is not None
        row = self.conn.execute("SELECT * FROM requests WHERE custom_id=?", (custom_id,)).fetchone()
        if row is None:
            raise KeyError(custom_id)
        return row

    def all_custom_ids(self, provider: str | None = None) -> list[str]:
        assert self.conn is not None
        if provider is None:
            rows = self.conn.execute("SELECT custom_id FROM requests ORDER BY rowid").fetchall()
        else:
            rows = self.conn.execute(
                "SELECT custom_id FROM requests WHERE provider=? ORDER BY rowid", (provider,)
            ).fetchall()
        return [r[0] for r in rows]

    # -- submissions ----------------------------------------------------------------
    def begin_submission(self, provider: str, endpoint: str, model: str, attempts: dict[str, int]) -> str:
        """Record a ``pending`` submission of ``attempts`` (custom_id -> attempt number)
        and return its local id. Call BEFORE sending the create request."""
        sid = "sub_" + uuid.uuid4().hex
        with self._tx() as c:
            c.execute(
                "INSERT INTO submissions(submission_id, provider, endpoint, model, state, created_at)"
                " VALUES(?,?,?,?, 'pending', ?)",
                (sid, provider, endpoint, model, utcnow()),
            )
            c.executemany(
                "INSERT INTO members(submission_id, custom_id, attempt) VALUES(?,?,?)",
                [(sid, cid, n) for cid, n in attempts.items()],
            )
        return sid

    def note_input_file(self, submission_id: str, file_id: str) -> None:
        with self._tx() as c:
            c.execute("UPDATE submissions SET input_file_id=? WHERE submission_id=?", (file_id, submission_id))

    def attach_batch(
        self, submission_id: str, batch_id: str, *, status: str | None, submitted_at: str | None, raw: Any
    ) -> None:
        """The create call answered with ``batch_id``: state ``submitted``."""
        with self._tx() as c:
            c.execute(
                "UPDATE submissions SET state='submitted', batch_id=?, status=?, submitted_at=?, batch_json=?,"
                " error=NULL WHERE submission_id=?",
                (batch_id, status, submitted_at, self.scrub(_dumps(raw)), submission_id),
            )

    def update_status(self, submission_id: str, status: str, raw: Any) -> None:
        with self._tx() as c:
            c.execute(
                "UPDATE submissions SET status=?, batch_json=? WHERE submission_id=?",
                (status, self.scrub(_dumps(raw)), submission_id),
            )

    def close_submission(self, submission_id: str, state: str, *, error: str | None = None,
                         status: str | None = None, raw: Any = None, ended_at: str | None = None) -> None:
        """Move a submission to ``rejected`` (no batch was created), ``failed`` (the
        provider failed the whole batch) or ``ended`` (without results)."""
        assert state in ("rejected", "failed", "ended")
        with self._tx() as c:
            c.execute(
                "UPDATE submissions SET state=?, error=?, status=COALESCE(?, status),"
                " batch_json=COALESCE(?, batch_json), ended_at=COALESCE(?, ended_at) WHERE submission_id=?",
                (state, self.scrub(error), status, self.scrub(_dumps(raw)) if raw is not None else None,
                 ended_at, submission_id),
            )

    def record_results(self, submission_id: str, batch_id: str, rows: list[ResultRow], *, status: str,
                       ended_at: str | None, raw: Any) -> None:
        """Write every member's outcome and mark the submission ``ended``, atomically."""
        now = utcnow()
        with self._tx() as c:
            attempts = dict(
                c.execute("SELECT custom_id, attempt FROM members WHERE submission_id=?", (submission_id,)).fetchall()
            )
            for r in rows:
                if r.custom_id not in attempts:
                    continue  # not ours (the caller already dropped these); never trust ids blindly
                c.execute(
                    "INSERT OR REPLACE INTO results(submission_id, custom_id, batch_id, attempt, outcome, retryable,"
                    " text, response_model, input_tokens, output_tokens, stop_reason, raw_json, error_json,"
                    " received_at) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        submission_id, r.custom_id, batch_id, attempts[r.custom_id], r.outcome, int(r.retryable),
                        r.text, r.response_model, r.input_tokens, r.output_tokens, r.stop_reason,
                        self.scrub(_dumps(r.raw)) if r.raw is not None else None,
                        self.scrub(_dumps(r.error)) if r.error is not None else None, now,
                    ),
                )
            c.execute(
                "UPDATE submissions SET state='ended', status=?, ended_at=?, batch_json=? WHERE submission_id=?",
                (status, ended_at, self.scrub(_dumps(raw)), submission_id),
            )

    def submissions(self, *, states: Iterable[str], custom_ids: Iterable[str] | None = None,
                    provider: str | None = None) -> list[SubmissionRow]:
        """Submissions in ``states`` (oldest first), optionally only those with a
        member in ``custom_ids`` and of ``provider``."""
        assert self.conn is not None
        states = tuple(states)
        q = f"SELECT * FROM submissions WHERE state IN ({','.join('?' * len(states))})"
        args: list[Any] = list(states)
        if provider is not None:
            q += " AND provider=?"
            args.append(provider)
        q += " ORDER BY rowid"
        wanted = set(custom_ids) if custom_ids is not None else None
        out = []
        for s in self.conn.execute(q, args).fetchall():
            members = tuple(
                r[0] for r in self.conn.execute(
                    "SELECT custom_id FROM members WHERE submission_id=? ORDER BY rowid", (s["submission_id"],)
                )
            )
            if wanted is not None and wanted.isdisjoint(members):
                continue
            out.append(SubmissionRow(
                s["submission_id"], s["provider"], s["endpoint"], s["model"], s["state"], s["batch_id"],
                s["input_file_id"], s["created_at"], s["submitted_at"], s["ended_at"], s["status"], members,
            ))
        return out

    def submission(self, submission_id: str) -> SubmissionRow:
        for s in self.submissions(states=("pending", "submitted", "ended", "failed", "rejected")):
            if s.submission_id == submission_id:
                return s
        raise KeyError(submission_id)

    # -- per-request state ----------------------------------------------------------
    def attempts_made(self, custom_id: str) -> int:
        """Number of batches that were created with this request (failed/rejected
        submissions ran nothing and do not count)."""
        assert self.conn is not None
        q = (
            "SELECT COUNT(*) FROM members m JOIN submissions s USING(submission_id)"
            f" WHERE m.custom_id=? AND s.state IN ({','.join('?' * len(CREATED_STATES))})"
        )
        return int(self.conn.execute(q, (custom_id, *CREATED_STATES)).fetchone()[0])

    def latest_result(self, custom_id: str) -> sqlite3.Row | None:
        """The result of the latest attempt (a success wins over any later row)."""
        assert self.conn is not None
        row = self.conn.execute(
            "SELECT r.*, s.submitted_at, s.ended_at, s.endpoint FROM results r JOIN submissions s"
            " USING(submission_id) WHERE r.custom_id=? AND r.outcome='succeeded' ORDER BY r.attempt DESC LIMIT 1",
            (custom_id,),
        ).fetchone()
        if row is not None:
            return row
        return self.conn.execute(
            "SELECT r.*, s.submitted_at, s.ended_at, s.endpoint FROM results r JOIN submissions s"
            " USING(submission_id) WHERE r.custom_id=? ORDER BY r.attempt DESC, r.received_at DESC LIMIT 1",
            (custom_id,),
        ).fetchone()
