"""Locating an output's specification formula and splitting it into ``I /\\ [][N]_v``.

Appendix H: the grader locates the output's specification formula as the operator the
cfg names, an operator called ``Spec``, or any definition of the shape ``I /\\ [][N]_v``
(further conjuncts, such as fairness, are allowed).  The reverse check needs ``I``,
``N`` and ``v`` separately; :func:`split_spec` returns their source texts with the
column where each starts, so that a junction list inside them stays aligned when the
text is copied into a new definition.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from alias.tla.syntax import node_text, parse

_TEMPORAL = {"always", "eventually", "fairness", "step_expr_or_stutter", "leads_to",
             "temporal_forall", "temporal_exists"}
_CLOSING = re.compile(r"^\s*={4,}\s*$", re.M)


@dataclass(frozen=True)
class Piece:
    """A source fragment: its text and the 0-based column of its first character."""

    text: str
    column: int


@dataclass(frozen=True)
class SpecShape:
    """``init``: the non-temporal conjuncts (``I``); ``next``: ``N``; ``vars``: ``v``;
    ``fairness``: the other temporal conjuncts (``WF_v(A)``, ...)."""

    name: str
    init: tuple[Piece, ...]
    next: Piece
    vars: Piece
    fairness: tuple[Piece, ...] = ()


def _definitions(text: str) -> dict[str, object]:
    """Top-level, parameterless operator definitions of the first module: name -> body node."""
    tree = parse(text)
    out: dict[str, object] = {}
    for mod in tree.root_node.children:
        if mod.type != "module":
            continue
        for c in mod.children:
            if c.type == "operator_definition":
                named = next((x for x in c.children if x.type == "identifier"), None)
                if named is None or any(x.type == "(" for x in c.children):  # parameters
                    continue
                out[node_text(named, tree_src(text))] = c.children[-1]
        break
    return out


def tree_src(text: str) -> bytes:
    return text.encode("utf-8")


def _conjuncts(node) -> list:
    if node.type == "parentheses":
        inner = [c for c in node.children if c.type not in ("(", ")")]
        return _conjuncts(inner[0]) if len(inner) == 1 else [node]
    if node.type == "bound_infix_op" and any(c.type == "land" for c in node.children):
        parts = [c for c in node.children if c.type != "land"]
        return [x for p in parts for x in _conjuncts(p)]
    if node.type == "conj_list":
        out = []
        for item in node.children:
            if item.type == "conj_item":
                expr = [c for c in item.children if c.type != "bullet_conj"]
                if expr:
                    out += _conjuncts(expr[-1])
        return out
    return [node]


def _has_temporal(node, defs: dict, src: bytes, depth: int = 0) -> bool:
    """Whether ``node`` contains a temporal operator, following names in ``defs``
    (name -> body node, or name -> (body node, source bytes)) up to three levels."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in _TEMPORAL:
            return True
        if n.type == "identifier_ref" and depth < 3:
            name = node_text(n, src)
            if name in defs:
                d = defs[name]
                body, bsrc = d if isinstance(d, tuple) else (d, src)
                if _has_temporal(body, defs, bsrc, depth + 1):
                    return True
        stack.extend(n.children)
    return False


def _box(node):
    """``[][N]_v`` node -> (N node, v node), else None."""
    if node.type != "bound_prefix_op" or len(node.children) != 2:
        return None
    op, arg = node.children
    if op.type != "always" or arg.type != "step_expr_or_stutter":
        return None
    kids = arg.children
    try:
        i = next(k for k, c in enumerate(kids) if c.type == "[")
        j = next(k for k, c in enumerate(kids) if c.type == "]_")
    except StopIteration:
        return None
    inner = kids[i + 1:j]
    if len(inner) != 1 or j + 1 >= len(kids):
        return None
    return inner[0], kids[j + 1]


def _piece(node, src: bytes) -> Piece:
    return Piece(node_text(node, src), node.start_point[1])


def split_spec(text: str, name: str, _depth: int = 0, *, extra: tuple[str, ...] = ()) -> SpecShape | None:
    """Split definition ``name`` of module ``text`` as ``I /\\ [][N]_v /\\ ...``.

    A conjunct that names another definition with a temporal formula is expanded
    (``LSpec == HC /\\ WF_hr(HCnxt)`` with ``HC == HCini /\\ [][HCnxt]_hr``), up to
    three levels; ``extra``: texts of modules whose definitions ``text`` can see (e.g.
    the module a wrapper EXTENDS).  Returns ``None`` when the definition is missing or
    has another shape (no ``[][N]_v`` conjunct, two of them, or no non-temporal
    conjunct).
    """
    defs: dict[str, tuple] = {}
    for t in reversed((text,) + tuple(extra)):
        src_t = tree_src(t)
        for k, body in _definitions(t).items():
            defs[k] = (body, src_t)
    if name not in defs:
        return None
    body, src = defs[name]
    plain = defs

    def expand(node, src, depth):
        out = []
        for c in _conjuncts(node):
            if c.type == "identifier_ref" and depth < 3:
                ref = node_text(c, src)
                if ref in defs:
                    b, s2 = defs[ref]
                    if _has_temporal(b, plain, s2):
                        out += expand(b, s2, depth + 1)
                        continue
            out.append((c, src))
        return out

    conj = expand(body, src, _depth)
    boxes = [(c, s, _box(c)) for c, s in conj if _box(c) is not None]
    if len(boxes) != 1:
        return None
    inits = [(c, s) for c, s in conj if not _has_temporal(c, plain, s)]
    if not inits:
        return None
    _c, bsrc, (n_node, v_node) = boxes[0]
    fair = [(c, s) for c, s in conj if _box(c) is None and _has_temporal(c, plain, s)]
    return SpecShape(name=name, init=tuple(_piece(c, s) for c, s in inits),
                     next=_piece(n_node, bsrc), vars=_piece(v_node, bsrc),
                     fairness=tuple(_piece(c, s) for c, s in fair))


def spec_shaped_definitions(text: str, extra: tuple[str, ...] = ()) -> list[str]:
    """Names of the definitions of ``text`` with the shape ``I /\\ [][N]_v`` (source
    order; ``extra`` as for :func:`split_spec`)."""
    return [n for n in _definitions(text) if split_spec(text, n, extra=extra) is not None]


def defined_names(text: str) -> set[str]:
    """Top-level parameterless definitions of ``text``."""
    return set(_definitions(text))


def definition_block(prefix: str, shape: SpecShape) -> str:
    """TLA+ definitions ``<prefix>Init``, ``<prefix>Next``, ``<prefix>Vars`` for ``shape``,
    each body on its own line at its original column (junction lists stay aligned)."""
    lines = []
    for i, p in enumerate(shape.init):
        lines += [f"{prefix}Init{i} ==", _pad(p)]
    lines.append(f"{prefix}Init == " + " /\\ ".join(f"{prefix}Init{i}" for i in range(len(shape.init))))
    lines += [f"{prefix}Next ==", _pad(shape.next)]
    lines += [f"{prefix}Vars ==", _pad(shape.vars)]
    return "\n".join(lines) + "\n"


def fairness_block(prefix: str, shape: SpecShape) -> str:
    """A TLA+ definition ``<prefix>Fair``: the conjunction of ``shape``'s fairness
    conjuncts (``TRUE`` without any), for a specification rebuilt around ``I`` and ``N``."""
    if not shape.fairness:
        return f"{prefix}Fair == TRUE\n"
    lines = []
    for i, p in enumerate(shape.fairness):
        lines += [f"{prefix}Fair{i} ==", _pad(p)]
    lines.append(f"{prefix}Fair == " + " /\\ ".join(f"{prefix}Fair{i}" for i in range(len(shape.fairness))))
    return "\n".join(lines) + "\n"


def _pad(p: Piece) -> str:
    # a body must start right of column 0; keep the original column when it is positive
    col = p.column if p.column > 0 else 2
    if p.column == 0:
        # shift every line by 2 so relative alignment is kept
        return "\n".join("  " + ln for ln in p.text.split("\n"))
    return " " * col + p.text


_HEADER_LINE = re.compile(r"^\s*-{4,}\s*MODULE\b")


def append_definitions(text: str, block: str) -> str:
    """Insert ``block`` before the line that closes the first module of ``text`` (the
    ``====`` line where the module nesting returns to 0; text after it is not part of
    the module); appended with a closing line if there is none."""
    lines = text.splitlines(keepends=True)
    depth = 0
    for i, line in enumerate(lines):
        if _HEADER_LINE.match(line):
            depth += 1
        elif _CLOSING.match(line) and depth > 0:
            depth -= 1
            if depth == 0:
                return "".join(lines[:i]) + block + "".join(lines[i:])
    return text.rstrip("\n") + "\n" + block + "====\n"


def definition_arities(text: str) -> dict[str, int]:
    """Top-level operator definitions of the first module of ``text`` -> number of
    parameters (``F(a, b) == ...`` -> 2)."""
    tree = parse(text)
    src = tree_src(text)
    out: dict[str, int] = {}
    for mod in tree.root_node.children:
        if mod.type != "module":
            continue
        for c in mod.children:
            if c.type in ("operator_definition", "function_definition"):
                named = next((x for x in c.children if x.type == "identifier"), None)
                if named is None:
                    continue
                params = [x for x in c.children if x.type in ("identifier", "operator_declaration")
                          and x is not named]
                out[node_text(named, src)] = len(params) if c.type == "operator_definition" else 0
        break
    return out


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def instance_use(module: str) -> str:
    """The name :func:`definition_names_used` gives an instance of ``module`` among the
    names a definition mentions (no identifier contains ``!``)."""
    return f"{module}!"


def definition_names_used(text: str, instances: bool = False) -> dict[str, set[str]]:
    """Top-level operator and function definitions of the first module of ``text`` ->
    the identifiers their text mentions (parameters and bound names included: a superset
    of the definitions it uses). With ``instances``, also the module definitions
    (``I == INSTANCE M WITH x <- e``): their substitutions' identifiers and
    :func:`instance_use` of ``M``, so that ``I!Op`` reaches what the instance substitutes
    implicitly."""
    tree = parse(text)
    src = tree_src(text)
    out: dict[str, set[str]] = {}
    kinds = ("operator_definition", "function_definition") + (("module_definition",) if instances else ())
    for mod in tree.root_node.children:
        if mod.type != "module":
            continue
        for c in mod.children:
            if c.type in kinds:
                named = next((x for x in c.children if x.type == "identifier"), None)
                if named is not None:
                    out[node_text(named, src)] = set(_IDENT.findall(node_text(c, src))) - {node_text(named, src)}
                    out[node_text(named, src)] |= _instanced(c, src)
        break
    return out


def _instanced(node, src: bytes) -> set[str]:
    inst = next((x for x in node.children if x.type == "instance"), None) \
        if node.type == "module_definition" else None
    return {instance_use(node_text(inst.named_children[0], src))} if inst is not None and inst.named_children \
        else set()

