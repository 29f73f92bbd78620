"""Who proposes the meaningful names of Appendix R: the proposer backends of the
``meaningful`` stage.

In the paper an LLM (Claude Opus 4.8) reads the naming prompt
(:func:`alias.rename.meaningful.naming_prompt`) and answers with a JSON map
``{"current name": "new name"}``.  A proposer turns a list of :class:`NamingRequest`
(one per task) into one :class:`NamingReply` per task; the stage then parses, validates,
applies and re-verifies every reply the same way, whoever wrote it.

Backends (``params.meaningful.proposer.backend``; the spec has the keys of a
``generate.models`` entry: ``backend``, ``model``, ``max_tokens``, ``model_dir``,
``path``):

``anthropic`` / ``openai``
    One batch request per task through :func:`alias.generate.batches.run_batch`, with
    its SQLite ledger in the stage's output folder (a rerun resumes; a finished ledger
    needs no key).  custom_id: ``custom_id_for(task_id, 'meaningful', model, 0)``.
    Without the API key :class:`alias.generate.types.MissingCredentials` propagates.
``local``
    A local causal LM through :func:`alias.generate.local.generate_local`
    (``model_dir``), one sample per task, no stop at a module's closing line.
``replay``
    Released proposals: a JSONL file (``path``) of ``{"task_id", "reply"}`` objects.
``lexicon``
    **A deterministic offline stand-in for the LLM, not the paper's condition.**  It
    exists so that the stage, its tests and ``dvc repro`` on the embedded corpus run
    without a network or a model.  Each listed name is split into words
    (:func:`alias.rename.kinds.split_identifier`), common TLA+ abbreviations are spelled
    out from the fixed table :data:`ABBREVIATIONS` (``msgs`` -> ``messages``, ``pc`` ->
    ``programCounter``), and the identifier's kind is appended as a word
    (``hr``, a variable -> ``hourVariable``; ``Init``, an operator -> ``InitOperator``),
    so no new name equals an original one.  Names get longer on purpose: this exercises
    the junction-alignment risk Appendix R's renaming carries (a ``/\\`` list whose
    first bullet moves), which same-length random names avoid.  A name that would
    clash with a name already in the specification (or the library modules it uses),
    with a reserved word, or with another new name gets the first free numeric suffix.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from alias.rename.kinds import split_identifier
from alias.rename.meaningful import (
    CFG_KEYWORDS, NAMING_PROMPT_VERSION, TLA_RESERVED_WORDS, is_valid_name,
)
from alias.rename.names import STANDARD_OPERATORS
from alias.tla.syntax import STANDARD_MODULES

__all__ = [
    "BACKENDS", "ABBREVIATIONS", "KIND_WORDS", "LEXICON_MODEL", "NamingRequest", "NamingReply",
    "ProposerError", "lexicon_name", "lexicon_map", "spec_names", "propose", "read_replay",
    "proposer_spec",
]

BACKENDS = ("anthropic", "openai", "local", "replay", "lexicon")

#: The ``model`` recorded for the lexicon proposer (it has no other model name).
LEXICON_MODEL = "alias-lexicon-v1"

#: Abbreviations common in TLA+ specifications, spelled out by the lexicon proposer
#: (keys are matched on the lower-cased word).  ``N`` alone, a whole name, is a count.
ABBREVIATIONS: dict[str, str] = {
    "msg": "message", "msgs": "messages", "pc": "programCounter", "buf": "buffer", "hr": "hour",
    "qtr": "quarter", "init": "initial", "inv": "invariant", "cnt": "count", "ctr": "counter",
    "num": "number", "idx": "index", "pos": "position", "succ": "successor", "pred": "predecessor",
    "prev": "previous", "cur": "current", "curr": "current", "val": "value", "vals": "values",
    "var": "variable", "vars": "variables", "proc": "process", "procs": "processes", "req": "request",
    "reqs": "requests", "resp": "response", "ack": "acknowledgement", "acks": "acknowledgements",
    "seq": "sequence", "seqs": "sequences", "len": "length", "max": "maximum", "min": "minimum",
    "tmp": "temporary", "src": "source", "dst": "destination", "dest": "destination",
    "addr": "address", "mc": "modelCheck", "bal": "ballot", "mbal": "maxBallot", "acc": "acceptor",
    "accs": "acceptors", "chan": "channel", "sem": "semaphore", "mem": "memory", "cs": "criticalSection",
    "st": "state", "ts": "timestamp", "db": "database", "tx": "transaction",
    "rm": "resourceManager", "tm": "transactionManager", "ptr": "pointer", "ref": "reference",
}

#: The word appended per identifier kind (the kinds of ``RenameResult.identifiers``).
KIND_WORDS: dict[str, str] = {
    "module": "Module", "constant": "Constant", "variable": "Variable", "operator": "Operator",
    "let": "Local", "local": "Local", "recursive": "Recursive", "function": "Function",
    "instance": "Instance",
}

_TOKEN = re.compile(r"[A-Za-z0-9_]+")


class ProposerError(ValueError):
    """A proposer spec or replay file that cannot be used (the message says why)."""


@dataclass(frozen=True)
class NamingRequest:
    """One task's naming request.

    ``task_id``; ``prompt``: the naming prompt (``naming_prompt``); ``identifiers``: the
    listed rows ``{'name', 'kind', 'module'}`` (in the ``'random'`` view ``name`` is the
    random name shown); ``avoid``: every identifier-like token of the task's modules,
    library modules included (the lexicon proposer steers clear of them).
    """

    task_id: str
    prompt: str
    identifiers: tuple[dict, ...]
    avoid: frozenset[str] = field(default_factory=frozenset)


@dataclass
class NamingReply:
    """A proposer's answer for one task.

    ``text``: the reply text (``None`` when there is none); ``status``: ``'succeeded'``
    or why not (the batch outcome ``errored``/``expired``/``canceled``, or ``missing``
    when a replay file has no line for the task); ``error``: readable detail;
    ``response_model``: the model the provider reports (else the spec's model).
    """

    task_id: str
    text: str | None
    status: str = "succeeded"
    error: str | None = None
    response_model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


# ---------------------------------------------------------------------------- spec
def proposer_spec(spec: Mapping[str, Any] | None) -> dict[str, Any]:
    """Normalize ``params.meaningful.proposer``; raises :class:`ProposerError` on a bad
    backend or a missing required key (``model`` for anthropic/openai, ``model_dir``
    for local, ``path`` for replay)."""
    s = dict(spec or {})
    backend = s.get("backend") or "lexicon"
    if backend not in BACKENDS:
        raise ProposerError(f"meaningful.proposer.backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    s["backend"] = backend
    need = {"anthropic": "model", "openai": "model", "local": "model_dir", "replay": "path"}.get(backend)
    if need and not s.get(need):
        raise ProposerError(f"meaningful.proposer.{need} is required for backend {backend}")
    if backend == "lexicon":
        s["model"] = s.get("model") or LEXICON_MODEL
    elif not s.get("model"):
        s["model"] = Path(str(s.get(need))).name or backend
    s["max_tokens"] = int(s.get("max_tokens") or 8192)
    return s


# ------------------------------------------------------------------------- lexicon
def spec_names(texts: Iterable[str]) -> set[str]:
    """Every identifier-like token (``[A-Za-z0-9_]+`` with a letter) of ``texts``;
    comments included, so the set over-approximates the names a spec uses."""
    out: set[str] = set()
    for t in texts:
        out.update(w for w in _TOKEN.findall(t) if any(c.isalpha() for c in w))
    return out


def _words(name: str) -> list[str]:
    if name == "N":
        return ["Count"]
    parts = split_identifier(name) or [name]
    out: list[str] = []
    for p in parts:
        key = p.lower()
        if key in ABBREVIATIONS:
            out += split_identifier(ABBREVIATIONS[key]) or [ABBREVIATIONS[key]]
        else:
            out.append(p)
    return out


def _blocked(name: str, avoid: set[str]) -> bool:
    return (not is_valid_name(name) or name in avoid or name in TLA_RESERVED_WORDS
            or name.startswith(("WF_", "SF_")) or name in CFG_KEYWORDS or name in STANDARD_MODULES
            or name in STANDARD_OPERATORS)


def lexicon_name(name: str, kind: str | None, avoid: set[str]) -> str:
    """The lexicon proposer's new name for ``name`` of ``kind`` that is not in ``avoid``.

    Words of the name with abbreviations spelled out, camel-cased (first letter's case
    kept: ``buf`` -> ``buffer...``, ``BufSize`` -> ``BufferSize...``), then the kind
    word (:data:`KIND_WORDS`; ``Name`` for an unknown kind), then ``2``, ``3`` ... while
    the name is blocked (in ``avoid``, reserved, a standard module or operator).
    Examples: ``('hr', 'variable') -> 'hourVariable'``, ``('MCTokenRing', 'module') ->
    'ModelCheckTokenRingModule'``, ``('N', 'constant') -> 'CountConstant'``.
    """
    words = _words(name)
    first = words[0]
    head = (first[:1].lower() + first[1:]) if name[:1].islower() or name[:1] == "_" else (first[:1].upper() + first[1:])
    body = head + "".join(w[:1].upper() + w[1:] for w in words[1:])
    base = body + KIND_WORDS.get(kind or "", "Name")
    if not base[:1].isalpha():
        base = "x" + base
    cand, k = base, 1
    while _blocked(cand, avoid):
        k += 1
        cand = f"{base}{k}"
    return cand


def lexicon_map(identifiers: Sequence[Mapping[str, Any]], avoid: Iterable[str] = ()) -> dict[str, str]:
    """One new name per distinct listed name (first row's kind wins), in row order,
    none equal to a listed name, a name in ``avoid`` or another new name."""
    taken = set(avoid) | {r["name"] for r in identifiers}
    out: dict[str, str] = {}
    for r in identifiers:
        if r["name"] in out:
            continue
        new = lexicon_name(r["name"], r.get("kind"), taken)
        taken.add(new)
        out[r["name"]] = new
    return out


# -------------------------------------------------------------------------- replay
def read_replay(path: str | Path) -> dict[str, str]:
    """``task_id -> reply`` from a JSONL file of ``{"task_id", "reply"}`` objects
    (blank lines skipped).  Raises :class:`ProposerError` naming the line of a line
    that is not such an object, or of a task given twice; ``FileNotFoundError`` when
    the file is absent."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"meaningful.proposer.path: no replay file {p}")
    out: dict[str, str] = {}
    for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise ProposerError(f"{p}:{i}: not JSON ({e})") from e
        if not isinstance(obj, dict) or not isinstance(obj.get("task_id"), str) or not isinstance(obj.get("reply"), str):
            raise ProposerError(f"{p}:{i}: expected an object with string task_id and reply")
        if obj["task_id"] in out:
            raise ProposerError(f"{p}:{i}: task {obj['task_id']} given twice")
        out[obj["task_id"]] = obj["reply"]
    return out


# ------------------------------------------------------------------------ dispatch
def _sample_requests(requests: Sequence[NamingRequest], spec: dict) -> list:
    from alias.generate.types import SampleRequest

    return [SampleRequest(task_id=r.task_id, condition="meaningful", model=spec["model"], sample_idx=0,
                          prompt=r.prompt, max_tokens=spec["max_tokens"], prompt_version=NAMING_PROMPT_VERSION)
            for r in requests]


def propose(requests: Sequence[NamingRequest], spec: Mapping[str, Any], *, ledger: str | Path | None = None,
            poll_interval_s: float = 60.0, timeout_s: float | None = None) -> list[NamingReply]:
    """One :class:`NamingReply` per request, in order, from the backend of ``spec``
    (:func:`proposer_spec`).  ``ledger``: the batch ledger file (anthropic/openai).

    Raises :class:`alias.generate.types.MissingCredentials` (no API key),
    :class:`ProposerError`, ``FileNotFoundError`` (replay file, local model folder) and
    the batch errors of :func:`run_batch`.
    """
    spec = proposer_spec(spec)
    backend = spec["backend"]
    if not requests:
        return []
    if backend == "lexicon":
        return [NamingReply(r.task_id, json.dumps(lexicon_map(r.identifiers, r.avoid), indent=1),
                            response_model=spec["model"]) for r in requests]
    if backend == "replay":
        replies = read_replay(spec["path"])
        return [NamingReply(r.task_id, replies[r.task_id], response_model=spec["model"]) if r.task_id in replies
                else NamingReply(r.task_id, None, "missing", f"no reply for {r.task_id} in {spec['path']}")
                for r in requests]
    if backend == "local":
        from alias.generate.local import generate_local

        kw = {k: spec[k] for k in ("temperature", "top_p", "seed", "device") if spec.get(k) is not None}
        res = generate_local(spec["model_dir"], _sample_requests(requests, spec),
                             max_new_tokens=spec["max_tokens"], stop_at_module_end=False, **kw)
        return [NamingReply(r.task_id, r.text, response_model=r.model_name, input_tokens=r.input_tokens,
                            output_tokens=r.output_tokens) for r in res]
    from alias.generate.batches import run_batch

    if ledger is None:
        raise ProposerError(f"backend {backend} needs a ledger path")
    Path(ledger).parent.mkdir(parents=True, exist_ok=True)
    res = run_batch(backend, _sample_requests(requests, spec), ledger, poll_interval_s=poll_interval_s,
                    timeout_s=timeout_s)
    return [NamingReply(r.task_id, r.text if r.ok else None, r.status,
                        None if r.ok else json.dumps(r.error, sort_keys=True) if r.error else r.status,
                        r.response_model, r.input_tokens, r.output_tokens) for r in res]
