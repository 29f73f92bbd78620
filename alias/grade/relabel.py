"""Is one TLC state graph another's up to a re-encoding of its values? (issue 33, point 3)

A hard negative (:mod:`alias.grade.hardneg`) must differ from its reference in behavior,
not only in how it writes a value down.  Under the identity mapping, a mutant that writes
``"cancelled"`` where the reference writes ``"prepared"`` (and never otherwise uses
``"cancelled"``), or that adds a process which never moves, shows a TLC violation, yet
the behavior grade's refinement mappings (a bijection of a finite-domain variable's
values; a tuple component) rightly accept it.  :func:`relabeling` tells such a graph
apart from one with other behaviors.

Two graphs are *equal up to relabeling* when, after

(a) dropping, per variable, the atoms (strings, numbers, model values, booleans) at the
    positions that hold the same atom in every state (a variable of one shape in every
    state, e.g. a tuple; a variable whose shape varies keeps all its atoms), and
(b) renaming each remaining variable's atoms by one bijection per variable that maps no
    number to another number (as the behavior grade's re-encodings: a number read as
    another number is other arithmetic, :func:`alias.grade.refinement._renumbered`),

some one-to-one map of states carries the one graph's states, initial states and steps
exactly onto the other's.  A depth-first search (:class:`_Search`) builds that map along
the steps from the initial states, the identity first, extending the bijections as it
goes; an atom maps only to one with its signature (the sorted out-degree, in-degree and
initial flag of the states holding it).  It stops after ``cap`` candidate state pairs.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterator

from alias.grade.stategraph import StateGraph

#: TLC value tokens: strings, the structure tokens of sequences, records, functions and
#: sets, and atoms (names, numbers; any other character alone).
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|<<|>>|\|->|:>|@@|\.\.|[\[\](){},]|[A-Za-z0-9_]+|\S')
_NUMBER = re.compile(r"\d+")
_STRUCTURE = frozenset({"<<", ">>", "|->", ":>", "@@", "..", "[", "]", "(", ")", "{", "}", ","})

#: Verdicts of :func:`relabeling`.
IDENTICAL, RELABELED, DIFFERENT, UNDECIDED = "identical", "relabeled", "different", "undecided"


@dataclass(frozen=True)
class Relabeling:
    """What :func:`relabeling` found. ``kind``: ``identical`` (the same labeled graph),
    ``relabeled`` (equal only after dropping constant atoms or renaming values: a
    re-encoding), ``different`` (no such map exists) or ``undecided`` (``cap`` state pairs
    tried). ``moved``: per variable, the atoms the bijection renames (other graph's atom ->
    reference's); ``reason``: one line; ``tried``: candidate state pairs tried."""

    kind: str
    reason: str
    moved: dict[str, dict[str, str]] = field(default_factory=dict)
    tried: int = 0


@dataclass
class _View:
    """A graph's states reduced to their varying atoms: ``shape[v]`` is ``("fixed", n)``
    (one shape, ``n`` varying atom positions) or ``("free",)``; ``atoms[node][v]`` the
    atoms (fixed) or all tokens (free) of ``v`` in that state."""

    live: list[str]
    shape: dict[str, tuple]
    atoms: dict[str, dict[str, tuple[str, ...]]]


def _split(value: str) -> tuple[list[str], list[int]]:
    toks = _TOKEN.findall(value)
    return toks, [i for i, t in enumerate(toks) if t not in _STRUCTURE]


def _variable_view(g: StateGraph, v: str, split: dict) -> tuple[tuple, dict[str, tuple[str, ...]]]:
    """``(shape, node -> atoms)`` of one variable (see :class:`_View`)."""
    skeletons = {tuple("_" if i in set(a) else t for i, t in enumerate(toks)) for toks, a in
                 (split[n][v] for n in g.nodes)}
    if len(skeletons) != 1:
        return ("free",), {n: tuple(split[n][v][0]) for n in g.nodes}
    positions = len(next(iter(split.values()))[v][1])
    keep = [k for k in range(positions)
            if len({split[n][v][0][split[n][v][1][k]] for n in g.nodes}) > 1]
    return ("fixed", len(keep)), {n: tuple(split[n][v][0][split[n][v][1][k]] for k in keep) for n in g.nodes}


def _view(g: StateGraph) -> _View:
    variables = sorted({v for s in g.nodes.values() for v in s})
    split = {n: {v: _split(s.get(v, "")) for v in variables} for n, s in g.nodes.items()}
    shape: dict[str, tuple] = {}
    atoms: dict[str, dict[str, tuple[str, ...]]] = {n: {} for n in g.nodes}
    for v in variables:
        shape[v], per_node = _variable_view(g, v, split)
        for n, a in per_node.items():
            atoms[n][v] = a
    return _View([v for v in variables if shape[v] != ("fixed", 0)], shape, atoms)


def _signatures(view: _View, g: StateGraph) -> dict[str, dict[str, tuple]]:
    """Per varying variable, atom -> sorted (out-degree, in-degree, initial) of the states
    holding it."""
    out, inn = Counter(a for a, _ in g.edges), Counter(b for _, b in g.edges)
    init = set(g.initial)
    sig: dict[str, dict[str, list]] = {v: {} for v in view.live}
    for n, s in view.atoms.items():
        mark = (out[n], inn[n], n in init)
        for v in view.live:
            for t in s[v]:
                if t not in _STRUCTURE:
                    sig[v].setdefault(t, []).append(mark)
    return {v: {a: tuple(sorted(x)) for a, x in per.items()} for v, per in sig.items()}


class _Search:
    """A depth-first search for the one-to-one map of states (module docstring), built along
    the other graph's steps from its initial states: a state's image is one of its mapped
    predecessor's image's successors, with the same degrees and initial flag, whose atoms
    extend the per-variable bijections built so far (each atom keeping its signature) and
    whose steps to and from the states mapped so far exist in the reference too. Candidates
    that keep the atoms as they are come first, so where the identity fits it is found."""

    def __init__(self, reference: StateGraph, other: StateGraph, rv: _View, ov: _View,
                 sig_r: dict[str, dict[str, tuple]], sig_o: dict[str, dict[str, tuple]]):
        self.rv, self.ov, self.live = rv, ov, rv.live
        self.r_succ, self.o_succ = _adjacency(reference.edges), _adjacency(other.edges)
        self.r_pred, self.o_pred = _adjacency((b, a) for a, b in reference.edges), \
            _adjacency((b, a) for a, b in other.edges)
        self.r_init, self.o_init = set(reference.initial), set(other.initial)
        self.r_nodes = list(reference.nodes)
        self.r_key = {r: tuple(rv.atoms[r][v] for v in self.live) for r in self.r_nodes}
        self.r_index = {k: r for r, k in self.r_key.items()}
        self.sig_r, self.sig_o = sig_r, sig_o
        self.order, self.anchor = _bfs(other, self.o_succ)
        self.phi: dict[str, dict[str, str]] = {v: {} for v in self.live}
        self.inv: dict[str, dict[str, str]] = {v: {} for v in self.live}
        self.node_map: dict[str, str] = {}
        self.used: set[str] = set()

    def _candidates(self, n: str) -> list[str]:
        """Images to try for ``n``, last first (the search pops them): where the bijections
        built so far map every atom of ``n``, only the state with those atoms; else the
        unused successors of its anchor's image (the initial states for an initial state),
        those with ``n``'s own atoms first."""
        mapped = [tuple(self.phi[v].get(t, t if t in _STRUCTURE else None) for t in self.ov.atoms[n][v])
                  for v in self.live]
        if all(None not in m for m in mapped):
            r = self.r_index.get(tuple(mapped))
            return [] if r is None or r in self.used else [r]
        a = self.anchor[n]
        if a is not None:
            pool = self.r_succ.get(self.node_map[a], [])
        else:
            pool = [r for r in self.r_nodes if (r in self.r_init) == (n in self.o_init)]
        pool = [r for r in pool if r not in self.used]
        own = tuple(self.ov.atoms[n][v] for v in self.live)
        return [r for r in pool if self.r_key[r] != own] + [r for r in pool if self.r_key[r] == own]

    def _atoms_fit(self, n: str, r: str) -> list[tuple[str, str, str]] | None:
        """The new atom pairs (variable, other's atom, reference's) that mapping ``n`` to
        ``r`` adds, or None where the atoms do not fit."""
        new: dict[tuple[str, str], str] = {}
        taken: set[tuple[str, str]] = set()
        for v in self.live:
            xs, ys = self.ov.atoms[n][v], self.rv.atoms[r][v]
            if len(xs) != len(ys):
                return None
            for a, b in zip(xs, ys):
                if a in _STRUCTURE or b in _STRUCTURE:
                    if a != b:
                        return None
                    continue
                got = self.phi[v].get(a, new.get((v, a)))
                if got is not None:
                    if got != b:
                        return None
                    continue
                if b in self.inv[v] or (v, b) in taken or self.sig_o[v][a] != self.sig_r[v][b] \
                        or (a != b and _NUMBER.fullmatch(a) and _NUMBER.fullmatch(b)):
                    return None
                new[(v, a)] = b
                taken.add((v, b))
        return [(v, a, b) for (v, a), b in new.items()]

    def _steps_fit(self, n: str, r: str) -> bool:
        if (n in self.o_init) != (r in self.r_init) or len(self.o_succ.get(n, ())) != len(self.r_succ.get(r, ())) \
                or len(self.o_pred.get(n, ())) != len(self.r_pred.get(r, ())):
            return False
        r_succ, r_pred = set(self.r_succ.get(r, ())), set(self.r_pred.get(r, ()))
        return (all(self.node_map[u] in r_succ for u in self.o_succ.get(n, ()) if u in self.node_map)
                and all(self.node_map[u] in r_pred for u in self.o_pred.get(n, ()) if u in self.node_map))

    def _assign(self, n: str, r: str, pairs: list[tuple[str, str, str]]) -> None:
        self.node_map[n] = r
        self.used.add(r)
        for v, a, b in pairs:
            self.phi[v][a], self.inv[v][b] = b, a

    def _undo(self, n: str, pairs: list[tuple[str, str, str]]) -> None:
        self.used.discard(self.node_map.pop(n))
        for v, a, b in pairs:
            del self.phi[v][a], self.inv[v][b]

    def run(self, cap: int) -> tuple[bool | None, int]:
        """(True: found, False: none exists, None: cut at ``cap`` tries; tries)."""
        stack: list[tuple[list[str], list]] = []  # per depth: candidates left, pairs assigned
        tries, depth = 0, 0
        while depth < len(self.order):
            n = self.order[depth]
            if len(stack) == depth:
                stack.append((self._candidates(n), []))
            cands, _ = stack[depth]
            placed = False
            while cands:
                r = cands.pop()
                tries += 1
                if tries > cap:
                    return None, cap
                pairs = self._atoms_fit(n, r) if self._steps_fit(n, r) else None
                if pairs is not None:
                    self._assign(n, r, pairs)
                    stack[depth] = (cands, pairs)
                    depth, placed = depth + 1, True
                    break
            if placed:
                continue
            stack.pop()
            if depth == 0:
                return False, tries
            depth -= 1
            self._undo(self.order[depth], stack[depth][1])
        return True, tries


def _adjacency(edges) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for a, b in dict.fromkeys(edges):
        out.setdefault(a, []).append(b)
    return out


def _bfs(g: StateGraph, succ: dict[str, list[str]]) -> tuple[list[str], dict[str, str | None]]:
    """The states in breadth-first order from the initial ones, and each one's first
    predecessor in that order (None for an initial state); states not reached come last,
    anchored nowhere."""
    anchor: dict[str, str | None] = {n: None for n in g.initial}
    order = list(anchor)
    i = 0
    while i < len(order):
        for t in succ.get(order[i], ()):
            if t not in anchor:
                anchor[t] = order[i]
                order.append(t)
        i += 1
    rest = [n for n in g.nodes if n not in anchor]
    return order + rest, anchor | {n: None for n in rest}


def _shapes_match(rv: _View, ov: _View) -> str | None:
    if rv.live != ov.live or any(rv.shape[v] != ov.shape[v] for v in rv.live):
        return (f"varying variables differ: {[(v, rv.shape[v]) for v in rv.live]} vs "
                f"{[(v, ov.shape[v]) for v in ov.live]}")
    return None


def relabeling(reference: StateGraph, other: StateGraph, cap: int = 1_000_000) -> Relabeling:
    """Whether ``other`` equals ``reference`` up to constant atoms and one value bijection
    per variable (module docstring). Graphs as :func:`alias.grade.stategraph.dump_state_graph`
    gives them (TLC's reachable states, one node per distinct state). ``cap``: candidate
    state pairs tried at most (``undecided`` beyond). Raises ``ValueError`` for ``cap`` < 1."""
    if cap < 1:
        raise ValueError(f"cap must be >= 1, got {cap}")
    if len(reference.nodes) != len(other.nodes) or len(set(reference.edges)) != len(set(other.edges)):
        return Relabeling(DIFFERENT, f"{len(other.nodes)} states and {len(set(other.edges))} steps against "
                                     f"{len(reference.nodes)} and {len(set(reference.edges))}")
    rv, ov = _view(reference), _view(other)
    why = _shapes_match(rv, ov)
    if why:
        return Relabeling(DIFFERENT, why)
    sig_r, sig_o = _signatures(rv, reference), _signatures(ov, other)
    for v in rv.live:
        if sorted(sig_o[v].values()) != sorted(sig_r[v].values()):
            return Relabeling(DIFFERENT, f"{v}: no value bijection keeps the states' degrees")
    search = _Search(reference, other, rv, ov, sig_r, sig_o)
    found, tried = search.run(cap)
    if found is None:
        return Relabeling(UNDECIDED, f"no map of states found within {cap} tries", tried=tried)
    if not found:
        return Relabeling(DIFFERENT, "no value bijection maps the steps onto the reference's", tried=tried)
    return _found(reference, other, search.phi, tried)


def _found(reference: StateGraph, other: StateGraph, phi: dict[str, dict[str, str]], tried: int) -> Relabeling:
    moved = {v: {k: x for k, x in m.items() if k != x} for v, m in phi.items()}
    moved = {v: m for v, m in moved.items() if m}
    same = ({frozenset(s.items()) for s in reference.nodes.values()}
            == {frozenset(s.items()) for s in other.nodes.values()})
    if same and not moved:
        return Relabeling(IDENTICAL, "the same labeled state graph", tried=tried)
    parts = [f"{v} via {{{', '.join(f'{a}->{b}' for a, b in sorted(m.items()))}}}" for v, m in moved.items()]
    return Relabeling(RELABELED, "equal up to " + ("; ".join(parts) or "components constant in every state"),
                      moved, tried)
