"""Hard negatives of the behavior grade (issue 33, point 3): mutants with the reference's
number of distinct states and other behaviors.

Appendix J's mutants (:mod:`alias.grade.mutants`) are kept only when TLC reports a
different number of distinct states, so a grader that compared state counts alone would
reject every one of them.  A hard negative is kept only when

(a) TLC reports the **same** number of distinct reachable states as the reference (same
    cfg, no invariants or properties, deadlock allowed; for references with control-label
    variables, distinct projections onto the data variables), as
    :func:`alias.grade.controls.reachable_states` counts them, and
(b) TLC shows a behavior of one that the other lacks: the forward or reverse check of the
    paper's procedure under the **identity** mapping alone (:func:`behavior_difference`)
    fails with a violation (an invariant, a property -- R's own specification formula
    included, so a dropped fairness condition shows -- or a deadlock where the cfg checks
    deadlock), and the first lines of TLC's counterexample are recorded.  For references
    with control-label variables, whose grade compares the data variables (Appendix I), a
    safety violation counts only when the state graphs projected onto the data variables
    differ too (else only the control flow changed); a liveness violation counts either
    way.
(c) the candidate is not a re-encoding of the reference (:func:`re_encoding`): its
    reachable state graph does not equal the reference's up to values renamed by a
    bijection per variable (no number read as another) or components constant in every state
    (:func:`alias.grade.relabel.relabeling`; such a candidate shows a violation under the
    identity mapping, but the behavior grade's refinement mappings rightly accept it, e.g.
    ``"cancelled"`` written for a ``"prepared"`` no other action reads, or a third process
    that never moves).  A candidate whose graph TLC cannot give, or whose search is cut at
    its cap, is not kept either: only a shown difference in behavior keeps one.

Mutation operators (:data:`OPERATORS`, name -> function of a :class:`Subject` giving
candidate edits), each confined to the system module's definitions that the initial
predicate and next-state relation use:

``guard_swap``        two actions exchange a guard (a top-level conjunct without primes);
``update_swap``       two actions that both assign ``v' = e`` exchange those conjuncts;
``update_copy``       one action's ``v' = e`` replaced by another action's;
``except_index``      an ``EXCEPT ![i]`` index (a parameter or bound name) replaced by
                      another parameter or bound name of the action over the same set;
``assigned_value``    a string literal assigned to ``v`` replaced by another string the
                      module assigns to ``v``;
``arith_flip``        ``+`` <-> ``-`` inside an assignment (a modular counter that runs
                      the other way: same states, other steps);
``fairness_drop``     a ``WF``/``SF`` condition of the specification replaced by ``TRUE``;
``fairness_sf_to_wf`` strong fairness weakened to weak fairness;
``fairness_sub_action`` fairness on the whole action replaced by fairness on one of its
                      disjuncts;
``guard_deleted``, ``disjunct_deleted``, ``comparison_flipped``, ``literal_shifted``
                      Appendix J's mutation kinds (action_guard, next_disjunct,
                      comparison, numeric_literal), kept here only with the same count.

The three fairness operators run only where the cfg checks a PROPERTY (the issue asks for
a weakened fairness that changes a property; TLC's counterexample may still name only R's
specification formula, whose fairness conjunct the mutant no longer implies).  Operators
take turns in :data:`TURNS` order (the most productive first).
Edits are kept to single-line spans; an edit inside an action conjunct that reads or sets
PlusCal's ``pc`` is not made (the grade compares such references on their data variables,
Appendix I, and a changed control flow mostly changes the state count); a mutant that
tree-sitter no longer reads (the original read cleanly) is dropped, as are duplicates.
"""

from __future__ import annotations

import dataclasses
import random
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

import tree_sitter as ts

from alias.corpus.testset import Reference
from alias.errors import AliasError
from alias.grade import stategraph
from alias.grade.behavior import BehaviorGrader, OutputSide
from alias.grade.cache import ToolRunner
from alias.grade.relabel import IDENTICAL, DIFFERENT, relabeling
from alias.grade.stategraph import StateGraph
from alias.grade.mutants import (_DEF_TYPES, Mutant, _conjuncts, _flatten, _infix_symbol, _item_content, _Module, _roots,
                                 _strip_parens, _walk, generate_mutants)
from alias.tla.cfg import Cfg, parse_cfg
from alias.tla.syntax import parse
from alias.tla.tlc_output import stable_log

#: An edit: (start byte, end byte, replacement bytes) of the original module.
Edit = tuple[int, int, bytes]
#: What an operator yields: (description, edits).
Cand = tuple[str, list[Edit]]

#: Candidate state pairs tried at most by point (c) of the keep-check (:func:`re_encoding`;
#: a search without backtracking tries one per state); a search cut there keeps nothing.
RELABEL_CAP = 1_000_000
#: TLC kinds that show a behavior of the mutant the reference lacks (or the reverse).
VIOLATIONS = frozenset({"invariant_violated", "property_violated", "deadlock"})
#: Lines of TLC's counterexample kept in a control's detail.
TRACE_LINES = 12
#: TLC's report of a violated temporal property (v1.8: ``Temporal properties A and B were
#: violated.``; 2.15: ``Temporal properties were violated.``).
_LIVENESS = re.compile(r"Error: Temporal propert(y|ies)\b.*\bviolated")


@dataclass(frozen=True)
class HardNegative:
    """One candidate: ``operator`` (a key of :data:`OPERATORS`), ``mutant_id``
    (``<operator>@L<line>C<col>``, 1-based, of the first edit), ``description`` and the
    whole mutated module ``text``."""

    operator: str
    mutant_id: str
    description: str
    text: str


@dataclass
class Action:
    """An action definition the next-state relation uses: its ``name``, its top-level
    conjuncts (through ``\\E`` and ``LET``), the names bound where those conjuncts stand
    (``scope``: parameters, those ``\\E`` and ``LET`` names) and, for its parameters and
    quantified names, the text of the set each ranges over where the module says
    (``domains``: a quantifier bound, or the bound of the argument at every call)."""

    name: str
    conjuncts: list[ts.Node]
    scope: frozenset[str]
    domains: dict[str, str]


@dataclass
class Subject:
    """What the operators read: the parsed system module ``m``, the cfg, the action
    definitions of the next-state relation and the specification's definitions."""

    m: _Module
    cfg: Cfg | None
    actions: list[Action]
    spec_defs: list[str]
    text: str
    cfg_text: str | None
    control_spans: list[tuple[int, int]] = dataclasses.field(default_factory=list)
    _classic: list[Mutant] | None = None

    def classic(self) -> list[Mutant]:
        """Appendix J's mutants of the module (:func:`alias.grade.mutants.generate_mutants`)."""
        if self._classic is None:
            self._classic = generate_mutants(self.text, cfg=self.cfg_text)
        return self._classic


OPERATORS: dict[str, Callable[[Subject], Iterable[Cand]]] = {}


def operator(name: str):
    """Register a mutation operator under ``name``."""
    def deco(fn):
        OPERATORS[name] = fn
        return fn
    return deco


# --------------------------------------------------------------------------- subject
def _params(m: _Module, d: ts.Node) -> list[str]:
    """The parameters of definition ``d`` (its first named child is its name)."""
    params = []
    for c in d.named_children[1:]:
        if c.type == "def_eq":
            break
        if c.type == "identifier":
            params.append(m.t(c))
    return params


def _core(m: _Module, body: ts.Node) -> tuple[ts.Node, set[str]]:
    """The conjunction of an action body, through ``\\E`` quantifiers and ``LET``, and the
    names those bind."""
    node, bound = _strip_parens(body), set()
    while node.type in ("bounded_quantification", "let_in"):
        q = node.child_by_field_name("quantifier")
        if node.type == "bounded_quantification" and (q is None or q.type != "exists"):
            break
        e = node.child_by_field_name("expression")
        if e is None:
            break
        for c in node.named_children:
            if c.type == "quantifier_bound":
                bound |= set(_bounds(m, c))
            elif c.type in _DEF_TYPES and m.def_name(c):
                bound.add(m.def_name(c))
        node = _strip_parens(e)
    return node, bound


def _actions(m: _Module, next_node: ts.Node | None, excluded: set[str]) -> list[Action]:
    if next_node is None:
        return []
    used = m.reachable([next_node]) & m.actions
    out = []
    for name, d in m.defs.items():
        body = m.body(name)
        if name not in used or name in excluded or body is None or d.type != "operator_definition":
            continue
        core, bound = _core(m, body)
        conj = _conjuncts(core)
        if len(conj) < 2:
            continue
        params = _params(m, d)
        domains = _param_domains(m, name, params) | _quantified(m, d)
        out.append(Action(name, conj, frozenset(params) | bound, domains))
    return out


def _bounds(m: _Module, qb: ts.Node) -> dict[str, str]:
    """``{name: set text}`` of one quantifier bound ``x, y \\in S``."""
    kids = qb.named_children
    if len(kids) < 3 or kids[-2].type != "set_in":
        return {}
    return {m.t(x): m.t(kids[-1]) for x in kids[:-2] if x.type == "identifier"}


def _quantified(m: _Module, node: ts.Node) -> dict[str, str]:
    out: dict[str, str] = {}
    for n in _walk(node):
        if n.type == "quantifier_bound":
            out = _bounds(m, n) | out
    return out


def _binding(m: _Module, ref: ts.Node) -> str | None:
    """The set that the quantifier binding identifier ``ref`` ranges over, if one does."""
    n = ref.parent
    while n is not None:
        for qb in (c for c in n.named_children if c.type == "quantifier_bound"):
            dom = _bounds(m, qb).get(m.t(ref))
            if dom is not None:
                return dom
        n = n.parent
    return None


def _param_domains(m: _Module, name: str, params: list[str]) -> dict[str, str]:
    """Each parameter of action ``name`` whose argument, at every call, is a name bound
    over one and the same set: that set's text."""
    seen: dict[str, set] = {p: set() for p in params}
    for unit in m.units:
        for n in _walk(unit):
            if n.type != "bound_op" or not n.named_children or m.t(n.named_children[0]) != name:
                continue
            for p, arg in zip(params, n.named_children[1:]):
                seen[p].add(_binding(m, arg) if arg.type == "identifier_ref" else None)
    return {p: d.pop() for p, d in seen.items() if len(d) == 1 and None not in d}


def subject(text: str, cfg_text: str | None) -> Subject | None:
    """The :class:`Subject` of a system module, or None when it has no module."""
    m = _Module(text)
    if m.module is None:
        return None
    cfg = parse_cfg(cfg_text) if cfg_text else None
    excluded = set(cfg.names().get("substitutions", [])) if cfg is not None else set()
    init_node, next_node = _roots(m, "Init", "Next", "Spec", cfg)
    spec = cfg.specification if cfg is not None and cfg.specification in m.defs else None
    spec = spec or next((n for n, d in m.defs.items() if m.has_type(d, ("step_expr_or_stutter",))), None)
    spec_defs = sorted(({spec} | m.reachable([m.defs[spec]])) - m.actions) if spec else []
    actions = _actions(m, next_node, excluded)
    # PlusCal's pc (Appendix I): the grade compares the data variables; a mutant of a
    # conjunct that reads or sets pc changes control flow, mostly the state count too
    control = {v for v in stategraph.control_variables(text) if v == "pc" and v in m.variables}
    spans = [(c.start_byte, c.end_byte) for a in actions for c in a.conjuncts if _names(m, c) & control]
    return Subject(m, cfg, actions, spec_defs, text, cfg_text, spans)


# --------------------------------------------------------------------------- helpers
def _one_line(m: _Module, n: ts.Node) -> bool:
    return "\n" not in m.t(n)


def _names(m: _Module, n: ts.Node) -> set[str]:
    return {m.t(x) for x in _walk(n) if x.type == "identifier_ref"}


def _free(m: _Module, n: ts.Node) -> set[str]:
    """Names ``n`` uses that it does not bind itself."""
    return _names(m, n) - {m.t(x) for x in _walk(n) if x.type == "identifier"}


def _fits(m: _Module, n: ts.Node, src: Action, dst: Action) -> bool:
    """``n`` (a part of action ``src``) uses no name bound in ``src`` that ``dst`` lacks."""
    return (_free(m, n) & src.scope) <= dst.scope


def _assignment(m: _Module, n: ts.Node) -> str | None:
    """``v`` when ``n`` is ``v' = e``."""
    sym = _infix_symbol(n)
    lhs = n.child_by_field_name("lhs")
    if sym is None or sym.type != "eq" or lhs is None or lhs.type != "bound_postfix_op":
        return None
    ls, var = lhs.child_by_field_name("symbol"), lhs.named_children[0] if lhs.named_children else None
    if ls is None or ls.type != "prime" or var is None or var.type != "identifier_ref":
        return None
    return m.t(var) if m.t(var) in m.variables else None


def _swap(m: _Module, a: ts.Node, b: ts.Node) -> list[Edit]:
    return [(a.start_byte, a.end_byte, m.t(b).encode()), (b.start_byte, b.end_byte, m.t(a).encode())]


def _short(text: str, width: int = 50) -> str:
    t = " ".join(text.split())
    return t if len(t) <= width else t[: width - 3] + "..."


def _pairs(s: Subject) -> Iterator[tuple[Action, Action]]:
    for i, a in enumerate(s.actions):
        for b in s.actions[i + 1:]:
            yield a, b


# --------------------------------------------------------------------------- operators
@operator("guard_swap")
def guard_swap(s: Subject) -> Iterator[Cand]:
    m = s.m
    for a, b in _pairs(s):
        for ga in (g for g in a.conjuncts if not m.primed(g) and _one_line(m, g) and _fits(m, g, a, b)):
            for gb in (g for g in b.conjuncts if not m.primed(g) and _one_line(m, g) and _fits(m, g, b, a)):
                if m.t(ga) != m.t(gb):
                    yield (f"guards of {a.name} and {b.name} swapped: {_short(m.t(ga))} / {_short(m.t(gb))}",
                           _swap(m, ga, gb))


def _updates(s: Subject, a: Action) -> dict[str, ts.Node]:
    m = s.m
    return {v: c for c in a.conjuncts if _one_line(m, c) and (v := _assignment(m, c))}


@operator("update_swap")
def update_swap(s: Subject) -> Iterator[Cand]:
    m = s.m
    for a, b in _pairs(s):
        ua, ub = _updates(s, a), _updates(s, b)
        for v in [v for v in ua if v in ub]:  # source order: a set's order varies with the hash seed
            x, y = ua[v], ub[v]
            if m.t(x) != m.t(y) and _fits(m, x, a, b) and _fits(m, y, b, a):
                yield f"updates of {v} in {a.name} and {b.name} swapped", _swap(m, x, y)


@operator("update_copy")
def update_copy(s: Subject) -> Iterator[Cand]:
    m = s.m
    for a in s.actions:
        for b in s.actions:
            if a is b:
                continue
            ua, ub = _updates(s, a), _updates(s, b)
            for v in [v for v in ua if v in ub]:  # source order: a set's order varies with the hash seed
                x, y = ua[v], ub[v]
                if m.t(x) != m.t(y) and _fits(m, y, b, a):
                    yield (f"update of {v} in {a.name} replaced by {b.name}'s: {_short(m.t(y))}",
                           [(x.start_byte, x.end_byte, m.t(y).encode())])


@operator("except_index")
def except_index(s: Subject) -> Iterator[Cand]:
    m = s.m
    for a in s.actions:
        for c in a.conjuncts:
            if not m.primed(c):
                continue
            for n in _walk(c):
                if n.type != "except_update_fn_appl":
                    continue
                for idx in n.named_children:
                    dom = a.domains.get(m.t(idx)) if idx.type == "identifier_ref" else None
                    for other in (x for x, d in a.domains.items() if d == dom):
                        if other != m.t(idx):
                            yield (f"EXCEPT index {m.t(idx)} -> {other} in {a.name}",
                                   [(idx.start_byte, idx.end_byte, other.encode())])


def _assigned_strings(m: _Module, s: Subject) -> dict[str, list[ts.Node]]:
    """String literals inside the right side of each variable's assignments."""
    out: dict[str, list[ts.Node]] = {}
    for a in s.actions:
        for c in a.conjuncts:
            v = _assignment(m, c)
            rhs = c.child_by_field_name("rhs") if v else None
            if rhs is not None:
                out.setdefault(v, []).extend(n for n in _walk(rhs) if n.type == "string")
    return out


@operator("assigned_value")
def assigned_value(s: Subject) -> Iterator[Cand]:
    m = s.m
    for v, nodes in _assigned_strings(m, s).items():
        values = list(dict.fromkeys(m.t(n) for n in nodes))
        for n in nodes:
            for other in values:
                if other != m.t(n):
                    yield (f"value assigned to {v}: {m.t(n)} -> {other}",
                           [(n.start_byte, n.end_byte, other.encode())])


@operator("arith_flip")
def arith_flip(s: Subject) -> Iterator[Cand]:
    m = s.m
    flip = {"plus": b"-", "minus": b"+"}
    for a in s.actions:
        for c in a.conjuncts:
            if _assignment(m, c) is None:
                continue
            for n in _walk(c.child_by_field_name("rhs")):
                sym = _infix_symbol(n)
                if sym is not None and sym.type in flip:
                    yield (f"{m.t(sym)} -> {flip[sym.type].decode()} in {a.name}: {_short(m.t(c))}",
                           [(sym.start_byte, sym.end_byte, flip[sym.type])])


def _fairness(s: Subject) -> Iterator[ts.Node]:
    if s.cfg is None or not s.cfg.properties:
        return
    m = s.m
    for name in s.spec_defs:
        yield from (n for n in _walk(m.defs[name]) if n.type == "fairness")


@operator("fairness_drop")
def fairness_drop(s: Subject) -> Iterator[Cand]:
    for n in _fairness(s):
        yield f"fairness dropped: {_short(s.m.t(n))}", [(n.start_byte, n.end_byte, b"TRUE")]


@operator("fairness_sf_to_wf")
def fairness_sf_to_wf(s: Subject) -> Iterator[Cand]:
    for n in _fairness(s):
        kw = n.children[0]
        if s.m.t(kw) == "SF_":
            yield f"SF weakened to WF: {_short(s.m.t(n))}", [(kw.start_byte, kw.end_byte, b"WF_")]


def _disjuncts(m: _Module, node: ts.Node) -> list[ts.Node]:
    """The disjuncts of an action expression (through a zero-argument definition)."""
    node = _strip_parens(node)
    if node.type == "identifier_ref" and m.t(node) in m.defs and m.body(m.t(node)) is not None:
        if _params(m, m.defs[m.t(node)]):
            return []
        node = _strip_parens(m.body(m.t(node)))
    if node.type == "disj_list":
        return [c for it in node.named_children if it.type == "disj_item" and (c := _item_content(it)) is not None]
    sym = _infix_symbol(node)
    if sym is not None and sym.type == "lor":
        return _flatten(node, "lor")
    return []


@operator("fairness_sub_action")
def fairness_sub_action(s: Subject) -> Iterator[Cand]:
    m = s.m
    for n in _fairness(s):
        act = n.named_children[-1]
        for d in _disjuncts(m, act):
            if _one_line(m, d):
                yield (f"fairness on a sub-action: {_short(m.t(act))} -> {_short(m.t(d))}",
                       [(act.start_byte, act.end_byte, f"({m.t(d)})".encode())])


def _classic(kind: str):
    def op(s: Subject) -> Iterator[Cand]:
        for mu in s.classic():
            if mu.kind == kind:
                a, b = (len(s.text[:i].encode()) for i in mu.span)
                yield mu.description, [(a, b, mu.replacement.encode())]
    op.__doc__ = f"Appendix J's {kind} mutants (:mod:`alias.grade.mutants`)."
    return op


for _name, _kind in (("guard_deleted", "action_guard"), ("disjunct_deleted", "next_disjunct"),
                     ("comparison_flipped", "comparison"), ("literal_shifted", "numeric_literal")):
    OPERATORS[_name] = _classic(_kind)


# --------------------------------------------------------------------------- generation
def _apply(src: bytes, edits: list[Edit]) -> bytes | None:
    """``src`` with the edits made, or None when two overlap."""
    out, pos = [], 0
    for a, b, repl in sorted(edits):
        if a < pos:
            return None
        out += [src[pos:a], repl]
        pos = b
    return b"".join(out + [src[pos:]])


#: The order operators take turns in (the most productive first: on a sample of 30 real
#: references, weakened fairness kept 9 of 15 tried, a deleted guard 2 of 12, a shifted
#: literal 8 of 50, a deleted disjunct or a flipped comparison none of 44).
TURNS = ("fairness_drop", "fairness_sub_action", "fairness_sf_to_wf", "guard_deleted", "guard_swap", "update_copy",
         "assigned_value", "literal_shifted", "except_index", "update_swap", "arith_flip", "comparison_flipped",
         "disjunct_deleted")


def _turns(cands: dict[str, list[Cand]], seed: str | None) -> Iterator[tuple[str, Cand]]:
    """Every candidate once. Without ``seed``: operator by operator, each in source order;
    with it: operators take turns in :data:`TURNS` order (an operator not listed last),
    each one's candidates in an order drawn with ``seed``, so the first few tried span
    the operators."""
    if seed is None:
        yield from ((n, c) for n, cs in cands.items() for c in cs)
        return
    rng = random.Random(seed)
    rank = {n: i for i, n in enumerate(TURNS)}
    queues = []
    for name in sorted(cands, key=lambda n: (rank.get(n, len(rank)), n)):
        q = list(cands[name])
        rng.shuffle(q)
        queues.append((name, q))
    while any(q for _, q in queues):
        for name, q in queues:
            if q:
                yield name, q.pop(0)


def check_operators(names: Iterable[str] | None) -> list[str]:
    """The operator names (None or empty: all of :data:`OPERATORS`); :class:`AliasError`
    naming the known ones for an unknown name."""
    names = list(names or OPERATORS)
    unknown = [n for n in names if n not in OPERATORS]
    if unknown:
        raise AliasError(f"controls.hard_negatives.operators: no operator {', '.join(map(repr, unknown))} "
                         f"(known: {', '.join(OPERATORS)})")
    return names


def generate_hard_negatives(text: str, cfg_text: str | None, *, operators: Iterable[str] | None = None,
                            seed: str | None = None) -> Iterator[HardNegative]:
    """Candidate hard negatives of a system module (lazily; see :func:`_turns` for the
    order): no duplicate text, none equal to ``text``, none that tree-sitter no longer
    reads when ``text`` reads cleanly.  No TLC runs: the caller keeps those that pass
    :func:`behavior_difference`. Raises :class:`AliasError` for an unknown operator name."""
    names = check_operators(operators)
    s = subject(text, cfg_text)
    if s is None:
        return
    seen, ids = {text}, set()
    for name, (desc, edits) in _turns({n: list(OPERATORS[n](s)) for n in names}, seed):
        if any(e[0] < b and a < e[1] for e in edits for a, b in s.control_spans):
            continue
        new = _apply(s.m.src, edits)
        new_text = new.decode("utf-8") if new is not None else text
        if new_text in seen or (not s.m.has_error and parse(new_text).root_node.has_error):
            continue
        seen.add(new_text)
        line, col = s.m.line_col(min(e[0] for e in edits))
        mid = base = f"{name}@L{line}C{col}"
        k = 2
        while mid in ids:
            mid, k = f"{base}#{k}", k + 1
        ids.add(mid)
        yield HardNegative(name, mid, desc, new_text)


# --------------------------------------------------------------------------- keep-check
class _Recorder(ToolRunner):
    """A :class:`ToolRunner` that keeps every TLC result (the counterexample is in TLC's
    output); its children share the list."""

    def __init__(self, base: ToolRunner, results: list | None = None):
        super().__init__(base.config, base.cache_dir)
        self.results = [] if results is None else results

    def tlc(self, *args, **kwargs):
        r = super().tlc(*args, **kwargs)
        self.results.append(r)
        return r

    def child(self) -> "_Recorder":
        return _Recorder(self, self.results)


def counterexample(output: str, lines: int = TRACE_LINES) -> list[str]:
    """The first ``lines`` non-empty lines of TLC's output from its first ``Error:`` line
    (the violation and the start of the behavior TLC prints), dates and wall times replaced
    by placeholders (:func:`~alias.tla.tlc_output.stable_log`: a rerun writes the same)."""
    out = stable_log(output or "").splitlines()
    start = next((i for i, ln in enumerate(out) if ln.startswith("Error:")), None)
    if start is None:
        return []
    return [ln.rstrip() for ln in out[start:] if ln.strip()][:lines]


@dataclass
class Difference:
    """What the keep-check found: ``shown`` (TLC shows a behavior of one that the other
    lacks), ``check`` (e.g. ``forward_invariant_violated``, ``equivalent``), and the first
    lines of TLC's counterexample (``trace``; for a data-graph difference the witness)."""

    shown: bool
    check: str
    trace: list[str] = dataclasses.field(default_factory=list)
    relabel: str = ""


def behavior_difference(ref: Reference, runner: ToolRunner, text: str, data=None) -> Difference:
    """Point (b) of the keep-check for the mutated system module ``text``: the forward and
    reverse TLC checks of the paper's procedure under the identity mapping alone (every
    variable and constant to itself: its first and, with ``max_maps=1``, only map), one of
    which must fail with a violation (:data:`VIOLATIONS`). ``data``: for a reference with
    control-label variables, ``(data variables, reference graph, mutant graph)`` (TLC's
    reachable state graphs): Appendix I grades such references on the data variables, so
    a safety violation counts only when the graphs projected onto them differ (else only
    the control flow changed); a liveness violation (TLC: ``Temporal properties ... violated``)
    counts either way, since state graphs do not show fairness."""
    rec = _Recorder(runner)
    v = BehaviorGrader(ref, rec, mappings="renaming", max_maps=1).grade(
        OutputSide({ref.system_module: text}, ref.system_module))
    if v.forward is None:
        return Difference(False, v.reason or "not_checked")
    failed = ("forward", v.forward) if v.forward != "success" else ("reverse", v.reverse)
    if failed[1] == "success":
        return Difference(False, f"equivalent ({v.method})")
    check = f"{failed[0]}_{failed[1]}"
    if failed[1] not in VIOLATIONS:
        return Difference(False, check)
    run = next((r for r in reversed(rec.results) if r.kind == failed[1]), None)
    trace = counterexample(run.output if run is not None else "")
    if data is None:
        return Difference(True, check, trace)
    variables, rg, mg = data
    if rg is None or mg is None:
        return Difference(False, f"{check}; data graph not available", trace)
    same, witness = stategraph.equivalent_observable(stategraph.project(rg, variables),
                                                     stategraph.project(mg, variables))
    if not same:
        return Difference(True, check, trace + [f"data graphs differ: {str(witness)[:300]}"])
    if any(_LIVENESS.match(ln) for ln in trace):
        return Difference(True, f"{check}; liveness (data graphs equal)", trace)
    return Difference(False, f"{check}; data graphs equal (control flow only)", trace)


def re_encoding(d: Difference, ref_graph, graph, cap: int = RELABEL_CAP) -> Difference:
    """Point (c) of the keep-check: ``d`` (from :func:`behavior_difference`) with ``shown``
    kept only when the candidate's reachable state graph ``graph`` is not the reference's
    ``ref_graph`` re-encoded (:func:`alias.grade.relabel.relabeling`, at most ``cap``
    state pairs tried); a graph that is not a
    :class:`~alias.grade.stategraph.StateGraph` (TLC gave none: a
    :class:`~alias.grade.stategraph.DumpFailure` or None) keeps nothing.  ``relabel`` says
    what the comparison found, in one line."""
    if not d.shown:
        return d
    for name, g in (("reference", ref_graph), ("candidate", graph)):
        if not isinstance(g, StateGraph):
            why = f"TLC gave no state graph of the {name}"
            return dataclasses.replace(d, shown=False, relabel=why)
    r = relabeling(ref_graph, graph, cap)
    return dataclasses.replace(d, shown=r.kind in (IDENTICAL, DIFFERENT), relabel=f"{r.kind}: {r.reason}")
