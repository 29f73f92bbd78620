"""From raw model text to exactly one TLA+ module (first step of grading LLM outputs).

:func:`extract_module` never raises on any ``str`` input (only ``TypeError`` for a
non-``str``); everything it did is listed in :attr:`Extraction.actions`, in order, and a
failure is reported in :attr:`Extraction.error` as ``"<code>: <message>"``.

Model output is untrusted and not yet TLA+, so this step works on *lines* with small
regular expressions (fences, ``---- MODULE X ----`` headers, ``====`` closing lines);
the extracted module is then parsed with tree-sitter only to flag syntax errors
(``tree_sitter_errors``) -- SANY decides parsing later.

Steps and action codes:

* ``replace_invalid_chars`` -- lone surrogates (bytes decoded with ``surrogateescape``)
  replaced by U+FFFD; ``normalize_newlines`` -- ``\\r\\n`` / ``\\r`` turned into ``\\n``.
* ``strip_fence`` -- markdown fences (```` ``` ```` or ``~~~``, any info string such as
  ``tla``/``tlaplus``): the fenced blocks that contain a MODULE header are used (all of
  them, in order, so a helper and a main module in two blocks are both candidates); an
  unclosed fence runs to the end of the text (truncated output).  When no block contains
  a header the whole text is searched.
* ``strip_prose_before`` / ``strip_prose_after`` -- non-blank, non-fence lines before
  the chosen module's header / after its closing line were dropped (another module
  counts as such text too).
* ``choose_module:<name>`` -- several top-level modules: the one named ``expected_name``
  if any, else the first.  Nested modules (a header inside an open module) are tracked
  with a depth counter and stay inside their parent.
* ``keep_companions:<names>`` -- other closed top-level modules of the same text that
  the chosen module imports (EXTENDS or INSTANCE, transitively) follow it in
  ``module_text``, in source order: SANY reads the modules after the root module of a
  file (TLA+-Bench 1009's gold file holds BufferedRandomAccessFile, RandomAccessFile and
  Common).  :func:`split_modules` turns such a text into one text per module.
* ``add_closing_line`` -- no closing ``====`` line: ``====`` is appended and
  ``truncated`` is set.
* ``rename_module:<old>-><new>`` -- ``expected_name`` given and different: only the
  header's name is rewritten.  A self-reference by the old name elsewhere (EXTENDS,
  INSTANCE, comments) is left as is; SANY reports it.
* ``ascii_symbols:<n>`` -- n Unicode TLA+ symbols replaced by their ASCII forms, see
  :func:`asciify`.
* ``tree_sitter_errors`` -- the extracted module does not parse cleanly with
  tree-sitter-tlaplus (not a failure).

Error codes: ``empty``, ``no_module_header``, ``unsafe_module_name`` (the name must
match ``[A-Za-z_][A-Za-z0-9_]*`` and have at most 64 characters: it becomes a file name),
``unsafe_expected_name`` (the caller's ``expected_name`` fails the same check).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from alias.tla.syntax import imported_modules, parse

MAX_NAME_LEN = 64
_SAFE_NAME = re.compile(r"[A-Za-z0-9_]*[A-Za-z][A-Za-z0-9_]*")  # TLA+: a letter somewhere (2PCwithBTM)
# A header: >=4 dashes, MODULE, a name (anything, checked later), >=4 dashes.
_HEADER = re.compile(r"^\s*-{4,}\s*MODULE(?:\s+(.*?))?\s*-{4,}\s*$")
_CLOSING = re.compile(r"^\s*={4,}\s*$")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")

#: The common Unicode TLA+ symbols and their ASCII forms (the standard mapping).
UNICODE_TO_ASCII: dict[str, str] = {
    "∧": "/\\", "∨": "\\/", "¬": "~", "⇒": "=>", "⇔": "<=>", "≡": "<=>", "≜": "==",
    "∈": "\\in", "∉": "\\notin", "⊆": "\\subseteq", "⊂": "\\subset", "⊇": "\\supseteq",
    "∪": "\\cup", "∩": "\\cap", "∀": "\\A", "∃": "\\E", "□": "[]", "◇": "<>",
    "⟨": "<<", "⟩": ">>", "≠": "/=", "≤": "=<", "≥": ">=", "×": "\\X", "↦": "|->",
    "→": "->", "′": "'", "∖": "\\", "↝": "~>", "∘": "\\o",
}
_IDENT_CHAR = re.compile(r"[A-Za-z0-9_]")


@dataclass
class Extraction:
    ok: bool
    module_text: str | None = None
    module_name: str | None = None
    actions: list[str] = field(default_factory=list)
    error: str | None = None
    truncated: bool = False


def is_safe_name(name: str) -> bool:
    return len(name) <= MAX_NAME_LEN and _SAFE_NAME.fullmatch(name) is not None


def _convert_line(line: str) -> tuple[str, list[tuple[int, int]], int]:
    """Replace Unicode symbols in one line outside double-quoted strings.

    Returns the new line, ``(orig_col, extra_width)`` per replacement and the count.
    A space is added after a replacement ending in a letter or backslash when an
    identifier character follows (``∀x`` -> ``\\A x``, ``x∈S`` -> ``x\\in S``).
    """
    out: list[str] = []
    extras: list[tuple[int, int]] = []
    in_string = False
    i = 0
    while i < len(line):
        ch = line[i]
        if in_string:
            out.append(ch)
            if ch == "\\" and i + 1 < len(line):
                out.append(line[i + 1])
                i += 2
                continue
            if ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif ch in UNICODE_TO_ASCII:
            rep = UNICODE_TO_ASCII[ch]
            if (rep[-1].isalpha() or rep[-1] == "\\") and i + 1 < len(line) and _IDENT_CHAR.match(line[i + 1]):
                rep += " "
            out.append(rep)
            extras.append((i, len(rep) - 1))
        else:
            out.append(ch)
        i += 1
    return "".join(out), extras, len(extras)


def asciify(text: str) -> tuple[str, int]:
    """Replace the Unicode TLA+ symbols of :data:`UNICODE_TO_ASCII` by ASCII.

    Replacement happens everywhere except inside double-quoted string literals (a
    string ends at its line's end, so a stray ``"`` affects one line only).  Comments
    are converted too, on purpose: PlusCal algorithms live inside comments.

    Alignment: ASCII forms are wider (``∧`` -> ``/\\``), which would break
    column-sensitive junction lists.  Each line therefore gets extra indentation equal to
    the shift that its indentation column received on the nearest previous non-blank line
    indented no deeper (that line's own extra indentation plus the widening of the
    replacements left of that column).  Bullets at the same original column thus stay
    aligned, and text right of a bullet stays right of it.  Limitations: columns are
    counted in code points (tabs count as one column), and only indentation is padded,
    so alignment between two tokens in the middle of different lines is not restored
    (TLA+ only cares about junction bullets, which begin lines or follow ``==``/``:``).
    """
    lines = text.split("\n")
    result: list[str] = []
    # Per processed non-blank line: (indent, line shift, sorted extras) for look-back.
    history: list[tuple[int, int, list[tuple[int, int]]]] = []
    total = 0
    for line in lines:
        new, extras, n = _convert_line(line)
        total += n
        stripped = line.lstrip()
        if not stripped:
            result.append(new)
            continue
        indent = len(line) - len(stripped)
        shift = 0
        for p_indent, p_shift, p_extras in reversed(history):
            if p_indent <= indent:
                shift = p_shift + sum(w for c, w in p_extras if c < indent)
                break
        result.append(" " * shift + new)
        history.append((indent, shift, extras))
    return "\n".join(result), total


def _fenced_blocks(lines: list[str]) -> tuple[list[list[int]], set[int]]:
    """Line-index lists of fenced blocks' contents, and the indices of fence lines."""
    blocks: list[list[int]] = []
    fence_lines: set[int] = set()
    open_fence: str | None = None
    current: list[int] = []
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if open_fence is None:
            if m:
                open_fence = m.group(1)
                fence_lines.add(i)
                current = []
        elif m and m.group(1)[0] == open_fence[0] and len(m.group(1)) >= len(open_fence) and not m.group(2).strip():
            fence_lines.add(i)
            blocks.append(current)
            open_fence = None
        else:
            current.append(i)
    if open_fence is not None:
        blocks.append(current)
    return blocks, fence_lines


def _fail(actions: list[str], code: str, message: str, name: str | None = None) -> Extraction:
    return Extraction(ok=False, module_name=name, actions=actions, error=f"{code}: {message}")


def _normalize(raw: str, actions: list[str]) -> str:
    """``raw`` as valid UTF-8 with ``\\n`` line ends and no byte-order mark."""
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        raw = raw.encode("utf-8", "replace").decode("utf-8")
        actions.append("replace_invalid_chars")
    if "\r" in raw:
        raw = raw.replace("\r\n", "\n").replace("\r", "\n")
        actions.append("normalize_newlines")
    return raw.lstrip("\ufeff")


def _top_level_modules(segments: list[list[int]], lines: list[str], headers: dict) -> list[tuple[list[int], bool]]:
    """Top-level modules per segment (a fenced block, or the whole text): the line indices
    from the header to the closing line (or the segment's end when unclosed) and whether
    the module is closed."""
    modules: list[tuple[list[int], bool]] = []
    for seg in segments:
        depth = 0
        start = 0
        for pos, i in enumerate(seg):
            if i in headers:
                if depth == 0:
                    start = pos
                depth += 1
            elif depth > 0 and _CLOSING.match(lines[i]):
                depth -= 1
                if depth == 0:
                    modules.append((seg[start : pos + 1], True))
        if depth > 0:
            modules.append((seg[start:], False))
    return modules


def _module_text(lines: list[str], body_idx: list[int], closed: bool, header, name: str,
                 expected_name: str | None, actions: list[str]) -> str:
    """The chosen module's text: closed when truncated, renamed to ``expected_name``,
    Unicode symbols in ASCII."""
    body = [lines[i] for i in body_idx]
    if not closed:
        while body and not body[-1].strip():
            body.pop()
        body.append("====")
        actions.append("add_closing_line")
    if expected_name is not None and name != expected_name:
        body[0] = body[0][: header.start(1)] + expected_name + body[0][header.end(1) :]
        actions.append(f"rename_module:{name}->{expected_name}")
    text, n = asciify("\n".join(body) + "\n")
    if n:
        actions.append(f"ascii_symbols:{n}")
    try:
        if parse(text).root_node.has_error:
            actions.append("tree_sitter_errors")
    except Exception as exc:  # parsing is advisory only
        actions.append(f"tree_sitter_failed:{type(exc).__name__}")
    return text


def split_modules(text: str) -> dict[str, str]:
    """``{module name: text}`` for the top-level modules of ``text`` (one TLA+ file),
    in source order; a text without a header gives ``{}``.  Unclosed modules count."""
    lines = text.split("\n")
    headers = {i: m for i, m in ((i, _HEADER.match(l)) for i, l in enumerate(lines)) if m}
    out: dict[str, str] = {}
    for body_idx, _closed in _top_level_modules([list(range(len(lines)))], lines, headers):
        name = (headers[body_idx[0]].group(1) or "").strip()
        out.setdefault(name, "\n".join(lines[i] for i in body_idx) + "\n")
    return out


def _companions(modules: list[tuple[list[int], bool]], chosen, lines: list[str], name_of) -> list:
    """The closed modules other than ``chosen`` that it imports, transitively, in source order."""
    by_name = {name_of(m): m for m in modules if m is not chosen and m[1]}
    keep: set[str] = set()
    todo = [chosen]
    while todo:
        text = "\n".join(lines[i] for i in todo.pop()[0])
        for n in imported_modules(text):
            if n in by_name and n not in keep and n != name_of(chosen):
                keep.add(n)
                todo.append(by_name[n])
    return [m for m in modules if m is not chosen and m[1] and name_of(m) in keep]


def extract_module(raw: str, expected_name: str | None = None) -> Extraction:
    """Extract exactly one TLA+ module from raw model output; see the module docstring."""
    if not isinstance(raw, str):
        raise TypeError(f"raw must be str, not {type(raw).__name__}")
    if expected_name is not None and not isinstance(expected_name, str):
        raise TypeError(f"expected_name must be str or None, not {type(expected_name).__name__}")
    actions: list[str] = []
    if expected_name is not None and not is_safe_name(expected_name):
        return _fail(actions, "unsafe_expected_name", f"expected name {expected_name[:80]!r} is not a safe module name")
    raw = _normalize(raw, actions)
    if not raw.strip():
        return _fail(actions, "empty", "the output is empty or whitespace only")

    lines = raw.split("\n")
    headers = {i: m for i, m in ((i, _HEADER.match(l)) for i, l in enumerate(lines)) if m}
    blocks, fence_lines = _fenced_blocks(lines)
    chosen_blocks = [b for b in blocks if any(i in headers for i in b)]
    if chosen_blocks:
        candidate = [i for b in chosen_blocks for i in b]
        actions.append("strip_fence")
    else:
        candidate = list(range(len(lines)))
        fence_lines = set()
    if not any(i in headers for i in candidate):
        return _fail(actions, "no_module_header", "no '---- MODULE Name ----' line found")
    modules = _top_level_modules(chosen_blocks if chosen_blocks else [candidate], lines, headers)

    def name_of(mod: tuple[list[int], bool]) -> str:
        return (headers[mod[0][0]].group(1) or "").strip()

    chosen = modules[0]
    if len(modules) > 1:
        if expected_name is not None:
            chosen = next((m for m in modules if name_of(m) == expected_name), modules[0])
        actions.append(f"choose_module:{name_of(chosen)}")
    body_idx, closed = chosen
    name = name_of(chosen)
    if not is_safe_name(name):
        return _fail(actions, "unsafe_module_name", f"module name {name[:80]!r} is not a safe module name", name)
    companions = _companions(modules, chosen, lines, name_of) if len(modules) > 1 else []
    kept = {i for m in companions for i in m[0]}
    if any(lines[i].strip() and i not in fence_lines and i not in kept for i in range(0, body_idx[0])):
        actions.append("strip_prose_before")
    if any(lines[i].strip() and i not in fence_lines and i not in kept for i in range(body_idx[-1] + 1, len(lines))):
        actions.append("strip_prose_after")
    text = _module_text(lines, body_idx, closed, headers[body_idx[0]], name, expected_name, actions)
    if companions:
        actions.append(f"keep_companions:{','.join(name_of(m) for m in companions)}")
        text += "".join("\n" + asciify("\n".join(lines[i] for i in m[0]) + "\n")[0] for m in companions)
    return Extraction(ok=True, module_text=text, module_name=name, actions=actions, truncated=not closed)
