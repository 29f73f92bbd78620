"""TLC model-configuration (``.cfg``) files: lossless tokenizer, renaming, parser, writer.

The TLC configuration language is small: a sequence of sections, each opened by a
keyword (``CONSTANTS``, ``INIT``, ``INVARIANT`` ...) and followed by names or
constant assignments.  Comments are TLA+ style: ``\\*`` to the end of the line and
``(* ... *)`` blocks, which nest.

Public API
----------
``tokenize(text) -> list[Token]``
    Lossless: ``"".join(t.text for t in tokenize(s)) == s`` for every ``str`` ``s``.
``rename_cfg(text, mapping) -> str``
    Replace identifier tokens found in ``mapping``; every other character is kept.
``parse_cfg(text) -> Cfg`` / ``write_cfg(cfg) -> str``
    ``parse_cfg(write_cfg(parse_cfg(t))) == parse_cfg(t)``.
``for_jar(cfg, supports_check_deadlock) -> (cfg_text, extra_flags)``
    Translate ``CHECK_DEADLOCK FALSE`` into TLC's ``-deadlock`` flag for old jars.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

from alias.errors import AliasError

__all__ = [
    "KEYWORDS", "Token", "CfgError", "Constant", "Comment", "Cfg",
    "tokenize", "rename_cfg", "parse_cfg", "write_cfg", "for_jar",
]

#: Section keywords of the cfg language mapped to the :class:`Cfg` field they fill.
KEYWORDS: dict[str, str] = {
    "CONSTANT": "constants", "CONSTANTS": "constants",
    "INIT": "init", "NEXT": "next", "SPECIFICATION": "specification",
    "INVARIANT": "invariants", "INVARIANTS": "invariants",
    "PROPERTY": "properties", "PROPERTIES": "properties",
    "CONSTRAINT": "constraints", "CONSTRAINTS": "constraints",
    "ACTION_CONSTRAINT": "action_constraints", "ACTION_CONSTRAINTS": "action_constraints",
    "SYMMETRY": "symmetry", "VIEW": "view", "CHECK_DEADLOCK": "check_deadlock",
    "ALIAS": "alias", "POSTCONDITION": "postcondition", "POSTCONDITIONS": "postcondition",
    "_POSSIBLE": "possible",   # TLC v1.8.0: states or actions some behavior must reach
}
#: Words that are tokenized as ``keyword`` but are values, not section openers.
VALUE_KEYWORDS = frozenset({"TRUE", "FALSE"})

_LIST_KINDS = ("invariants", "properties", "constraints", "action_constraints", "possible")
_SINGLE_KINDS = ("init", "next", "specification", "symmetry", "view", "alias", "postcondition")
#: Canonical spelling used by :func:`write_cfg` when a section has no recorded spelling.
_DEFAULT_SPELLING = {
    "constants": "CONSTANTS", "init": "INIT", "next": "NEXT",
    "specification": "SPECIFICATION", "invariants": "INVARIANTS",
    "properties": "PROPERTIES", "constraints": "CONSTRAINTS",
    "action_constraints": "ACTION_CONSTRAINTS", "symmetry": "SYMMETRY", "view": "VIEW",
    "check_deadlock": "CHECK_DEADLOCK", "alias": "ALIAS", "postcondition": "POSTCONDITION",
    "possible": "_POSSIBLE",
}
_KIND_ORDER = tuple(_DEFAULT_SPELLING)


class CfgError(AliasError, ValueError):
    """A cfg text that is not well formed.  ``line`` is 1-based (``None`` if unknown)."""

    def __init__(self, message: str, line: int | None = None):
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


@dataclass(frozen=True)
class Token:
    """One lexical token.

    ``kind`` is one of ``'keyword'`` (a section keyword or TRUE/FALSE), ``'ident'``,
    ``'number'`` (decimal digits only; a sign is a separate ``op``), ``'string'``
    (with its quotes), ``'op'`` (``<-``, ``<<``, ``>>`` or any other single
    character), ``'comment'`` (``\\*`` up to, not including, the newline, or a whole
    nested ``(* *)`` block) or ``'ws'`` (a run of whitespace).  ``start``/``end``
    are ``str`` offsets (``text == source[start:end]``).
    """

    kind: str
    text: str
    start: int
    end: int


_WORD = re.compile(r"[A-Za-z0-9_]+")
_WS = re.compile(r"\s+")
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"?')


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into tokens that concatenate back to ``text`` exactly.

    Never raises: unterminated strings and block comments extend to the end of
    the line / text and any unknown character becomes a one-character ``op``.
    """
    toks: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            j = _WS.match(text, i).end()
            kind = "ws"
        elif text.startswith("\\*", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            if j > i and text[j - 1] == "\r":
                j -= 1
            kind = "comment"
        elif text.startswith("(*", i):
            depth, j = 0, i
            while j < n:
                if text.startswith("(*", j):
                    depth += 1
                    j += 2
                elif text.startswith("*)", j):
                    depth -= 1
                    j += 2
                    if depth == 0:
                        break
                else:
                    j += 1
            kind = "comment"
        elif c == '"':
            j = _STRING.match(text, i).end()
            kind = "string"
        elif c.isascii() and (c.isalnum() or c == "_"):
            j = _WORD.match(text, i).end()
            word = text[i:j]
            if word.isdigit():
                kind = "number"
            elif word in KEYWORDS or word in VALUE_KEYWORDS:
                kind = "keyword"
            else:
                kind = "ident"
        elif text.startswith(("<-", "<<", ">>"), i):
            j = i + 2
            kind = "op"
        else:
            j = i + 1
            kind = "op"
        toks.append(Token(kind, text[i:j], i, j))
        i = j
    return toks


def rename_cfg(text: str, mapping: dict[str, str]) -> str:
    """Return ``text`` with every ``ident`` token ``t`` in ``mapping`` replaced by
    ``mapping[t]``.

    Keywords, numbers, strings, comments and whitespace are kept byte-identical,
    so model values such as ``{a, b}`` are renamed too when ``mapping`` names them,
    and module names in ``x <- [Mod] y`` likewise.  No validation of the new names.
    """
    return "".join(mapping.get(t.text, t.text) if t.kind == "ident" else t.text
                   for t in tokenize(text))


# --------------------------------------------------------------------------- parser


@dataclass
class Constant:
    """One entry of a CONSTANT(S) section.

    ``op == '='``: ``name = value`` where ``value`` is the value-expression text
    (model value, number, string, set ``{a, b}``, tuple ``<<..>>``, TRUE/FALSE)
    with comments dropped and whitespace runs collapsed to one space.
    ``op == '<-'``: substitution ``name <- value`` (``value`` an operator name).
    ``module`` is set for the ``name <- [Mod] value`` and ``name = [Mod] value``
    forms (the value is taken from module ``Mod``).
    """

    name: str
    op: str
    value: str
    module: str | None = None

    def text(self) -> str:
        """The entry as cfg text, e.g. ``'N = 3'`` or ``'Nat <- [Mod] ZNat'``."""
        if self.module is not None:
            return f"{self.name} {self.op} [{self.module}] {self.value}"
        return f"{self.name} {self.op} {self.value}"


@dataclass
class Comment:
    """A comment kept by :func:`parse_cfg`.

    ``after`` is the number of entries (constant assignments, names, the
    CHECK_DEADLOCK value) that precede the comment in the file; ``inline`` is true
    when the comment starts on the line where the preceding entry ended.
    """

    text: str
    after: int
    inline: bool = False


@dataclass
class Cfg:
    """A parsed TLC configuration.

    Entry fields: ``constants`` (list of :class:`Constant`), ``init``, ``next``,
    ``specification``, ``symmetry``, ``view``, ``alias``, ``postcondition``
    (``str | None``: an operator name), ``invariants``, ``properties``,
    ``constraints``, ``action_constraints``, ``possible`` (``_POSSIBLE``, v1.8.0) (``list[str]``), ``check_deadlock``
    (``bool | None``; ``None`` = not given, TLC checks deadlock by default).

    Layout fields, used only by :func:`write_cfg`: ``comments``,
    ``section_order`` (field names in the order of their first section in the
    source), ``spellings`` (field name -> keyword used first, e.g. ``'CONSTANT'``).
    Sections of one kind are merged; entry order within a kind is kept.
    """

    constants: list[Constant] = field(default_factory=list)
    init: str | None = None
    next: str | None = None
    specification: str | None = None
    invariants: list[str] = field(default_factory=list)
    properties: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)
    action_constraints: list[str] = field(default_factory=list)
    symmetry: str | None = None
    view: str | None = None
    check_deadlock: bool | None = None
    alias: str | None = None
    postcondition: str | None = None
    possible: list[str] = field(default_factory=list)
    comments: list[Comment] = field(default_factory=list)
    section_order: list[str] = field(default_factory=list)
    spellings: dict[str, str] = field(default_factory=dict)

    def names(self) -> dict[str, list[str]]:
        """Names of the spec that this cfg refers to, by kind.

        Keys: ``'constants'`` (constant names left of ``=``/``<-``),
        ``'substitutions'`` (operator names right of ``<-``), ``'model_values'``
        (identifiers inside ``=`` values), ``'modules'`` (``[Mod]``), and one key per
        non-empty name field (``'init'``, ``'invariants'``, ...).  Lists keep first
        occurrence order, without duplicates.
        """
        out: dict[str, list[str]] = {}

        def add(kind: str, name: str) -> None:
            lst = out.setdefault(kind, [])
            if name not in lst:
                lst.append(name)

        for c in self.constants:
            add("constants", c.name)
            if c.module:
                add("modules", c.module)
            if c.op == "<-":
                add("substitutions", c.value)
            else:
                for t in tokenize(c.value):
                    if t.kind == "ident":
                        add("model_values", t.text)
        for kind in _SINGLE_KINDS:
            v = getattr(self, kind)
            if v is not None:
                add(kind, v)
        for kind in _LIST_KINDS:
            for v in getattr(self, kind):
                add(kind, v)
        return out

    def _entries(self, kind: str) -> list[str]:
        """Entry texts of one field, in write order."""
        if kind == "constants":
            return [c.text() for c in self.constants]
        if kind == "check_deadlock":
            return [] if self.check_deadlock is None else ["TRUE" if self.check_deadlock else "FALSE"]
        v = getattr(self, kind)
        if kind in _LIST_KINDS:
            return list(v)
        return [] if v is None else [v]


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def parse_cfg(text: str) -> Cfg:
    """Parse cfg ``text`` into a :class:`Cfg`.

    Raises :class:`CfgError` (with a 1-based line) for an unknown section keyword
    or a stray token outside a section, a malformed constant entry, a missing or
    non-boolean CHECK_DEADLOCK value, or a single-valued section (INIT, NEXT,
    SPECIFICATION, SYMMETRY, VIEW, ALIAS, POSTCONDITION) given two names.
    """
    cfg = Cfg()
    toks = tokenize(text)
    n = len(toks)
    entries = 0
    last_sig_line = 0  # line where the last complete entry ended
    i = 0
    kind: str | None = None

    def sig(j: int) -> int:
        """Index of the first significant token at or after j, recording comments."""
        while j < n and toks[j].kind in ("ws", "comment"):
            t = toks[j]
            if t.kind == "comment":
                inline = entries > 0 and _line_of(text, t.start) == last_sig_line
                cfg.comments.append(Comment(t.text, entries, inline))
            j += 1
        return j

    def err(msg: str, j: int) -> CfgError:
        pos = toks[j].start if j < n else len(text)
        return CfgError(msg, _line_of(text, pos))

    def done(j: int) -> None:
        nonlocal last_sig_line
        last_sig_line = _line_of(text, toks[j].end - 1)

    while True:
        i = sig(i)
        if i >= n:
            break
        t = toks[i]
        if t.kind == "keyword" and t.text in KEYWORDS:
            kind = KEYWORDS[t.text]
            if kind not in cfg.section_order:
                cfg.section_order.append(kind)
                cfg.spellings[kind] = t.text
            i += 1
            if kind == "check_deadlock":
                i = sig(i)
                if i >= n or toks[i].text not in VALUE_KEYWORDS:
                    raise err("CHECK_DEADLOCK needs TRUE or FALSE", i)
                cfg.check_deadlock = toks[i].text == "TRUE"
                entries += 1
                done(i)
                i += 1
                kind = None
            continue
        if kind is None:
            if t.kind == "ident" and t.text.isupper():
                raise err(f"unknown keyword {t.text!r}", i)
            raise err(f"unexpected {t.text!r} outside a section", i)
        if t.kind != "ident":
            raise err(f"expected a name in {cfg.spellings.get(kind, kind)} section, got {t.text!r}", i)
        if kind == "constants":
            i = _parse_constant(cfg, toks, i, sig, err, done)
        elif kind in _LIST_KINDS:
            getattr(cfg, kind).append(t.text)
            done(i)
            i += 1
        else:
            if getattr(cfg, kind) is not None:
                raise err(f"second name {t.text!r} for {cfg.spellings[kind]}", i)
            setattr(cfg, kind, t.text)
            done(i)
            i += 1
        entries += 1
    return cfg


def _parse_constant(cfg: Cfg, toks: list[Token], i: int, sig, err, done) -> int:
    name = toks[i].text
    j = sig(i + 1)
    if j >= len(toks) or toks[j].text not in ("=", "<-"):
        raise err(f"expected '=' or '<-' after constant {name!r}", j)
    op = toks[j].text
    j = sig(j + 1)
    module = None
    if j < len(toks) and toks[j].text == "[":
        k = sig(j + 1)
        if k >= len(toks) or toks[k].kind != "ident":
            raise err("expected a module name after '['", k)
        module = toks[k].text
        k2 = sig(k + 1)
        if k2 >= len(toks) or toks[k2].text != "]":
            raise err("expected ']'", k2)
        j = sig(k2 + 1)
    if op == "<-":
        if j >= len(toks) or toks[j].kind not in ("ident", "keyword") or toks[j].text in KEYWORDS:
            raise err(f"expected an operator name after '<-' for {name!r}", j)
        cfg.constants.append(Constant(name, op, toks[j].text, module))
        done(j)
        return j + 1
    end = _value_end(toks, j, err)
    parts: list[str] = []
    for t in toks[j:end]:
        if t.kind == "comment":
            cfg.comments.append(Comment(t.text, len(cfg.constants) + 1 + _entries_before(cfg), False))
        elif t.kind == "ws":
            if parts and parts[-1] != " ":
                parts.append(" ")
        else:
            parts.append(t.text)
    value = "".join(parts).strip()
    cfg.constants.append(Constant(name, op, value, module))
    done(end - 1)
    return end


def _entries_before(cfg: Cfg) -> int:
    """Entries parsed so far other than constants (used to anchor value comments)."""
    return sum(len(cfg._entries(k)) for k in _KIND_ORDER if k != "constants")


def _value_end(toks: list[Token], j: int, err) -> int:
    """Index just past one constant value starting at significant token ``j``."""
    n = len(toks)
    if j >= n:
        raise err("missing constant value", j)
    t = toks[j]
    if t.text == "-":
        k = j + 1
        if k < n and toks[k].kind == "number":
            return k + 1
        raise err("expected a number after '-'", k)
    if t.kind in ("number", "string", "ident") or t.text in VALUE_KEYWORDS:
        return j + 1
    closer = {"{": "}", "<<": ">>", "(": ")", "[": "]"}.get(t.text)
    if closer is None:
        raise err(f"unexpected {t.text!r} in constant value", j)
    stack = [closer]
    k = j + 1
    while k < n and stack:
        x = toks[k].text
        if toks[k].kind == "op":
            if x in ("{", "<<", "(", "["):
                stack.append({"{": "}", "<<": ">>", "(": ")", "[": "]"}[x])
            elif x in ("}", ">>", ")", "]"):
                if x != stack[-1]:
                    raise err(f"unbalanced {x!r} in constant value", k)
                stack.pop()
        elif toks[k].kind == "keyword" and x in KEYWORDS:
            raise err(f"section keyword {x!r} inside a constant value", k)
        k += 1
    if stack:
        raise err("unterminated constant value", k)
    return k


# --------------------------------------------------------------------------- writer


def write_cfg(cfg: Cfg) -> str:
    """Render ``cfg`` as cfg text (``\\n`` line ends, trailing newline).

    Sections are written once per field, in ``cfg.section_order`` and then the
    canonical order for any other non-empty field; one entry per indented line.
    Comments are placed after the entry they followed (``Comment.after``), on the
    same line when ``inline``.  Comments anchored past the last entry go at the end.
    """
    order = list(cfg.section_order)
    for k in _KIND_ORDER:
        if k not in order and cfg._entries(k):
            order.append(k)
    by_after: dict[int, list[Comment]] = {}
    for c in cfg.comments:
        by_after.setdefault(c.after, []).append(c)
    lines: list[str] = []
    count = 0
    open_line = [False]  # the last line ends in a \* comment

    def flush(after: int) -> None:
        for c in by_after.pop(after, []):
            if c.inline and lines and not open_line[0]:
                lines[-1] += " " + c.text
            else:
                lines.append(c.text)
            open_line[0] = c.text.startswith("\\*")

    def add(line: str) -> None:
        lines.append(line)
        open_line[0] = False

    flush(0)
    for k in order:
        spelling = cfg.spellings.get(k, _DEFAULT_SPELLING[k])
        entries = cfg._entries(k)
        if k == "check_deadlock":
            if entries:
                add(f"{spelling} {entries[0]}")
                count += 1
                flush(count)
            continue
        if not entries and k in _SINGLE_KINDS:
            continue  # an entry cleared after parsing: an empty SPECIFICATION/INIT/... breaks TLC
        add(spelling)
        for e in entries:
            add("    " + e)
            count += 1
            flush(count)
    for after in sorted(by_after):
        flush(after)
    return "\n".join(lines) + "\n"


def for_jar(cfg: Cfg, supports_check_deadlock: bool, *, supports_alias: bool = True,
            text: str | None = None) -> tuple[str, tuple[str, ...]]:
    """Cfg text and extra TLC command-line flags for a given jar.

    For a jar without the ``CHECK_DEADLOCK`` keyword (TLC 2.15), the keyword is
    dropped and ``CHECK_DEADLOCK FALSE`` becomes the flag ``-deadlock`` (TLC's
    "do not check for deadlock"); ``TRUE`` is TLC's default and needs no flag.
    For a jar without the ``ALIAS`` keyword (``supports_alias=False``), the ALIAS
    entry is dropped: it only chooses how TLC prints error traces and changes neither
    the states explored nor the verdict. Such a jar (TLC 2.15) also lacks v1.8.0's
    ``_POSSIBLE`` section, which is dropped too: the fallback jar checks less there.
    ``text``: the cfg's own text, returned unchanged when the jar needs no rewrite (a cfg
    is rewritten only for a jar that lacks one of its keywords).
    ``cfg`` itself is not modified.  Returns ``(cfg_text, flags)``.
    """
    drop_deadlock = not supports_check_deadlock and cfg.check_deadlock is not None
    drop_alias = not supports_alias and cfg.alias is not None
    drop_possible = not supports_alias and bool(cfg.possible)
    if not (drop_deadlock or drop_alias or drop_possible):
        return (text if text is not None else write_cfg(cfg)), ()
    c = copy.deepcopy(cfg)
    flags: tuple[str, ...] = ()
    if drop_deadlock:
        flags = () if c.check_deadlock else ("-deadlock",)
        c.check_deadlock = None
        if "check_deadlock" in c.section_order:
            c.section_order.remove("check_deadlock")
    if drop_alias:
        c.alias = None
        if "alias" in c.section_order:
            c.section_order.remove("alias")
    if drop_possible:
        c.possible = []
        if "possible" in c.section_order:
            c.section_order.remove("possible")
    return write_cfg(c), flags
