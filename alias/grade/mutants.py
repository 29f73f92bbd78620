"""Negative-control mutants of a TLA+ module (paper, Appendix J).

A mutant differs from its module in exactly one contiguous span and is one of six kinds:

``numeric_literal``  a natural-number literal changed by +1 or -1 (two mutants; no -1
                     for ``0``), id ``num+1@L<line>C<col>`` / ``num-1@...``.
``comparison``       a comparison operator flipped: ``<`` <-> ``>=``, ``>`` <-> ``<=``
                     (``=<``, ``\\leq``; ``\\geq``), ``=`` <-> ``#`` (``/=``), ``\\in``
                     <-> ``\\notin``; id ``cmp@...``.  Assignments are not comparisons
                     and are left alone: ``x' = e`` / ``x' \\in S`` anywhere, and
                     ``v = e`` / ``v \\in S`` for a declared variable ``v`` inside the
                     initial predicate (TLC could no longer enumerate such states).
``init_string``      a string literal inside the initial predicate replaced by the next
                     other string literal of the module (in order of first appearance,
                     cyclically) or by ``"alias_mutant"`` when the module has no other
                     string; id ``str@...``.
``action_conjunct``  a conjunct of an action that has primed variables (a prime,
                     ``UNCHANGED`` or a call of another action) deleted; id ``conj@...``.
``action_guard``     a conjunct of an action without primed variables deleted; id
                     ``guard@...``.
``next_disjunct``    a disjunct of the next-state relation deleted; id ``disj@...``.

Conjunctions and disjunctions are bulleted lists (``conj_list``/``disj_list``) and
infix chains (``/\\`` / ``\\/``, flattened through the same operator only, never through
parentheses).  An item is deleted together with its bullet or its infix operator, so a
two-item junction keeps its other item; a one-item list is never deleted.

Where: only inside the first module of the text, never in comments (so never in an
embedded PlusCal algorithm), ASSUME, THEOREM/proofs, USE/HIDE or nested modules.  With
``scope='behavior'`` (default), numeric and comparison mutations are only made in the
definitions that the initial predicate and the next-state relation use (transitively):
a mutated invariant or property changes what TLC reports without changing behavior, so
it would make a false negative control.  ``scope='all'`` mutates every definition.
Action conjuncts and guards come from the operator definitions that are actions (they
contain primes, ``UNCHANGED`` or a call of another action, and no temporal operator),
walking their boolean skeleton (conjunctions, disjunctions, parentheses, quantifier
bodies, LET bodies, IF/CASE branches -- not inside operands such as ``IF`` conditions or
set filters).  Next-state disjuncts are found from the next-state expression through
parentheses, ``\\E`` bodies, LET bodies, disjunctions, and the bodies of the operators
called there (so the disjuncts of ``Proc(self)`` in ``Next == \\E self \\in S: Proc(self)``
count).  Definitions that a cfg substitutes for a constant (``C <- Def``) are never
mutated: they are part of the model, not of the system.

The initial predicate and the next-state relation: a cfg's ``INIT``/``NEXT``, else the
cfg's ``SPECIFICATION``, else the definitions named ``init``/``next``, else the
specification ``spec`` (or the first definition of the shape ``I /\\ [][N]_v``; also
when the cfg's specification is defined in another module, a wrapper), decomposed into
``I`` and ``N``.

Every mutant is re-parsed with tree-sitter and dropped when the original parses cleanly
but the mutant does not; mutants whose text equals an earlier mutant's are dropped.
The module is pure: no SANY or TLC runs (the caller keeps the mutants whose TLC
distinct-state count differs from the reference's).
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Iterable

import tree_sitter as ts

from alias.tla.cfg import parse_cfg
from alias.tla.syntax import language, parse

__all__ = ["KINDS", "Mutant", "generate_mutants", "rename_module"]

#: Mutation kinds, in output order.
KINDS = ("numeric_literal", "comparison", "init_string", "action_conjunct",
         "action_guard", "next_disjunct")
_PREFIX = {"numeric_literal": "num", "comparison": "cmp", "init_string": "str",
           "action_conjunct": "conj", "action_guard": "guard", "next_disjunct": "disj"}

#: Node types whose subtrees are never mutated.
_SKIP = frozenset({"comment", "block_comment", "assumption", "theorem", "use_or_hide",
                   "module", "recursive_declaration", "extramodular_text", "pcal_algorithm"})
#: Node types that make a definition temporal (not an action).
_TEMPORAL = frozenset({"always", "eventually", "leads_to", "fairness", "step_expr_or_stutter",
                       "step_expr_no_stutter", "temporal_forall", "temporal_exists"})
_DEF_TYPES = ("operator_definition", "function_definition", "module_definition")
#: Comparison flips: node type of the operator symbol -> replacement text.
_FLIP = {"lt": ">=", "geq": "<", "gt": "<=", "leq": ">", "eq": "#", "neq": "=",
         "in": "\\notin", "notin": "\\in"}
FRESH_STRING = '"alias_mutant"'


@dataclass(frozen=True)
class Mutant:
    """One mutant.

    ``mutant_id``: short stable id, ``<prefix>@L<line>C<col>`` (1-based line and
    character column of the mutated node in the original, e.g. ``num+1@L12C5``).
    ``kind``: one of :data:`KINDS`.  ``line``: 1-based line in the original.
    ``description``: what changed, in words.  ``text``: the whole mutated module.
    ``span``: ``(start, end)`` character offsets of the replaced text in the original;
    ``replacement``: what stands there in ``text``.
    """

    mutant_id: str
    kind: str
    line: int
    description: str
    text: str
    span: tuple[int, int] = (0, 0)
    replacement: str = ""


# --------------------------------------------------------------------------- helpers


def _walk(node: ts.Node, skip: frozenset[str] = _SKIP):
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in skip:
            continue
        yield n
        stack.extend(reversed(n.children))


def _strip_parens(node: ts.Node) -> ts.Node:
    while node.type == "parentheses":
        inner = [c for c in node.named_children if c.type not in ("comment", "block_comment")]
        if len(inner) != 1:
            break
        node = inner[0]
    return node


def _item_content(item: ts.Node) -> ts.Node | None:
    """The expression of a ``conj_item``/``disj_item`` (after its bullet)."""
    for c in item.named_children:
        if c.type not in ("bullet_conj", "bullet_disj", "comment", "block_comment"):
            return c
    return None


def _infix_symbol(node: ts.Node) -> ts.Node | None:
    return node.child_by_field_name("symbol") if node.type == "bound_infix_op" else None


def _flatten(node: ts.Node, op: str) -> list[ts.Node]:
    """Operands of a chain of the infix operator ``op`` (``land``/``lor``)."""
    sym = _infix_symbol(node)
    if sym is None or sym.type != op:
        return [node]
    lhs, rhs = node.child_by_field_name("lhs"), node.child_by_field_name("rhs")
    if lhs is None or rhs is None:
        return [node]
    return _flatten(lhs, op) + _flatten(rhs, op)


def _end(node: ts.Node) -> int:
    """End byte of ``node`` without trailing comments (tree-sitter-tlaplus lets a junction
    item run on over the comments that follow it)."""
    while node.child_count:
        kids = [c for c in node.children if c.type not in ("comment", "block_comment")]
        if not kids:
            break
        node = kids[-1]
    return node.end_byte


def _short(text: str, width: int = 60) -> str:
    t = " ".join(text.split())
    return t if len(t) <= width else t[: width - 3] + "..."


@dataclass
class _Junction:
    """A conjunction or disjunction: ``form`` 'list' (items are conj/disj_item nodes)
    or 'infix' (items are the operands); ``owner``: the definition it lies in."""

    form: str
    items: list[ts.Node]
    owner: str


class _Module:
    def __init__(self, text: str):
        self.text = text
        self.src = text.encode("utf-8")
        self.tree = parse(text)
        self.has_error = self.tree.root_node.has_error
        self.module = next((c for c in self.tree.root_node.children if c.type == "module"), None)
        self.defs: dict[str, ts.Node] = {}  # name -> definition node, in source order
        self.units: list[ts.Node] = []
        self.variables: set[str] = set()
        if self.module is None:
            return
        for unit in self.module.named_children:
            target = unit
            if unit.type == "local_definition" and unit.named_children:
                target = unit.named_children[-1]
            self.units.append(target)
            if target.type in _DEF_TYPES:
                name = target.child_by_field_name("name")
                if name is not None:
                    self.defs.setdefault(self.t(name), target)
            elif target.type == "variable_declaration":
                self.variables.update(self.t(c) for c in target.named_children
                                      if c.type == "identifier")
        self._refs: dict[int, frozenset[str]] = {}
        self._primed: dict[int, bool] = {}
        self.actions = self._actions()

    def t(self, node: ts.Node) -> str:
        return self.src[node.start_byte:node.end_byte].decode("utf-8")

    def char_offset(self, byte: int) -> int:
        return len(self.src[:byte].decode("utf-8"))

    def line_col(self, byte: int) -> tuple[int, int]:
        line_start = self.src.rfind(b"\n", 0, byte) + 1
        return self.src.count(b"\n", 0, byte) + 1, len(self.src[line_start:byte].decode("utf-8")) + 1

    def body(self, name: str) -> ts.Node | None:
        d = self.defs.get(name)
        if d is None:
            return None
        b = d.child_by_field_name("definition")
        if b is None:
            named = [c for c in d.named_children if c.type not in ("comment", "block_comment")]
            b = named[-1] if named else None
        return b

    def refs(self, node: ts.Node) -> frozenset[str]:
        """Names of module definitions used in ``node`` (identifiers and user-defined
        operator symbols)."""
        key = node.id
        if key not in self._refs:
            out = set()
            for n in _walk(node, frozenset({"comment", "block_comment"})):
                if n.type == "identifier_ref":
                    out.add(self.t(n))
                elif n.type in ("bound_infix_op", "bound_prefix_op", "bound_postfix_op"):
                    sym = n.child_by_field_name("symbol")
                    if sym is not None:
                        out.add(self.t(sym))
            self._refs[key] = frozenset(x for x in out if x in self.defs)
        return self._refs[key]

    def has_type(self, node: ts.Node, types: Iterable[str]) -> bool:
        types = frozenset(types)
        return any(n.type in types for n in _walk(node, frozenset({"comment", "block_comment"})))

    def _actions(self) -> set[str]:
        temporal = {n for n, d in self.defs.items() if self.has_type(d, _TEMPORAL)}
        acts = {n for n, d in self.defs.items() if d.type == "operator_definition"
                and n not in temporal and self.has_type(d, ("prime", "unchanged"))}
        changed = True
        while changed:
            changed = False
            for n, d in self.defs.items():
                if n in acts or n in temporal or d.type != "operator_definition":
                    continue
                if self.refs(d) & acts:
                    acts.add(n)
                    changed = True
        return acts

    def primed(self, node: ts.Node) -> bool:
        """``node`` is action-level: a prime, ``UNCHANGED`` or a call of an action."""
        key = node.id
        if key not in self._primed:
            self._primed[key] = (self.has_type(node, ("prime", "unchanged"))
                                 or bool(self.refs(node) & self.actions))
        return self._primed[key]

    def reachable(self, roots: Iterable[ts.Node]) -> set[str]:
        seen: set[str] = set()
        todo = [r for root in roots for r in self.refs(root)]
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            todo.extend(self.refs(self.defs[n]) - seen)
        return seen

    def _point(self, src: bytes, byte: int) -> tuple[int, int]:
        return src.count(b"\n", 0, byte), byte - (src.rfind(b"\n", 0, byte) + 1)

    def _unit_has_error(self, lo: int, hi: int, unit: bytes) -> bool:
        """Whether the top-level unit ``unit`` (at ``[lo, hi)`` of ``src``) has syntax
        errors when parsed alone, at its original column, in an otherwise empty module."""
        col = lo - (self.src.rfind(b"\n", 0, lo) + 1)
        wrapped = b"---- MODULE AliasMutantCheck ----\n" + b" " * col + unit + b"\n====\n"
        return ts.Parser(language()).parse(wrapped).root_node.has_error

    def reparse_has_error(self, a: int, b: int, repl: bytes, new_src: bytes) -> bool:
        """Whether ``new_src`` (``src`` with ``[a, b)`` replaced by ``repl``) has syntax
        errors.  Edits lie inside one top-level unit, so that unit alone is re-parsed when
        it parses cleanly alone before the edit; otherwise the whole module is re-parsed
        incrementally from the original tree."""
        units = self.module.named_children
        for i, u in enumerate(units):
            lo, hi = u.start_byte, u.end_byte
            if lo <= a and b <= hi:
                # the next unit too: an edit at the end must not glue the two together
                hi = units[i + 1].end_byte if i + 1 < len(units) else hi
                if not self._unit_has_error(lo, hi, self.src[lo:hi]):
                    return self._unit_has_error(lo, hi, self.src[lo:a] + repl + self.src[b:hi])
                break
        tree = self.tree.copy()
        tree.edit(a, b, a + len(repl), self._point(self.src, a), self._point(self.src, b),
                  self._point(new_src, a + len(repl)))
        return ts.Parser(language()).parse(new_src, tree).root_node.has_error

    def def_name(self, d: ts.Node) -> str | None:
        name = d.child_by_field_name("name") if d.type in _DEF_TYPES else None
        return self.t(name) if name is not None else None

    def owner(self, node: ts.Node) -> str | None:
        """Name of the top-level definition that contains ``node``."""
        n = node
        while n.parent is not None and n.parent.type != "module":
            n = n.parent
        if n.type == "local_definition" and n.named_children:
            n = n.named_children[-1]
        return self.def_name(n)


# --------------------------------------------------------------------------- roots


def _conjuncts(node: ts.Node) -> list[ts.Node]:
    node = _strip_parens(node)
    if node.type == "conj_list":
        out = []
        for it in node.named_children:
            if it.type == "conj_item":
                c = _item_content(it)
                if c is not None:
                    out.extend(_conjuncts(c))
        return out
    if _infix_symbol(node) is not None and _infix_symbol(node).type == "land":
        return [x for op in _flatten(node, "land") for x in _conjuncts(op)]
    return [node]


def _split_spec(m: _Module, body: ts.Node, seen: set[str] | None = None
                ) -> tuple[ts.Node | None, ts.Node | None]:
    """``(I, N)`` of a specification ``I /\\ [][N]_v /\\ ...``; a conjunct that names
    another specification (``LSpec == HC /\\ WF_v(N)``) is expanded."""
    init = nxt = None
    seen = set() if seen is None else seen
    for c in _conjuncts(body):
        if c.type == "identifier_ref" and m.t(c) in m.defs and m.t(c) not in seen:
            sub = m.body(m.t(c))
            if sub is not None and m.has_type(sub, ("step_expr_or_stutter",)):
                seen.add(m.t(c))
                i, n = _split_spec(m, sub, seen)
                init = init if init is not None else i
                nxt = nxt if nxt is not None else n
                continue
        sym = c.child_by_field_name("symbol") if c.type == "bound_prefix_op" else None
        if sym is not None and sym.type == "always":
            step = c.child_by_field_name("rhs")
            if step is not None and step.type == "step_expr_or_stutter" and nxt is None:
                inner = [x for x in step.named_children if x.type not in ("comment", "block_comment")]
                nxt = inner[0] if inner else None
        elif init is None and not m.has_type(c, _TEMPORAL):
            init = c
    return init, nxt


def _resolve(m: _Module, node: ts.Node | None) -> ts.Node | None:
    """A zero-argument reference to a definition -> that definition's body."""
    seen = set()
    while node is not None:
        node = _strip_parens(node)
        if node.type == "identifier_ref" and m.t(node) in m.defs and m.t(node) not in seen:
            seen.add(m.t(node))
            node = m.body(m.t(node))
        else:
            return node
    return None


def _roots(m: _Module, init: str | None, nxt: str | None, spec: str | None,
           cfg) -> tuple[ts.Node | None, ts.Node | None]:
    if cfg is not None:
        if cfg.init or cfg.next:
            init, nxt, spec = cfg.init, cfg.next, None
        elif cfg.specification:
            init = nxt = None
            spec = cfg.specification
    init_node = m.body(init) if init else None
    next_node = m.body(nxt) if nxt else None
    if init_node is None or next_node is None:
        candidates = [spec] if spec and spec in m.defs else []
        if not candidates and (cfg is None or not cfg.specification or cfg.specification not in m.defs):
            # the cfg's specification lives in a wrapper (MCEcho's TestSpec == Spec /\ ...):
            # the system module's own specification formula gives I and N
            candidates = [n for n, d in m.defs.items() if m.has_type(d, ("step_expr_or_stutter",))]
        for name in candidates:
            body = m.body(name)
            if body is None:
                continue
            i, n = _split_spec(m, body)
            if i is not None or n is not None:
                init_node = init_node if init_node is not None else _resolve(m, i)
                next_node = next_node if next_node is not None else _resolve(m, n)
                break
    return init_node, next_node


# --------------------------------------------------------------------------- junctions


def _conj_walk(m: _Module, node: ts.Node, owner: str, out: list[_Junction]) -> None:
    """Conjunctions in the boolean skeleton of an action (state-level parts such as a
    guard ``a \\/ (b /\\ c)`` are not split further)."""
    node = _strip_parens(node)
    if not m.primed(node):
        return
    sym = _infix_symbol(node)
    if node.type in ("conj_list", "disj_list"):
        items = [c for c in node.named_children if c.type in ("conj_item", "disj_item")]
        if node.type == "conj_list":
            out.append(_Junction("list", items, owner))
        for it in items:
            c = _item_content(it)
            if c is not None:
                _conj_walk(m, c, owner, out)
    elif sym is not None and sym.type in ("land", "lor"):
        ops = _flatten(node, sym.type)
        if sym.type == "land":
            out.append(_Junction("infix", ops, owner))
        for op in ops:
            _conj_walk(m, op, owner, out)
    elif node.type in ("bounded_quantification", "unbounded_quantification", "let_in"):
        e = node.child_by_field_name("expression")
        if e is not None:
            _conj_walk(m, e, owner, out)
    elif node.type == "if_then_else":
        for f in ("then", "else"):
            e = node.child_by_field_name(f)
            if e is not None:
                _conj_walk(m, e, owner, out)
    elif node.type == "case":
        for arm in node.named_children:
            if arm.type in ("case_arm", "other_arm"):
                named = [c for c in arm.named_children
                         if c.type not in ("comment", "block_comment", "case_arrow")]
                if named:
                    _conj_walk(m, named[-1], owner, out)


def _disj_walk(m: _Module, node: ts.Node, owner: str, out: list[_Junction],
               visited: set[str]) -> None:
    """Disjunctions of the next-state relation, following called operators."""
    node = _strip_parens(node)
    sym = _infix_symbol(node)
    if node.type == "disj_list":
        items = [c for c in node.named_children if c.type == "disj_item"]
        out.append(_Junction("list", items, owner))
        for it in items:
            c = _item_content(it)
            if c is not None:
                _disj_walk(m, c, owner, out, visited)
    elif sym is not None and sym.type == "lor":
        ops = _flatten(node, "lor")
        out.append(_Junction("infix", ops, owner))
        for op in ops:
            _disj_walk(m, op, owner, out, visited)
    elif node.type in ("bounded_quantification", "unbounded_quantification"):
        q = node.child_by_field_name("quantifier")
        e = node.child_by_field_name("expression")
        if q is not None and q.type == "exists" and e is not None:
            _disj_walk(m, e, owner, out, visited)
    elif node.type == "let_in":
        e = node.child_by_field_name("expression")
        if e is not None:
            _disj_walk(m, e, owner, out, visited)
    elif node.type in ("identifier_ref", "bound_op"):
        ref = node if node.type == "identifier_ref" else node.child_by_field_name("name")
        name = m.t(ref) if ref is not None else None
        if name in m.defs and name not in visited and m.defs[name].type == "operator_definition":
            visited.add(name)
            body = m.body(name)
            if body is not None:
                _disj_walk(m, body, name, out, visited)


def _deletion(m: _Module, j: _Junction, k: int) -> tuple[int, int, bytes]:
    """Byte span and replacement that delete item ``k`` of junction ``j`` with its bullet
    or infix operator."""
    items = j.items
    if k < len(items) - 1:
        a, b = items[k].start_byte, items[k + 1].start_byte
        nxt = items[k + 1]
        if (j.form == "infix" and nxt.start_point.row != items[k].start_point.row
                and nxt.end_point.row != nxt.start_point.row):
            # A multi-line operand keeps its column (layout of nested junctions).
            _, col = m.line_col(nxt.start_byte)
            return a, b, ("\n" + " " * (col - 1)).encode()
        return a, b, b""
    return _end(items[k - 1]), _end(items[k]), b""


# --------------------------------------------------------------------------- main


#: A candidate mutation: (kind, start byte, end byte, replacement, description, position).
_Cand = tuple[str, int, int, bytes, str, int]


def _literal_and_comparison_cands(m: "_Module", init_node, in_scope, scope: str) -> list[_Cand]:
    """(a) numeric literals +-1 and (b) flipped comparisons, outside assignments."""
    cands: list[_Cand] = []
    init_span = (init_node.start_byte, init_node.end_byte) if init_node is not None else (-1, -1)
    for unit in m.units:
        if unit.type in ("variable_declaration", "constant_declaration", "extends") or unit.type in _SKIP:
            continue
        owner = m.def_name(unit)
        if (unit.type in _DEF_TYPES and not in_scope(owner)) or (unit.type not in _DEF_TYPES and scope != "all"):
            continue
        where = f" in {owner}" if owner else ""
        for n in _walk(unit):
            if n.type == "nat_number":
                v = int(m.t(n))
                cands.append(("numeric_literal", n.start_byte, n.end_byte, str(v + 1).encode(),
                              f"numeric literal {v} -> {v + 1}{where}", n.start_byte))
                if v >= 1:
                    cands.append(("numeric_literal", n.start_byte, n.end_byte, str(v - 1).encode(),
                                  f"numeric literal {v} -> {v - 1}{where}", n.start_byte))
            sym = _infix_symbol(n)
            if sym is None or sym.type not in _FLIP:
                continue
            lhs = n.child_by_field_name("lhs")
            if sym.type in ("eq", "in") and lhs is not None:
                lsym = lhs.child_by_field_name("symbol") if lhs.type == "bound_postfix_op" else None
                if lsym is not None and lsym.type == "prime":
                    continue  # x' = e: an assignment
                if (init_span[0] <= n.start_byte and n.end_byte <= init_span[1]
                        and lhs.type == "identifier_ref" and m.t(lhs) in m.variables):
                    continue  # v = e in the initial predicate: an assignment
            new = _FLIP[sym.type]
            cands.append(("comparison", sym.start_byte, sym.end_byte, new.encode(),
                          f"comparison {m.t(sym)} -> {new}{where}: {_short(m.t(n))}", sym.start_byte))
    return cands


def _init_string_cands(m: "_Module", init_node, excluded: set[str]) -> list[_Cand]:
    """(c) each string of the initial predicate replaced by the module's next string."""
    strings: list[str] = []
    for unit in m.units:
        for n in _walk(unit) if unit.type not in _SKIP else ():
            if n.type == "string" and m.t(n) not in strings:
                strings.append(m.t(n))
    if init_node is None or m.owner(init_node) in excluded:
        return []
    cands: list[_Cand] = []
    for n in _walk(init_node):
        if n.type != "string":
            continue
        s = m.t(n)
        i = strings.index(s) if s in strings else 0
        others = [x for x in strings[i + 1:] + strings[:i] if x != s]
        new = others[0] if others else FRESH_STRING
        cands.append(("init_string", n.start_byte, n.end_byte, new.encode(), f"initial string {s} -> {new}",
                      n.start_byte))
    return cands


def _action_cands(m: "_Module", in_scope) -> list[_Cand]:
    """(d)/(e) each conjunct (primed: a conjunct, else a guard) of an action deleted."""
    cands: list[_Cand] = []
    for name in m.defs:
        body = m.body(name) if name in m.actions and in_scope(name) else None
        if body is None:
            continue
        junctions: list[_Junction] = []
        _conj_walk(m, body, name, junctions)
        for j in (j for j in junctions if len(j.items) >= 2):
            for k, item in enumerate(j.items):
                content = _item_content(item) if j.form == "list" else item
                if content is None:
                    continue
                a, b, repl = _deletion(m, j, k)
                kind, what = ("action_conjunct", "conjunct") if m.primed(content) else ("action_guard", "guard")
                cands.append((kind, a, b, repl, f"delete {what} of {name}: {_short(m.t(content))}", item.start_byte))
    return cands


def _disjunct_cands(m: "_Module", next_node, excluded: set[str]) -> list[_Cand]:
    """(f) each disjunct of the next-state relation deleted."""
    if next_node is None:
        return []
    junctions: list[_Junction] = []
    owner = m.owner(next_node) or ""
    _disj_walk(m, next_node, owner, junctions, {owner} if owner else set())
    cands: list[_Cand] = []
    seen_j: set[tuple[int, int]] = set()
    for j in junctions:
        key = (j.items[0].start_byte, j.items[-1].end_byte) if j.items else (0, 0)
        if len(j.items) < 2 or key in seen_j or j.owner in excluded:
            continue
        seen_j.add(key)
        for k, item in enumerate(j.items):
            content = _item_content(item) if j.form == "list" else item
            if content is None:
                continue
            a, b, repl = _deletion(m, j, k)
            where = f" of {j.owner}" if j.owner else ""
            cands.append(("next_disjunct", a, b, repl, f"delete disjunct{where}: {_short(m.t(content))}",
                          item.start_byte))
    return cands


def _build(m: "_Module", text: str, cands: list[_Cand]) -> list[Mutant]:
    """The mutants of the candidates in kind and position order: no duplicate text, none
    that breaks a module tree-sitter reads, ids ``<prefix>@L<line>C<col>``."""
    order = {k: i for i, k in enumerate(KINDS)}
    cands = sorted(cands, key=lambda c: (order[c[0]], c[5], c[1]))  # stable: +1 before -1
    out: list[Mutant] = []
    texts, ids = {text}, set()
    for kind, a, b, repl, desc, pos in cands:
        new_src = m.src[:a] + repl + m.src[b:]
        new_text = new_src.decode("utf-8")
        if new_text in texts or (not m.has_error and m.reparse_has_error(a, b, repl, new_src)):
            continue
        texts.add(new_text)
        line, col = m.line_col(pos)
        prefix = _PREFIX[kind] + (("+1" if int(repl) > int(m.src[a:b]) else "-1") if kind == "numeric_literal" else "")
        mid = base = f"{prefix}@L{line}C{col}"
        n = 2
        while mid in ids:
            mid, n = f"{base}#{n}", n + 1
        ids.add(mid)
        out.append(Mutant(mutant_id=mid, kind=kind, line=line, description=desc, text=new_text,
                          span=(m.char_offset(a), m.char_offset(b)), replacement=repl.decode("utf-8")))
    return out


def generate_mutants(text: str, *, init: str | None = "Init", next: str | None = "Next",
                     spec: str | None = "Spec", cfg: str | None = None,
                     scope: str = "behavior", max_per_kind: int | None = None,
                     seed: int = 0) -> list[Mutant]:
    """Mutants of the first module of ``text``, ordered by kind (:data:`KINDS`) and
    position; see the module docstring for what each kind does and where.

    ``init``/``next``: names of the initial predicate and next-state relation;
    ``spec``: the specification to take them from when they are not defined; ``cfg``:
    a TLC configuration text whose INIT/NEXT/SPECIFICATION take precedence and whose
    ``C <- Def`` substitutions exclude ``Def`` from mutation.  ``scope``: ``'behavior'``
    or ``'all'`` (where numeric and comparison mutations are made).  ``max_per_kind``:
    keep at most that many of each kind, a subset drawn with ``seed`` (same arguments,
    same result).
    """
    if scope not in ("behavior", "all"):
        raise ValueError(f"scope must be 'behavior' or 'all', not {scope!r}")
    m = _Module(text)
    if m.module is None:
        return []
    parsed_cfg = parse_cfg(cfg) if cfg is not None else None
    excluded = set(parsed_cfg.names().get("substitutions", [])) if parsed_cfg is not None else set()
    init_node, next_node = _roots(m, init, next, spec, parsed_cfg)
    roots = [n for n in (init_node, next_node) if n is not None]
    reach = m.reachable(roots) | {o for o in map(m.owner, roots) if o}

    def in_scope(name: str | None) -> bool:
        return name not in excluded and (scope == "all" or name in reach)

    out = _build(m, text, _literal_and_comparison_cands(m, init_node, in_scope, scope)
                 + _init_string_cands(m, init_node, excluded) + _action_cands(m, in_scope)
                 + _disjunct_cands(m, next_node, excluded))
    if max_per_kind is None:
        return out
    kept: list[Mutant] = []
    for kind in KINDS:
        group = [x for x in out if x.kind == kind]
        if len(group) > max_per_kind:
            idx = sorted(random.Random(f"{seed}:{kind}").sample(range(len(group)), max_per_kind))
            group = [group[i] for i in idx]
        kept.extend(group)
    return kept


_MODULE_NAME = re.compile(r"[A-Za-z0-9_]+")


def rename_module(text: str, new_name: str) -> str:
    """``text`` with the name in its first module header replaced by ``new_name`` (only
    that span), e.g. to load several mutants side by side."""
    if not _MODULE_NAME.fullmatch(new_name):
        raise ValueError(f"bad module name {new_name!r}")
    m = _Module(text)
    name = m.module.child_by_field_name("name") if m.module is not None else None
    if name is None:
        raise ValueError("no module header")
    return (m.src[:name.start_byte] + new_name.encode() + m.src[name.end_byte:]).decode("utf-8")
