"""State graphs of TLA+ specifications and their comparison on observable variables.

Used by the behavior-based grade for specifications with control-label variables
(paper, Appendix I): TLC writes the state graph of each module, every state is
projected onto the data variables, and the two projected graphs must accept the same
sequences of observable states.

Public API
----------
:func:`dump_state_graph` ``(files, main, cfg_text, config, extra_flags=()) ->``
    :class:`StateGraph` or :class:`DumpFailure` -- run TLC with ``-dump dot FILE``
    in a sandboxed temporary directory and parse the file.
:func:`parse_dot` ``(text) -> StateGraph`` -- parse a DOT state graph written by TLC.
:func:`parse_state_label` ``(label) -> dict[str, str]`` -- one TLC state, per variable.
:func:`normalize_value` ``(text) -> str`` -- one TLC value printed on one line.
:func:`project` ``(graph, variables, rename=None) -> StateGraph``.
:func:`equivalent_observable` ``(g1, g2) -> (bool, Witness | None)``.
:func:`control_label_values` ``(text, var="pc") -> list[str]`` and
:func:`control_variables` ``(text) -> list[str]`` -- read a module's text (its TLA+
tokens from :func:`alias.tla.lexer.tokens`, up to the first ``====``).

What TLC 2.15 writes with ``-dump dot FILE``
-------------------------------------------
(``FILE`` gets ``.dot`` appended when it lacks it.)  One statement a line::

    strict digraph DiskGraph {
    nodesep=0.35;
    subgraph cluster_graph {
    color="white";
    -7334924819370809732 [label="/\\\\ x = 0\\n/\\\\ y = \\"a\\\\nb\\"",style = filled]
    -7334924819370809732 -> -9205893793862365355 [label="",color="black",fontcolor="black"];
    -9205893793862365355 [label="/\\\\ x = 1\\n/\\\\ y = \\"a\\\\nb\\""];
    -7334924819370809732 -> -7334924819370809732 [label="",color="black",fontcolor="black"];
    {rank = same; -7334924819370809732;}
    {rank = same; -9205893793862365355;}
    }
    }

* Node ids are the states' 64-bit fingerprints.  Each state is written once, when it
  is first found; **initial states carry** ``style = filled``.
* The label is the state as TLC prints it (``/\\ x = 1`` conjuncts joined by line
  breaks; a single-variable state is just ``x = 1``), escaped for DOT: ``\\`` and
  ``"`` get a backslash, a line break becomes ``\\n``.  Values longer than a line are
  pretty-printed over several lines with other spacing (``[ a |-> 1,\\n  b |-> 2 ]``
  instead of ``[a |-> 1, b |-> 2]``), so :func:`normalize_value` puts every value on
  one line in TLC's one-line spacing.
* An edge is written for every successor that is explored, including stuttering
  self-loops and repeats (``strict`` makes Graphviz merge them); successors outside a
  state CONSTRAINT are neither written nor counted.  The number of labelled nodes
  equals TLC's "distinct states found".
* ``-dump dot,actionlabels FILE`` adds the action name as edge label and
  ``colorize`` colours edges; neither is used here.

Complexity of :func:`equivalent_observable`: every reachable state of the subset
construction (a set of graph nodes that share one observation, closed under
unobservable steps) is built once per graph, lazily, and a breadth-first Hopcroft-Karp
walk over pairs merges them with union-find.  With ``k`` subsets built, of average size
``m``, the time is ``O(k * m * d + p * alpha)`` for out-degree ``d`` and ``p`` pairs
visited (``p <= k1 + k2``).  When the projected graphs are (close to) deterministic,
``k * m`` is about the number of nodes, so the check is near-linear in the size of the
graphs; nondeterministic projections can in principle need exponentially many
subsets (language equivalence of NFAs is PSPACE-complete).
"""
from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from alias.tla.lexer import tokens
from alias.tla.tools import DOT_CAP, ToolConfig, TlcResult, run_tlc_dump_dot

__all__ = [
    "StateGraph", "DumpFailure", "Witness", "dump_state_graph", "parse_dot",
    "parse_state_label", "normalize_value", "project", "equivalent_observable",
    "control_label_values", "control_variables", "DOT_CAP",
]

# DOT_CAP (from alias.tla.tools, exported here too): the largest DOT file
# :func:`dump_state_graph` reads by default (bytes); a larger one is a failure.


# --------------------------------------------------------------------------- types


@dataclass
class StateGraph:
    """A state graph.

    ``nodes``: node id -> {variable: value text} (values one-line, see
    :func:`normalize_value`), in file order.  ``edges``: ``(source, target)`` pairs,
    without repeats, in file order (self-loops kept).  ``initial``: ids of the initial
    states, in file order.  ``tlc``: the TLC run that wrote it (set by
    :func:`dump_state_graph`, ``None`` otherwise).
    """

    nodes: dict[str, dict[str, str]] = field(default_factory=dict)
    edges: list[tuple[str, str]] = field(default_factory=list)
    initial: list[str] = field(default_factory=list)
    tlc: TlcResult | None = field(default=None, repr=False, compare=False)

    @property
    def variables(self) -> tuple[str, ...]:
        """The variable names of all states, in order of first appearance."""
        seen: dict[str, None] = {}
        for state in self.nodes.values():
            for v in state:
                seen.setdefault(v, None)
        return tuple(seen)

    def successors(self) -> dict[str, list[str]]:
        """node id -> ids of its successors (every node has an entry)."""
        succ: dict[str, list[str]] = {n: [] for n in self.nodes}
        for s, t in self.edges:
            succ[s].append(t)
        return succ


@dataclass
class DumpFailure:
    """Why :func:`dump_state_graph` gave no graph.

    ``kind``: TLC's result kind when it is not ``'success'`` (``'deadlock'``,
    ``'invariant_violated'``, ``'timeout'``, ``'crash'``, ... see
    :mod:`alias.tla.tlc_output`; the graph would be incomplete), or ``'no_dump'``
    (TLC succeeded but wrote no DOT file), ``'too_large'`` (file over ``max_dot_bytes``),
    ``'bad_dump'`` (the file does not parse, or its node count differs from TLC's
    distinct states).  ``message``: details.  ``tlc``: the run.
    """

    kind: str
    message: str
    tlc: TlcResult


@dataclass
class Witness:
    """A shortest sequence of observations that one graph accepts and the other not.

    ``sequence``: observations (``{variable: value}``), the first one that of an
    initial state; consecutive observations differ.  ``accepted_by``: ``1`` when the
    sequence is a behavior of the first graph only, ``2`` for the second.
    """

    sequence: list[dict[str, str]]
    accepted_by: int

    def __str__(self) -> str:
        steps = ["(" + ", ".join(f"{k} = {v}" for k, v in obs.items()) + ")"
                 for obs in self.sequence]
        return f"only graph {self.accepted_by}: " + " -> ".join(steps)


# --------------------------------------------------------------------------- running TLC


def dump_state_graph(files: dict[str, str], main: str, cfg_text: str, config: ToolConfig,
                     extra_flags: tuple[str, ...] | list[str] = (), *,
                     max_dot_bytes: int = DOT_CAP) -> StateGraph | DumpFailure:
    """Run TLC on module ``main`` with ``-dump dot FILE`` and parse the state graph.

    The run is :func:`alias.tla.tools.run_tlc_dump_dot`: the sandbox of
    :func:`~alias.tla.tools.run_tlc` (fresh temp dir removed afterwards, wall-clock and
    JVM memory limits, validated names, the same allow-list for ``extra_flags``) with
    ``-dump dot TMP/alias-graph.dot`` added.  ``-simulate`` and ``-dfid`` are refused (no
    full state graph).

    Only a run that TLC reports as ``'success'`` gives a graph: pass a cfg without
    invariants or properties you do not want checked, and ``('-deadlock',)`` (TLC 2.15)
    or ``CHECK_DEADLOCK FALSE`` (newer TLC) when deadlocks are not errors -- otherwise
    TLC stops early and the failure says why.  The graph's ``tlc`` holds the run
    (``run_key`` covers the flags, ``kind`` ``'tlc-dump-dot'``).  With a VIEW or
    SYMMETRY in the cfg TLC writes one representative state per class.

    Raises :class:`~alias.tla.tools.ToolError` for unsafe names or flags (like
    ``run_tlc``); every tool failure is a :class:`DumpFailure`.
    """
    run = run_tlc_dump_dot(files, main, cfg_text, config, extra_flags, max_dot_bytes=max_dot_bytes)
    res, dot_text = run.tlc, run.dot
    if res.kind != "success":
        return DumpFailure(res.kind, res.error_message or f"TLC result {res.kind}", res)
    if run.dot_bytes is not None and dot_text is None:
        return DumpFailure("too_large", f"DOT file has {run.dot_bytes} bytes, more than {max_dot_bytes}",
                           res)
    if dot_text is None:
        return DumpFailure("no_dump", "TLC wrote no DOT file (does this TLC know "
                           "'-dump dot'?)", res)
    try:
        graph = parse_dot(dot_text)
    except ValueError as e:
        return DumpFailure("bad_dump", f"cannot parse the DOT file: {e}", res)
    if res.distinct_states is not None and len(graph.nodes) != res.distinct_states:
        return DumpFailure("bad_dump", f"DOT file has {len(graph.nodes)} states, TLC "
                           f"reported {res.distinct_states} distinct states", res)
    graph.tlc = res
    return graph


# --------------------------------------------------------------------------- DOT


_DOT_TOKEN = re.compile(r"""
    (?P<skip>\s+|//[^\n]*|/\*.*?\*/|^\#[^\n]*)
  | (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<arrow>->|--)
  | (?P<id>-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)|[A-Za-z_\u0080-\U0010ffff][A-Za-z_0-9\u0080-\U0010ffff]*)
  | (?P<punct>[{}\[\];,=:])
  | (?P<bad>.)
""", re.X | re.S | re.M)
_DOT_ESC = re.compile(r"\\(.)|\\$", re.S)
_DOT_KEYWORDS = {"strict", "graph", "digraph", "subgraph", "node", "edge"}


def _dot_unescape(quoted: str) -> str:
    """A DOT double-quoted string's text: ``\\"`` -> ``"``, ``\\\\`` -> ``\\``,
    ``\\n``/``\\l``/``\\r`` -> line break, backslash-newline removed, others kept."""
    def sub(m: re.Match) -> str:
        c = m.group(1)
        if c is None or c == "\n":
            return ""
        if c in "nlr":
            return "\n"
        if c in '"\\':
            return c
        return "\\" + c
    return _DOT_ESC.sub(sub, quoted[1:-1])


class _DotParser:
    def __init__(self, text: str):
        toks: list[tuple[str, str]] = []  # (kind, text); kind 'id' for IDs and strings
        for m in _DOT_TOKEN.finditer(text):
            k = m.lastgroup
            if k == "skip":
                continue
            if k == "bad":
                line = text.count("\n", 0, m.start()) + 1
                raise ValueError(f"unexpected character {m.group()!r} on line {line}")
            if k == "str":
                toks.append(("id", _dot_unescape(m.group())))
            elif k == "id":
                low = m.group().lower()
                toks.append(("kw", low) if low in _DOT_KEYWORDS else ("id", m.group()))
            else:
                toks.append((k, m.group()))  # 'arrow' or 'punct'

        self.toks = toks
        self.i = 0
        self.labels: dict[str, str] = {}
        self.mentioned: dict[str, None] = {}
        self.initial: dict[str, None] = {}
        self.edges: dict[tuple[str, str], None] = {}

    def peek(self, k: int = 0) -> tuple[str, str]:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else ("eof", "")

    def take(self, kind: str | None = None, text: str | None = None) -> str:
        tk, tt = self.peek()
        if (kind is not None and tk != kind) or (text is not None and tt != text):
            want = text or kind
            raise ValueError(f"expected {want!r}, found {tt or 'end of file'!r} "
                             f"(token {self.i})")
        self.i += 1
        return tt

    def parse(self) -> None:
        if self.peek() == ("kw", "strict"):
            self.i += 1
        if self.peek() not in (("kw", "digraph"), ("kw", "graph")):
            raise ValueError("not a DOT graph (no 'digraph' or 'graph')")
        self.i += 1
        if self.peek()[0] == "id":
            self.i += 1
        self.block()
        if self.peek()[0] != "eof":
            raise ValueError(f"text after the graph's closing brace: {self.peek()[1]!r}")

    def block(self) -> None:
        self.take("punct", "{")
        while self.peek() != ("punct", "}"):
            if self.peek()[0] == "eof":
                raise ValueError("unclosed '{' (truncated file?)")
            self.stmt()
            if self.peek() == ("punct", ";"):
                self.i += 1
        self.i += 1

    def attrs(self) -> dict[str, str]:
        out: dict[str, str] = {}
        while self.peek() == ("punct", "["):
            self.i += 1
            while self.peek() != ("punct", "]"):
                k = self.take("id")
                self.take("punct", "=")
                out[k] = self.take("id")
                if self.peek() in (("punct", ","), ("punct", ";")):
                    self.i += 1
            self.i += 1
        return out

    def node_id(self) -> str:
        n = self.take("id")
        while self.peek() == ("punct", ":"):  # port / compass point
            self.i += 1
            self.take("id")
        return n

    def stmt(self) -> None:
        tk, tt = self.peek()
        if tk == "kw" and tt in ("graph", "node", "edge"):
            self.i += 1
            self.attrs()
            return
        if (tk == "kw" and tt == "subgraph") or (tk, tt) == ("punct", "{"):
            if tk == "kw":
                self.i += 1
                if self.peek()[0] == "id":
                    self.i += 1
            self.block()
            if self.peek()[0] == "arrow":
                raise ValueError("edges from or to subgraphs are not supported")
            return
        if tk == "id" and self.peek(1) == ("punct", "="):
            self.i += 2
            self.take("id")
            return
        if tk != "id":
            raise ValueError(f"unexpected {tt or 'end of file'!r} (token {self.i})")
        chain = [self.node_id()]
        while self.peek()[0] == "arrow":
            self.i += 1
            if self.peek() == ("punct", "{") or self.peek() == ("kw", "subgraph"):
                raise ValueError("edges from or to subgraphs are not supported")
            chain.append(self.node_id())
        a = self.attrs()
        for n in chain:
            self.mentioned.setdefault(n, None)
        if len(chain) > 1:
            for s, t in zip(chain, chain[1:]):
                self.edges.setdefault((s, t), None)
            return
        n = chain[0]
        if "label" in a:
            self.labels[n] = a["label"]
        if "filled" in [s.strip() for s in a.get("style", "").split(",")]:
            self.initial.setdefault(n, None)


_TLC_NODE = re.compile(r'(-?[0-9]+) \[label="((?:[^"\\\n]|\\.)*)"(,style = filled)?\];?')
_TLC_EDGE = re.compile(r'(-?[0-9]+) -> (-?[0-9]+) \[label="(?:[^"\\\n]|\\.)*"'
                       r'(?:,color="[^"\n]*",fontcolor="[^"\n]*")?\];?')
_TLC_OPEN = re.compile(r'(?:strict )?digraph \w+ \{|subgraph \w+ \{')
_TLC_OTHER = re.compile(r'\w+ ?= ?(?:"[^"\\\n]*"|[\w.]+);?|(?:edge|node|graph) \[[^\]\n]*\];?')
_TLC_RANK = re.compile(r'\{rank = same;((?: ?-?[0-9]+;)*)\}')


def _parse_tlc_lines(text: str):
    """Fast path for the exact line formats TLC writes; ``None`` when any line differs
    (then the general parser decides).  Returns (labels, edges, initial, mentioned)."""
    labels: dict[str, str] = {}
    edges: dict[tuple[str, str], None] = {}
    initial: dict[str, None] = {}
    mentioned: dict[str, None] = {}
    depth, opened = 0, False
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if opened and depth == 0:
            return None  # text after the graph
        m = _TLC_EDGE.fullmatch(line)
        if m and depth > 0:
            edges.setdefault((m.group(1), m.group(2)), None)
            mentioned.setdefault(m.group(1), None)
            mentioned.setdefault(m.group(2), None)
            continue
        m = _TLC_NODE.fullmatch(line)
        if m and depth > 0:
            if m.group(1) in labels:
                return None
            labels[m.group(1)] = _dot_unescape('"' + m.group(2) + '"')
            mentioned.setdefault(m.group(1), None)
            if m.group(3):
                initial.setdefault(m.group(1), None)
            continue
        if _TLC_OPEN.fullmatch(line):
            if (depth == 0) != ("digraph" in line):
                return None
            depth += 1
            opened = True
            continue
        if line == "}" and depth > 0:
            depth -= 1
            continue
        m = _TLC_RANK.fullmatch(line)
        if m and depth > 0:
            for n in m.group(1).replace(";", " ").split():
                mentioned.setdefault(n, None)
            continue
        if _TLC_OTHER.fullmatch(line) and depth > 0:
            continue
        return None
    if not opened or depth != 0:
        return None
    return labels, edges, initial, mentioned


def parse_dot(text: str) -> StateGraph:
    """Parse a DOT state graph as TLC writes it with ``-dump dot`` (see the module doc).

    Reads general DOT syntax (quoted or bare IDs, attribute lists in any order,
    ``a -> b -> c`` chains, comments, subgraphs); node labels are parsed with
    :func:`parse_state_label`, and a node whose style includes ``filled`` is initial.
    Raises ``ValueError`` for text that is not DOT, a truncated file, HTML labels,
    edges between subgraphs, a node without a label, or a label that is not a state.
    """
    fast = _parse_tlc_lines(text)
    if fast is None:
        p = _DotParser(text)
        p.parse()
        fast = (p.labels, p.edges, p.initial, p.mentioned)
    labels, edges, initial, mentioned = fast
    missing = [n for n in mentioned if n not in labels]
    if missing:
        raise ValueError(f"{len(missing)} node(s) without a state label, e.g. {missing[0]!r}")
    nodes: dict[str, dict[str, str]] = {}
    for n, label in labels.items():
        try:
            nodes[n] = parse_state_label(label)
        except ValueError as e:
            raise ValueError(f"node {n}: {e}") from None
    return StateGraph(nodes=nodes, edges=list(edges), initial=list(initial))


# --------------------------------------------------------------------------- states

_VALUE_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|<<|>>|/\\|[\[\]{}()]', re.S)
_CONJ = re.compile(r"\s*([A-Za-z0-9_]+)\s*=(?!=)\s*(.*?)\s*\Z", re.S)
_OPEN = {"[", "(", "{", "<<"}
_CLOSE = {"]", ")", "}", ">>"}


def parse_state_label(label: str) -> dict[str, str]:
    """``'/\\ x = 1\\n/\\ s = "a /\\ b"'`` -> ``{'x': '1', 's': '"a /\\ b"'}``.

    Splits at ``/\\`` outside strings and brackets; a label without a leading
    ``/\\`` is one ``var = value`` (TLC prints a one-variable state so).  Values are
    normalized with :func:`normalize_value`.  An empty label is the empty state.
    Raises ``ValueError`` for a conjunct that is not ``name = value`` or a repeated
    variable.
    """
    parts: list[str] = []
    start, depth = 0, 0
    for m in _VALUE_TOKEN.finditer(label):
        t = m.group()
        if t in _OPEN:
            depth += 1
        elif t in _CLOSE:
            depth -= 1
        elif t == "/\\" and depth <= 0:
            parts.append(label[start:m.start()])
            start = m.end()
    parts.append(label[start:])
    if parts and not parts[0].strip():
        parts = parts[1:]
    if len(parts) == 1 and not parts[0].strip():
        return {}
    state: dict[str, str] = {}
    for part in parts:
        m = _CONJ.match(part)
        if not m or not m.group(2):
            raise ValueError(f"not a state (conjunct {part.strip()[:80]!r})")
        if m.group(1) in state:
            raise ValueError(f"variable {m.group(1)} appears twice in a state")
        state[m.group(1)] = normalize_value(m.group(2))
    return state


_NORM_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\s+|<<|>>|[\[\](){},]|[^"\s<>\[\](){},]+|.', re.S)
_NO_SPACE_AFTER = {"[", "(", "{", "<<"}
_NO_SPACE_BEFORE = {"]", ")", "}", ">>", ","}
_PRETTY = re.compile(r"\s\s|[\n\t\r\f\v]|[\[({] |<< | [\])},]| >>")


def normalize_value(text: str) -> str:
    """A TLC value on one line with TLC's one-line spacing.

    Outside strings, every run of white space becomes one space, and spaces after
    ``[ ( { <<`` and before ``] ) } >> ,`` are dropped, so a value TLC pretty-printed
    over several lines (``[ a |-> 1,\\n  b |-> 2 ]``) reads as the one-line form
    (``[a |-> 1, b |-> 2]``).  Strings are kept as they are.
    """
    text = text.strip()
    if not _PRETTY.search(text):
        return text
    out: list[str] = []
    space = False
    for m in _NORM_TOKEN.finditer(text):
        t = m.group()
        if t[0].isspace():
            space = True
            continue
        if space and out and out[-1] not in _NO_SPACE_AFTER and t not in _NO_SPACE_BEFORE:
            out.append(" ")
        space = False
        out.append(t)
    return "".join(out)


# --------------------------------------------------------------------------- projection


def project(graph: StateGraph, variables: Iterable[str],
            rename: Mapping[str, str] | None = None) -> StateGraph:
    """The graph with every state restricted to ``variables`` (in that order).

    ``rename`` maps a variable's name to its name in the result (entries for other
    variables are ignored); the kept names must stay distinct.  Node ids, edges and
    initial states are kept.  Raises ``ValueError`` when a state lacks one of
    ``variables`` or two variables get the same name.
    """
    keep = list(dict.fromkeys(variables))
    rename = dict(rename or {})
    names = [rename.get(v, v) for v in keep]
    if len(set(names)) != len(names):
        raise ValueError(f"renaming makes variable names collide: {names}")
    nodes: dict[str, dict[str, str]] = {}
    for nid, state in graph.nodes.items():
        try:
            nodes[nid] = {n: state[v] for v, n in zip(keep, names)}
        except KeyError as e:
            raise ValueError(f"state {nid} has no variable {e.args[0]!r} "
                             f"(it has {sorted(state)})") from None
    return StateGraph(nodes=nodes, edges=list(graph.edges), initial=list(graph.initial),
                      tlc=graph.tlc)


# --------------------------------------------------------------------------- equivalence


class _Automaton:
    """The subset construction of one graph's observation NFA, built lazily.

    NFA: the graph's nodes plus a start state; start --obs(s)--> s for initial s;
    s --> t is an epsilon move when obs(s) == obs(t) (self-loops dropped), else reads
    obs(t).  All states accept.  DFA state 0 is the start; DFA state k > 0 is an
    epsilon-closed, nonempty set of nodes that all have the same observation.
    """

    def __init__(self, graph: StateGraph, alphabet: dict[tuple, int]):
        index = {nid: i for i, nid in enumerate(graph.nodes)}
        self.obs = [alphabet.setdefault(tuple(sorted(st.items())), len(alphabet))
                    for st in graph.nodes.values()]
        n = len(index)
        self.eps: list[list[int]] = [[] for _ in range(n)]
        self.steps: list[list[int]] = [[] for _ in range(n)]
        obs = self.obs
        for s, t in graph.edges:
            i, j = index[s], index[t]
            if i == j:
                continue
            (self.eps if obs[i] == obs[j] else self.steps)[i].append(j)
        self.initial = sorted({index[s] for s in graph.initial})
        self.ids: dict[frozenset[int], int] = {}
        self.sets: list[frozenset[int] | None] = [None]
        self.trans: list[dict[int, int] | None] = [None]

    def _closure(self, seeds: list[int]) -> frozenset[int]:
        seen = set(seeds)
        stack = list(seen)
        eps = self.eps
        while stack:
            for j in eps[stack.pop()]:
                if j not in seen:
                    seen.add(j)
                    stack.append(j)
        return frozenset(seen)

    def _state(self, seeds: list[int]) -> int:
        c = self._closure(seeds)
        k = self.ids.get(c)
        if k is None:
            k = self.ids[c] = len(self.sets)
            self.sets.append(c)
            self.trans.append(None)
        return k

    def successors(self, k: int) -> dict[int, int]:
        """letter -> DFA state, for the letters enabled in DFA state ``k``."""
        t = self.trans[k]
        if t is None:
            groups: dict[int, list[int]] = {}
            if k == 0:
                for i in self.initial:
                    groups.setdefault(self.obs[i], []).append(i)
            else:
                obs, steps = self.obs, self.steps
                for i in self.sets[k]:  # type: ignore[union-attr]
                    for j in steps[i]:
                        groups.setdefault(obs[j], []).append(j)
            t = self.trans[k] = {a: self._state(ts) for a, ts in groups.items()}
        return t


def equivalent_observable(g1: StateGraph, g2: StateGraph) -> tuple[bool, Witness | None]:
    """Whether two (projected) graphs accept the same sequences of observations.

    The observation of a state is its whole ``{variable: value}`` dict.  A finite
    behavior (a path from an initial state) yields the sequence of its observations
    with steps that do not change the observation dropped (stuttering after projection
    is invisible); the first element is the observation of the initial state.  Every
    prefix of a behavior is a behavior, so the languages are prefix-closed.  Returns
    ``(True, None)`` when the languages are equal, else ``(False, witness)`` with a
    shortest :class:`Witness` (ties broken deterministically).

    Lazy subset construction plus Hopcroft-Karp with union-find, breadth first (see
    the module doc for the complexity).  Raises ``ValueError`` when the graphs'
    states use different variable names (forgotten ``project``/``rename``).
    """
    v1, v2 = set(g1.variables), set(g2.variables)
    if g1.nodes and g2.nodes and v1 != v2:
        raise ValueError(f"the graphs have different variables: {sorted(v1)} vs {sorted(v2)}")
    alphabet: dict[tuple, int] = {}
    a1, a2 = _Automaton(g1, alphabet), _Automaton(g2, alphabet)
    letters = list(alphabet)
    parent: dict[int, int] = {}  # union-find over DFA states: 2*k for a1, 2*k+1 for a2

    def find(x: int) -> int:
        root = x
        while parent.get(root, root) != root:
            root = parent[root]
        while x != root:
            nxt = parent[x]
            parent[x] = root
            x = nxt
        return root

    pairs: list[tuple[int, int, int, int]] = [(0, 0, -1, -1)]  # (k1, k2, parent, letter)
    parent[0] = 1
    queue = deque([0])
    while queue:
        p = queue.popleft()
        k1, k2 = pairs[p][0], pairs[p][1]
        t1, t2 = a1.successors(k1), a2.successors(k2)
        if t1.keys() != t2.keys():
            a = min(t1.keys() ^ t2.keys())
            word = [a]
            q = p
            while pairs[q][2] >= 0:
                word.append(pairs[q][3])
                q = pairs[q][2]
            word.reverse()
            return False, Witness([dict(letters[x]) for x in word], 1 if a in t1 else 2)
        for a in sorted(t1):
            r1, r2 = find(2 * t1[a]), find(2 * t2[a] + 1)
            if r1 != r2:
                parent[r1] = r2
                pairs.append((t1[a], t2[a], p, a))
                queue.append(len(pairs) - 1)
    return True, None


# --------------------------------------------------------------------------- module text

_CMP = {"=", "#", "/="}
_TLA_OPEN = frozenset({"(", "[", "{", "<<"})
_TLA_CLOSE = frozenset({")", "]", "}", ">>", "]_", ">>_"})
#: Tokens after which a name is a record field, an instance's operator or an action's
#: subscript (``r.pc``, ``I!pc``, ``[Next]_pc``), not a use of the variable.
_QUALIFIERS = frozenset({".", "..", "...", "!", "!!", "]_", ">>_"})


def _tokens(text: str) -> list[str]:
    """TLA+ tokens (:func:`alias.tla.lexer.tokens`) of ``text`` up to the first ``====``
    (the end of the first module), without separators."""
    out = []
    for t in tokens(text, separators=True):
        if t.startswith("===="):
            break
        if not t.startswith("----"):
            out.append(t)
    return out


def _is_string(tok: str) -> bool:
    """Whether a token is a closed string literal (not one cut off at a line end)."""
    return len(tok) >= 2 and tok[0] == tok[-1] == '"'


def _match(toks: list[str], i: int) -> int:
    """Index after the bracket group opening at ``toks[i]`` (or len(toks))."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j]
        if t in _TLA_OPEN:
            depth += 1
        elif t in _TLA_CLOSE:
            depth -= 1
            if depth == 0:
                return j + 1
    return len(toks)


def _find_at_depth0(toks: list[str], i: int, end: int, targets: set[str]) -> int:
    depth = 0
    for j in range(i, end):
        t = toks[j]
        if depth == 0 and t in targets:
            return j
        if t in _TLA_OPEN:
            depth += 1
        elif t in _TLA_CLOSE:
            depth -= 1
            if depth < 0:
                return -1
    return -1


def _value(toks: list[str], i: int, end: int) -> tuple[list[str], bool, int]:
    """Strings of the value expression at ``toks[i]``: (strings, every possible value
    is a string literal, index after the expression)."""
    if i >= end:
        return [], False, i
    t = toks[i]
    if _is_string(t):
        return [t[1:-1]], True, i + 1
    if t == "(":
        close = _match(toks, i)
        s, ok, j = _value(toks, i + 1, close - 1)
        return s, ok and j == close - 1, close
    if t == "IF":
        th = _find_at_depth0(toks, i + 1, end, {"THEN"})
        if th < 0:
            return [], False, end
        s1, ok1, j = _value(toks, th + 1, end)
        if j < end and toks[j] == "ELSE":
            s2, ok2, j = _value(toks, j + 1, end)
            return s1 + s2, ok1 and ok2, j
        return s1, False, j
    if t == "CASE":
        strings: list[str] = []
        ok, j = True, i + 1
        while True:
            arrow = _find_at_depth0(toks, j, end, {"->"})
            if arrow < 0:
                return strings, False, end
            s, ok1, j = _value(toks, arrow + 1, end)
            strings += s
            ok = ok and ok1
            if j < end and toks[j] == "[]" or j + 1 < end and toks[j] == "[" and toks[j + 1] == "]":
                j += 1 if toks[j] == "[]" else 2
                continue
            return strings, ok, j
    if t == "[":
        close = _match(toks, i)
        inner_end = close - 1
        mapsto = _find_at_depth0(toks, i + 1, inner_end, {"|->"})
        member = _find_at_depth0(toks, i + 1, inner_end, {"\\in"})
        if mapsto > 0 and 0 < member < mapsto:  # [x \in S |-> value]
            s, ok, j = _value(toks, mapsto + 1, inner_end)
            return s, ok and j == inner_end, close
        exc = _find_at_depth0(toks, i + 1, inner_end, {"EXCEPT"})
        if exc > 0:  # [f EXCEPT ![a] = v, !.b = w]
            strings, ok, j = [], True, exc + 1
            while j < inner_end and toks[j] == "!":
                eq = _find_at_depth0(toks, j + 1, inner_end, {"="})
                if eq < 0:
                    return strings, False, close
                s, ok1, j = _value(toks, eq + 1, inner_end)
                strings += s
                ok = ok and ok1
                if j < inner_end and toks[j] == ",":
                    j += 1
            return strings, ok and j == inner_end, close
        return [], False, close
    return [], False, i + 1


def _occurrences(toks: list[str], var: str):
    """For each comparison or assignment of ``var`` (``v = e``, ``v' = e``,
    ``v[i] = e``, ``v # e``, ``e = v``, ``v \\in {"a", ...}``): (strings, all strings,
    e is ``var`` itself).  Also ``var |-> "s"`` (PlusCal's stack frames) as
    (["s"], None, False)."""
    n = len(toks)
    for i, t in enumerate(toks):
        if t != var or (i > 0 and toks[i - 1] in _QUALIFIERS):
            continue
        j = i + 1
        if j < n and toks[j] == "'":
            j += 1
        if j < n and toks[j] == "[":
            j = _match(toks, j)
            if j < n and toks[j] == "'":
                j += 1
        if j < n and toks[j] in _CMP:
            if j + 1 < n and toks[j + 1] == var:
                yield [], True, True
                continue
            s, ok, _ = _value(toks, j + 1, n)
            yield s, ok, False
        elif j < n and toks[j] == "\\in" and j + 1 < n and toks[j + 1] == "{":
            close = _match(toks, j + 1)
            inner = toks[j + 2:close - 1]
            elems = [x for x in inner if x != ","]
            if elems and all(_is_string(x) for x in elems):
                yield [x[1:-1] for x in elems], True, False
        elif j == i + 1 and j < n and toks[j] == "|->" and j + 1 < n \
                and _is_string(toks[j + 1]):
            yield [toks[j + 1][1:-1]], None, False
        elif i >= 2 and toks[i - 1] in _CMP and _is_string(toks[i - 2]):
            yield [toks[i - 2][1:-1]], True, False


def control_label_values(text: str, var: str = "pc") -> list[str]:
    """String values that module ``text`` gives control variable ``var``, in order of
    first appearance.

    Reads comparisons and assignments outside comments (so not the PlusCal algorithm
    itself): ``pc = "L"``, ``pc' = "L"``, ``pc[self] = "L"``, ``pc[self] # "L"``,
    ``pc' = [pc EXCEPT ![self] = "L"]``, ``pc = [self \\in ProcSet |-> "L"]`` (also
    with ``CASE ... -> "L"`` arms), ``IF ... THEN "L" ELSE "M"``, ``pc \\in {"L", ...}``
    and ``pc |-> "L"`` in PlusCal's stack frames; ``"Done"`` when it occurs so.
    Strings in indices (``pc["p1"]``) and in ``TypeOK``-style function sets
    (``pc \\in [S -> {...}]``) are not read.
    """
    seen: dict[str, None] = {}
    for strings, _ok, _same in _occurrences(_tokens(text), var):
        for s in strings:
            seen.setdefault(s, None)
    return list(seen)


def _declared_variables(toks: list[str]) -> list[str]:
    out: dict[str, None] = {}
    for i, t in enumerate(toks):
        if t in ("VARIABLE", "VARIABLES") and (i == 0 or toks[i - 1] != "=="):
            j = i + 1
            while j < len(toks) and re.fullmatch(r"[A-Za-z0-9_]*[A-Za-z][A-Za-z0-9_]*",
                                                 toks[j]):
                out.setdefault(toks[j], None)
                if j + 1 < len(toks) and toks[j + 1] == ",":
                    j += 2
                else:
                    break
    return list(out)


def control_variables(text: str) -> list[str]:
    """Declared variables of module ``text`` whose values are string labels, in order
    of declaration.

    ``pc`` counts when it is compared with or assigned at least one string (PlusCal
    translations also assign it ``Head(stack).pc``).  Any other variable counts when
    it is compared with or assigned at least one string and every comparison or
    assignment (see :func:`control_label_values`) has only string literals as its
    possible values; ``v' = v`` is neutral and ``v \\in S`` counts only when S is a
    set of strings.
    """
    toks = _tokens(text)
    found = []
    for v in _declared_variables(toks):
        occ = [(s, ok) for s, ok, same in _occurrences(toks, v) if not same and ok is not None]
        has_string = any(s for s, _ in occ)
        if v == "pc":
            if has_string:
                found.append(v)
        elif has_string and all(ok for _, ok in occ):
            found.append(v)
    return found
