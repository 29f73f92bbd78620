"""Equivalence-control classes that change the reference's variables (issue 33, classes
3, 4 and 6): variables merged into one record or tuple, a record or tuple variable split
into variables, a finite-domain variable re-encoded.

Every use of a changed variable is rewritten by what TLC does with it
(:func:`~.rewrite.variable_occurrences`): a read becomes an expression over the new
variables; an assignment (``v' = e``, ``v' \\in S``, ``v = e`` in the initial predicate,
``UNCHANGED``) becomes one TLC can still evaluate as an assignment of the new variables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

import tree_sitter as ts

from alias.grade.mutants import _Module, _end, _infix_symbol, _walk
from alias.grade.refinement import Encoding, Leaf, Pair, _atoms
from alias.tla.syntax import module_info
from alias.tla.values import Bool, ModelValue, Rec, Seq, Str, sort_key, to_tla

from .base import Context, NotApplicable, Variant, finish, generator
from .rewrite import Edits, Occurrence, read_as, variable_occurrences

#: The most values a re-encoded variable (or element of one) takes; the most fields or
#: components a split variable has, and the most variables merged into one.
MAX_VALUES = 8
MAX_PARTS = 8
SITES = ("assign", "init", "unchanged", "unchanged_tuple")


def _why_not(cx: Context, names: list[str]) -> str | None:
    """Why the variables ``names`` cannot be rewritten in the system module alone."""
    m = cx.m
    if any(n not in m.variables for n in names):
        return "declared outside the system module"
    if cx.init_node is None or cx.next_node is None:
        return "the initial predicate or next-state relation is not in the system module"
    clash = _implicit(cx, names)
    if isinstance(clash, str):
        return clash
    acting = _acting_instance(cx, clash)
    if acting:
        return acting
    proofs = [n for n in names if cx.in_proofs(n)]
    if proofs:
        return f"a theorem or proof names {', '.join(proofs)}"
    used = [n for n in names if cx.used_elsewhere(n)]
    if used:
        return f"another module uses {', '.join(used)}"
    return None


def _implicit(cx: Context, names: list[str]) -> list[tuple[ts.Node, list[str]]] | str:
    """The INSTANCEs of the system module with the variables of ``names`` each takes by
    implicit substitution (a parameter of the same name, no ``WITH`` for it); a reason
    string for an instance of a module not among the task's files."""
    out = []
    for inst, mod, given in cx.instances():
        text = cx.ref.files.get(f"{mod}.tla")
        if text is None:
            return f"instantiates {mod}, not among the task's files"
        info = module_info(text)
        hit = [n for n in names if n in set(info.variables) | set(info.constants) and n not in given]
        if hit:
            out.append((inst, hit))
    return out


def _acting_instance(cx: Context, clash: list[tuple[ts.Node, list[str]]]) -> str | None:
    """An instance that takes a changed variable and whose actions the behavior uses
    (``INSTANCE M`` of a module with actions, or ``I!A`` in the initial predicate or
    next-state relation): TLC could no longer assign the variable through it."""
    m = cx.m
    used = " ".join(m.t(m.defs[d]) for d in cx.reach() if d in m.defs)
    for inst, _ in clash:
        mod = m.t(inst.named_children[0])
        name = m.def_name(inst.parent) if inst.parent is not None and inst.parent.type == "module_definition" else None
        if name is None and _Module(cx.ref.files[f"{mod}.tla"]).actions:
            return f"the actions come from INSTANCE {mod}"
        if name is not None and f"{name}!" in used:
            return f"the next-state relation uses {name}!... of INSTANCE {mod}"
    return None


def _substitute(cx: Context, e: Edits, names: list[str], read: Callable[[str], str]) -> None:
    """Write out the implicit substitutions of ``names`` (``WITH v <- read(v)``): the
    instantiated module still names the old variables."""
    for inst, hit in _implicit(cx, names):
        subs = any(c.type == "substitution" for c in inst.named_children)
        at = _end(inst)
        e.replace(at, at, (", " if subs else " WITH ") + ", ".join(f"{v} <- {read(v)}" for v in hit))


def _lists_inside(node: ts.Node) -> bool:
    return any(n.type in ("conj_list", "disj_list") for n in _walk(node))


def _rhs(e: Edits, o: Occurrence) -> str:
    """The rewritten right side of an assignment (one line unless it has no list)."""
    text = e.text(o.rhs)
    if "\n" in text and _lists_inside(o.rhs):
        raise _Skip("an assignment's right side is a multi-line list")
    return text


class _Skip(Exception):
    """The rewrite does not apply (the message says why)."""


def _redeclare(cx: Context, e: Edits, expand: dict[str, list[str]]) -> None:
    """VARIABLE declarations with each variable ``v`` replaced by ``expand[v]`` (none: removed)."""
    for u in [u for u in cx.m.units if u.type == "variable_declaration"]:
        names = [cx.m.t(c) for c in u.named_children if c.type == "identifier"]
        if not any(n in expand for n in names):
            continue
        new = [x for n in names for x in expand.get(n, [n])]
        e.node(u, f"VARIABLES {', '.join(new)}" if new else "")


def _tuple_text(cx: Context, t: ts.Node, expand: dict[str, list[str]]) -> str:
    items = [cx.m.t(c) for c in t.named_children if c.type not in ("langle_bracket", "rangle_bracket")]
    return "<<" + ", ".join(x for i in items for x in expand.get(i, [i])) + ">>"


# --------------------------------------------------------------------------- 3. merge


@dataclass
class _Merge:
    """Variables ``names`` merged into ``var``: a record with one field per variable
    (``form`` 'record') or a tuple (``form`` 'tuple')."""

    names: list[str]
    var: str
    form: str

    def part(self, v: str) -> str:
        return f"{self.var}.{v}" if self.form == "record" else f"{self.var}[{self.names.index(v) + 1}]"

    def value(self, parts: dict[str, str]) -> str:
        if self.form == "record":
            return "[" + ", ".join(f"{v} |-> {parts[v]}" for v in self.names) + "]"
        return "<<" + ", ".join(parts[v] for v in self.names) + ">>"

    def set(self, sets: dict[str, str]) -> str:
        if self.form == "record":
            return "[" + ", ".join(f"{v} : {sets[v]}" for v in self.names) + "]"
        return " \\X ".join(f"({sets[v]})" for v in self.names)

    def leaf(self, v: str) -> Leaf:
        return Leaf(self.var, ("f", v) if self.form == "record" else ("i", self.names.index(v) + 1))


def _item(n: ts.Node) -> tuple[ts.Node, object]:
    """The conjunct ``n`` stands as (through parentheses) and the key of its conjunction."""
    while n.parent is not None and n.parent.type == "parentheses":
        n = n.parent
    p = n.parent
    if p is not None and p.type == "conj_item":
        return n, p.parent.id
    top = n
    while top.parent is not None and _infix_symbol(top.parent) is not None and _infix_symbol(top.parent).type == "land":
        top = top.parent
    return n, (top.id if top.id != n.id else ("alone", n.id))


def _combined(cx: Context, e: Edits, mg: _Merge, group: dict[str, Occurrence]) -> str:
    """One assignment of the merged variable for the assignments of its parts in one conjunction."""
    prime = "" if any(o.kind == "init" for o in group.values()) else "'"
    if not prime and any(n.type == "identifier_ref" and cx.m.t(n) in mg.names
                         for o in group.values() if o.rhs is not None for n in _walk(o.rhs)):
        raise _Skip("the initial predicate gives one merged variable the value of another")
    if all(o.kind in ("unchanged", "unchanged_tuple") for o in group.values()):
        return f"UNCHANGED {mg.var}"
    eq = {v: (_rhs(e, o) if o.kind in ("assign", "init") else mg.part(v)) for v, o in group.items()}
    if all(o.kind not in ("assign", "init") or o.op == "eq" for o in group.values()):
        return f"{mg.var}{prime} = {mg.value(eq)}"
    sets = {v: (eq[v] if o.kind in ("assign", "init") and o.op == "in" else "{" + eq[v] + "}")
            for v, o in group.items()}
    return f"{mg.var}{prime} \\in {mg.set(sets)}"


def _rest(cx: Context, o: Occurrence, names: list[str]) -> str | None:
    """What remains of an ``UNCHANGED <<...>>`` without the merged variables (None: nothing)."""
    left = [cx.m.t(c) for c in o.tuple.named_children
            if c.type not in ("langle_bracket", "rangle_bracket") and cx.m.t(c) not in names]
    return f"UNCHANGED <<{', '.join(left)}>>" if left else None


def _merge_sites(cx: Context, e: Edits, mg: _Merge, sites: list[Occurrence]) -> None:
    groups: dict[object, dict[str, tuple[Occurrence, ts.Node]]] = {}
    for o in sites:
        node, key = _item(o.site)
        g = groups.setdefault(key, {})
        if o.var in g:
            raise _Skip(f"{o.var} assigned twice in one conjunction")
        g[o.var] = (o, node)
    for g in groups.values():
        if set(g) != set(mg.names):
            missing = sorted(set(mg.names) - set(g))
            raise _Skip(f"{', '.join(missing)} assigned apart from {', '.join(sorted(g))}")
        items = sorted({n.id: n for _, n in g.values()}.values(), key=lambda n: n.start_byte)
        combined = _combined(cx, e, mg, {v: o for v, (o, _) in g.items()})
        for node in items:
            occ = [o for o, n in g.values() if n.id == node.id]
            rest = _rest(cx, occ[0], mg.names) if occ[0].kind == "unchanged_tuple" else None
            if node.id == items[-1].id:
                e.node(node, f"({rest} /\\ {combined})" if rest else f"({combined})")
            else:
                e.node(node, rest or "TRUE")


def _merge_edits(cx: Context, mg: _Merge) -> Edits:
    e = Edits(cx.m)
    occ = variable_occurrences(cx.m, set(mg.names), cx.init_node)
    for o in occ:
        if o.kind == "read":
            e.node(o.node, read_as(o, mg.part(o.var)))
    for t in {o.tuple.id: o.tuple for o in occ if o.kind == "tuple"}.values():
        inside = [cx.m.t(c) for c in t.named_children if c.type == "identifier_ref"]
        if not set(mg.names) <= set(inside):
            raise _Skip("a tuple of variables holds only some of them")
        first = next(v for v in inside if v in mg.names)
        e.node(t, _tuple_text(cx, t, {v: ([mg.var] if v == first else []) for v in mg.names}))
    _merge_sites(cx, e, mg, [o for o in occ if o.kind in SITES])
    _substitute(cx, e, mg.names, mg.part)
    decl = module_info(cx.ref.system_text).variables
    first = next(v for v in decl if v in mg.names)
    _redeclare(cx, e, {v: ([mg.var] if v == first else []) for v in mg.names})
    return e


def _merge(cx: Context, names: list[str], form: str) -> Variant | NotApplicable:
    vid = f"merge_{form}:{'+'.join(names)}"
    why = _why_not(cx, names)
    if why:
        return NotApplicable("merge_record", f"{vid}: {why}")
    mg = _Merge(names, cx.namer()("state" if form == "record" else "tup"), form)
    try:
        e = _merge_edits(cx, mg)
    except _Skip as s:
        return NotApplicable("merge_record", f"{vid}: {s}")
    pairs = tuple(Pair(Leaf(v), mg.leaf(v), Encoding()) for v in names)
    return finish(cx, "merge_record", vid, f"variables {', '.join(names)} merged into {form} {mg.var}", e,
                    pairs=pairs)


@generator("merge_record")
def merge_record(cx: Context) -> Iterator[Variant | NotApplicable]:
    """Class 3: variables merged into one record variable ``state`` (fields named after
    them) or tuple variable: all of the system module's variables first (at most
    :data:`MAX_PARTS`), then each pair of neighbours, as a record and as a tuple. Applies
    where every action assigns the merged variables in one conjunction (each ``v' = e``,
    ``v' \\in S`` or ``UNCHANGED``), as PlusCal's translation does."""
    decl = module_info(cx.ref.system_text).variables
    if len(decl) < 2:
        yield NotApplicable("merge_record", "fewer than two variables")
        return
    cands = ([decl] if len(decl) <= MAX_PARTS else []) + [decl[i:i + 2] for i in range(len(decl) - 1)]
    for names in dict.fromkeys(tuple(c) for c in cands):
        for form in ("record", "tuple"):
            yield _merge(cx, list(names), form)


# --------------------------------------------------------------------------- 4. split


def _split_shape(cx: Context, v: str) -> list[str | int] | None:
    """The fields (record) or components (tuple) every reachable value of ``v`` has."""
    vals = cx.values(v)
    if not vals:
        return None
    if all(isinstance(x, Rec) for x in vals):
        keys = {tuple(k for k, _ in x.fields) for x in vals}
        return list(next(iter(keys))) if len(keys) == 1 and 2 <= len(next(iter(keys))) <= MAX_PARTS else None
    if all(isinstance(x, Seq) for x in vals):
        n = {len(x.items) for x in vals}
        return list(range(1, next(iter(n)) + 1)) if len(n) == 1 and 2 <= next(iter(n)) <= MAX_PARTS else None
    return None


def _split_site(o: Occurrence, parts: dict, rhs: str, tmp: str) -> str:
    prime = "'" if o.kind == "assign" else ""
    sel = (lambda k: f"{tmp}.{k}") if isinstance(next(iter(parts)), str) else (lambda k: f"{tmp}[{k}]")
    body = " /\\ ".join(f"{name}{prime} = {sel(k)}" for k, name in parts.items())
    if o.op == "eq":
        return f"(LET {tmp} == {rhs} IN {body})"
    return f"(\\E {tmp} \\in {rhs} : {body})"


def _split_edits(cx: Context, v: str, parts: dict) -> Edits:
    e = Edits(cx.m)
    record = isinstance(next(iter(parts)), str)
    whole = ("[" + ", ".join(f"{k} |-> {n}" for k, n in parts.items()) + "]") if record \
        else ("<<" + ", ".join(parts.values()) + ">>")
    tmp = cx.namer()(f"new_{v}")
    occ = variable_occurrences(cx.m, {v}, cx.init_node)
    for o in occ:
        p = o.node.parent
        if o.kind == "read" and record and p.type == "record_value" and cx.m.t(p.named_children[-1]) in parts:
            e.node(p, parts[cx.m.t(p.named_children[-1])])  # v.f -> v_f
        elif o.kind == "read":
            e.node(o.node, read_as(o, whole))
        elif o.kind == "unchanged":
            e.node(o.node, "<<" + ", ".join(parts.values()) + ">>")
    for o in occ:  # after the reads: an assigned value reads them
        if o.kind in ("assign", "init"):
            e.node(o.site, _split_site(o, parts, _rhs(e, o), tmp))
    for t in {o.tuple.id: o.tuple for o in occ if o.kind in ("tuple", "unchanged_tuple")}.values():
        e.node(t, _tuple_text(cx, t, {v: list(parts.values())}))
    _substitute(cx, e, [v], lambda _: whole)
    _redeclare(cx, e, {v: list(parts.values())})
    return e


def _split_var(cx: Context, v: str) -> Variant | NotApplicable:
    why = _why_not(cx, [v])
    shape = _split_shape(cx, v)
    if why or shape is None:
        return NotApplicable("split_variable", f"split:{v}: {why or 'not a record or tuple of one shape in every reachable state'}")
    fresh = cx.namer()
    parts = {k: fresh(f"{v}_{k}") for k in shape}
    try:
        e = _split_edits(cx, v, parts)
    except _Skip as s:
        return NotApplicable("split_variable", f"split:{v}: {s}")
    step = "f" if isinstance(shape[0], str) else "i"
    pairs = tuple(Pair(Leaf(v, (step, k)), Leaf(n), Encoding()) for k, n in parts.items())
    return finish(cx, "split_variable", f"split:{v}", f"variable {v} split into {', '.join(parts.values())}", e,
                    pairs=pairs)


@generator("split_variable")
def split_variable(cx: Context) -> Iterator[Variant | NotApplicable]:
    """Class 4: a variable whose every reachable value is a record with the same fields
    (a function over strings is one) or a tuple of one length (a function over ``1..n``)
    split into one variable per field or component (``msg_src``, ``msg_dst``). Needs the
    reference's reachable states (:attr:`Context.states`)."""
    yield from _per_variable(cx, "split_variable", _split_var)


def _per_variable(cx: Context, cls: str, make) -> Iterator[Variant | NotApplicable]:
    """``make(cx, v)`` for each variable of the system module; without TLC's states, say so."""
    made = False
    for v in module_info(cx.ref.system_text).variables:
        r = make(cx, v)
        made = made or isinstance(r, Variant)
        yield r
    if not made and cx.states is None:
        yield NotApplicable(cls, "no reachable states of the reference")


# --------------------------------------------------------------------------- 6. re-encode


def _codes(atoms: list, mv_name: Callable[[str], str | None]) -> list[tuple[object, object]] | None:
    """(G atom, R atom) pairs of the re-encoding of R's ``atoms`` (sorted), by their type:
    booleans -> 0/1, 0/1 -> booleans, other numbers -> strings, strings and nameable
    model values -> numbers, order kept."""
    kinds = {type(a) for a in atoms}
    if len(kinds) != 1 or not 2 <= len(atoms) <= MAX_VALUES:
        return None
    kind = next(iter(kinds))
    if kind is Bool:
        return [(int(a.b), a) for a in atoms]
    if kind is int and set(atoms) <= {0, 1}:
        return [(Bool(bool(a)), a) for a in atoms]
    if kind is int:
        return [(Str(f"v{i}"), a) for i, a in enumerate(atoms)]
    if kind is ModelValue and any(mv_name(a.name) is None for a in atoms):
        return None
    return [(i, a) for i, a in enumerate(atoms)]


def _encoding_defs(names: tuple[str, ...], codes: list, pointwise: bool, mv: Callable[[str], str],
                   bound: tuple[str, str, str]) -> str:
    """``Enc(z)``/``Dec(z)`` (R value -> G value and back; any other value kept); for a
    function variable, ``Enc(f)``/``Dec(f)`` apply the atom ones (``Enc1``) to every value."""
    enc, dec, enc1, dec1 = names
    z, f, p = bound
    w = lambda a: to_tla(a, mv)  # noqa: E731
    a_enc, a_dec = (enc1, dec1) if pointwise else (enc, dec)
    out = [f"{a_enc}({z}) == CASE " + " [] ".join(f"{z} = {w(r)} -> {w(g)}" for g, r in codes) + f" [] OTHER -> {z}",
           f"{a_dec}({z}) == CASE " + " [] ".join(f"{z} = {w(g)} -> {w(r)}" for g, r in codes) + f" [] OTHER -> {z}"]
    if pointwise:
        out += [f"{x}({f}) == [{p} \\in DOMAIN {f} |-> {y}({f}[{p}])]" for x, y in ((enc, enc1), (dec, dec1))]
    return "\n".join(out) + "\n"


def _reencode_edits(cx: Context, v: str, names: tuple[str, ...], defs: str) -> Edits:
    enc, dec = names[:2]
    e = Edits(cx.m)
    occ = variable_occurrences(cx.m, {v}, cx.init_node)
    z = cx.namer()("z")
    for o in occ:
        if o.kind == "read":
            e.node(o.node, read_as(o, f"{dec}({v})"))
    for o in occ:
        if o.kind in ("assign", "init"):
            rhs = _rhs(e, o)
            e.node(o.rhs, f"{enc}({rhs})" if o.op == "eq" else f"{{{enc}({z}) : {z} \\in {rhs}}}")
    _substitute(cx, e, [v], lambda _: f"{dec}({v})")
    insts = _implicit(cx, [v])
    uses = [o.node for o in occ] + ([i for i, _ in insts] if isinstance(insts, list) else [])
    first = min(uses, key=lambda n: n.start_byte, default=None)
    if first is None:
        raise _Skip("never used")
    unit = first
    while unit.parent is not None and unit.parent.type != "module":
        unit = unit.parent
    e.replace(unit.start_byte, unit.start_byte, defs + "\n")
    return e


def _reencode(cx: Context, v: str) -> Variant | NotApplicable:
    vals = cx.values(v)
    found = _atoms(vals) if vals else None
    mvs = {c.value.strip(): c.name for c in cx.cfg.constants if c.op == "=" and c.name in cx.ref.constants}
    mv_name = mvs.get
    codes = _codes(sorted(found[0], key=sort_key), mv_name) if found else None
    why = _why_not(cx, [v])
    if why or codes is None:
        return NotApplicable("reencode", f"reencode:{v}: {why or 'not 2 to 8 values of one kind (nameable)'}")
    fresh = cx.namer()
    names = (fresh(f"Enc_{v}"), fresh(f"Dec_{v}"), fresh(f"EncValue_{v}"), fresh(f"DecValue_{v}"))
    defs = _encoding_defs(names, codes, found[1], lambda n: mvs[n], (fresh("z"), fresh("f"), fresh("p")))
    try:
        e = _reencode_edits(cx, v, names, defs)
    except _Skip as s:
        return NotApplicable("reencode", f"reencode:{v}: {s}")
    enc = Encoding(tuple(sorted(codes, key=lambda p: sort_key(p[0]))), found[1])
    kinds = f"{type(codes[0][1]).__name__} -> {type(codes[0][0]).__name__}"
    return finish(cx, "reencode", f"reencode:{v}", f"variable {v} re-encoded ({kinds}{', pointwise' if found[1] else ''})",
                    e, pairs=(Pair(Leaf(v), Leaf(v), enc),))


@generator("reencode")
def reencode(cx: Context) -> Iterator[Variant | NotApplicable]:
    """Class 6: a variable whose reachable values (or whose functions' values) are 2 to
    :data:`MAX_VALUES` atoms of one kind re-encoded by a bijection (booleans as 0/1, 0/1
    as booleans, numbers as strings ``"v0"``..., strings and model values the cfg names by
    a constant as numbers, order kept: Appendix I's control labels generalized): every
    read ``v`` becomes ``Dec_v(v)``, every assigned value ``e`` becomes ``Enc_v(e)``."""
    yield from _per_variable(cx, "reencode", _reencode)
