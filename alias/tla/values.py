"""TLC's printed values as Python values, and back as TLA+ expressions.

The behavior grade's refinement procedure (Methods "Behavior-based grade"; issue 33)
compares the values variables take in TLC's state dumps, field by field and element by
element, and writes re-encodings of values as TLA+ expressions. TLC prints a value in
a state as (one line, see :func:`alias.grade.stategraph.normalize_value`):

* integers ``-3``, booleans ``TRUE``/``FALSE``, strings ``"a\\"b"``, model values as bare
  names (``p1``, ``defaultInitValue``);
* sequences and tuples ``<<1, 2>>`` (also every function whose domain is ``1..n``);
* records ``[a |-> 1, b |-> 2]``; other functions ``(k1 :> v1 @@ k2 :> v2)``;
* sets ``{1, 2}``; integer intervals ``1..3``.

:func:`parse_value` turns such a text into a hashable value: ``int``, :class:`Bool`,
:class:`Str`, :class:`ModelValue`, :class:`Seq` (a tuple of values), :class:`Rec`
(sorted ``(field, value)`` pairs), :class:`Fcn` (sorted ``(key, value)`` pairs; never a
function with domain ``1..n``, which is a :class:`Seq`, as in TLC), :class:`SetV` (a
frozenset) or, for text it cannot read (``[S -> T]``, ``Nat``), :class:`Opaque`.
:func:`to_tla` writes an atom back as TLA+ text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Union

__all__ = ["Bool", "Str", "ModelValue", "Seq", "Rec", "Fcn", "SetV", "Opaque", "Value", "parse_value",
           "is_atom", "as_function", "to_tla", "sort_key", "ValueError_"]


class ValueError_(ValueError):
    """A text that is not a TLC value."""


@dataclass(frozen=True)
class Bool:
    """A TLA+ boolean (not a Python ``bool``, which equals ``1`` and ``0`` in a set)."""
    b: bool


@dataclass(frozen=True)
class Str:
    """A TLA+ string (distinct from a model value of the same spelling)."""
    s: str


@dataclass(frozen=True)
class ModelValue:
    """A TLC model value (declared in a cfg: ``Proc = {p1, p2}``)."""
    name: str


@dataclass(frozen=True)
class Seq:
    """A sequence or tuple: a function with domain ``1..n``."""
    items: tuple


@dataclass(frozen=True)
class Rec:
    """A record: ``(field, value)`` pairs sorted by field."""
    fields: tuple

    def get(self, name: str):
        return dict(self.fields)[name]


@dataclass(frozen=True)
class Fcn:
    """A function whose domain is not ``1..n``: ``(key, value)`` pairs sorted by key."""
    pairs: tuple


@dataclass(frozen=True)
class SetV:
    """A finite set."""
    items: frozenset


@dataclass(frozen=True)
class Opaque:
    """A value this module cannot read, kept as TLC's text."""
    text: str


Value = Union[int, Bool, Str, ModelValue, Seq, Rec, Fcn, SetV, Opaque]

_TOKEN = re.compile(r'\s*(?:(?P<str>"(?:[^"\\]|\\.)*")|(?P<num>-?\d+)|(?P<op><<|>>|\|->|:>|@@|\.\.|->|[\[\](){},])'
                    r'|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<other>\S))')
_RANK = {Bool: 0, int: 1, Str: 2, ModelValue: 3, Seq: 4, Rec: 5, Fcn: 6, SetV: 7, Opaque: 8}


def sort_key(v: Value):
    """A total order on values of mixed kinds (kind first, then the value): TLC's own
    order for integers and strings, and a fixed one for the rest."""
    t = type(v)
    if t is Bool:
        return (0, int(v.b), "")
    if t is int:
        return (1, v, "")
    if t is Str:
        return (2, 0, v.s)
    if t is ModelValue:
        return (3, 0, v.name)
    return (_RANK.get(t, 9), 0, repr(v))


def _fcn(pairs: list[tuple]) -> Value:
    pairs = sorted(pairs, key=lambda kv: sort_key(kv[0]))
    keys = [k for k, _ in pairs]
    if keys and all(type(k) is int for k in keys) and keys == list(range(1, len(keys) + 1)):
        return Seq(tuple(v for _, v in pairs))
    return Fcn(tuple(pairs))


class _Parser:
    def __init__(self, text: str):
        self.toks = [(m.lastgroup, m.group(m.lastgroup)) for m in _TOKEN.finditer(text) if m.lastgroup]
        self.i = 0

    def peek(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.toks[j][1] if j < len(self.toks) else None

    def take(self, want: str | None = None) -> tuple[str, str]:
        if self.i >= len(self.toks):
            raise ValueError_("value ends early")
        kind, tok = self.toks[self.i]
        if want is not None and tok != want:
            raise ValueError_(f"expected {want!r}, found {tok!r}")
        self.i += 1
        return kind, tok

    def items(self, close: str, item: Callable[[], object]) -> list:
        out = []
        if self.peek() == close:
            self.take(close)
            return out
        while True:
            out.append(item())
            if self.peek() == ",":
                self.take(",")
                continue
            self.take(close)
            return out

    def value(self) -> Value:
        kind, tok = self.take()
        if kind == "num":
            if self.peek() == "..":
                self.take("..")
                hi = int(self.take()[1])
                return SetV(frozenset(range(int(tok), hi + 1)))
            return int(tok)
        if kind == "str":
            return Str(re.sub(r"\\(.)", r"\1", tok[1:-1]))
        if kind == "name":
            if tok in ("TRUE", "FALSE"):
                return Bool(tok == "TRUE")
            return ModelValue(tok)
        if tok == "<<":
            return Seq(tuple(self.items(">>", self.value)))
        if tok == "{":
            return SetV(frozenset(self.items("}", self.value)))
        if tok == "[":
            return self.record()
        if tok == "(":
            return self.function()
        raise ValueError_(f"unexpected {tok!r}")

    def record(self) -> Value:
        def field() -> tuple:
            name = self.take()[1]
            self.take("|->")
            return name, self.value()
        fields = self.items("]", field)
        return Rec(tuple(sorted(fields)))

    def function(self) -> Value:
        pairs = []
        while True:
            k = self.value()
            self.take(":>")
            pairs.append((k, self.value()))
            if self.peek() == "@@":
                self.take("@@")
                continue
            self.take(")")
            return _fcn(pairs)


def parse_value(text: str) -> Value:
    """TLC's printed value -> a hashable value (see the module docstring); text it cannot
    read becomes :class:`Opaque` (never raises)."""
    try:
        p = _Parser(text)
        v = p.value()
        if p.i != len(p.toks):
            raise ValueError_("text after the value")
        return v
    except (ValueError_, ValueError, IndexError):
        return Opaque(" ".join(text.split()))


def is_atom(v: Value) -> bool:
    """Integers, booleans, strings and model values: what a re-encoding maps."""
    return type(v) in (int, Bool, Str, ModelValue)


def as_function(v: Value) -> dict | None:
    """A sequence or function as ``{key: value}`` (sequence keys ``1..n``); else None."""
    if isinstance(v, Seq):
        return {i + 1: x for i, x in enumerate(v.items)}
    if isinstance(v, Fcn):
        return dict(v.pairs)
    return None


def to_tla(v: Value, model_value: Callable[[str], str] | None = None) -> str:
    """An atom (or a value built of atoms) as TLA+ text. ``model_value(name)`` gives the
    TLA+ name that stands for a model value (a constant the cfg binds to it); without it
    a model value raises ValueError. :class:`Opaque` raises ValueError."""
    if type(v) is Bool:
        return "TRUE" if v.b else "FALSE"
    if type(v) is int:
        return str(v)
    if isinstance(v, Str):
        return '"' + v.s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, ModelValue):
        if model_value is None:
            raise ValueError(f"model value {v.name} has no TLA+ name here")
        return model_value(v.name)
    sub = lambda x: to_tla(x, model_value)  # noqa: E731
    if isinstance(v, Seq):
        return "<<" + ", ".join(sub(x) for x in v.items) + ">>"
    if isinstance(v, Rec):
        return "[" + ", ".join(f"{k} |-> {sub(x)}" for k, x in v.fields) + "]"
    if isinstance(v, SetV):
        return "{" + ", ".join(sub(x) for x in sorted(v.items, key=sort_key)) + "}"
    if isinstance(v, Fcn):
        return "[AliasK \\in {" + ", ".join(sub(k) for k, _ in v.pairs) + "} |-> CASE " + \
            " [] ".join(f"AliasK = {sub(k)} -> {sub(x)}" for k, x in v.pairs) + "]"
    raise ValueError(f"cannot write {v!r} as TLA+")

