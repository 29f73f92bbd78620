"""Original names in the comments of a renamed copy, and the scan for what is left
(Methods "Renaming"; README "Renaming").

A renamed copy must carry no original author name: the exposure experiment's "all tokens"
log-likelihood reads comments too, so an original name left in a comment favours the
renamed copy of a seen task. :func:`rename_comments` renames every whole-word occurrence
of a renamed name in the comments of a module or cfg, Toolbox annotations included
(``@modelParameterConstants:0Limit``), with the word rule of
:func:`alias.rename.descriptions.name_pattern` (each part of a hyphenated word is a word).

One kind of name is kept in prose: a name made only of lowercase letters that is an
ordinary English word of two letters or more, or ``a`` (:func:`alias.rename.kinds.is_english_word`:
``leader``, ``count``, ``state``; single letters such as ``x`` are renamed), which cannot be renamed in an English sentence without changing its meaning.
Such occurrences are counted apart (``kept = english_word``), never as leftovers. Inside a
PlusCal algorithm (from ``--algorithm`` or ``--fair`` to the end of its comment) the text
is code, so every name is renamed there, except in its string literals (values) and
its own comments (prose again).

:func:`leftover_rows` lists every original name still in a renamed copy, by place (module
code, module comment, module string, cfg, cfg comment, description), with the reason it
was kept on purpose (``english_word``, ``string_value``: a string is a value, renaming it
changes the behavior; ``description_rule``: the paper's three-part rule for descriptions)
or none: a leftover (``v_leftover_names``).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

from alias.rename.descriptions import description_names, name_pattern
from alias.rename.kinds import is_english_word
from alias.tla.cfg import tokenize
from alias.tla.lexer import lex

__all__ = ["prose_keeps", "rename_comments", "rename_module_comments", "rename_cfg_comments", "leftover_rows",
           "count_kept_english"]

_PCAL = re.compile(r"--(?:fair\s+)?algorithm\b|--fair\b")
#: Inside PlusCal code: a string literal, a block comment or an end-of-line comment.
_CODE_PARTS = re.compile(r'"(?:[^"\\\n]|\\.)*"|\(\*.*?\*\)|\\\*[^\n]*', re.S)


def prose_keeps(name: str) -> bool:
    """Whether ``name`` stays in the prose of a comment: lowercase letters only and an
    English word of two letters or more, or ``a`` (``leader``, ``chosen``; not ``msgs``,
    ``x``, ``Leader`` or ``sentUnacked``)."""
    if not (name.isascii() and name.isalpha() and name.islower()):
        return False
    return name == "a" or (len(name) >= 2 and is_english_word(name))


def _regions(comment: str) -> list[tuple[int, str]]:
    """``(start, kind)`` of the regions of one comment's text, in order: ``prose`` up to
    a PlusCal algorithm (``--algorithm``, ``--fair``), then ``code``, with the strings
    (``string``) and comments (``prose``) inside the code."""
    m = _PCAL.search(comment)
    if m is None:
        return [(0, "prose")]
    out = [(0, "prose"), (m.start(), "code")]
    for part in _CODE_PARTS.finditer(comment, m.start()):
        out += [(part.start(), "string" if part.group(0).startswith('"') else "prose"), (part.end(), "code")]
    return out


def _kind_at(regions: list[tuple[int, str]], pos: int) -> str:
    return next(kind for start, kind in reversed(regions) if start <= pos)


def _kept_as(name: str, kind: str) -> str | None:
    """Why an occurrence of an original name stays in a comment region (None: renamed)."""
    if kind == "string":
        return "string_value"
    return "english_word" if kind == "prose" and prose_keeps(name) else None


def rename_comments(text: str, spans: Iterable[tuple[int, int]], mapping: dict[str, str]) -> str:
    """``text`` with every whole-word occurrence of a ``mapping`` key inside the character
    ``spans`` (its comments) replaced, English words in prose and string literals in
    PlusCal code kept (module docstring)."""
    if not mapping:
        return text
    pat = name_pattern(mapping, hyphenated=False)
    parts, pos = [], 0
    for s, e in spans:
        body = text[s:e]
        regions = _regions(body)

        def sub(m: re.Match) -> str:
            name = m.group(0)
            return name if _kept_as(name, _kind_at(regions, m.start())) else mapping[name]

        parts += [text[pos:s], pat.sub(sub, body)]
        pos = e
    parts.append(text[pos:])
    return "".join(parts)


def rename_module_comments(text: str, mapping: dict[str, str]) -> str:
    """:func:`rename_comments` over the comments of a TLA+ module text (the lexer's)."""
    return rename_comments(text, lex(text).comments, mapping)


def _cfg_comment_spans(text: str) -> list[tuple[int, int]]:
    return [(t.start, t.end) for t in tokenize(text) if t.kind == "comment"]


def rename_cfg_comments(text: str | None, mapping: dict[str, str]) -> str | None:
    """:func:`rename_comments` over the comments of a cfg text (``None`` stays ``None``)."""
    return None if text is None else rename_comments(text, _cfg_comment_spans(text), mapping)


def _occurrences(text: str, spans: Iterable[tuple[int, int]], pat: re.Pattern, comments: bool = False):
    """``(name, line, kept)`` of every match of ``pat`` inside ``spans`` of ``text``; in
    ``comments``, ``kept`` says why an occurrence stays (:func:`_kept_as`), else None."""
    for s, e in spans:
        body = text[s:e]
        regions = _regions(body) if comments else [(0, "code")]
        for m in pat.finditer(body):
            yield m.group(0), text.count("\n", 0, s + m.start()) + 1, _kept_as(m.group(0), _kind_at(regions, m.start()))


def _module_occurrences(text: str, pat: re.Pattern):
    """``(place, name, line, kept)`` of the original names in one renamed module text."""
    lexed = lex(text)
    for name, line, kept in _occurrences(text, lexed.comments, pat, comments=True):
        yield "module_comment", name, line, kept
    for name, line, _ in _occurrences(text, [(s + 1, e - 1) for s, e in lexed.strings if e - s >= 2], pat):
        yield "module_string", name, line, "string_value"


def _cfg_occurrences(text: str, originals: set[str], pat: re.Pattern):
    for t in tokenize(text):
        if t.kind == "ident" and t.text in originals:
            yield "cfg", t.text, text.count("\n", 0, t.start) + 1, None
    for name, line, kept in _occurrences(text, _cfg_comment_spans(text), pat, comments=True):
        yield "cfg_comment", name, line, kept


def _aggregate(task_id: str, found: Iterable[tuple[str, str, str, int, str | None]]) -> list[dict]:
    """One row per (place, file, name): occurrences counted, the first line kept."""
    counts: Counter = Counter()
    first: dict[tuple, tuple[int, str | None]] = {}
    for place, file, name, line, kept in found:
        key = (place, file, name)
        counts[key] += 1
        if key not in first or line < first[key][0]:
            first[key] = (line, kept if key not in first else first[key][1])
    return [{"task_id": task_id, "place": p, "file": f, "name": n, "kept": first[(p, f, n)][1],
             "n": counts[(p, f, n)], "first_line": first[(p, f, n)][0]} for (p, f, n) in sorted(counts)]


def leftover_rows(task_id: str, mapping: dict[str, str], modules: dict[str, str], cfg_text: str | None,
                  description: str | None, code_leftovers: Iterable[tuple[str, str, int]] = (), *,
                  cfg_names: set[str] = frozenset(), module_names: set[str] = frozenset()) -> list[dict]:
    """The ``leftover_names`` rows of one renamed task: every original name (a key of
    ``mapping``) still in its renamed ``modules`` (new module name -> text), its renamed
    cfg and description, one row per place, file and name with ``n`` occurrences, the
    first line and ``kept`` (the reason it stays on purpose, ``None`` for a leftover;
    module docstring). ``code_leftovers``: the ``(module, name, line)`` tokens of
    :func:`alias.rename.cir.leftover_identifiers`. ``cfg_names``, ``module_names``: what
    the description rule keeps (:func:`alias.rename.descriptions.description_names`)."""
    originals = set(mapping)
    if not originals:
        return []
    pat = name_pattern(originals, hyphenated=False)
    found = [("module_code", mod, name, line, None) for mod, name, line in code_leftovers]
    for mod, text in sorted(modules.items()):
        found += [(place, f"{mod}.tla", name, line, kept) for place, name, line, kept in _module_occurrences(text, pat)]
    if cfg_text:
        found += [(place, "cfg", name, line, kept) for place, name, line, kept in _cfg_occurrences(cfg_text, originals, pat)]
    if description:
        renamed_by_rule = set(description_names(mapping, cfg_names, module_names))
        dpat = name_pattern(originals)
        found += [("description", "description", name, line, None if name in renamed_by_rule else "description_rule")
                  for name, line, _ in _occurrences(description, [(0, len(description))], dpat)]
    return _aggregate(task_id, found)


def count_kept_english(rows: Iterable[dict]) -> int:
    """Occurrences of English words kept in comments (counted apart from leftovers)."""
    return sum(r["n"] for r in rows if r["kept"] == "english_word")
