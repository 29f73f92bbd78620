"""Refinement mappings for the behavior grade: the search and the TLA+ they become.

The paper's behavior grade (Methods "Behavior-based grade", Appendix H) maps each
variable of the reference R to one variable of the output G, by name. An output that
merges variables into a record, splits a record into variables, keeps a flag as a
boolean where R uses 0 and 1, or adds a history variable then fails though its
behaviors match (paper, "Construct validity"). This module finds *refinement
mappings*: each of R's variables as an expression over G's, from a small grammar:

* a G variable, or a record field, tuple component, or per-element field of a function
  of records of a G variable (``g``, ``g.f``, ``g[2]``, ``[p \\in DOMAIN g |-> g[p].f]``),
  and R's variable built back from several of those (a record, a tuple, or a function of
  records) when G splits it;
* each of those re-encoded by a bijection of finite value sets (BOOLEAN and {0, 1},
  strings and numbers or model values), applied to the value or to every value of a
  function (:class:`Encoding`);
* a function's domain moved by a constant offset (an *index shift*: R's board
  ``(1..N) \\X (1..N)`` from G's ``(0..N-1) \\X (0..N-1)``), only between leaves of one
  name that no other encoding fits (:func:`domain_shift`, ``Encoding.shift``);
* a G variable left out (an auxiliary variable that never constrains the others).

Pieces are *leaves* (:class:`Leaf`): a variable with a path (``()``, a field, a
component, a per-element field). A mapping (:class:`Match`) pairs every leaf of one
decomposition of each R variable with a distinct leaf of G, with an encoding. The
search (:func:`search`) is exhaustive over the pairs that the state dumps allow: a pair
needs R's leaf values to be the encoded G leaf values, and a partial mapping needs the
R states, restricted to the mapped leaves, to be the encoded G states (as sets; a
subset where R's cfg restricts exploration or G's dump is only of initial states).
:meth:`Match.refinement` writes a mapping as TLA+: the forward expressions
(R variable -> expression over G's variables) and, where every G variable is recovered,
the inverse (G variable -> expression over R's).

Pure Python: the TLC runs are in :mod:`alias.grade.behavior`.
"""

from __future__ import annotations

import difflib
import itertools
from dataclasses import dataclass, field
from typing import Iterator, Sequence

from alias.tla.values import (Fcn, ModelValue, Rec, Seq, Str, Value, _fcn, as_function, is_atom, parse_value,
                              sort_key, to_tla)

#: Leaf path steps: a record field, a tuple component, and the same inside every value
#: of a function (``mf``/``mi``).
FIELD, INDEX, MAP_FIELD, MAP_INDEX = "f", "i", "mf", "mi"
#: The largest value set a re-encoding bijection is searched over (k! bijections).
MAX_ENCODED_VALUES = 6


@dataclass(frozen=True)
class Leaf:
    """A variable with a path: ``()`` (the whole value) or ``(step, key)``."""

    var: str
    path: tuple = ()

    def value(self, state: dict[str, Value]) -> Value:
        return leaf_value(state[self.var], self.path)

    def __str__(self) -> str:
        if not self.path:
            return self.var
        step, key = self.path
        return {FIELD: f"{self.var}.{key}", INDEX: f"{self.var}[{key}]",
                MAP_FIELD: f"{self.var}[*].{key}", MAP_INDEX: f"{self.var}[*][{key}]"}[step]


def leaf_value(v: Value, path: tuple) -> Value:
    """The value of ``path`` in ``v`` (see :class:`Leaf`); a :class:`Fcn` or :class:`Seq`
    for the per-element paths. Raises KeyError/IndexError/TypeError when ``v`` has no such part."""
    if not path:
        return v
    step, key = path
    if step == FIELD:
        return dict(v.fields)[key]
    if step == INDEX:
        return v.items[key - 1]
    f = as_function(v)
    if f is None:
        raise TypeError("not a function")
    inner = (FIELD if step == MAP_FIELD else INDEX, key)
    pairs = [(k, leaf_value(x, inner)) for k, x in f.items()]
    return Seq(tuple(x for _, x in pairs)) if isinstance(v, Seq) else Fcn(tuple(pairs))


def _same_fields(values: Sequence[Value]) -> list[str] | None:
    if values and all(isinstance(v, Rec) for v in values):
        keys = {tuple(k for k, _ in v.fields) for v in values}
        if len(keys) == 1:
            return list(next(iter(keys)))
    return None


def _same_length(values: Sequence[Value], lo: int = 2, hi: int = 8) -> int | None:
    if values and all(isinstance(v, Seq) for v in values):
        n = {len(v.items) for v in values}
        if len(n) == 1 and lo <= next(iter(n)) <= hi:
            return next(iter(n))
    return None


def var_options(var: str, values: Sequence[Value]) -> list[list[Leaf]]:
    """The ways to cut variable ``var`` into leaves, given the values it takes: the
    whole variable first, then its record fields or tuple components, then the fields or
    components of the values of a function (every value a record with the same fields,
    or a tuple of one length)."""
    opts = [[Leaf(var)]]
    fields = _same_fields(values)
    if fields:
        opts.append([Leaf(var, (FIELD, f)) for f in fields])
    n = _same_length(values)
    if n:
        opts.append([Leaf(var, (INDEX, i)) for i in range(1, n + 1)])
    ranges = [x for v in values for x in (as_function(v) or {}).values()] \
        if values and all(as_function(v) is not None for v in values) else []
    fields = _same_fields(ranges)
    if fields:
        opts.append([Leaf(var, (MAP_FIELD, f)) for f in fields])
    n = _same_length(ranges)
    if n:
        opts.append([Leaf(var, (MAP_INDEX, i)) for i in range(1, n + 1)])
    return opts


# --------------------------------------------------------------------------- encodings


@dataclass(frozen=True)
class Encoding:
    """A bijection of atoms ``pairs`` (G atom, R atom), applied to an atom or to every
    value of a function (``pointwise``); with ``shift``, first a function's domain moved
    by that offset (G's key ``k`` is R's key ``k + shift``: an integer, or a tuple of
    integers moved componentwise, :func:`domain_shift`). The identity when both are empty."""

    pairs: tuple = ()
    pointwise: bool = False
    shift: tuple = ()

    @property
    def identity(self) -> bool:
        return not self.pairs and not self.shift

    def apply(self, v: Value) -> Value:
        if self.shift:
            f = as_function(v)
            if f is None:
                raise TypeError("not a function")
            v = _fcn([(_shift_key(k, self.shift), x) for k, x in f.items()])
        if not self.pairs:
            return v
        m = dict(self.pairs)
        if not self.pointwise:
            return m[v]
        if isinstance(v, Seq):
            return Seq(tuple(m[x] for x in v.items))
        return Fcn(tuple((k, m[x]) for k, x in v.pairs))

    @property
    def changes_kind(self) -> bool:
        """Whether some value is mapped to one of another kind (a number, a boolean, a
        label: string or model value), as ``{0, 1}`` for ``BOOLEAN``."""
        return any(_kind(a) != _kind(b) for a, b in self.pairs)

    def inverse(self) -> "Encoding":
        return Encoding(tuple(sorted(((b, a) for a, b in self.pairs), key=lambda p: sort_key(p[0]))),
                        self.pointwise, tuple(-d for d in self.shift))


def _key_vector(k: Value) -> tuple | None:
    """A function key as a vector of integers: ``(k,)`` for an integer, the components of
    a tuple of two or more integers; None for any other key."""
    if type(k) is int:
        return (k,)
    if isinstance(k, Seq) and len(k.items) > 1 and all(type(x) is int for x in k.items):
        return tuple(k.items)
    return None   # a one-component tuple too: a shift of length 1 is one of integer keys


def _shift_key(k: Value, shift: tuple) -> Value:
    if type(k) is int:
        return k + shift[0]
    return Seq(tuple(x + d for x, d in zip(k.items, shift)))


def integer_keyed(vals: set[Value]) -> bool:
    """Whether every value is a non-empty function whose keys are integers, or integer
    tuples of one length: the only values :func:`domain_shift` can move (so a module
    whose variable of that name takes other values needs no dump to rule a shift out)."""
    keys = set()
    for v in vals:
        f = as_function(v)
        if not f:
            return False
        keys |= {_key_vector(k) for k in f}
    return bool(keys) and None not in keys and len({len(k) for k in keys}) == 1


def domain_shift(r_vals: set[Value], g_vals: set[Value], *, subset: bool) -> tuple | None:
    """The offset that moves the domains of G's function values onto R's (R's board
    ``(1..N) \\X (1..N)`` where G's is ``(0..N-1) \\X (0..N-1)``: ``(1, 1)``), or None: the
    values are not all functions with integer (or integer-tuple) keys of one shape, their
    domains are already alike, or no single offset moves every G domain to an R domain
    (``subset``: R's domains among the moved G domains; else the same sets). An index
    shift is a bijection of the domain, as a re-encoding is one of the values (TLA+-Bench
    784: Game of Life on a 0-based board)."""
    if not integer_keyed(set(r_vals) | set(g_vals)):
        return None
    rd = {frozenset(as_function(v)) for v in r_vals}
    gd = {frozenset(as_function(v)) for v in g_vals}
    if rd == gd:
        return None
    rk = [_key_vector(k) for d in rd for k in d]
    gk = [_key_vector(k) for d in gd for k in d]
    shift = tuple(min(c) - min(d) for c, d in zip(zip(*rk), zip(*gk)))
    if not any(shift):
        return None
    moved = {frozenset(_shift_key(k, shift) for k in d) for d in gd}
    return shift if (rd <= moved if subset else rd == moved) else None


def shifted_encodings(r_vals: set[Value], g_vals: set[Value], *, subset: bool) -> list[Encoding]:
    """The encodings under which G's function values, their domain moved by
    :func:`domain_shift`, give R's: the shift alone, or with a re-encoding of the values
    (:func:`encodings`); empty where no shift fits."""
    shift = domain_shift(r_vals, g_vals, subset=subset)
    if shift is None:
        return []
    moved = {Encoding(shift=shift).apply(v) for v in g_vals}
    return [Encoding(e.pairs, e.pointwise, shift) for e in encodings(r_vals, moved, subset=subset)]


def _kind(v: Value) -> type:
    return Str if type(v) is ModelValue else type(v)


def _atoms(values: set[Value]) -> tuple[set[Value], bool] | None:
    """The atoms of a leaf's values and whether they sit inside functions; None when
    the values are neither all atoms nor all functions of atoms."""
    if all(is_atom(v) for v in values):
        return set(values), False
    fs = [as_function(v) for v in values]
    if all(f is not None for f in fs):
        atoms = {x for f in fs for x in f.values()}
        if all(is_atom(x) for x in atoms):
            return atoms, True
    return None


def _order_preserving_first(g: list[Value], r: list[Value]) -> Iterator[tuple]:
    g = sorted(g, key=sort_key)
    r = sorted(r, key=sort_key)
    yield tuple(zip(g, r))
    for perm in itertools.permutations(r):
        p = tuple(zip(g, perm))
        if list(perm) != r:
            yield p


def encodings(r_vals: set[Value], g_vals: set[Value], *, subset: bool) -> list[Encoding]:
    """The encodings E with E(G leaf values) = R leaf values (``subset``: R's values a
    subset of the encoded G values): the identity if it fits, then the bijections of
    value sets (at most :data:`MAX_ENCODED_VALUES` values), order-preserving first."""
    def fits(enc: Encoding) -> bool:
        try:
            mapped = {enc.apply(v) for v in g_vals}
        except (KeyError, TypeError, AttributeError):
            return False
        return r_vals <= mapped if subset else r_vals == mapped

    out = [Encoding()] if fits(Encoding()) else []
    ra, ga = _atoms(r_vals), _atoms(g_vals)
    if ra is None or ga is None or ra[1] != ga[1] or ra[0] == ga[0]:
        return out
    (r_atoms, pointwise), (g_atoms, _) = ra, ga
    if len(r_atoms) > len(g_atoms) or (not subset and len(r_atoms) != len(g_atoms)):
        return out
    for pairs in _bijections_of(sorted(g_atoms, key=sort_key), sorted(r_atoms, key=sort_key)):
        enc = Encoding(pairs, pointwise)
        if not any(_renumbered(g, r) for g, r in pairs) and fits(enc):
            out.append(enc)
    return out


def _renumbered(g: Value, r: Value) -> bool:
    """A number encoded as another number: not a re-encoding of values but other
    arithmetic (a literal shifted, a wrong factorial mapped onto the right one; hard
    negatives of TLA+-Bench 1279, 1501 and 1503 passed that way), which the grammar leaves out."""
    return type(g) is int and type(r) is int and g != r


def _reindexed(a: Leaf, b: Leaf) -> bool:
    """A tuple component read as another component (R's ``active[3]`` from G's
    ``active[5]``): the elements (processes, nodes) renumbered, which the grammar leaves
    out as it leaves out a number read as another (:func:`_renumbered`). Where the
    components are alike every permutation fits the dumps, one per component variable:
    YoYoAllGraphs's mutants each ran the 1,000 mappings of the cap through TLC (40-50 min
    each cold), every one failing."""
    return bool(a.path and b.path) and a.path[0] == b.path[0] in (INDEX, MAP_INDEX) and a.path[1] != b.path[1]


def _bijections_of(g: list[Value], r: list[Value]) -> Iterator[tuple]:
    """Bijections G atoms -> R atoms (``len(g) >= len(r)``; surplus G atoms only where R's
    dump is a subset): an atom both sides use stays itself and the others are permuted
    among each other (at most :data:`MAX_ENCODED_VALUES` of them); failing that, the
    one order-preserving bijection (:func:`encodings` drops any that maps a number to another):
    TLA+-Bench 1601's eight PlusCal labels as the numbers 0..7."""
    shared = [x for x in g if x in r]
    g_rest = [x for x in g if x not in shared]
    r_rest = [x for x in r if x not in shared]
    found = False
    if len(g_rest) == len(r_rest) and 0 < len(g_rest) <= MAX_ENCODED_VALUES:
        for pairs in _order_preserving_first(g_rest, r_rest):
            found = True
            yield tuple(sorted([(x, x) for x in shared] + list(pairs), key=lambda p: sort_key(p[0])))
    if not found and len(g) == len(r):
        yield tuple(zip(g, r))


# --------------------------------------------------------------------------- the search


@dataclass
class Side:
    """What the state dumps say about one module: its variables (declaration order),
    ``states`` (each ``{variable: TLC's value text}``: the reachable states, or only the
    initial ones when ``reachable`` is false) and ``initial`` (the initial states). Texts
    are parsed (:func:`alias.tla.values.parse_value`) only where a decomposition or an
    encoding needs the values: TLC prints a value one way, so equal texts are equal values."""

    variables: list[str]
    states: list[dict[str, str]]
    initial: list[dict[str, str]]
    reachable: bool = True
    #: the steps of the dump, ``(i, j)`` indices into ``states`` (empty where not known)
    edges: tuple[tuple[int, int], ...] = ()
    #: variable -> value texts beyond ``states`` where those are the initial states only
    #: (R's reachable values; the first states of G's dump cut at its limit): re-encodings
    #: of values the initial states do not show are learnt from them
    values: dict[str, list[str]] | None = None
    #: the states of the first ``prefix_depth + 1`` breadth-first levels (initial states:
    #: level 0), every one of them (TLC's single-worker search explores level by level, so
    #: a dump cut at its state limit holds each level before the one it was cut in); -1
    #: where nothing beyond ``states`` is known
    prefix: list[dict[str, str]] = field(default_factory=list)
    prefix_levels: list[int] = field(default_factory=list)
    prefix_depth: int = -1

    def with_prefix(self, levels: tuple[list[dict[str, str]], list[int], int] | None) -> "Side":
        """This side with the complete levels ``(states, their levels, depth)`` of a dump
        (:func:`complete_levels`) as its prefix (unchanged for None)."""
        if levels is not None:
            self.prefix, self.prefix_levels, self.prefix_depth = levels
        return self


def bfs_levels(n: int, initial: Sequence[int], edges: Sequence[tuple[int, int]]) -> list[int]:
    """Breadth-first level of each of ``n`` states (indices) from the ``initial`` ones over
    ``edges``; -1 for a state no edge path reaches."""
    succ: dict[int, list[int]] = {}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
    level = [-1] * n
    frontier = [i for i in dict.fromkeys(initial)]
    for i in frontier:
        level[i] = 0
    while frontier:
        nxt = []
        for a in frontier:
            for b in succ.get(a, ()):
                if level[b] < 0:
                    level[b] = level[a] + 1
                    nxt.append(b)
        frontier = nxt
    return level


def complete_levels(states: list[dict[str, str]], initial: Sequence[int], edges: Sequence[tuple[int, int]],
                    *, cut: bool) -> tuple[list[dict[str, str]], list[int], int] | None:
    """``(states of the complete levels, their levels, deepest complete level)`` of a dump:
    every level of a whole dump; of one ``cut`` at a state limit, every level before the
    deepest it reached (that one may lack states). None where no level is known complete."""
    level = bfs_levels(len(states), initial, edges)
    deepest = max(level, default=-1)
    depth = deepest - 1 if cut else deepest
    if depth < 0 or (not cut and min(level, default=0) < 0):
        return None
    keep = [i for i, lv in enumerate(level) if 0 <= lv <= depth]
    return [states[i] for i in keep], [level[i] for i in keep], depth


@dataclass(frozen=True)
class Pair:
    r: Leaf
    g: Leaf
    enc: Encoding


@dataclass(frozen=True)
class Derived:
    """An R leaf that R's own states determine from another R leaf ``source`` (a redundant
    variable, such as a per-process phase kept beside the state it follows): its value is
    ``enc`` (a function, not necessarily one-to-one) of ``source``'s."""

    r: Leaf
    source: Leaf
    enc: Encoding


@dataclass
class Match:
    """A refinement mapping: every leaf of R's chosen decomposition paired with a G leaf,
    or ``derived`` from another paired R leaf."""

    pairs: tuple[Pair, ...]
    r_cut: dict[str, list[Leaf]]
    g_cut: dict[str, list[Leaf]]
    g_variables: list[str]
    derived: tuple[Derived, ...] = ()

    @classmethod
    def of(cls, pairs: Sequence[Pair], r_variables: Sequence[str], g_variables: Sequence[str]) -> "Match":
        """A mapping from its pairs: every R variable must appear in a pair (whole, or
        each of its leaves); a G variable in no pair is auxiliary. Raises ValueError."""
        r_cut = {v: [p.r for p in pairs if p.r.var == v] for v in r_variables}
        missing = [v for v, leaves in r_cut.items() if not leaves]
        if missing:
            raise ValueError(f"reference variables without a pair: {missing}")
        g_cut = {v: [p.g for p in pairs if p.g.var == v] or [Leaf(v)] for v in g_variables}
        return cls(tuple(pairs), r_cut, g_cut, list(g_variables))

    @property
    def is_renaming(self) -> bool:
        """A one-to-one variable renaming: whole to whole, no encoding, no G variable left out."""
        return all(not p.r.path and not p.g.path and p.enc.identity for p in self.pairs) \
            and len(self.pairs) == len(self.g_variables) and not self.derived

    @property
    def renaming(self) -> dict[str, str]:
        return {p.r.var: p.g.var for p in self.pairs}

    @property
    def auxiliary(self) -> list[str]:
        """G variables no pair uses (history variables, for instance)."""
        used = {p.g.var for p in self.pairs}
        return [g for g in self.g_variables if g not in used]

    @property
    def invertible(self) -> bool:
        """Every G leaf of the G decomposition is paired: each G variable is an expression over R's."""
        used = {p.g for p in self.pairs}
        return all(leaf in used for g in self.g_variables for leaf in self.g_cut[g])

    def describe(self) -> dict:
        """JSON-ready: ``{R leaf: G leaf [+ encoding]}`` and the auxiliary G variables."""
        out = {}
        for p in self.pairs:
            enc = "" if not p.enc.pairs else " via {" + ", ".join(
                f"{to_tla(a, str)}->{to_tla(b, str)}" for a, b in p.enc.pairs) + "}"
            if p.enc.shift:
                enc += " indices moved by " + (str(p.enc.shift[0]) if len(p.enc.shift) == 1 else
                                                "<<" + ", ".join(map(str, p.enc.shift)) + ">>")
            out[str(p.r)] = str(p.g) + enc
        for d in self.derived:
            out[str(d.r)] = f"derived from {d.source} via {{" + ", ".join(
                f"{to_tla(a, str)}->{to_tla(b, str)}" for a, b in d.enc.pairs) + "}"
        return {"leaves": out, "auxiliary": self.auxiliary}


def _last_name(leaf: Leaf) -> str:
    """The name a leaf ends in: a record field's (``st.rh``, ``st[*].rh``: ``rh``), else the variable's."""
    return str(leaf.path[1]) if leaf.path and leaf.path[0] in (FIELD, MAP_FIELD) else leaf.var


def _similarity(a: str, b: str) -> float:
    return 2.0 if a == b else difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()


def bijections(src: list[str], dst: list[str], compatible=None, limit: int = 5000) -> list[dict[str, str]]:
    """Bijections ``src -> dst`` (lists of equal length), best first: fewer pairs with
    different names, then higher name similarity.  ``compatible(a, b)`` prunes pairs.
    Backtracking; at most ``limit`` maps are generated before sorting."""
    if len(src) != len(dst):
        return []

    def sim(a: str, b: str) -> float:
        return 2.0 if a == b else difflib.SequenceMatcher(None, a.lower(), b.lower()).ratio()

    pos_s = {a: i for i, a in enumerate(src)}
    pos_d = {b: i for i, b in enumerate(dst)}
    # backtracking tries, per name: the identical name, the one at the same declaration
    # position, then by similarity -- so the best maps are among the first generated
    options = {a: sorted((b for b in dst if compatible is None or compatible(a, b)),
                         key=lambda b: (a != b, pos_s[a] != pos_d[b], -sim(a, b))) for a in src}
    order = sorted(src, key=lambda a: (len(options[a]), pos_s[a]))
    found: list[dict[str, str]] = []

    def rec(i: int, used: set, cur: dict) -> None:
        if len(found) >= limit:
            return
        if i == len(order):
            found.append(dict(cur))
            return
        a = order[i]
        for b in options[a]:
            if b not in used:
                cur[a] = b
                used.add(b)
                rec(i + 1, used, cur)
                used.discard(b)
                del cur[a]

    rec(0, set(), {})
    # identical names first, then the declaration order (CIR and most rewrites keep it),
    # then name similarity
    found.sort(key=lambda m: (sum(a != b for a, b in m.items()),
                              sum(pos_s[a] != pos_d[b] for a, b in m.items()),
                              -sum(sim(a, b) for a, b in m.items())))
    return [{a: m[a] for a in src} for m in found]


def injections(src: list[str], dst: list[str], limit: int = 5000) -> list[dict[str, str]]:
    """One-to-one maps ``src -> dst`` (``dst`` may have more names: those left out are
    auxiliary), best first as :func:`bijections` ranks them: fewer pairs with different
    names, then higher name similarity. At most ``limit`` maps."""
    if len(dst) < len(src):
        return []
    if len(dst) == len(src):
        return bijections(src, dst, limit=limit)
    found: list[dict[str, str]] = []
    for sub in itertools.combinations(dst, len(src)):
        found += bijections(src, list(sub), limit=limit)
        if len(found) >= limit:
            break
    found.sort(key=lambda m: (sum(a != b for a, b in m.items()), -sum(_similarity(a, b) for a, b in m.items())))
    return found[:limit]


#: The most distinct values of a variable that are parsed for decompositions and
#: encodings; a variable with more is matched whole and as it is.  As many as a profile
#: may hold (``behavior_refine.PROFILE_MAX_STATES``): one record of all R's variables has
#: a value per state (TLA+-Bench 1579's merged-record control: 5,510).
PARSE_LIMIT = 50_000
#: The most value pairs a derived variable's table may have (it is written into the
#: refinement mapping as a TLA+ function).
DERIVE_LIMIT = 5000


#: The most state rows a search's joint checks compare, and the most partial assignments it
#: extends (:class:`Search`): about a minute of Python; a search of many similar variables
#: (12 of them in one TLA+-Bench output) would otherwise enumerate their assignments for hours.
SEARCH_BUDGET_ROWS = 20_000_000
SEARCH_BUDGET_PAIRS = 100_000


class Search:
    """Exhaustive search of refinement mappings from R (``r``) to G (``g``), pruned by
    the state dumps. ``subset``: R's states need only be a subset of the encoded G states
    (R's cfg has a CONSTRAINT, ACTION_CONSTRAINT, SYMMETRY or VIEW, or a dump is not of
    every reachable state); else the sets must be equal. ``joint_limit``: the most states
    per side for which partial mappings are checked on whole states (larger dumps are
    checked leaf by leaf and on their initial states). ``budget``: the most state rows the
    joint checks of partial assignments may compare (with :data:`SEARCH_BUDGET_PAIRS`
    partial assignments: counts, not seconds, so that the verdict does not depend on the
    machine): past either the search stops and ``exhausted`` is set. Iterate :meth:`matches`."""

    def __init__(self, r: Side, g: Side, *, subset: bool, joint_limit: int = 50_000,
                 budget: int = SEARCH_BUDGET_ROWS):
        # where a dump is cut, the first levels of both still bound the mapping: every
        # state G reaches in d steps maps to one R reaches in at most d (necessary for
        # the forward check), unless the cfg restricts R's exploration (``subset``)
        self.prefix_d = (min(r.prefix_depth, g.prefix_depth)
                         if not subset and not (r.reachable and g.reachable) else -1)
        self._prefix_rows = {k: [x for x, lv in zip(side.prefix, side.prefix_levels) if lv <= self.prefix_d]
                             for k, side in (("r", r), ("g", g))} if self.prefix_d >= 0 else {}
        if r.reachable and not g.reachable:
            # G's dump has only its initial states (over its limits): compare R's initial
            # states with them, not R's reachable ones (which no G leaf would take)
            r = Side(r.variables, r.initial, r.initial, reachable=False,
                     values={v: sorted({s[v] for s in r.states}) for v in r.variables})
        self.r, self.g = r, g
        self.subset = subset or not g.reachable or not r.reachable
        self._parsed: dict[str, Value] = {}
        self.r_opts = {v: self._options(r, v) for v in r.variables}
        self.g_opts = {v: self._options(g, v) for v in g.variables}
        self.g_option_of = {leaf: i for v in g.variables for i, opt in enumerate(self.g_opts[v]) for leaf in opt}
        self._cands: dict[Leaf, list[tuple[Leaf, Encoding]]] = {}
        self._cols: dict = {}
        self.joint = max(len(r.states), len(g.states)) <= joint_limit
        self.tried_pairs = 0
        self.budget, self.rows_compared, self.exhausted = budget, 0, False
        #: (R leaves, most of them distinct G leaves fit) of the decomposition closest to a
        #: matching, where none had one (:meth:`explain`)
        self.shortfall: tuple[int, int] | None = None
        #: mappings whose states fit but some step of G's does not map to one of R's
        #: (:meth:`steps_fit`), and the first such step, mapped
        self.step_misfits, self.step_witness = 0, ""

    def _parse(self, text: str) -> Value:
        v = self._parsed.get(text)
        if v is None:
            v = self._parsed[text] = parse_value(text)
        return v

    def _distinct(self, side: Side, var: str) -> set[str]:
        return {s[var] for s in side.states}

    def _options(self, side: Side, var: str) -> list[list[Leaf]]:
        texts = self._distinct(side, var)
        if len(texts) > PARSE_LIMIT or not any(t[:1] in "[(<" for t in texts):
            return [[Leaf(var)]]
        return var_options(var, [self._parse(t) for t in texts])

    def _column(self, side: str, leaf: Leaf, initial: bool | str, enc: Encoding | None = None,
                parsed: bool = False) -> list | None:
        """The leaf's value in each state (TLC's text where ``parsed`` is false and the
        leaf is a whole variable; else parsed, and encoded by ``enc``); None when a state
        has no such part. ``initial``: the initial states, else every state, or
        ``"prefix"``: the states of the complete levels both dumps hold."""
        key = (side, leaf, initial, enc, parsed)
        if key not in self._cols:
            src = self.r if side == "r" else self.g
            rows = self._prefix_rows[side] if initial == "prefix" else src.initial if initial else src.states
            try:
                if not parsed and not leaf.path:
                    col = [s[leaf.var] for s in rows]
                else:
                    col = [leaf_value(self._parse(s[leaf.var]), leaf.path) for s in rows]
                    col = col if enc is None or enc.identity else [enc.apply(v) for v in col]
                self._cols[key] = col
            except (KeyError, IndexError, TypeError, AttributeError):
                self._cols[key] = None
        return self._cols[key]

    @staticmethod
    def _parsed_pair(a: Leaf, b: Leaf, enc: Encoding) -> bool:
        return bool(a.path or b.path or not enc.identity)

    def _pair_encodings(self, a: Leaf, b: Leaf) -> list[Encoding]:
        """Encodings under which G leaf ``b``'s values give R leaf ``a``'s. One that changes
        the kind of a value (a number for a label, a boolean for a number) only where both
        leaves end in the same name (a variable re-encoded in place, or its field in a
        record): across names a number-for-label swap maps one variable onto another that
        behaves alike (TLA+-Bench 528's hard negatives, a literal of ``y[2]`` shifted, passed
        with R's ``y[2]`` from G's ``pc`` and R's ``pc`` from G's ``y[2]``)."""
        rt, gt = self._distinct(self.r, a.var), self._distinct(self.g, b.var)
        out = []
        if not a.path and not b.path and (rt <= gt if self.subset else rt == gt):
            out.append(Encoding())
        if len(rt) > PARSE_LIMIT or len(gt) > PARSE_LIMIT:
            return out
        ra, gb = self._column("r", a, False, parsed=True), self._column("g", b, False, parsed=True)
        if ra is None or gb is None:
            return out
        same_name = _last_name(a).lower() == _last_name(b).lower()
        found = [e for e in encodings(set(ra), set(gb), subset=self.subset)
                 if not (e.identity and not a.path and not b.path)]
        found += [e for e in self._wider_encodings(a, b) if e not in found]
        # an encoding of some atoms that a wider one extends is dropped: it fails TLC's
        # check on the first state showing another atom, where the wider one does not
        found = [e for e in found if not any(e.pointwise == f.pointwise and set(e.pairs) < set(f.pairs)
                                             for f in found)]
        found = out + [e for e in found if same_name or not e.changes_kind]
        if not found and same_name:
            # a function re-indexed in place (R's board 1..N where G's is 0..N-1): only for
            # leaves of one name that no other encoding fits, as a number-for-label swap
            found = shifted_encodings(set(ra), set(gb), subset=self.subset)
        return found

    def _wider_encodings(self, a: Leaf, b: Leaf) -> list[Encoding]:
        """Re-encodings of the atoms R leaf ``a`` and G leaf ``b`` take beyond the states
        compared (:attr:`Side.values`): TLA+-Bench 867's re-encoded control (ballots as
        ``"v0".."v2"``), whose own dump is over its limit, showed one ballot initially."""
        rv, gv = self.r.values, self.g.values
        if rv is None or gv is None or a.var not in rv or b.var not in gv:
            return []
        sides = []
        for texts, leaf in ((rv[a.var], a), (gv[b.var], b)):
            try:
                sides.append(_atoms({leaf_value(self._parse(t), leaf.path) for t in texts}))
            except (KeyError, IndexError, TypeError, AttributeError, ValueError):
                return []
        (ra, gb) = sides
        if ra is None or gb is None or ra[1] != gb[1]:
            return []
        return [Encoding(e.pairs, ra[1]) for e in encodings(ra[0], gb[0], subset=True) if not e.identity]

    def _compatible(self, a: Leaf) -> list[tuple[Leaf, Encoding]]:
        """G leaves (of any decomposition) whose values fit R leaf ``a``, with encodings,
        best first (identity, the same last name (R's ``rh`` and G's ``state.rh``), whole
        for whole, similar name, same position)."""
        if a in self._cands:
            return self._cands[a]
        out = []
        rpos = self.r.variables.index(a.var)
        for gpos, gv in enumerate(self.g.variables):
            for leaf in [x for opt in self.g_opts[gv] for x in opt if not _reindexed(a, x)]:
                for enc in self._pair_encodings(a, leaf):
                    if not self._fits([Pair(a, leaf, enc)], initial=True) or \
                            not self._prefix_fits([Pair(a, leaf, enc)]):
                        continue
                    score = (not enc.identity, _last_name(a) != _last_name(leaf), bool(a.path) != bool(leaf.path),
                             -_similarity(str(a), str(leaf)), gpos != rpos, str(leaf))
                    out.append((score, leaf, enc))
        out.sort(key=lambda t: t[0])
        self._cands[a] = [(leaf, enc) for _, leaf, enc in out]
        return self._cands[a]

    def _fits(self, pairs: list[Pair], initial: bool) -> bool:
        """R's states (or initial states) restricted to the paired leaves equal (or are
        among) the G states restricted to their G leaves and encoded."""
        flags = [self._parsed_pair(p.r, p.g, p.enc) for p in pairs]
        rc = [self._column("r", p.r, initial, parsed=f) for p, f in zip(pairs, flags)]
        gc = [self._column("g", p.g, initial, p.enc, parsed=f) for p, f in zip(pairs, flags)]
        if any(c is None for c in rc + gc):
            return False
        rs, gs = set(zip(*rc)), set(zip(*gc))
        return rs <= gs if self.subset else rs == gs

    def _prefix_fits(self, pairs: list[Pair]) -> bool:
        """G's states of the complete levels both dumps hold, encoded onto the paired
        leaves, are among R's of the same levels (True where no level is known)."""
        if self.prefix_d < 0:
            return True
        self.rows_compared += len(self._prefix_rows["r"]) + len(self._prefix_rows["g"])
        flags = [self._parsed_pair(p.r, p.g, p.enc) for p in pairs]
        rc = [self._column("r", p.r, "prefix", parsed=f) for p, f in zip(pairs, flags)]
        gc = [self._column("g", p.g, "prefix", p.enc, parsed=f) for p, f in zip(pairs, flags)]
        if any(c is None for c in rc + gc):
            return False
        return set(zip(*gc)) <= set(zip(*rc))

    def _joint_fits(self, pairs: list[Pair]) -> bool:
        if len(pairs) < 2:
            return True
        self.rows_compared += len(self.r.initial) + len(self.g.initial)
        if not self._fits(pairs, initial=True) or not self._prefix_fits(pairs):
            return False
        if not self.joint:
            return True
        self.rows_compared += len(self.r.states) + len(self.g.states)
        return self._fits(pairs, initial=False)

    def r_cuts(self) -> Iterator[dict[str, list[Leaf]]]:
        """Decompositions of R's variables, fewest cut variables first (lazily)."""
        cuttable = [v for v in self.r.variables if len(self.r_opts[v]) > 1]
        for k in range(len(cuttable) + 1):
            for chosen in itertools.combinations(cuttable, k):
                for idx in itertools.product(*[range(1, len(self.r_opts[v])) for v in chosen]):
                    pick = dict(zip(chosen, idx))
                    yield {v: self.r_opts[v][pick.get(v, 0)] for v in self.r.variables}

    def matches(self, limit: int = 1000) -> Iterator[Match]:
        """Every refinement mapping the dumps allow (at most ``limit``), best first:
        fewer cut R variables, then identity encodings and similar names first. A whole R
        variable no G leaf fits but that R's states determine from another R variable is
        derived from it (:class:`Derived`), only when G leaves no variable out: a G variable
        beside a derived one would be checked by nothing (TLA+-Bench 1405's hard negative,
        ``outerSeq`` initially ``<<1, 2, 4>>``, passed with R's ``outerSeq`` derived from
        ``outerRes`` and G's left out as auxiliary)."""
        n = 0
        for r_cut in self.r_cuts():
            r_leaves = [x for v in self.r.variables for x in r_cut[v]]
            unmatched = [a for a in r_leaves if not self._compatible(a)]
            derived = [self.derivation(a, [x for x in r_leaves if x not in unmatched]) for a in unmatched]
            if any(d is None for d in derived):
                continue
            rest = [a for a in r_leaves if a not in unmatched]
            for pairs, g_choice in self._assign(rest):
                g_cut = {v: self.g_opts[v][g_choice.get(v, 0)] for v in self.g.variables}
                m = Match(tuple(pairs), r_cut, g_cut, list(self.g.variables), tuple(derived))
                if derived and m.auxiliary:
                    continue  # G kept a variable of its own where R's is derived: unchecked (1405)
                yield m
                n += 1
                if n >= limit:
                    return

    def steps_fit(self, m: Match) -> bool:
        """Whether the steps of the two dumps, mapped by ``m`` onto R's paired leaves, are the
        same up to stuttering: every step of G's a step of R's or a stutter (necessary for
        the forward check, ``[][Next]_vars`` of R), and every step of R's that moves the
        paired leaves the image of a step of G's (necessary for the reverse check: a behavior
        of R is a behavior of G under the mapping; a mutant that lost a step but kept every
        state fits the states and the first condition under every mapping). Only where both
        dumps hold every reachable state and step (not ``subset``); True where the dumps
        cannot tell. A misfit is counted (``step_misfits``) and the first one kept
        (``step_witness``)."""
        if self.subset or not (self.r.reachable and self.g.reachable and self.r.edges and self.g.edges):
            return True
        flags = [self._parsed_pair(p.r, p.g, p.enc) for p in m.pairs]
        rc = [self._column("r", p.r, False, parsed=f) for p, f in zip(m.pairs, flags)]
        gc = [self._column("g", p.g, False, p.enc, parsed=f) for p, f in zip(m.pairs, flags)]
        if any(c is None for c in rc + gc):
            return True
        rt, gt = list(zip(*rc)), list(zip(*gc))
        r_steps = [(rt[i], rt[j]) for i, j in self.r.edges if rt[i] != rt[j]]
        g_steps = [(gt[i], gt[j]) for i, j in self.g.edges if gt[i] != gt[j]]
        for steps, other, whose in ((g_steps, set(r_steps), "the output's"),
                                    (r_steps, set(g_steps), "the reference's")):
            missing = next((s for s in steps if s not in other), None)  # the dump's order: one witness
            if missing is not None:
                self.step_misfits += 1
                if not self.step_witness:
                    self.step_witness = f"{whose} {self._show_step(m, missing)}"
                return False
        return True

    @staticmethod
    def _show_step(m: Match, step: tuple) -> str:
        leaves = [str(p.r) for p in m.pairs]
        show = lambda t: ", ".join(f"{n} = {to_tla(v, str) if not isinstance(v, str) else v}"  # noqa: E731
                                   for n, v in zip(leaves, t))
        return f"[{show(step[0])}] -> [{show(step[1])}]"

    def explain(self) -> str:
        """Why no mapping fits, from the dumps: the first reference variable no output leaf
        fits (its values and initial values beside those of the output variable nearest by
        name), or that the joint states differ."""
        def show(side: Side, v: str, initial: bool) -> str:
            vals = sorted({s[v] for s in (side.initial if initial else side.states)})
            return "{" + ", ".join(vals[:4]) + (", ..." if len(vals) > 4 else "") + "}"

        for v in self.r.variables:
            if any(self._compatible(x) for opt in self.r_opts[v] for x in opt):
                continue
            near = max(self.g.variables, key=lambda g: _similarity(v, g), default=None)
            there = "" if near is None else (f"; output variable {near}: values {show(self.g, near, False)}, "
                                             f"initially {show(self.g, near, True)}")
            return (f"no output variable, field or encoding takes the values of reference variable {v} "
                    f"(values {show(self.r, v, False)}, initially {show(self.r, v, True)}{there})")
        if self.step_misfits:
            return (f"under each of the {self.step_misfits} mappings whose states fit, some step of the one "
                    f"is no step of the other (first: {self.step_witness[:300]})")
        if self.shortfall is not None:
            need, fit = self.shortfall
            return (f"the reference's {need} variables and fields need distinct output counterparts, but the "
                    f"output's values fit at most {fit} of them at once")
        return ("every reference variable has output counterparts, but under no joint assignment are the "
                "reference's states the output's states, mapped")

    def derivation(self, a: Leaf, sources: list[Leaf]) -> Derived | None:
        """``a`` (a whole R variable) as a function of one of ``sources`` (whole R
        variables) in every R state: pointwise on atoms where both are functions with the
        same domain in each state, else on whole values; None when none determines it."""
        if a.path:
            return None
        for src in sources:
            if src.path or src == a:
                continue
            pairs = {(s[src.var], s[a.var]) for s in self.r.states}
            if len({x for x, _ in pairs}) != len(pairs) or len(pairs) > DERIVE_LIMIT:
                continue
            parsed = [(self._parse(x), self._parse(y)) for x, y in pairs]
            enc = _pointwise_function(parsed) or Encoding(tuple(sorted(parsed, key=lambda p: sort_key(p[0]))))
            return Derived(a, src, enc)
        return None

    def _assign(self, r_leaves: list[Leaf]) -> Iterator[tuple[list[Pair], dict[str, int]]]:
        cands = {a: self._compatible(a) for a in r_leaves}
        if any(not c for c in cands.values()):
            return
        # each R leaf needs a G leaf of its own: where no matching of R leaves to distinct
        # compatible G leaves covers them all, no assignment does (Hall), and the search
        # below would enumerate partial assignments to its budget before it ends empty
        fitting = max_matching({a: list(dict.fromkeys(b for b, _ in c)) for a, c in cands.items()})
        if fitting < len(r_leaves):
            if self.shortfall is None or fitting - len(r_leaves) > self.shortfall[1] - self.shortfall[0]:
                self.shortfall = (len(r_leaves), fitting)
            return
        order = sorted(r_leaves, key=lambda a: (len(cands[a]), self.r.variables.index(a.var)))

        def rec(i: int, used: set, choice: dict, cur: list[Pair]):
            if i == len(order):
                yield sorted(cur, key=lambda p: (self.r.variables.index(p.r.var), str(p.r))), dict(choice)
                return
            a = order[i]
            for b, enc in cands[a]:
                opt = self.g_option_of[b]
                if b in used or choice.get(b.var, opt) != opt:
                    continue
                if self.rows_compared > self.budget or self.tried_pairs >= SEARCH_BUDGET_PAIRS:
                    self.exhausted = True
                    return
                cur.append(Pair(a, b, enc))
                self.tried_pairs += 1
                if self._joint_fits(cur):
                    used.add(b)
                    fresh = b.var not in choice
                    choice[b.var] = opt
                    yield from rec(i + 1, used, choice, cur)
                    if fresh:
                        del choice[b.var]
                    used.discard(b)
                cur.pop()

        yield from rec(0, set(), {}, [])


def max_matching(options: dict) -> int:
    """The size of a maximum matching of the keys of ``options`` (each to one of its listed
    values, no value twice): Kuhn's augmenting paths, O(keys x edges)."""
    owner: dict = {}

    def augment(a, seen: set) -> bool:
        for b in options[a]:
            if b in seen:
                continue
            seen.add(b)
            if b not in owner or augment(owner[b], seen):
                owner[b] = a
                return True
        return False

    return sum(augment(a, set()) for a in options)


# --------------------------------------------------------------------------- TLA+ text


@dataclass
class Refinement:
    """A mapping as TLA+ text. ``forward``: R variable -> expression over G's variables
    (named by ``g_name``); ``inverse``: G variable -> expression over R's variables, or
    None when some G variable is not recovered (auxiliary). ``model_values``: names of
    model values the expressions use, each written as ``AliasMV_<name>`` (a constant the
    cfg binds to the model value). ``shifted``: the G variables (as ``forward`` names
    them) whose domain ``forward`` moves; the forward module has TLC evaluate each one's
    value in full before the mapping reads it key by key (:meth:`_Writer.shifted`)."""

    forward: dict[str, str]
    inverse: dict[str, str] | None
    model_values: list[str] = field(default_factory=list)
    shifted: list[str] = field(default_factory=list)


def _pointwise_function(parsed: list[tuple[Value, Value]]) -> Encoding | None:
    """A function of atoms f with ``y[k] = f(x[k])`` for every pair of functions ``(x, y)``
    of equal domains; None where the pairs are not such functions."""
    f: dict = {}
    for x, y in parsed:
        fx, fy = as_function(x), as_function(y)
        if fx is None or fy is None or fx.keys() != fy.keys():
            return None
        for k, v in fx.items():
            if not is_atom(v) or not is_atom(fy[k]) or f.setdefault(v, fy[k]) != fy[k]:
                return None
    return Encoding(tuple(sorted(f.items(), key=lambda p: sort_key(p[0]))), pointwise=True) if f else None


class _Writer:
    """Writes the expressions of one mapping: fresh bound names (nested function
    constructors may not reuse one) and the model values they name."""

    def __init__(self):
        self.n = 0
        self.model_values: list[str] = []

    def fresh(self, stem: str) -> str:
        self.n += 1
        return f"Alias{stem}{self.n}"

    def mv(self, name: str) -> str:
        if name not in self.model_values:
            self.model_values.append(name)
        return f"AliasMV_{name}"

    def leaf(self, leaf: Leaf, var_expr: str) -> str:
        if not leaf.path:
            return var_expr
        step, key = leaf.path
        if step == FIELD:
            return f"{var_expr}.{key}"
        if step == INDEX:
            return f"{var_expr}[{key}]"
        p = self.fresh("P")
        inner = f".{key}" if step == MAP_FIELD else f"[{key}]"
        return f"[{p} \\in DOMAIN {var_expr} |-> {var_expr}[{p}]{inner}]"

    def encode(self, expr: str, enc: Encoding) -> str:
        if enc.shift:
            expr = f"({self.shifted(expr, enc.shift)})"
        if not enc.pairs:
            return expr
        x = self.fresh("X")
        case = "CASE " + " [] ".join(f"{x} = {to_tla(a, self.mv)} -> {to_tla(b, self.mv)}" for a, b in enc.pairs)
        if not enc.pointwise:
            return f"(LET {x} == {expr} IN {case})"
        q = self.fresh("Q")
        return f"[{q} \\in DOMAIN ({expr}) |-> LET {x} == ({expr})[{q}] IN {case}]"

    def shifted(self, expr: str, shift: tuple) -> str:
        """``expr`` (a function) with its domain moved by ``shift``: R's key ``k`` reads G's
        ``k - shift``, over the moved domain of G's value."""
        def move(name: str, sign: int) -> str:
            parts = [name] if len(shift) == 1 else [f"{name}[{i + 1}]" for i in range(len(shift))]
            moved = [p if d == 0 else f"{p} {'+' if sign * d > 0 else '-'} {abs(d)}" for p, d in zip(parts, shift)]
            return moved[0] if len(shift) == 1 else "<<" + ", ".join(moved) + ">>"

        k, q = self.fresh("K"), self.fresh("Q")
        return f"[{k} \\in {{{move(q, 1)} : {q} \\in DOMAIN ({expr})}} |-> ({expr})[{move(k, -1)}]]"

    def build(self, cut: list[Leaf], parts: dict[Leaf, str]) -> str:
        """The expression of a variable cut into ``cut`` from the expression of each leaf."""
        if len(cut) == 1 and not cut[0].path:
            return parts[cut[0]]
        step = cut[0].path[0]
        if step == FIELD:
            return "[" + ", ".join(f"{x.path[1]} |-> {parts[x]}" for x in cut) + "]"
        if step == INDEX:
            return "<<" + ", ".join(parts[x] for x in cut) + ">>"
        p = self.fresh("P")
        if step == MAP_FIELD:
            body = "[" + ", ".join(f"{x.path[1]} |-> ({parts[x]})[{p}]" for x in cut) + "]"
        else:
            body = "<<" + ", ".join(f"({parts[x]})[{p}]" for x in cut) + ">>"
        return f"[{p} \\in DOMAIN ({parts[cut[0]]}) |-> {body}]"


def to_refinement(m: Match, g_name, r_name=lambda v: v) -> Refinement:
    """The TLA+ expressions of ``m``: ``g_name(v)`` / ``r_name(v)`` give the name under
    which a G / R variable appears in the module that uses the expression."""
    w = _Writer()
    fwd_parts = {p.r: w.encode(w.leaf(p.g, g_name(p.g.var)), p.enc) for p in m.pairs}
    source = {p.r: p.g.var for p in m.pairs}
    shifted = sorted({g_name(p.g.var) for p in m.pairs if p.enc.shift}
                     | {g_name(source[d.source]) for d in m.derived if d.enc.shift and d.source in source})
    for d in m.derived:
        fwd_parts[d.r] = w.encode(fwd_parts[d.source], d.enc)
    forward = {v: w.build(cut, fwd_parts) for v, cut in m.r_cut.items()}
    inverse = None
    if m.invertible:
        inv_parts = {p.g: w.encode(w.leaf(p.r, r_name(p.r.var)), p.enc.inverse()) for p in m.pairs}
        inverse = {v: w.build(m.g_cut[v], inv_parts) for v in m.g_variables}
    return Refinement(forward, inverse, w.model_values, shifted)


__all__ = ["Leaf", "Encoding", "Side", "Pair", "Derived", "Match", "Search", "Refinement", "var_options", "encodings",
           "bijections", "injections", "leaf_value", "to_refinement"]
