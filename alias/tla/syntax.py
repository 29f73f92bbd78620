"""TLA+ syntax through tree-sitter-tlaplus (no regular expressions over TLA+ text).

Shapes: byte offsets are into the UTF-8 encoding of the module text; every function
takes the module as ``str`` and parses it with :func:`parse`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import lru_cache

import tree_sitter as ts
import tree_sitter_tlaplus as tst

#: Modules that ship with the TLA+ tools (tla2tools.jar); never author-defined.
STANDARD_MODULES = frozenset(
    {
        "Naturals", "Integers", "Reals", "Sequences", "FiniteSets", "Bags", "TLC",
        "RealTime", "TLCExt", "Randomization", "Json", "Toolbox", "_TLCTrace",
        "TLAPS", "NaturalsInduction", "WellFoundedInduction", "SequenceTheorems",
        "FiniteSetTheorems", "SequencesExtTheorems", "FunctionTheorems", "BagsTheorems",
    }
)


@lru_cache(maxsize=1)
def language() -> ts.Language:
    """The tree-sitter TLA+ language object.

    tree-sitter-tlaplus 1.5.0 hands over its grammar as an integer pointer, which
    tree-sitter 0.25+ still accepts but flags as deprecated; the warning is silenced here
    because no newer grammar release exists.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return ts.Language(tst.language())


def parse(text: str) -> ts.Tree:
    """Parse a TLA+ module (or a file holding several) into a tree-sitter tree."""
    return ts.Parser(language()).parse(text.encode("utf-8"))


def node_text(node: ts.Node, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8")


@dataclass
class ModuleInfo:
    """What ingest needs to know about one module (first module in the file).

    ``extends``/``instances`` list module names in source order; ``constants`` and
    ``variables`` the declared names; ``definitions`` the top-level operator, function and
    module-definition names (LOCAL ones included); ``comments`` the text of every comment
    in source order; ``has_pluscal`` whether a PlusCal algorithm is embedded.
    """

    name: str | None
    extends: list[str] = field(default_factory=list)
    instances: list[str] = field(default_factory=list)
    constants: list[str] = field(default_factory=list)
    variables: list[str] = field(default_factory=list)
    definitions: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    has_pluscal: bool = False
    has_errors: bool = False

    @property
    def imports(self) -> list[str]:
        """EXTENDS and INSTANCE targets, de-duplicated, in source order."""
        seen: list[str] = []
        for m in self.extends + self.instances:
            if m not in seen:
                seen.append(m)
        return seen


def _walk(node: ts.Node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _declared_name(decl: ts.Node, src: bytes) -> str | None:
    """Name declared by an ``identifier`` or ``operator_declaration`` child."""
    if decl.type == "identifier":
        return node_text(decl, src)
    if decl.type == "operator_declaration":
        name = decl.child_by_field_name("name")
        if name is None:
            for c in decl.named_children:
                if c.type in ("identifier", "prefix_op_symbol", "infix_op_symbol", "postfix_op_symbol"):
                    name = c
                    break
        return node_text(name, src) if name is not None else None
    return None


def _definition_name(defn: ts.Node, src: bytes) -> str | None:
    name = defn.child_by_field_name("name")
    if name is None:
        for c in defn.named_children:
            if c.type == "identifier":
                name = c
                break
    return node_text(name, src) if name is not None else None


def module_info(text: str) -> ModuleInfo:
    """Summarize the first module of ``text``; see :class:`ModuleInfo`."""
    tree = parse(text)
    src = text.encode("utf-8")
    root = tree.root_node
    module = next((n for n in _walk(root) if n.type == "module"), None)
    info = ModuleInfo(name=None, has_errors=root.has_error)
    for n in _walk(root):
        if n.type in ("comment", "block_comment"):
            if n.parent is None or n.parent.type != "block_comment":
                info.comments.append(node_text(n, src))
        elif n.type == "pcal_algorithm":
            info.has_pluscal = True
    if module is None:
        return info
    name = module.child_by_field_name("name")
    if name is None:
        name = next((c for c in module.named_children if c.type == "identifier"), None)
    info.name = node_text(name, src) if name is not None else None
    for unit in module.named_children:
        target = unit.named_children[0] if unit.type == "local_definition" and unit.named_children else unit
        if target.type == "extends":
            info.extends += [node_text(c, src) for c in target.named_children if c.type == "identifier_ref"]
        elif target.type == "instance":
            info.instances += [node_text(c, src) for c in target.named_children[:1] if c.type == "identifier_ref"]
        elif target.type == "module_definition":
            nm = _definition_name(target, src)
            if nm:
                info.definitions.append(nm)
            inst = next((c for c in target.named_children if c.type == "instance"), None)
            if inst is not None and inst.named_children:
                info.instances.append(node_text(inst.named_children[0], src))
        elif target.type == "constant_declaration":
            info.constants += [n for n in (_declared_name(c, src) for c in target.named_children) if n]
        elif target.type == "variable_declaration":
            info.variables += [node_text(c, src) for c in target.named_children if c.type == "identifier"]
        elif target.type in ("operator_definition", "function_definition"):
            nm = _definition_name(target, src)
            if nm:
                info.definitions.append(nm)
    return info


def imported_modules(text: str) -> list[str]:
    """Every module named by an EXTENDS or INSTANCE anywhere in ``text`` (nested
    modules, LOCAL and LET instances included; comments excluded), de-duplicated, in
    source order."""
    tree = parse(text)
    src = text.encode("utf-8")
    out: list[str] = []
    stack = [tree.root_node]
    while stack:
        n = stack.pop()
        if n.type in ("comment", "block_comment"):
            continue
        if n.type == "extends":
            refs = [c for c in n.named_children if c.type == "identifier_ref"]
        elif n.type == "instance":
            refs = [c for c in n.named_children[:1] if c.type == "identifier_ref"]
        else:
            refs = []
        for r in refs:
            name = node_text(r, src)
            if name not in out:
                out.append(name)
        stack.extend(reversed(n.children))
    return out
