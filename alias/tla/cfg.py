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

import re
from dataclasses import dataclass, field

__all__ = ["KEYWORDS", "Token", "CfgError", "tokenize", "rename_cfg"]

#: Section keywords of the cfg language mapped to the :class:`Cfg` field they fill.
KEYWORDS: dict[str, str] = {
    "CONSTANT": "constants", "CONSTANTS": "constants",
    "INIT": "init", "NEXT": "next", "SPECIFICATION": "specification",
    "INVARIANT": "invariants", "INVARIANTS": "invariants",
    "PROPERTY": "properties", "PROPERTIES": "properties",
    "CONSTRAINT": "constraints", "CONSTRAINTS": "constraints",
    "ACTION_CONSTRAINT": "action_constraints", "ACTION_CONSTRAINTS": "action_constraints",
    "SYMMETRY": "symmetry", "VIEW": "view", "CHECK_DEADLOCK": "check_deadlock",
    "ALIAS": "alias", "POSTCONDITION": "postcondition",
}
#: Words that are tokenized as ``keyword`` but are values, not section openers.
VALUE_KEYWORDS = frozenset({"TRUE", "FALSE"})

_LIST_KINDS = ("invariants", "properties", "constraints", "action_constraints")
_SINGLE_KINDS = ("init", "next", "specification", "symmetry", "view", "alias", "postcondition")
#: Canonical spelling used by :func:`write_cfg` when a section has no recorded spelling.
_DEFAULT_SPELLING = {
    "constants": "CONSTANTS", "init": "INIT", "next": "NEXT",
    "specification": "SPECIFICATION", "invariants": "INVARIANTS",
    "properties": "PROPERTIES", "constraints": "CONSTRAINTS",
    "action_constraints": "ACTION_CONSTRAINTS", "symmetry": "SYMMETRY", "view": "VIEW",
    "check_deadlock": "CHECK_DEADLOCK", "alias": "ALIAS", "postcondition": "POSTCONDITION",
}
_KIND_ORDER = tuple(_DEFAULT_SPELLING)


class CfgError(ValueError):
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
