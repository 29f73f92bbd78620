"""Source-to-source edits of a TLA+ module that keep its layout valid (issue 33).

The equivalence controls (:mod:`alias.grade.equivalence`) restructure a reference's
system module: they replace spans of its text (an identifier by an expression, an
assignment by another, a definition by two). TLA+'s bulleted conjunction and disjunction
lists are column-sensitive: every bullet of a list must stand in the same column and
every other line of the list to the right of it. :class:`Edits` collects replacements
of byte spans of the original text and writes the result so that every list of the
original keeps its shape: where the replacements on the line of a list's first bullet
move that bullet, the following lines of the list move by as much (a shorter line gets
spaces before its first bullet instead).

:func:`variable_occurrences` classifies every use of a set of declared variables by what
TLC does with it (an assignment ``v' = e`` / ``v' \\in S``, one in the initial predicate,
an ``UNCHANGED``, a tuple of variables such as ``vars``, or a plain read): the
variable-changing controls rewrite each kind differently.

Shapes: byte offsets into the UTF-8 encoding of the module text; columns in bytes.
Pure Python over tree-sitter-tlaplus (:mod:`alias.tla.syntax`).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

import tree_sitter as ts

from alias.grade.mutants import _SKIP, _Module, _end, _walk

__all__ = ["Edit", "Edits", "Occurrence", "variable_occurrences", "fresh_name", "words_of", "EditError",
           "in_subscript", "read_as"]

_LISTS = ("conj_list", "disj_list")
_BULLETS = ("bullet_conj", "bullet_disj")
_WORD = re.compile(r"[A-Za-z0-9_]+")


class EditError(ValueError):
    """Edits that overlap without one containing the other."""


@dataclass(frozen=True, order=True)
class Edit:
    """Replace bytes ``[start, end)`` of the original by ``text``."""

    start: int
    end: int
    text: str


class Edits:
    """Replacements of spans of one module's text, written with its lists kept aligned.

    ``replace`` records one; an edit inside another's span is superseded by the outer one
    (build the outer text with :meth:`render`, which applies the inner edits)."""

    def __init__(self, m: _Module):
        self.m = m
        self.src = m.src
        self.edits: list[Edit] = []
        self._line_starts = [0] + [i + 1 for i, b in enumerate(self.src) if b == 0x0A]

    def replace(self, start: int, end: int, text: str) -> None:
        self.edits.append(Edit(start, end, text))

    def node(self, node: ts.Node, text: str) -> None:
        """Replace ``node`` (up to its last token: tree-sitter lets a list run on over the
        blank lines and comments after it)."""
        self.replace(node.start_byte, _end(node), text)

    def render(self, start: int, end: int) -> str:
        """The text of ``[start, end)`` with the edits recorded inside it applied."""
        out, pos = [], start
        for e in self._outermost([e for e in self.edits if start <= e.start and e.end <= end]):
            out.append(self.src[pos:e.start].decode("utf-8"))
            out.append(e.text)
            pos = e.end
        out.append(self.src[pos:end].decode("utf-8"))
        return "".join(out)

    def text(self, node: ts.Node) -> str:
        return self.render(node.start_byte, _end(node))

    @staticmethod
    def _outermost(edits: list[Edit]) -> list[Edit]:
        """The edits no other edit contains, in order; of two with the same span the one
        recorded last (an outer rewrite built on the inner one); insertions at a point go
        before a replacement starting there, in the order recorded. Raises EditError on a
        partial overlap."""
        last = {}
        for i, e in enumerate(edits):
            last[(e.start, e.end) if e.start < e.end else (e.start, e.end, i)] = e
        ordered = sorted(last.values(), key=lambda e: (e.start, e.start != e.end, -e.end))
        out: list[Edit] = []
        for e in ordered:
            if out and e.start < out[-1].end:
                if e.end <= out[-1].end:
                    continue  # inside the previous one
                raise EditError(f"overlapping edits at bytes {e.start}-{e.end} and {out[-1].start}-{out[-1].end}")
            out.append(e)
        return out

    # ------------------------------------------------------------------ layout
    def _line_start(self, off: int) -> int:
        return self._line_starts[bisect.bisect_right(self._line_starts, off) - 1]

    def _newcol(self, off: int, edits: list[Edit], starts: list[int], limit: int | None = None) -> int:
        """Column (bytes) of original offset ``off`` in the output under ``edits`` (sorted,
        disjoint; only the first ``limit`` of them count)."""
        ls = self._line_start(off)
        for i in range(bisect.bisect_right(starts, off, 0, len(edits) if limit is None else limit) - 1, -1, -1):
            e = edits[i]
            if e.end > off:
                continue
            if e.end < ls:
                break
            # the last edit before off on this line: columns continue from its end
            if "\n" in e.text:
                col = len(e.text.rsplit("\n", 1)[1].encode("utf-8"))
            else:
                col = self._newcol(e.start, edits, starts, i) + len(e.text.encode("utf-8"))
            return col + (off - e.end)
        return off - ls

    def result(self) -> str:
        """The edited module, every list of the original still aligned."""
        edits = self._outermost(self.edits)
        for lst in self._lists():
            edits = self._align(lst, edits)
        out, pos = [], 0
        for e in edits:
            out.append(self.src[pos:e.start].decode("utf-8"))
            out.append(e.text)
            pos = e.end
        out.append(self.src[pos:].decode("utf-8"))
        return "".join(out)

    def _lists(self) -> list[ts.Node]:
        if self.m.module is None:
            return []
        return [n for n in _walk(self.m.module, frozenset({"comment", "block_comment"})) if n.type in _LISTS]

    def _align(self, lst: ts.Node, edits: list[Edit]) -> list[Edit]:
        """Edits plus the shifts that keep ``lst``'s bullets in one column: the lines after
        its first bullet's move with that bullet, or spaces go before a bullet moved left."""
        if any(e.start <= lst.start_byte and _end(lst) <= e.end and e.start < e.end for e in edits):
            return edits
        bullets = [c.children[0].start_byte for c in lst.named_children
                   if c.children and c.children[0].type in _BULLETS]
        bullets = [b for b in bullets if not any(e.start < b < e.end for e in edits)]
        if len(bullets) < 2:
            return edits
        starts = [e.start for e in edits]
        d = self._newcol(bullets[0], edits, starts) - self._newcol(bullets[1], edits, starts)
        if d == 0:
            return edits
        if d < 0:
            return sorted(edits + [Edit(bullets[0], bullets[0], " " * (-d))])
        lo, end = self._line_start(bullets[0]), _end(lst)
        shifted = [ls for ls in self._line_starts if lo < ls < end and not any(e.start < ls < e.end for e in edits)]
        return sorted(edits + [Edit(ls, ls, " " * d) for ls in shifted])


# --------------------------------------------------------------------------- names


def words_of(texts) -> set[str]:
    """Every identifier-like word of ``texts`` (for fresh names)."""
    return {w for t in texts for w in _WORD.findall(t)}


def fresh_name(stem: str, taken: set[str]) -> str:
    """``stem``, else ``stem_1``, ``stem_2``, ... : the first not in ``taken`` (added to it)."""
    name, n = stem, 0
    while name in taken:
        n += 1
        name = f"{stem}_{n}"
    taken.add(name)
    return name


# --------------------------------------------------------------------------- occurrences


@dataclass(frozen=True)
class Occurrence:
    """One use of variable ``var`` (its ``identifier_ref`` node ``node``). ``kind``:

    * ``assign`` -- the left side of ``v' = e`` / ``v' \\in S`` (``op`` ``eq``/``in``;
      ``site`` the infix node, ``rhs`` its right side); ``init`` -- ``v = e`` /
      ``v \\in S`` inside the initial predicate (same fields);
    * ``unchanged`` -- the operand of ``UNCHANGED`` (``site`` the UNCHANGED node);
      ``unchanged_tuple`` -- an element of ``UNCHANGED <<...>>`` (``site``: the UNCHANGED
      node, ``tuple`` the tuple);
    * ``tuple`` -- an element of a tuple of variables only (``vars == <<x, y>>``);
    * ``read`` -- any other use (primed or not)."""

    var: str
    kind: str
    node: ts.Node
    site: ts.Node | None = None
    rhs: ts.Node | None = None
    op: str | None = None
    tuple: ts.Node | None = None


def in_subscript(n: ts.Node) -> bool:
    """Whether ``n`` is the subscript of ``[A]_v``, ``<<A>>_v``, ``WF_v(A)`` or ``SF_v(A)``:
    an expression written there needs ``<<...>>`` around it."""
    p = n.parent
    if p is None or p.type not in ("fairness", "step_expr_or_stutter", "step_expr_no_stutter"):
        return False
    named = [c for c in p.named_children if c.type not in ("comment", "block_comment")]
    return bool(named) and (named[0].id == n.id if p.type == "fairness" else named[-1].id == n.id)


def _is_field_name(n: ts.Node) -> bool:
    p = n.parent
    if p is None:
        return False
    if p.type == "except_update_record_field":
        return True
    if p.type == "substitution":  # INSTANCE M WITH x <- e: x is M's parameter
        return p.named_children[0].id == n.id
    return p.type == "record_value" and p.named_children and p.named_children[-1].id == n.id \
        and len(p.named_children) >= 2


def _symbol(n: ts.Node | None) -> str | None:
    if n is None or n.type not in ("bound_infix_op", "bound_postfix_op", "bound_prefix_op"):
        return None
    s = n.child_by_field_name("symbol")
    if s is None and n.type == "bound_prefix_op" and n.children:
        s = n.children[0]
    return s.type if s is not None else None


def _unchanged(n: ts.Node | None) -> bool:
    return n is not None and n.type == "bound_prefix_op" and bool(n.children) and n.children[0].type == "unchanged"


def _classify(m: _Module, n: ts.Node, variables: set[str], init_span: tuple[int, int]) -> Occurrence:
    var = m.t(n)
    p = n.parent
    if p is not None and p.type == "bound_postfix_op" and _symbol(p) == "prime":
        q = p.parent
        if _symbol(q) in ("eq", "in") and q.child_by_field_name("lhs") is not None \
                and q.child_by_field_name("lhs").id == p.id:
            return Occurrence(var, "assign", n, q, q.child_by_field_name("rhs"), _symbol(q))
        return Occurrence(var, "read", n)
    if _unchanged(p):
        return Occurrence(var, "unchanged", n, p)
    if p is not None and p.type == "tuple_literal":
        if _unchanged(p.parent):
            return Occurrence(var, "unchanged_tuple", n, p.parent, tuple=p)
        items = [c for c in p.named_children if c.type not in ("langle_bracket", "rangle_bracket")]
        if all(c.type == "identifier_ref" and m.t(c) in variables for c in items):
            return Occurrence(var, "tuple", n, tuple=p)
    if _symbol(p) in ("eq", "in") and p.child_by_field_name("lhs") is not None \
            and p.child_by_field_name("lhs").id == n.id and init_span[0] <= n.start_byte < init_span[1]:
        return Occurrence(var, "init", n, p, p.child_by_field_name("rhs"), _symbol(p))
    return Occurrence(var, "read", n)


def read_as(o: Occurrence, text: str) -> str:
    """``text`` to stand for the read ``o`` (inside ``<<...>>`` in a subscript)."""
    return f"<<{text}>>" if in_subscript(o.node) else text


def variable_occurrences(m: _Module, names: set[str], init_node: ts.Node | None) -> list[Occurrence]:
    """Every use of the variables ``names`` in the module's definitions, classified (see
    :class:`Occurrence`), in source order. Declarations, comments, ASSUME/THEOREM and nested
    modules are not uses."""
    init_span = (init_node.start_byte, init_node.end_byte) if init_node is not None else (-1, -1)
    out = []
    for unit in m.units:
        if unit.type in _SKIP or unit.type in ("variable_declaration", "constant_declaration"):
            continue
        for n in _walk(unit):
            if n.type == "identifier_ref" and m.t(n) in names and not _is_field_name(n):
                out.append(_classify(m, n, m.variables, init_span))
    return sorted(out, key=lambda o: o.node.start_byte)
