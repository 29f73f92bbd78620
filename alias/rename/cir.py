"""Consistent identifier renaming (CIR) of a task's TLA+ modules and cfg.

Every author-defined module name, constant, variable and operator gets a random name of
the same length (see :mod:`alias.rename.names`); one map ``old -> new`` (by name text)
renames every author module of the task, the cfg and every importing author module.
All TLA+ syntax comes from tree-sitter-tlaplus: the rewrite replaces the byte spans of
``identifier``/``identifier_ref`` nodes, so every other byte stays as it was (and,
because names keep their length, ``/\\`` / ``\\/`` junction columns stay aligned).

Identifier kinds (``RenameResult.identifiers[*]['kind']``), one row per
(module, name), the first matching kind in this order:

``module``     an author module name (file module or nested ``---- MODULE X ----``)
``constant``   declared by CONSTANT(S) (also ``CONSTANT F(_)``)
``variable``   declared by VARIABLE(S)
``recursive``  a module-level operator declared by RECURSIVE
``local``      a module-level LOCAL definition (operator, function or named instance)
``instance``   a named instance ``I == INSTANCE M`` / ``I(p) == INSTANCE M``
``function``   a module-level function definition ``f[x \\in S] == ...``
``operator``   a module-level operator definition, or a THEOREM/ASSUME/LEMMA name
``let``        a LET-defined operator or function (any depth)

Kept unchanged: keywords; standard and library modules and what they define; bound
variables (quantifiers, CHOOSE, set filter/map, function constructors and definitions,
LAMBDA, operator parameters incl. ``F(_)``, proof NEW/PICK/TAKE and proof DEFINE
names); record fields (``r.f``, ``[f |-> e]``, ``[f : S]``, ``!.f``); labels;
``Op!lab`` components after an operator; strings; comments, so a PlusCal algorithm
inside a comment stays in the original names (TLC ignores it; it will not match its
translation any more).

Resolution: an ``identifier_ref`` is renamed iff it is not bound by an enclosing binder
(binders are tried innermost first, so a bound variable whose text equals an operator of
an unrelated module, or a LET name of another operator, is kept) and the name is visible
in the module as an author definition: own definitions (LOCAL ones included), what
EXTENDS brings in (transitively, non-LOCAL), the definitions of unnamed INSTANCEs, and
for a nested module what its outer module defines.  ``I!Op``: ``I`` resolves in this
module (or in an enclosing LET), ``Op`` in the instanced module.  ``INSTANCE M WITH
x <- e``: ``x`` in ``M``, ``e`` here.  A parameter ``p`` of ``I(p) == INSTANCE M`` that
implicitly substitutes an author constant/variable ``p`` of ``M`` (no ``p <- e``) takes
``p``'s new name, else SANY would report a missing substitution.

Known limitations: a LOCAL INSTANCE is treated as exported; ``Op!name`` components after
an operator (labels, LET names inside ``Op``) are kept; names introduced by proof
DEFINE steps are kept like bound variables; implicit substitution by a bound variable
other than an instance parameter (an INSTANCE inside a LET of an operator whose
parameter is named like the instanced module's variable) is not handled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

import tree_sitter as ts

from alias.rename.names import NameGenerator, RenameError
from alias.tla.cfg import CfgError, parse_cfg, rename_cfg, tokenize
from alias.tla.lexer import string_spans
from alias.tla.syntax import STANDARD_MODULES, imported_modules, module_info, node_text, parse

__all__ = ["RenameError", "RenameResult", "rename_task", "rename_names", "leftover_identifiers", "KINDS"]

#: Kind vocabulary, in precedence order (see the module docstring).
KINDS = ("module", "constant", "variable", "recursive", "local", "instance", "function",
         "operator", "let")
_KIND_RANK = {k: i for i, k in enumerate(KINDS)}

_SKIP = frozenset({"comment", "block_comment", "string"})
_DEFS = frozenset({"operator_definition", "function_definition", "module_definition"})
_QUANT_BINDERS = frozenset({
    "bounded_quantification", "unbounded_quantification", "choose", "set_filter",
    "set_map", "function_literal", "lambda", "pick_proof_step", "take_proof_step",
    "witness_proof_step",
})

# Decisions of the classifier.
RENAME = "rename"            # an author definition site or a reference to one
UNRESOLVED = "unresolved"    # a reference to nothing visible (kept)
KEEP = "keep"                # bound variable, field, library name, label, ... (kept)


@dataclass
class RenameResult:
    """Outcome of :func:`rename_task`.

    ``mapping``: old name -> new name, one entry per renamed name text of the task.
    ``identifiers``: rows ``{'module', 'name', 'new_name', 'kind'}`` (original module
    name; kind from :data:`KINDS`), sorted by module then name.
    ``modules``: new module name -> renamed text (file names follow these names).
    ``module_names``: old author module name -> new name (nested modules included).
    ``cfg_text``: the renamed cfg, or ``None`` if none was given.
    """

    mapping: dict[str, str]
    identifiers: list[dict]
    modules: dict[str, str]
    module_names: dict[str, str]
    cfg_text: str | None
    library_modules: dict[str, str] = field(default_factory=dict, repr=False)


@dataclass
class _Entry:
    author: bool
    cls: str                 # 'param' (constant/variable) | 'def' | 'inst'
    target: str | None = None  # instanced module of a named instance


@dataclass
class _Mod:
    name: str
    node: ts.Node
    src: bytes
    file: str
    author: bool
    parent: "_Mod | None" = None
    own: dict[str, _Entry] = field(default_factory=dict)
    local: set[str] = field(default_factory=set)
    extends: list[str] = field(default_factory=list)
    instances: list[str] = field(default_factory=list)   # unnamed, LOCAL or not
    nested: dict[str, "_Mod"] = field(default_factory=dict)


def _first(node: ts.Node, typ: str) -> ts.Node | None:
    return next((c for c in node.named_children if c.type == typ), None)


def _def_name(defn: ts.Node) -> ts.Node | None:
    n = defn.child_by_field_name("name")
    if n is not None:
        return n if n.type == "identifier" else None
    return _first(defn, "identifier")


def _decl_name(decl: ts.Node) -> ts.Node | None:
    """Identifier declared by an ``identifier`` or ``operator_declaration`` node."""
    if decl.type == "identifier":
        return decl
    if decl.type == "operator_declaration":
        return _first(decl, "identifier")
    return None


def _walk(node: ts.Node) -> Iterator[ts.Node]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


class _Task:
    """Parsed modules of one task plus the scope analysis over them."""

    def __init__(self, files: dict[str, str], author_files: set[str]):
        self.files = files
        self.srcs: dict[str, bytes] = {}
        self.trees: dict[str, ts.Tree] = {}
        self.mods: dict[str, _Mod] = {}
        self.all_mods: list[_Mod] = []
        self.file_mod: dict[str, _Mod] = {}
        self._vis: dict[str, dict[str, _Entry]] = {}
        self._exp: dict[str, dict[str, _Entry]] = {}
        self._binders: dict[int, dict[str, str]] = {}
        for fname in sorted(files):
            src = files[fname].encode("utf-8")
            tree = parse(files[fname])
            self.srcs[fname], self.trees[fname] = src, tree
            tops = [c for c in tree.root_node.children if c.type == "module"]
            for i, top in enumerate(tops):
                m = self._register(top, src, fname, fname in author_files, None, files)
                if i == 0 and m is not None:
                    self.file_mod[fname] = m

    # ------------------------------------------------------------------ collection
    def _register(self, node, src, fname, author, parent, files_) -> _Mod | None:
        nm = _def_name(node)
        name = node_text(nm, src) if nm is not None else fname
        m = _Mod(name=name, node=node, src=src, file=fname, author=author, parent=parent)
        self.all_mods.append(m)
        if parent is not None:
            parent.nested.setdefault(name, m)
        if parent is None and node.parent is not None and \
                node == next(c for c in node.parent.children if c.type == "module"):
            self.mods[fname] = m          # a file is found by its file (module) name
        elif name not in files_:
            self.mods.setdefault(name, m)
        for unit in node.named_children:
            is_local = unit.type == "local_definition"
            target = unit.named_children[0] if is_local and unit.named_children else unit
            t = target.type
            if t == "module":
                self._register(target, src, fname, author, m, files_)
                continue
            if t == "extends":
                m.extends += [node_text(c, src) for c in target.named_children
                              if c.type == "identifier_ref"]
            elif t == "instance":
                ref = _first(target, "identifier_ref")
                if ref is not None:
                    m.instances.append(node_text(ref, src))
            elif t in ("constant_declaration", "variable_declaration"):
                for c in target.named_children:
                    d = _decl_name(c)
                    if d is not None:
                        m.own[node_text(d, src)] = _Entry(author, "param")
            elif t == "recursive_declaration":
                for c in target.named_children:
                    d = _decl_name(c)
                    if d is not None:
                        m.own.setdefault(node_text(d, src), _Entry(author, "def"))
            elif t in _DEFS or t in ("theorem", "assumption"):
                d = _def_name(target)
                if d is None:
                    continue
                nm_ = node_text(d, src)
                if t == "module_definition":
                    inst = _first(target, "instance")
                    ref = _first(inst, "identifier_ref") if inst is not None else None
                    m.own[nm_] = _Entry(author, "inst", node_text(ref, src) if ref else None)
                else:
                    m.own[nm_] = _Entry(author, "def")
                if is_local:
                    m.local.add(nm_)
        return m

    def lookup(self, name: str, ctx: "_Mod | None") -> "_Mod | None":
        """The module ``name`` as seen from module ``ctx``: a nested module of ``ctx``
        or of a module around it first, then a file module or any other module."""
        while ctx is not None:
            if name in ctx.nested:
                return ctx.nested[name]
            ctx = ctx.parent
        return self.mods.get(name)

    def exported(self, m: "_Mod | None", _stack: tuple = ()) -> dict[str, _Entry]:
        """Names a module exports to EXTENDS (non-LOCAL, transitively)."""
        if m is None or m.node.id in _stack:
            return {}
        if m.node.id in self._exp:
            return self._exp[m.node.id]
        st = _stack + (m.node.id,)
        out: dict[str, _Entry] = {}
        for e in m.extends:
            out.update(self.exported(self.lookup(e, m), st))
        for i in m.instances:   # LOCAL INSTANCE is not exported; approximate: all
            out.update({k: v for k, v in self.exported(self.lookup(i, m), st).items()
                        if v.cls != "param"})
        out.update({k: v for k, v in m.own.items() if k not in m.local})
        self._exp[m.node.id] = out
        return out

    def visible(self, m: _Mod) -> dict[str, _Entry]:
        key = f"{m.file}:{m.node.id}"
        if key in self._vis:
            return self._vis[key]
        out: dict[str, _Entry] = {}
        if m.parent is not None:
            out.update(self.visible(m.parent))
        for e in m.extends:
            out.update(self.exported(self.lookup(e, m), (m.node.id,)))
        for i in m.instances:
            out.update({k: v for k, v in self.exported(self.lookup(i, m), (m.node.id,)).items()
                        if v.cls != "param"})
        out.update(m.own)
        self._vis[key] = out
        return out

    def is_author_module(self, name: str, ctx: "_Mod | None" = None) -> bool | None:
        """True/False for a known module, None for an unknown one."""
        m = self.lookup(name, ctx)
        return None if m is None else m.author

    # ------------------------------------------------------------------ binders
    def binders(self, a: ts.Node, src: bytes) -> dict[str, str]:
        """Names bound by node ``a`` for its subtree: name -> 'bound' | 'let'."""
        got = self._binders.get(a.id)
        if got is not None:
            return got
        out: dict[str, str] = {}
        t = a.type
        if t in ("operator_definition", "module_definition"):
            name = _def_name(a)
            for c in a.named_children:
                if c.type == "identifier" and c != name:
                    out[node_text(c, src)] = "bound"
                elif c.type == "operator_declaration":
                    d = _decl_name(c)
                    if d is not None:
                        out[node_text(d, src)] = "bound"
        elif t == "function_definition" or t in _QUANT_BINDERS:
            name = _def_name(a) if t == "function_definition" else None
            for c in a.named_children:
                if c.type == "identifier" and c != name:
                    out[node_text(c, src)] = "bound"
                elif c.type in ("quantifier_bound", "tuple_of_identifiers"):
                    for d in _walk(c):
                        if d.type == "identifier" and d.parent.type in (
                                "quantifier_bound", "tuple_of_identifiers"):
                            out[node_text(d, src)] = "bound"
                        if d.type == "set_in":
                            break
        elif t == "let_in":
            for c in a.named_children:
                if c.type in _DEFS:
                    d = _def_name(c)
                    if d is not None:
                        out[node_text(d, src)] = "let"
                elif c.type == "recursive_declaration":
                    for x in c.named_children:
                        d = _decl_name(x)
                        if d is not None:
                            out[node_text(d, src)] = "let"
        elif t == "theorem":
            for d in _walk(a):
                if d.type == "new":
                    for c in d.named_children:
                        x = _decl_name(c)
                        if x is not None:
                            out[node_text(x, src)] = "bound"
                elif d.type in ("pick_proof_step", "take_proof_step", "witness_proof_step"):
                    out.update(self.binders(d, src))
                elif d.type == "definition_proof_step":
                    for c in d.named_children:
                        if c.type in _DEFS:
                            x = _def_name(c)
                            if x is not None:
                                out[node_text(x, src)] = "bound"
        self._binders[a.id] = out
        return out

    # ------------------------------------------------------------------ classifier
    def classify(self, fname: str) -> Iterator[tuple[ts.Node, str, str, _Mod]]:
        """Yield ``(node, decision, kind, module)`` for every identifier token of a file
        outside comments and strings.  ``kind`` is a :data:`KINDS` member for definition
        sites, ``'ref'`` for renamed references, else a short reason."""
        src = self.srcs[fname]
        root = self.trees[fname].root_node
        for top in (c for c in root.children if c.type == "module"):
            m = self._mod_of(top, fname)
            yield from self._visit(top, m, src)

    def _mod_of(self, node: ts.Node, fname: str) -> _Mod:
        for m in self.all_mods:
            if m.file == fname and m.node == node:
                return m
        raise RenameError(f"unregistered module in {fname}")

    def _visit(self, root: ts.Node, m: _Mod, src: bytes):
        handled: set[int] = set()
        stack = [root]
        while stack:
            n = stack.pop()
            t = n.type
            if t in _SKIP:
                continue
            if t == "module" and n != m.node:
                yield from self._visit(n, self._mod_of(n, m.file), src)
                continue
            if t == "identifier":
                yield self._def_site(n, m, src)
            elif t == "identifier_ref":
                if n.id not in handled:
                    yield self._ref(n, m, src)
            elif t in ("prefixed_op", "subexpression"):
                for ref, dec, kind in self._chain(n, m, src):
                    handled.add(ref.id)
                    yield ref, dec, kind, m
            stack.extend(reversed(n.children))

    def implicit_params(self, md: ts.Node, m: _Mod, src: bytes) -> set[str]:
        """Parameters of ``I(p) == INSTANCE M ...`` that implicitly substitute an author
        constant/variable ``p`` of ``M`` (no ``p <- e`` given): they must follow M's
        renaming, or SANY reports a missing substitution."""
        key = -2 * md.id - 2
        got = self._binders.get(key)
        if got is None:
            got = {}
            inst = _first(md, "instance")
            ref = _first(inst, "identifier_ref") if inst is not None else None
            tm = self.lookup(node_text(ref, src), m) if ref is not None else None
            if tm is not None and tm.author:
                explicit = {node_text(sub.named_children[0], src)
                            for sub in inst.named_children
                            if sub.type == "substitution" and sub.named_children}
                vis = self.visible(tm)
                for name, kind in self.binders(md, src).items():
                    e = vis.get(name)
                    if e is not None and e.author and e.cls == "param" \
                            and name not in explicit:
                        got[name] = "implicit"
            self._binders[key] = got
        return set(got)

    def _def_site(self, n: ts.Node, m: _Mod, src: bytes):
        p = n.parent
        pt = p.type
        kind = None
        if pt == "module_definition" and _def_name(p) != n and m.author and \
                node_text(n, src) in self.implicit_params(p, m, src):
            return n, RENAME, "implicit-param", m
        if pt == "operator_declaration" and p.parent.type == "module_definition" and \
                m.author and node_text(n, src) in self.implicit_params(p.parent, m, src):
            return n, RENAME, "implicit-param", m
        if pt == "module":
            kind = "module"
        elif pt in _DEFS or pt in ("theorem", "assumption"):
            if _def_name(p) == n:
                gp = p.parent
                if gp.type == "local_definition":
                    kind = "local"
                elif gp.type == "module":
                    kind = {"function_definition": "function",
                            "module_definition": "instance"}.get(pt, "operator")
                elif gp.type == "let_in":
                    kind = "let"
        elif pt in ("constant_declaration", "variable_declaration"):
            kind = "constant" if pt == "constant_declaration" else "variable"
        elif pt == "operator_declaration" and _decl_name(p) == n:
            gp = p.parent
            if gp.type == "constant_declaration":
                kind = "constant"
            elif gp.type == "recursive_declaration":
                kind = {"module": "recursive", "let_in": "let"}.get(gp.parent.type)
        if kind is None:
            return n, KEEP, "binding", m
        if kind == "operator" and node_text(n, src) in self._recursive_names(m):
            kind = "recursive"
        return n, (RENAME if m.author else KEEP), kind, m

    def _recursive_names(self, m: _Mod) -> set[str]:
        key = -m.node.id - 1
        got = self._binders.get(key)
        if got is None:
            got = {}
            for unit in m.node.named_children:
                if unit.type == "recursive_declaration":
                    for c in unit.named_children:
                        d = _decl_name(c)
                        if d is not None:
                            got[node_text(d, m.src)] = "rec"
            self._binders[key] = got
        return set(got)

    def _module_ref(self, name: str, ctx: _Mod) -> tuple[str, str]:
        a = self.is_author_module(name, ctx)
        if a:
            return RENAME, "module-ref"
        if a is False or name in STANDARD_MODULES:
            return KEEP, "library"
        return UNRESOLVED, "unknown-module"

    def _ref(self, n: ts.Node, m: _Mod, src: bytes):
        p = n.parent
        pt = p.type
        text = node_text(n, src)
        if pt == "extends" or (pt == "instance" and _first(p, "identifier_ref") == n):
            dec, why = self._module_ref(text, m)
            return n, dec, why, m
        if pt == "substitution" and p.named_children and p.named_children[0] == n:
            inst = p.parent
            ref = _first(inst, "identifier_ref") if inst is not None else None
            target = node_text(ref, src) if ref is not None else ""
            return (n, *self._in_module(self.lookup(target, m), text), m)
        if pt == "except_update_record_field":
            return n, KEEP, "field", m
        if pt == "record_value" and p.named_children and p.named_children[0] != n:
            return n, KEEP, "field", m
        return (n, *self._resolve(n, text, m, src), m)

    def _in_module(self, tm: "_Mod | None", text: str) -> tuple[str, str]:
        if tm is None or not tm.author:
            return KEEP, "library"
        e = self.visible(tm).get(text)
        if e is None:
            return UNRESOLVED, "unresolved"
        return (RENAME, "ref") if e.author else (KEEP, "library")

    def _resolve(self, n: ts.Node, text: str, m: _Mod, src: bytes) -> tuple[str, str]:
        a = n.parent
        while a is not None and a != m.node:
            b = self.binders(a, src) if a.type in _BINDER_TYPES else None
            if b and text in b:
                if a.type == "module_definition" and m.author and \
                        text in self.implicit_params(a, m, src):
                    return RENAME, "implicit-param"
                if b[text] == "let":
                    return (RENAME, "ref") if m.author else (KEEP, "library")
                return KEEP, "bound"
            a = a.parent
        e = self.visible(m).get(text)
        if e is None:
            return UNRESOLVED, "unresolved"
        return (RENAME, "ref") if e.author else (KEEP, "library")

    def _let_instance(self, r: ts.Node, text: str, src: bytes) -> _Entry | None:
        """The entry of a LET-defined ``text == INSTANCE M`` around ``r``, if any."""
        a = r.parent
        while a is not None:
            if a.type == "let_in":
                for c in a.named_children:
                    d = _def_name(c) if c.type == "module_definition" else None
                    if d is not None and node_text(d, src) == text:
                        inst = _first(c, "instance")
                        ref = _first(inst, "identifier_ref") if inst is not None else None
                        return _Entry(False, "inst", node_text(ref, src) if ref else None)
            a = a.parent
        return None

    def _chain(self, n: ts.Node, m: _Mod, src: bytes):
        """Decisions for the named components of ``A!B!C`` / ``I(x)!Op(y)``."""
        refs: list[ts.Node | None] = []

        def comp_ref(c: ts.Node) -> ts.Node | None:
            if c.type == "identifier_ref":
                return c
            if c.type == "bound_op" and c.named_children and \
                    c.named_children[0].type == "identifier_ref":
                return c.named_children[0]
            return None

        for c in n.named_children:
            if c.type == "subexpr_prefix":
                for comp in c.named_children:
                    if comp.type == "subexpr_component":
                        refs.append(comp_ref(comp.named_children[0])
                                    if comp.named_children else None)
                    else:
                        refs.append(None)
            elif c.type in ("identifier_ref", "bound_op"):
                refs.append(comp_ref(c))
            else:
                refs.append(None)
        ctx: _Mod | None = m      # a module, or None after an operator
        first = True
        for r in refs:
            if r is None:
                ctx, first = None, False
                continue
            text = node_text(r, src)
            if first:
                dec, why = self._resolve(r, text, m, src)
                e = self.visible(m).get(text) if why != "bound" else None
                if why == "ref" or why == "library":
                    e = self._let_instance(r, text, src) or e
            elif isinstance(ctx, _Mod):
                dec, why = self._in_module(ctx, text)
                e = self.visible(ctx).get(text) if ctx.author else None
            else:
                dec, why, e = KEEP, "subexpr-label", None
            yield r, dec, why
            home = ctx if ctx is not None else m
            ctx = self.lookup(e.target, home) if e is not None and e.cls == "inst" \
                and e.target else None
            first = False


_BINDER_TYPES = _DEFS | _QUANT_BINDERS | {"let_in", "theorem"}


def _all_tokens(task: _Task, author_files: set[str]) -> set[str]:
    """Every identifier token of the author files (comments included) plus every
    name that a library module defines, declares or names as a module."""
    out: set[str] = set()
    for m in task.all_mods:
        if not m.author:
            out.add(m.name)
            out.update(m.own)
    for fname in author_files:
        tree = task.trees[fname]
        src = task.srcs[fname]
        for n in _walk(tree.root_node):
            if n.type in ("identifier", "identifier_ref"):
                out.add(node_text(n, src))
    return out


def _cfg_idents(cfg_text: str | None) -> set[str]:
    if not cfg_text:
        return set()
    return {t.text for t in tokenize(cfg_text) if t.kind == "ident"}


def _import_closure(modules: dict[str, str], author_files: set[str],
                    library: dict[str, str]) -> dict[str, str]:
    """The author modules plus the library modules they import, transitively."""
    files = {k: modules[k] for k in author_files}
    pool = {**library, **{k: v for k, v in modules.items() if k not in author_files}}
    todo = sorted(files)
    while todo:
        for name in imported_modules(files[todo.pop()]):
            if name not in files and name in pool:
                files[name] = pool[name]
                todo.append(name)
    return files


def rename_task(
    modules: dict[str, str],
    author: set[str] | None,
    cfg_text: str | None,
    seed: int | str,
    salt: str,
    library_modules: dict[str, str] | None = None,
) -> RenameResult:
    """Rename one task consistently; see the module docstring.

    ``modules``: module (file) name -> text for the task's modules.  ``author``: the
    names in ``modules`` whose definitions are renamed (``None`` or empty: all of them);
    the others are treated like ``library_modules``, whose names and definitions are
    kept and reserved.  ``seed``/``salt`` fix the random names.  Raises
    :class:`RenameError` when no free name exists.
    """
    author_files = set(modules) if not author else set(author) & set(modules)
    files = _import_closure(modules, author_files, library_modules or {})
    task = _Task(files, author_files)

    # 1. classify every token of the author files
    events: dict[str, list[tuple[int, int, str]]] = {}
    kinds: dict[tuple[str, str], str] = {}
    names: set[str] = set()
    for fname in sorted(author_files):
        src = task.srcs[fname]
        evs = []
        for node, dec, kind, mod in task.classify(fname):
            if dec != RENAME:
                continue
            text = node_text(node, src)
            evs.append((node.start_byte, node.end_byte, text))
            names.add(text)
            if kind in _KIND_RANK:
                key = (mod.name, text)
                if key not in kinds or _KIND_RANK[kind] < _KIND_RANK[kinds[key]]:
                    kinds[key] = kind
        events[fname] = evs
    # module names of author files are renamed even if the header lacks a name node
    for fname in author_files:
        m = task.file_mod.get(fname)
        if m is not None and m.name == fname:
            names.add(fname)
            kinds[(fname, fname)] = "module"

    # 2. new names
    taken = _all_tokens(task, author_files) | _cfg_idents(cfg_text) | set(files)
    gen = NameGenerator(seed, salt)
    mapping: dict[str, str] = {}
    for old in sorted(names):
        new = gen.new_name(old, taken)
        taken.add(new)
        mapping[old] = new

    # 3. rewrite by byte spans (and the strings that name a _POSSIBLE entry); make the
    # implicit substitutions of library instances explicit
    for fname, evs in _possible_string_events(task, author_files, cfg_text, mapping).items():
        events[fname] = events[fname] + evs
    inserts = _instance_substitutions(task, author_files, mapping)
    out_modules: dict[str, str] = {}
    for fname in sorted(author_files):
        edits = [(a, b, mapping[t].encode("ascii")) for a, b, t in events[fname]] + inserts.get(fname, [])
        new_name = mapping.get(fname, fname)
        out_modules[new_name] = _apply_edits(task.srcs[fname], edits).decode("utf-8")

    module_names = {k: mapping[k] for (mod, k), kind in kinds.items()
                    if kind == "module" and k in mapping}
    identifiers = [
        {"module": mod, "name": name, "new_name": mapping[name], "kind": kind}
        for (mod, name), kind in sorted(kinds.items())
    ]
    new_cfg = None
    if cfg_text is not None:
        new_cfg = rename_cfg(cfg_text, mapping)
    lib = {k: v for k, v in files.items() if k not in author_files}
    return RenameResult(mapping=mapping, identifiers=identifiers, modules=out_modules,
                        module_names=module_names, cfg_text=new_cfg, library_modules=lib)


def _apply_edits(src: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    """``src`` with each ``(start, end, new)`` byte span replaced (an insertion when
    ``start == end``); a span that overlaps an earlier one is skipped."""
    parts, pos = [], 0
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1])):
        if start < pos:
            continue
        parts += [src[pos:start], new]
        pos = end
    parts.append(src[pos:])
    return b"".join(parts)


def _instance_substitutions(task: "_Task", author_files: set[str],
                            mapping: dict[str, str]) -> dict[str, list[tuple[int, int, bytes]]]:
    """Insertions that make explicit the substitutions an ``INSTANCE`` of a library module
    leaves implicit (``INSTANCE Stuttering`` substitutes the instantiating module's ``s``
    and ``vars`` for Stuttering's parameters of the same names): once those names are
    renamed, the instance needs ``WITH s <- <new s>``, or SANY reports a missing
    substitution. Library modules keep their names, so only their instances need this."""
    params = {f: module_info(text) for f, text in task.files.items() if f not in author_files}
    out: dict[str, list[tuple[int, int, bytes]]] = {}
    for fname in sorted(author_files):
        src = task.srcs[fname]
        for node in _nodes(task.trees[fname].root_node, "instance"):
            target = next((c for c in node.named_children if c.type == "identifier_ref"), None)
            info = params.get(node_text(target, src)) if target is not None else None
            if info is None:
                continue
            explicit = {node_text(c.named_children[0], src) for c in node.named_children
                        if c.type == "substitution" and c.named_children}
            missing = [p for p in info.constants + info.variables if p in mapping and p not in explicit]
            if missing:
                subs = ", ".join(f"{p} <- {mapping[p]}" for p in missing)
                glue = ", " if explicit else " WITH "
                out.setdefault(fname, []).append((node.end_byte, node.end_byte, (glue + subs).encode("ascii")))
    return out


def _nodes(node, kind: str):
    if node.type == kind:
        yield node
    for c in node.children:
        yield from _nodes(c, kind)


def _possible_names(cfg_text: str | None) -> set[str]:
    try:
        return set(parse_cfg(cfg_text).possible) if cfg_text else set()
    except CfgError:
        return set()


def _possible_string_events(task: "_Task", author_files: set[str], cfg_text: str | None,
                            mapping: dict[str, str]) -> dict[str, list[tuple[int, int, str]]]:
    """Byte spans of the string literals whose text is a renamed name of the cfg's
    ``_POSSIBLE`` section (TLC v1.8.0): TLC reports how often each such state or action
    occurred under its name, and a spec reads the counts back by that name as a string
    (``_Counts["HasFour"]``), so the string must follow the operator's new name."""
    names = {n for n in _possible_names(cfg_text) if n in mapping}
    out: dict[str, list[tuple[int, int, str]]] = {}
    if not names:
        return out
    for fname in sorted(author_files):
        text = task.srcs[fname].decode("utf-8")
        for start, end in string_spans(text):
            inner = text[start + 1:end - 1]
            if end - start >= 2 and text[start] == '"' and text[end - 1] == '"' and inner in names:
                b0 = len(text[:start + 1].encode("utf-8"))
                out.setdefault(fname, []).append((b0, b0 + len(inner.encode("utf-8")), inner))
    return out


def leftover_identifiers(
    result: RenameResult, originals: Iterable[str] | None = None
) -> list[tuple[str, str, int]]:
    """Tokens of the renamed modules that still carry an original author name.

    ``originals``: the original names (default: the keys of ``result.mapping``).  A
    token (outside comments and strings) is reported as ``(new module name, name,
    1-based line)`` when it equals an original name and is neither a bound variable,
    a parameter, a record field, a label nor a name that resolves into a library module.
    """
    orig = set(result.mapping if originals is None else originals)
    files = dict(result.library_modules)
    files.update(result.modules)
    task = _Task(files, set(result.modules))
    out: list[tuple[str, str, int]] = []
    for fname in sorted(result.modules):
        src = task.srcs[fname]
        for node, dec, kind, mod in task.classify(fname):
            text = node_text(node, src)
            if text in orig and dec in (RENAME, UNRESOLVED):
                out.append((fname, text, node.start_point[0] + 1))
    return out


def rename_names(
    modules: dict[str, str],
    mapping: dict[str, str],
    author: set[str] | None = None,
    library_modules: dict[str, str] | None = None,
) -> dict[str, str]:
    """Apply a fixed ``mapping`` (old name -> new name, any lengths) to the author
    modules, with the same resolution as :func:`rename_task`: only references to author
    definitions (constants, variables, operators, module names) whose text is a key of
    ``mapping`` change; bound variables, record fields, strings and comments stay.

    Used by the behavior-based grade to translate an output into the reference's
    vocabulary (Methods "Behavior-based grade") and by the grader controls to rename a
    reference's operators (Appendix J).  Returns the rewritten author modules keyed by
    their (possibly new) module names.  Raises :class:`RenameError` when a new name is
    already an identifier of the author modules that is not itself renamed (the result
    would capture it).
    """
    author_files = set(modules) if not author else set(author) & set(modules)
    files = _import_closure(modules, author_files, library_modules or {})
    task = _Task(files, author_files)
    events: dict[str, list[tuple[int, int, str]]] = {}
    for fname in sorted(author_files):
        src = task.srcs[fname]
        evs = []
        renamed: set[str] = set()
        tokens: set[str] = set()  # names in this file's code a new name could capture
        for node, dec, why, _mod in task.classify(fname):
            text = node_text(node, src)
            if dec == RENAME and text in mapping:
                evs.append((node.start_byte, node.end_byte, text))
                renamed.add(text)
            elif why not in ("field", "subexpr-label", "label") and not (
                    why == "binding" and node.parent is not None
                    and node.parent.type in ("record_literal", "set_of_records")):
                tokens.add(text)
        mod = task.file_mod.get(fname)
        visible = set(task.visible(mod)) if mod is not None else set()
        for old in renamed:
            new = mapping[old]
            if new != old and new not in renamed and (new in tokens or (new in visible and new not in mapping)):
                raise RenameError(f"renaming {old} to {new} in {fname} would capture the existing name {new}")
        events[fname] = evs
    out: dict[str, str] = {}
    for fname in sorted(author_files):
        src = task.srcs[fname]
        parts, pos = [], 0
        for start, end, text in sorted(events[fname]):
            if start < pos:
                continue
            parts += [src[pos:start], mapping[text].encode("utf-8")]
            pos = end
        parts.append(src[pos:])
        out[mapping.get(fname, fname)] = b"".join(parts).decode("utf-8")
    return out
