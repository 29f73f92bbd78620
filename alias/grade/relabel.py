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
(b) renaming each remaining variable's atoms by one bijection per variable,

some one-to-one map of states carries the one graph's states, initial states and steps
exactly onto the other's.  Bijections are searched lazily, the identity first, among
those that keep each atom's signature (the sorted out-degree, in-degree and initial flag
of the states holding it); the search stops after ``cap`` candidate bijections.
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
_STRUCTURE = frozenset({"<<", ">>", "|->", ":>", "@@", "..", "[", "]", "(", ")", "{", "}", ","})

#: Verdicts of :func:`relabeling`.
IDENTICAL, RELABELED, DIFFERENT, UNDECIDED = "identical", "relabeled", "different", "undecided"


@dataclass(frozen=True)
class Relabeling:
    """What :func:`relabeling` found. ``kind``: ``identical`` (the same labeled graph),
    ``relabeled`` (equal only after dropping constant atoms or renaming values: a
    re-encoding), ``different`` (no such map exists) or ``undecided`` (``cap`` bijections
    tried). ``moved``: per variable, the atoms the bijection renames (other graph's atom ->
    reference's); ``reason``: one line; ``tried``: bijections tried."""

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


def _signatures(view: _View, g: StateGraph, v: str) -> dict[str, tuple]:
    """atom of ``v`` -> sorted (out-degree, in-degree, initial) of the states holding it."""
    out, inn = Counter(a for a, _ in g.edges), Counter(b for _, b in g.edges)
    init = set(g.initial)
    sig: dict[str, list] = {}
    for n, s in view.atoms.items():
        for t in s[v]:
            if t not in _STRUCTURE:
                sig.setdefault(t, []).append((out[n], inn[n], n in init))
    return {a: tuple(sorted(x)) for a, x in sig.items()}


def _bijections(sg: dict[str, tuple], sr: dict[str, tuple]) -> Iterator[dict[str, str]]:
    """Lazily, the atom bijections other -> reference that keep each atom's signature,
    the identity (on shared atoms) first."""
    groups: dict[tuple, tuple[list[str], list[str]]] = {}
    for a, k in sr.items():
        groups.setdefault(k, ([], []))[1].append(a)
    for a, k in sg.items():
        groups[k][0].append(a)
    ordered = []
    for gs, rs in groups.values():
        gs.sort()
        rs.sort(key=lambda a: (a not in gs, gs.index(a) if a in gs else 0, a))
        ordered.append((gs, rs))

    def rec(i: int, acc: list[tuple[str, str]]) -> Iterator[dict[str, str]]:
        if i == len(ordered):
            yield dict(acc)
            return
        gs, rs = ordered[i]
        for perm in itertools.permutations(rs):
            yield from rec(i + 1, acc + list(zip(gs, perm)))

    yield from rec(0, [])


def _product(factories: list[Callable[[], Iterator]]) -> Iterator[tuple]:
    """The lazy product of restartable iterators (``itertools.product`` would materialize
    every permutation first)."""
    if not factories:
        yield ()
        return
    for x in factories[0]():
        for rest in _product(factories[1:]):
            yield (x,) + rest


def _fits(phi: dict[str, dict[str, str]], live: list[str], ov: _View, r_index: dict,
          reference: StateGraph, other: StateGraph) -> bool:
    """Whether renaming ``other``'s atoms by ``phi`` maps its states one-to-one onto the
    reference's, initial states and steps included."""
    node_map: dict[str, str] = {}
    for n, s in ov.atoms.items():
        key = tuple(tuple(phi[v].get(t, t) for t in s[v]) for v in live)
        if key not in r_index:
            return False
        node_map[n] = r_index[key]
    if len(set(node_map.values())) != len(node_map):
        return False
    return ({node_map[n] for n in other.initial} == set(reference.initial)
            and {(node_map[a], node_map[b]) for a, b in other.edges} == set(reference.edges))


def _shapes_match(rv: _View, ov: _View) -> str | None:
    if rv.live != ov.live or any(rv.shape[v] != ov.shape[v] for v in rv.live):
        return (f"varying variables differ: {[(v, rv.shape[v]) for v in rv.live]} vs "
                f"{[(v, ov.shape[v]) for v in ov.live]}")
    return None


def relabeling(reference: StateGraph, other: StateGraph, cap: int = 2000) -> Relabeling:
    """Whether ``other`` equals ``reference`` up to constant atoms and one value bijection
    per variable (module docstring). Graphs as :func:`alias.grade.stategraph.dump_state_graph`
    gives them (TLC's reachable states, one node per distinct state). Raises ``ValueError``
    for ``cap`` < 1."""
    if cap < 1:
        raise ValueError(f"cap must be >= 1, got {cap}")
    if len(reference.nodes) != len(other.nodes) or len(set(reference.edges)) != len(set(other.edges)):
        return Relabeling(DIFFERENT, f"{len(other.nodes)} states and {len(set(other.edges))} steps against "
                                     f"{len(reference.nodes)} and {len(set(reference.edges))}")
    rv, ov = _view(reference), _view(other)
    why = _shapes_match(rv, ov)
    if why:
        return Relabeling(DIFFERENT, why)
    factories = []
    for v in rv.live:
        sg, sr = _signatures(ov, other, v), _signatures(rv, reference, v)
        if sorted(sg.values()) != sorted(sr.values()):
            return Relabeling(DIFFERENT, f"{v}: no value bijection keeps the states' degrees")
        factories.append(lambda sg=sg, sr=sr: _bijections(sg, sr))
    r_index = {tuple(rv.atoms[n][v] for v in rv.live): n for n in reference.nodes}
    tried = 0
    for tried, combo in enumerate(_product(factories), 1):
        if tried > cap:
            return Relabeling(UNDECIDED, f"no fitting bijection among the first {cap}", tried=cap)
        phi = dict(zip(rv.live, combo))
        if _fits(phi, rv.live, ov, r_index, reference, other):
            return _found(reference, other, phi, tried)
    return Relabeling(DIFFERENT, "no value bijection maps the steps onto the reference's", tried=tried)


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
