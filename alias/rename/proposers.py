"""Who proposes the meaningful names of Appendix R: the proposer backends of the
``meaningful`` stage.

In the paper an LLM (Claude Opus 4.8) reads the naming prompt
(:func:`alias.rename.meaningful.naming_prompt`) and answers with a JSON map
``{"current name": "new name"}``.  A proposer turns a list of :class:`NamingRequest`
(one per task) into one :class:`NamingReply` per task; the stage then parses, validates,
applies and re-verifies every reply the same way, whoever wrote it.

Backends (``params.meaningful.proposer.backend``, a model entry of the registry
:mod:`alias.generate.registry`: ``backend``, ``model``, ``max_tokens``, ``model_dir``,
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

from alias.config import ModelEntry
from alias.generate.registry import Backend, Completion, Options, get_backend, register
from alias.generate.types import SampleRequest
from alias.rename.kinds import split_identifier
from alias.rename.meaningful import (
    CFG_KEYWORDS, NAMING_PROMPT_VERSION, TLA_RESERVED_WORDS, is_valid_name,
)
from alias.rename.names import STANDARD_OPERATORS
from alias.tla.syntax import STANDARD_MODULES

__all__ = [
    "ABBREVIATIONS", "KIND_WORDS", "NamingRequest", "NamingReply", "lexicon_name", "lexicon_map",
    "spec_names", "propose", "proposer_model",
]

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
def proposer_model(entry: ModelEntry) -> str:
    """The ``model`` recorded for a proposer: its ``model``, else the model folder's or
    replay file's name."""
    return entry.model or Path(str(entry.model_dir or entry.path or entry.backend)).name


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


# ------------------------------------------------------------------------ dispatch
def _lexicon_completions(entry: ModelEntry, requests: Sequence[SampleRequest], options: Options) -> list[Completion]:
    """The lexicon backend: one JSON map per request from its ``context``
    (``(identifiers, avoid)``)."""
    out = []
    for q in requests:
        identifiers, avoid = q.context
        out.append(Completion(q.task_id, q.condition, q.model, q.sample_idx,
                              json.dumps(lexicon_map(identifiers, avoid), indent=1), response_model=entry.model,
                              prompt_version=q.prompt_version))
    return out


register(Backend("lexicon", _lexicon_completions))


def propose(requests: Sequence[NamingRequest], entry: ModelEntry, *, ledger: Path | None = None,
            poll_interval_s: float | None = None, timeout_s: float | None = None) -> list[NamingReply]:
    """One :class:`NamingReply` per request, in order, from the model backend of ``entry``
    (``meaningful.proposer``; one sample per task, no stop at a module's closing line).
    ``ledger``: the batch ledger file (anthropic/openai).

    Raises :class:`alias.generate.types.MissingCredentials` (no API key),
    :class:`alias.generate.registry.ModelDisabled`, ``FileNotFoundError`` (replay file,
    local model folder), :class:`~alias.errors.AliasError` (a malformed replay file) and
    the batch errors of :func:`alias.generate.batches.run_batch`.
    """
    if not requests:
        return []
    model = proposer_model(entry)
    reqs = [SampleRequest(task_id=r.task_id, condition="meaningful", model=model, sample_idx=0, prompt=r.prompt,
                          max_tokens=entry.max_tokens, prompt_version=NAMING_PROMPT_VERSION,
                          context=(r.identifiers, r.avoid)) for r in requests]
    options = Options(ledger=ledger, max_new_tokens=entry.max_tokens, stop_at_closing_line=False,
                      poll_interval_s=poll_interval_s, timeout_s=timeout_s)
    done = get_backend(entry.backend).complete(entry, reqs, options)
    return [NamingReply(d.task_id, d.text, d.status, d.error, d.response_model or model, d.input_tokens,
                        d.output_tokens) for d in done]
