"""The one TLA+ lexer of the package: comments, strings and tokens from tree-sitter-tlaplus.

Every caller that needs TLA+ comments or tokens (Table V.1 similarity, the Appendix L
continuation run, the state-graph grader's control labels, the log-likelihood identifier
spans) uses this module; none scans TLA+ text by hand.

Reading of a text (:func:`lex`), as SANY reads it where the two could differ:

* **Comments** are tree-sitter's ``comment`` (``\\*`` to the end of the line) and
  ``block_comment`` nodes (nested ``(* ... *)``), outermost only; consecutive block
  comments with only blanks between them are one node.  A PlusCal algorithm is the plain
  block comment it is for TLA+: tree-sitter's PlusCal parsing is switched off, so an
  algorithm with syntax errors cannot leak out of its comment.
* **Strings** are tree-sitter's ``string`` nodes; an unclosed string ends at the end of
  its line.
* **Text outside modules** (``extramodular_text``: prose around a module, the toolbox's
  ``\\* Modification History`` footer after ``====``) is parsed again on its own, so its
  comments and strings are read as in a module body.
* **Broken text** (fragments cut mid-expression, prose, truncated output): tree-sitter's
  error recovery can lex a ``"``, ``(*`` or ``\\*`` alone, out of the string or comment it
  opens.  The lexer then parses again from that point (:func:`_read`), where the
  comment or string is read afresh; a ``"`` it still cannot read starts a string to the
  next ``"`` on its line or the line end, and a ``(*`` that a parse of the whole rest
  cannot close is a comment to the end of the text.  A comment or a string is thus
  never read from inside a string or a comment, as in a lexer.
* **Tokens** (:func:`tokens`) are the text outside comments: each string is one token,
  and the code between comments and strings is split into names (``[A-Za-z0-9_]+``, so
  ``WF_vars`` and ``1`` are one token each), backslash operators (``\\in``, ``\\/``),
  multi-character symbols (:data:`SYMBOLS`: ``==``, ``/\\``, ``|->``, ``<<``, ``]_``,
  ``[]``, ``~>``, ``..`` ...) and single characters.  Whitespace is dropped, and so are
  separators, runs of four or more ``-`` or ``=`` (``----`` lines, the dashes of a
  ``---- MODULE M ----`` header, the closing ``====``).

Offsets are character offsets into the ``str`` (not UTF-8 bytes).  No function raises
on any ``str`` (lone surrogates included); ``None`` counts as the empty text.

Public API::

    lex(text) -> Lexed                      # comment and string spans
    comment_spans(text) -> list[(start, end)]
    string_spans(text) -> list[(start, end)]
    comment_string_spans(text) -> list[(start, end)]
    strip_comments(text) -> str
    tokens(text, *, separators=False) -> list[str]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate

import tree_sitter as ts

from alias.tla.syntax import language

__all__ = ["Lexed", "lex", "comment_spans", "string_spans", "comment_string_spans", "strip_comments",
           "tokens", "SYMBOLS"]

Span = tuple[int, int]

#: Multi-character symbols that are one token, longest first.
SYMBOLS = tuple(sorted(
    """
    <=> => == /\\ \\/ |-> -> <- << >> <> [] ~> -+-> ... .. ::= := :: <= >= =< /= =|
    |- |= -| @@ :> ]_ >>_ (+) (-) (.) (/) (\\X) ++ -- ** // ^^ %% ## $$ ?? !! && || ^+ ^* ^#
    """.split(),
    key=len, reverse=True,
))
#: A string that tree-sitter cannot read: to the next ``"`` on its line or the line end.
_QUOTE_RE = r'"(?:[^"\\\n]|\\.)*"?'
_QUOTE = re.compile(_QUOTE_RE.encode(), re.S)
_CODE_TOKEN = re.compile(
    r"""(?P<ws>\s+)
      | (?P<quote>""" + _QUOTE_RE + r""")
      | (?P<sep>-{4,}|={4,})
      | (?P<word>[A-Za-z0-9_]+)
      | (?P<bsop>\\[A-Za-z]+)
      | (?P<sym>""" + "|".join(re.escape(s) for s in SYMBOLS) + r""")
      | (?P<char>.)""",
    re.X | re.S,
)
_COMMENT_NODES = frozenset({"comment", "block_comment"})
#: Tokens that error recovery may lex alone, out of the string or comment they belong to.
_LONE_TOKENS = frozenset({'"', "(*", "escape_char", "block_comment_text"})
_SPAN_NODES = _COMMENT_NODES | _LONE_TOKENS | {"string", "extramodular_text"}
#: What text skipped by error recovery must hold to be read again.
_MARKERS = (b'"', b"(*", b"\\*")
#: Bytes parsed again after an error; the window doubles while the text parses cleanly.
_WINDOW = 512
_BLANK = re.compile(rb"[ \t\r\n]")
#: Where tree-sitter-tlaplus starts a PlusCal algorithm (anywhere in a block comment).
_PCAL_START = re.compile(rb"--(?=algorithm|fair)")


@dataclass(frozen=True)
class Lexed:
    """Lexical reading of one text: ``comments`` and ``strings`` are sorted tuples of
    disjoint character spans ``[start, end)``; no comment overlaps a string."""

    text: str
    comments: tuple[Span, ...] = ()
    strings: tuple[Span, ...] = ()


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _char_offsets(text: str, src: bytes):
    """A function byte offset -> character offset for ``text`` (UTF-8 ``src``)."""
    if len(src) == len(text):
        return lambda b: b
    ends = list(accumulate(len(_encode(ch)) for ch in text))
    starts = {0: 0, **{b: i + 1 for i, b in enumerate(ends)}}
    return starts.__getitem__


def _parse(src: bytes) -> ts.Node:
    """tree-sitter's tree of ``src`` with PlusCal switched off: the ``--`` of every
    ``--algorithm`` / ``--fair`` is read as two blanks (same offsets), so an algorithm
    is the plain block comment it is for TLA+ (SANY), whether it parses or not."""
    return ts.Parser(language()).parse(_PCAL_START.sub(b"  ", src)).root_node


def _events(root: ts.Node, buf: bytes, at: list[int]):
    """Walk ``root`` in document order, skipping what ends before ``at[0]`` (the caller
    moves it on), and yield ``(kind, start, end)``: ``'comment'`` / ``'string'`` spans,
    ``'lone'`` for a ``"`` or ``(*`` token that tree-sitter's error recovery lexed alone
    (or a string that runs over a line end, or stops short of both its closing quote and
    the line end), ``'gap'`` for text holding a ``"``, ``(*`` or ``\\*``
    that an ``ERROR`` node skipped without a token, ``'cut'`` for a token or span that
    straddles ``at[0]``, and ``'extramodular'`` text."""
    stack: list = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, tuple):  # a gap (start, end, text)
            if node[1] > at[0] and any(m in node[2][max(0, at[0] - node[0]):] for m in _MARKERS):
                yield "gap", max(node[0], at[0]), node[1]
            continue
        end, kind = node.end_byte, node.type
        if end <= at[0] or node.is_missing:
            continue
        leafy = kind in _SPAN_NODES or not node.children
        text = node.text if leafy else b""
        start = end - len(text.lstrip()) if leafy else node.start_byte  # blanks before a token
        if kind in _COMMENT_NODES:
            yield ("cut" if start < at[0] else "comment"), max(start, at[0]), end
        elif kind == "string" or kind in _LONE_TOKENS:
            lone = kind != "string" or b"\n" in text or not (
                len(text) > 1 and text.endswith(b'"') or buf[end:end + 1] in (b"", b"\n", b"\r"))
            yield ("cut" if start < at[0] else "lone" if lone else "string"), max(start, at[0]), end
        elif kind == "extramodular_text":
            yield ("cut" if start < at[0] else "extramodular"), max(start, at[0]), end
        elif not node.children and start < at[0]:
            yield "cut", at[0], end
        else:
            stack.extend(reversed(_with_gaps(node)))


def _with_gaps(node: ts.Node) -> list:
    """``node``'s children; for an ``ERROR`` node also ``(start, end, text)`` tuples for
    the text between them that is no token (error recovery skipped it)."""
    if node.type != "ERROR":
        return list(node.children)
    items: list = []
    pos, text = node.start_byte, node.text
    for child in [*node.children, None]:
        stop = node.end_byte if child is None else child.start_byte
        if stop > pos:
            items.append((pos, stop, text[pos - node.start_byte:stop - node.start_byte]))
        if child is not None:
            items.append(child)
            pos = max(pos, child.end_byte)
    return items


def _window(src: bytes, start: int, size: int) -> int:
    """End of a parse window from ``start``: the first ASCII blank at or after
    ``start + size`` (never inside a token or a character), or the end of ``src``."""
    m = _BLANK.search(src, start + max(size, _WINDOW))
    return m.start() if m else len(src)


def _first_marker(src: bytes, start: int, end: int) -> int:
    """Offset of the first ``"``, ``(*`` or ``\\*`` in ``src[start:end]`` (``end`` if none)."""
    found = [i for i in (src.find(m, start, end) for m in _MARKERS) if i >= 0]
    return min(found, default=end)


def _read(src: bytes, depth: int = 0) -> tuple[list[Span], list[Span]]:
    """Comment and string byte spans of ``src`` (see :func:`lex`).

    tree-sitter parses ``src``.  Where its error recovery lexed a ``(*``, an escape or
    comment text alone, or skipped text holding a ``"``, ``(*`` or ``\\*``, tree-sitter
    parses again from there, in a window that starts at :data:`_WINDOW` bytes and
    doubles while the text parses cleanly or a span reaches the window's end (so junk
    costs about linear time); a ``(*`` that a fresh parse of the whole rest cannot close
    is a comment to the end.  A ``"`` it lexed alone or skipped starts a string to the
    next ``"`` on its line or the line end (:data:`_QUOTE`); the walk goes on after it,
    parsing again only where tree-sitter's reading straddles the string's end.
    ``depth`` 1: ``src`` is extramodular text.
    """
    comments: list[Span] = []
    strings: list[Span] = []
    base, limit, at = 0, len(src), [0]
    events = _events(_parse(src), src, at)
    while True:
        kind, s, e = next(events, ("end", limit - base, limit - base))
        s, e = s + base, e + base
        cut_off = e >= limit and limit < len(src)  # it may go on past the window
        if kind == "end" and limit == len(src):
            break
        if kind in ("string", "comment") and not cut_off:
            (comments if kind == "comment" else strings).append((s, e))
        elif kind == "extramodular" and depth == 0 and not cut_off:
            c, t = _read(src[s:e], 1)
            comments += [(a + s, b + s) for a, b in c]
            strings += [(a + s, b + s) for a, b in t]
        elif kind == "gap" and s == base and (m := _first_marker(src, s, e)) > s:
            base, limit = m, _window(src, m, _WINDOW)  # skip the text no marker is in
            events, e = _events(_parse(src[base:limit]), src[base:limit], at), m
        elif kind in ("lone", "gap") and src[s:s + 1] == b'"':
            end, e = e, _QUOTE.match(src, s).end()
            strings.append((s, e))
            if end > e or e > limit:  # tree-sitter read on over the line end / window: again
                base, limit = e, _window(src, e, _WINDOW)
                events = _events(_parse(src[base:limit]), src[base:limit], at)
        elif kind in ("lone", "gap") and s == base and src.startswith(b"(*", s) and limit == len(src):
            comments.append((s, len(src)))  # not even a fresh parse closes this (*
            break
        elif s == base and kind in ("gap", "cut", "lone") and not src.startswith(b"(*", s) \
                or kind == "extramodular" and not cut_off:
            pass  # a fresh parse reads it so too / nested extramodular text: code
        else:  # parse again from s: a lone (*, a gap, a cut, a window end
            size = 2 * (limit - base) if s == base or cut_off or kind == "end" else _WINDOW
            base, limit = s, _window(src, s, size)
            events, e = _events(_parse(src[base:limit]), src[base:limit], at), s
        at[0] = e - base
    return comments, strings


def _outermost(comments: list[Span], strings: list[Span]) -> tuple[list[Span], list[Span]]:
    """Sorted spans without empty ones and without any that starts inside an earlier one."""
    kept: tuple[list[Span], list[Span]] = ([], [])
    end = -1
    for s, e, k in sorted([(s, e, 0) for s, e in comments] + [(s, e, 1) for s, e in strings]):
        if s >= end and e > s:
            kept[k].append((s, e))
            end = e
    return kept


def lex(text: str | None) -> Lexed:
    """The comments and strings of a TLA+ text (module docstring), as :class:`Lexed`.
    The last few readings are cached (callers often lex the same text again)."""
    return _lex(text or "")


@lru_cache(maxsize=64)
def _lex(text: str) -> Lexed:
    src = _encode(text)
    comments, strings = _outermost(*_read(src))
    at = _char_offsets(text, src)
    return Lexed(text, tuple((at(s), at(e)) for s, e in comments), tuple((at(s), at(e)) for s, e in strings))


def comment_spans(text: str | None) -> list[Span]:
    """Character spans ``[start, end)`` of the comments of ``text``, sorted, disjoint."""
    return list(lex(text).comments)


def string_spans(text: str | None) -> list[Span]:
    """Character spans ``[start, end)`` of the string literals of ``text`` (outside
    comments), sorted, disjoint."""
    return list(lex(text).strings)


def comment_string_spans(text: str | None) -> list[Span]:
    """Character spans of the comments and the strings of ``text`` together, sorted,
    disjoint."""
    lexed = lex(text)
    return sorted(lexed.comments + lexed.strings)


def strip_comments(text: str | None) -> str:
    """``text`` without its comments: each comment's characters are removed (nothing
    replaces them; the line end after a ``\\*`` comment is kept), the rest is unchanged.
    Block comments with only blanks between them are one comment, so those blanks go
    too (whitespace is all that differs from removing each comment on its own)."""
    lexed = lex(text)
    parts, i = [], 0
    for s, e in lexed.comments:
        parts.append(lexed.text[i:s])
        i = e
    parts.append(lexed.text[i:])
    return "".join(parts)


def _code_tokens(code: str, skip: tuple[str, ...]) -> list[str]:
    return [m.group(0) for m in _CODE_TOKEN.finditer(code) if m.lastgroup not in skip]


def tokens(text: str | None, *, separators: bool = False) -> list[str]:
    """TLA+ tokens of ``text`` in order, without whitespace, comments and (unless
    ``separators``) separators (module docstring): a string literal is one token, quotes
    included.  With ``separators`` each run of four or more ``-`` or ``=`` is a token too
    (so ``====`` marks the end of a module)."""
    lexed = lex(text)
    skip = ("ws",) if separators else ("ws", "sep")
    out: list[str] = []
    i = 0
    for s, e, is_string in sorted([(s, e, False) for s, e in lexed.comments]
                                  + [(s, e, True) for s, e in lexed.strings]):
        out += _code_tokens(lexed.text[i:s], skip)
        if is_string:
            out.append(lexed.text[s:e])
        i = e
    out += _code_tokens(lexed.text[i:], skip)
    return out
