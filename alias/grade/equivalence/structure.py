"""Equivalence-control classes that keep the reference's variables (issue 33, classes 1,
2, 5, 7 and 8): conjuncts and disjuncts reordered, definitions inlined or extracted, a
constant defined or a definition declared, a history variable added, an action split.

Each generator reads the reference through :class:`~.base.Context` and edits the system
module's text with :class:`~.rewrite.Edits`; see :mod:`alias.grade.equivalence`.
"""

from __future__ import annotations

from typing import Iterator

import tree_sitter as ts

from alias.grade.mutants import (_Junction, _conj_walk, _disj_walk, _end, _flatten, _infix_symbol, _item_content,
                                 _strip_parens, _walk)
from alias.tla.syntax import module_info
from alias.tla.values import ModelValue, Opaque, Rec, Seq, SetV, parse_value

from .base import Context, NotApplicable, Variant, finish, generator
from .rewrite import Edits, _symbol, _unchanged

# --------------------------------------------------------------------------- helpers


def _span(j: _Junction, item: ts.Node) -> tuple[int, int]:
    return item.start_byte, _end(item)


def _content(j: _Junction, item: ts.Node) -> ts.Node | None:
    return _item_content(item) if j.form == "list" else item


def state_free(cx: Context, node: ts.Node) -> bool:
    """Whether ``node`` mentions no variable (of the model's closure), prime or UNCHANGED,
    itself or through the system module's definitions it uses; a definition of another
    author module counts as mentioning one (it may)."""
    m = cx.m
    nodes = [node] + [m.defs[d] for d in m.reachable([node])]
    state = set(cx.r_vars) | m.variables | cx.other_definitions
    return not any(n.type == "identifier_ref" and m.t(n) in state and m.t(n) not in m.defs
                   or n.type in ("prime", "unchanged") for root in nodes for n in _walk(root))


def parameters(d: ts.Node) -> list[str] | None:
    """The parameter names of a definition; None when one is an operator (``F(_)``)."""
    out = []
    for c in d.named_children:
        if c.type == "operator_declaration":
            return None
        if c.type == "identifier" and c.id != d.child_by_field_name("name").id:
            out.append(c.text.decode("utf-8"))
    return out


def _call(name: str, params: list[str]) -> str:
    return f"{name}({', '.join(params)})" if params else name


# --------------------------------------------------------------------------- 1. reorder


def _movable(cx: Context, c: ts.Node | None, init: bool) -> bool:
    """An item TLC evaluates the same in any place among its neighbours: an assignment
    whose right side reads no primed variable, or an UNCHANGED (in the initial predicate:
    ``v = e`` / ``v \\in S`` whose right side reads no variable)."""
    if c is None:
        return False
    c = _strip_parens(c)
    if _unchanged(c):
        return not init
    if _symbol(c) not in ("eq", "in"):
        return False
    lhs, rhs = c.child_by_field_name("lhs"), c.child_by_field_name("rhs")
    if lhs is None or rhs is None:
        return False
    if init:
        return lhs.type == "identifier_ref" and cx.m.t(lhs) in cx.all_variables and state_free(cx, rhs)
    var = lhs.named_children[0] if lhs.type == "bound_postfix_op" and _symbol(lhs) == "prime" else None
    return var is not None and var.type == "identifier_ref" and cx.m.t(var) in cx.all_variables \
        and not cx.m.primed(rhs)


def _runs(flags: list[bool]) -> list[int]:
    """The permutation that reverses every run of at least two movable items."""
    perm, i = list(range(len(flags))), 0
    while i < len(flags):
        k = i
        while k < len(flags) and flags[k]:
            k += 1
        if k - i >= 2:
            perm[i:k] = reversed(perm[i:k])
        i = max(k, i + 1)
    return perm


def _junctions(cx: Context) -> list[tuple[_Junction, list[int]]]:
    """Every junction TLC evaluates the same reordered, with its permutation: runs of
    movable conjuncts of each action and of the initial predicate; disjunctions of
    actions of the next-state relation reversed whole."""
    m, out, seen = cx.m, [], set()
    conj: list[_Junction] = []
    for name in [n for n in m.defs if n in m.actions and n in cx.reach()]:
        _conj_walk(m, m.body(name), name, conj)
    disj: list[_Junction] = []
    if cx.next_node is not None:
        owner = m.owner(cx.next_node) or ""
        _disj_walk(m, cx.next_node, owner, disj, {owner} if owner else set())
    init = _init_junction(cx)
    for j, kind in [(j, "conj") for j in conj] + [(j, "disj") for j in disj] + ([(init, "init")] if init else []):
        key = (j.items[0].start_byte, j.items[-1].end_byte)
        contents = [_content(j, it) for it in j.items]
        if key in seen or len(j.items) < 2 or any(c is None for c in contents):
            continue
        seen.add(key)
        if j.form == "infix" and any(b"\n" in m.src[a:b] for a, b in (_span(j, it) for it in j.items)):
            continue  # an operand over several lines keeps its place (its columns)
        if kind == "disj":
            perm = list(reversed(range(len(j.items)))) if all(m.primed(c) for c in contents) else []
        else:
            perm = _runs([_movable(cx, c, kind == "init") for c in contents])
        if perm and perm != sorted(perm):
            out.append((j, perm))
    return out


def _init_junction(cx: Context) -> _Junction | None:
    node = _strip_parens(cx.init_node) if cx.init_node is not None else None
    if node is None:
        return None
    owner = cx.m.owner(node) or ""
    if node.type == "conj_list":
        return _Junction("list", [c for c in node.named_children if c.type == "conj_item"], owner)
    sym = _infix_symbol(node)
    return _Junction("infix", _flatten(node, "land"), owner) if sym is not None and sym.type == "land" else None


def _permute(cx: Context, chosen: list[tuple[_Junction, list[int]]]) -> Edits:
    e = Edits(cx.m)
    # inner junctions first: an outer item's text carries its inner edits along
    for j, perm in sorted(chosen, key=lambda jp: jp[0].items[-1].end_byte - jp[0].items[0].start_byte):
        spans = [_span(j, it) for it in j.items]
        texts = [e.render(a, b) for a, b in spans]
        for i, k in enumerate(perm):
            if i != k:
                e.replace(*spans[i], texts[k])
    return e


@generator("reorder")
def reorder(cx: Context) -> Iterator[Variant | NotApplicable]:
    """Class 1: every run of assignments (and UNCHANGEDs) of each action and of the
    initial predicate reversed, and every disjunction of actions reversed: all at once,
    then definition by definition. Guards keep their places (TLC evaluates a conjunction
    left to right and stops at the first false guard: ``i \\in DOMAIN f /\\ f[i] = 0``)."""
    js = _junctions(cx)
    if not js:
        yield NotApplicable("reorder", "no conjunction or disjunction TLC evaluates the same reordered")
        return
    owners = list(dict.fromkeys(j.owner for j, _ in js))
    yield finish(cx, "reorder", "reorder:all", f"reordered {len(js)} junctions in {', '.join(owners)}",
                   _permute(cx, js))
    for o in owners if len(owners) > 1 else []:
        mine = [(j, p) for j, p in js if j.owner == o]
        yield finish(cx, "reorder", f"reorder:{o}", f"reordered {len(mine)} junctions in {o}", _permute(cx, mine))


# --------------------------------------------------------------------------- 2. inline / extract


def _uses(cx: Context, name: str) -> list[ts.Node] | None:
    """The uses of definition ``name`` outside it (identifier or call nodes); None when
    one stands where it cannot be inlined (ASSUME, THEOREM, a nested module, as an
    operator argument)."""
    m, out = cx.m, []
    own = cx.unit_of(name)
    for unit in m.module.named_children:
        if unit.id == own.id:
            continue
        for n in _walk(unit, frozenset({"comment", "block_comment"})):
            if n.type != "identifier_ref" or m.t(n) != name:
                continue
            if unit.type in ("assumption", "theorem", "use_or_hide", "module"):
                return None
            p = n.parent
            call = p is not None and p.type == "bound_op" and p.named_children and p.named_children[0].id == n.id
            out.append(p if call else n)
    return out


def _inline_text(cx: Context, d: ts.Node, params: list[str], use: ts.Node) -> str | None:
    """``(body)`` with the call's arguments for the parameters; None on a capture."""
    m = cx.m
    body = m.body(m.def_name(d))
    args = [c for c in use.named_children[1:]] if use.type == "bound_op" else []
    if len(args) != len(params):
        return None
    bound = {m.t(n) for n in _walk(body) if n.type == "identifier"}
    if any(m.t(n) in bound for a in args for n in _walk(a) if n.type == "identifier_ref"):
        return None
    e = Edits(m)
    sub = dict(zip(params, (m.t(a) for a in args)))
    for n in _walk(body):
        if n.type == "identifier_ref" and m.t(n) in sub:
            e.node(n, f"({sub[m.t(n)]})")
    return "(" + e.text(body) + ")"


def _inline(cx: Context, name: str) -> Variant | NotApplicable:
    m, d = cx.m, cx.m.defs[name]
    params = parameters(d)
    uses = _uses(cx, name)
    if params is None or not uses:
        return NotApplicable("inline_extract", f"inline:{name}: not inlinable (operator parameter, no use, or a use in ASSUME/THEOREM)")
    if any((u.type == "bound_op") != bool(params) for u in uses):
        return NotApplicable("inline_extract", f"inline:{name}: used as an operator argument")
    e = Edits(m)
    for u in uses:
        t = _inline_text(cx, d, params, u)
        if t is None:
            return NotApplicable("inline_extract", f"inline:{name}: a bound name would capture an argument")
        e.node(u, t)
    unit = cx.unit_of(name)
    end = _end(unit) + (1 if m.src[_end(unit):_end(unit) + 1] == b"\n" else 0)
    e.replace(unit.start_byte, end, "")
    return finish(cx, "inline_extract", f"inline:{name}", f"definition {name} inlined at its {len(uses)} uses", e)


def _inline_candidates(cx: Context) -> list[str]:
    """Definitions to inline: one-line operators the initial predicate or next-state
    relation uses, not recursive, not the predicate or relation itself, and named by
    nothing that would lose them (the cfg, another module, an INSTANCE's implicit
    substitution)."""
    m, reach = cx.m, cx.reach()
    roots = {cx.definition_of(cx.init_node), cx.definition_of(cx.next_node)}

    def inlinable(name: str) -> bool:
        body = m.body(name)
        return (m.defs[name].type == "operator_definition" and name in reach and name not in roots
                and body is not None and b"\n" not in m.src[body.start_byte:_end(body)].strip()
                and name not in m.reachable([body]) and name not in cx.cfg_names
                and not cx.used_elsewhere(name) and not cx.taken_implicitly(name))

    return [n for n in m.defs if inlinable(n)]


def _extract(cx: Context, name: str) -> Variant | NotApplicable:
    """The first conjunct of action ``name`` made a definition of its own."""
    m, d = cx.m, cx.m.defs[name]
    params = parameters(d)
    body = _strip_parens(m.body(name))
    sym = _infix_symbol(body)
    if body.type == "conj_list":
        j = _Junction("list", [c for c in body.named_children if c.type == "conj_item"], name)
    elif sym is not None and sym.type == "land":
        j = _Junction("infix", _flatten(body, "land"), name)
    else:
        return NotApplicable("inline_extract", f"extract:{name}: its body is not a conjunction")
    c = _content(j, j.items[0]) if j.items else None
    if params is None or c is None or len(j.items) < 2:
        return NotApplicable("inline_extract", f"extract:{name}: nothing to extract")
    new = cx.namer()(f"{name}_{'step' if m.primed(c) else 'guard'}")
    e = Edits(m)
    col = c.start_point.column
    unit = cx.unit_of(name)
    e.replace(unit.start_byte, unit.start_byte, f"{_call(new, params)} ==\n{' ' * col}{m.t(c)}\n\n")
    e.node(c, _call(new, params))
    return finish(cx, "inline_extract", f"extract:{name}", f"first conjunct of {name} extracted as {new}", e)


@generator("inline_extract")
def inline_extract(cx: Context) -> Iterator[Variant | NotApplicable]:
    """Class 2: a one-line definition the initial predicate or next-state relation uses
    inlined at every use (parenthesized, arguments for parameters, never where a bound
    name would capture an argument) and deleted; the first conjunct of an action made a
    definition of its own (``A_guard(p)``), alternately."""
    inl = [_inline(cx, n) for n in _inline_candidates(cx)]
    ext = [_extract(cx, n) for n in cx.m.defs if n in cx.m.actions and n in cx.reach()
           and cx.m.defs[n].type == "operator_definition"]
    yield from _alternate("inline_extract", inl, ext,
                          "no definition to inline and no action conjunction to extract from")


def _alternate(cls: str, first: list, second: list, none: str) -> Iterator[Variant | NotApplicable]:
    """The candidates of two kinds of a class, alternately; ``none`` when there are none."""
    for i in range(max(len(first), len(second))):
        yield from (group[i] for group in (first, second) if i < len(group))
    if not first and not second:
        yield NotApplicable(cls, none)


# --------------------------------------------------------------------------- 5. constants


def _expressible(value: str) -> bool:
    """Whether a cfg value is TLA+ without model values (numbers, strings, booleans, sets...)."""
    def ok(v) -> bool:
        if isinstance(v, (ModelValue, Opaque)):
            return False
        if isinstance(v, (Seq, SetV)):
            return all(ok(x) for x in (v.items if isinstance(v, Seq) else v.items))
        if isinstance(v, Rec):
            return all(ok(x) for _, x in v.fields)
        return True
    return ok(parse_value(value))


def _declared_constants(cx: Context) -> list[tuple[ts.Node, ts.Node]]:
    """(declaration unit, identifier) of every plain constant the system module declares."""
    return [(u, c) for u in cx.m.units if u.type == "constant_declaration"
            for c in u.named_children if c.type == "identifier"]


def _define_constant(cx: Context, unit: ts.Node, ident: ts.Node) -> Variant | NotApplicable:
    m = cx.m
    name = m.t(ident)
    entry = next((c for c in cx.cfg.constants if c.name == name and c.module is None), None)
    if entry is None or entry.op != "=" or not _expressible(entry.value):
        return NotApplicable("constant_definition", f"define:{name}: the cfg does not give it a TLA+ value")
    keep = [m.t(c) for c in unit.named_children if c.type in ("identifier", "operator_declaration") and c.id != ident.id]
    kw = m.t(unit.children[0])
    head = f"{kw} {', '.join(keep)}\n" if keep else ""
    e = Edits(m)
    e.node(unit, f"{head}{name} == {entry.value.strip()}")
    consts = tuple((c, c) for c in cx.r_consts if c != name)
    return finish(cx, "constant_definition", f"define:{name}", f"constant {name} defined as its cfg value {entry.value.strip()}",
                    e, consts=consts)


def _declare_definition(cx: Context, name: str) -> Variant | NotApplicable:
    m = cx.m
    d, unit = m.defs[name], cx.unit_of(name)
    if unit.type == "local_definition" or parameters(d) != [] or d.type != "operator_definition":
        return NotApplicable("constant_definition", f"declare:{name}: LOCAL or with parameters")
    e = Edits(m)
    e.node(unit, f"CONSTANT {name}")
    consts = tuple((c, c) for c in cx.r_consts)
    return finish(cx, "constant_definition", f"declare:{name}",
                    f"definition {name} made a CONSTANT (bound to the reference's definition by name)", e, consts=consts)


@generator("constant_definition")
def constant_definition(cx: Context) -> Iterator[Variant | NotApplicable]:
    """Class 5: a declared constant the cfg gives a TLA+ value (``N = 3``, no model
    values) defined as that value; a constant-level definition (no variable, no parameter,
    not named by the cfg; those the initial predicate or next-state relation use first)
    made a ``CONSTANT`` -- the grader binds it to the reference's definition by name --,
    alternately."""
    reach = cx.reach()
    defs = [_define_constant(cx, u, c) for u, c in _declared_constants(cx)]
    names = [n for n, d in cx.m.defs.items() if n not in cx.cfg_names and d.type == "operator_definition"
             and cx.m.body(n) is not None and state_free(cx, cx.m.body(n)) and n not in cx.m.actions
             and not cx.in_proofs(n)]
    decl = [_declare_definition(cx, n) for n in sorted(names, key=lambda n: n not in reach)]
    yield from _alternate("constant_definition", defs, decl,
                          "no constant with a TLA+ cfg value and no constant-level definition")


# --------------------------------------------------------------------------- 7. history variable


def _declare_variable(cx: Context, e: Edits, name: str) -> bool:
    decl = next((u for u in cx.m.units if u.type == "variable_declaration"), None)
    ids = [c for c in decl.named_children if c.type == "identifier"] if decl is not None else []
    if not ids:
        return False
    e.replace(ids[-1].end_byte, ids[-1].end_byte, f", {name}")
    return True


def _wrap(cx: Context, e: Edits, node: ts.Node, fresh, extra: str) -> bool:
    """Conjoin ``extra`` to the initial predicate or next-state relation ``node``: its
    definition ``D`` renamed ``D_0`` and ``D == D_0 /\\ extra`` defined after it; a
    one-line expression written inside the specification, in place. False when neither."""
    name = cx.definition_of(node)
    if name is not None and parameters(cx.m.defs[name]) == []:
        d, unit = cx.m.defs[name], cx.unit_of(name)
        new = fresh(f"{name}_0")
        e.node(d.child_by_field_name("name"), new)
        e.replace(_end(unit), _end(unit), f"\n{name} == {new} /\\ {extra}")
        return True
    if name is None and b"\n" not in cx.m.src[node.start_byte:_end(node)]:
        e.node(node, f"(({e.text(node)}) /\\ {extra})")
        return True
    return False


@generator("history_variable")
def history_variable(cx: Context) -> Iterator[Variant | NotApplicable]:
    """Class 7: an auxiliary variable ``hist`` (a boolean that flips at every step that
    changes the reference's variables) that never constrains the others: the initial
    predicate and next-state definitions are renamed (``Init_0``, ``Next_0``) and
    redefined as ``Init == Init_0 /\\ hist = FALSE`` and ``Next == Next_0 /\\ hist' = IF
    <<vars>>' = <<vars>> THEN hist ELSE ~hist``, so the subscript ``vars`` and every
    fairness condition keep their meaning (a one-line initial predicate or next-state
    relation written inside the specification gets the conjunct in place)."""
    if cx.init_node is None or cx.next_node is None:
        yield NotApplicable("history_variable", "no initial predicate or next-state relation in the system module")
        return
    fresh = cx.namer()
    h = fresh("hist")
    vs = ", ".join(module_info(cx.ref.system_text).variables)
    e = Edits(cx.m)
    if not _declare_variable(cx, e, h):
        yield NotApplicable("history_variable", "no VARIABLE declaration in the system module")
        return
    if not (_wrap(cx, e, cx.init_node, fresh, f"{h} = FALSE")
            and _wrap(cx, e, cx.next_node, fresh, f"{h}' = IF <<{vs}>>' = <<{vs}>> THEN {h} ELSE ~{h}")):
        yield NotApplicable("history_variable", "the initial predicate or next-state relation is neither a "
                                                "definition without parameters nor one line")
        return
    yield finish(cx, "history_variable", f"history:{h}", f"auxiliary variable {h} flips at every non-stuttering step", e)


# --------------------------------------------------------------------------- 8. split an action


def _placed(e: Edits, a: int, b: int, col: int) -> str:
    """The text of ``[a, b)`` on a line of its own at column ``col`` (its own column)."""
    return "\n" + " " * col + e.render(a, b)


def _disjunct_halves(cx: Context, body: ts.Node) -> tuple[str, str] | None:
    m = cx.m
    sym = _infix_symbol(body)
    if body.type == "disj_list":
        items = [c for c in body.named_children if c.type == "disj_item"]
        spans = [(it.start_byte, _end(it)) for it in items]
    elif sym is not None and sym.type == "lor":
        items = _flatten(body, "lor")
        spans = [(it.start_byte, _end(it)) for it in items]
    else:
        return None
    if len(items) < 2:
        return None
    e = Edits(m)
    return (_placed(e, spans[0][0], spans[0][1], items[0].start_point.column),
            _placed(e, spans[1][0], spans[-1][1], items[1].start_point.column))


def _if_item(cx: Context, body: ts.Node) -> ts.Node | None:
    if body.type == "if_then_else":
        return body
    if body.type == "conj_list":
        ifs = [_strip_parens(_item_content(c)) for c in body.named_children if c.type == "conj_item"]
        ifs = [x for x in ifs if x is not None and x.type == "if_then_else"]
        return ifs[0] if len(ifs) == 1 else None
    return None


def _branch(cx: Context, body: ts.Node, ite: ts.Node, which: str) -> str:
    """The body with ``IF c THEN X ELSE Y`` replaced by ``(c) /\\ (X)`` (``which``
    'then') or ``~(c) /\\ (Y)``, X and Y left in their columns."""
    m = cx.m
    cond, branch = ite.child_by_field_name("if"), ite.child_by_field_name(which)
    head = f"({m.t(cond)}) /\\ (" if which == "then" else f"~({m.t(cond)}) /\\ ("
    gap = m.src[ite.start_byte:branch.start_byte]
    if b"\n" not in m.src[branch.start_byte:_end(branch)]:
        pass  # a one-line branch has no columns to keep
    elif b"\n" not in gap and len(gap) >= len(head):
        head += " " * (len(gap) - len(head))
    else:
        head += "\n" + " " * branch.start_point.column
    e = Edits(m)
    e.replace(ite.start_byte, branch.start_byte, head)
    e.replace(_end(branch), _end(ite), ")")
    return "\n" + " " * body.start_point.column + e.render(body.start_byte, _end(body))


def _if_halves(cx: Context, body: ts.Node) -> tuple[str, str] | None:
    ite = _if_item(cx, body)
    if ite is None or any(ite.child_by_field_name(f) is None for f in ("if", "then", "else")) \
            or b"\n" in cx.m.src[ite.child_by_field_name("if").start_byte:ite.child_by_field_name("if").end_byte]:
        return None
    return _branch(cx, body, ite, "then"), _branch(cx, body, ite, "else")


def _first_primed(cx: Context, body: ts.Node) -> str | None:
    """The first variable ``body`` primes itself (not through a call)."""
    for n in _walk(body):
        if n.type == "bound_postfix_op" and _symbol(n) == "prime" and n.named_children \
                and n.named_children[0].type == "identifier_ref" and cx.m.t(n.named_children[0]) in cx.all_variables:
            return cx.m.t(n.named_children[0])
    return None


def _change_halves(cx: Context, body: ts.Node) -> tuple[str, str] | None:
    """``(body) /\\ v' = v`` and ``(body) /\\ v' # v`` for the first variable the body primes."""
    v = _first_primed(cx, body)
    if v is None:
        return None
    c = body.start_point.column
    text = Edits(cx.m).text(body)
    return tuple(f"\n{' ' * c}(\n{' ' * c}{text}\n{' ' * c}) /\\ {v}' {op} {v}" for op in ("=", "#"))


def _split(cx: Context, name: str) -> Variant | NotApplicable:
    m, d = cx.m, cx.m.defs[name]
    params = parameters(d)
    body = m.body(name)
    halves = None if params is None else (_disjunct_halves(cx, _strip_parens(body)) or _if_halves(cx, body)
                                          or _change_halves(cx, body))
    if halves is None:
        return NotApplicable("split_action", f"split:{name}: no disjunction, IF-THEN-ELSE or primed variable")
    fresh = cx.namer()
    a, b = fresh(f"{name}_1"), fresh(f"{name}_2")
    e = Edits(m)
    unit = cx.unit_of(name)
    e.replace(unit.start_byte, unit.start_byte,
              f"{_call(a, params)} =={halves[0]}\n\n{_call(b, params)} =={halves[1]}\n\n")
    e.replace(body.start_byte, _end(body), f"{_call(a, params)} \\/ {_call(b, params)}")
    return finish(cx, "split_action", f"split:{name}", f"action {name} split into {a} \\/ {b}", e)


@generator("split_action")
def split_action(cx: Context) -> Iterator[Variant | NotApplicable]:
    """Class 8: an action of the next-state relation split into two named sub-actions
    whose disjunction is the original (``A == A_1 \\/ A_2``): a disjunction cut after its
    first disjunct, or ``IF c THEN X ELSE Y`` (the body or its one IF conjunct) cut into
    ``c /\\ X`` and ``~c /\\ Y``; failing both, the steps that leave the first variable the
    action primes unchanged and those that change it. Actions that are a disjunction or an
    IF come first."""
    names = [n for n in cx.m.defs if n in cx.m.actions and n in cx.reach() and cx.m.defs[n].type == "operator_definition"]
    structured = [n for n in names if _disjunct_halves(cx, _strip_parens(cx.m.body(n))) or _if_halves(cx, cx.m.body(n))]
    made = False
    for n in structured + [n for n in names if n not in structured]:
        v = _split(cx, n)
        if isinstance(v, Variant):
            made = True
            yield v
    if not made:
        yield NotApplicable("split_action", "no action to split (none primes a variable itself)")
