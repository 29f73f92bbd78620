"""File continuation: a recall test on the original and the renamed file (paper, Appendix L).

"For each specification we show the model its first 40% of lines (at least 8 and at most
60), tell it the repository and path the file comes from and ask it to continue the file
exactly. [...] We remove comments and separator lines from the model's output and from
the rest of the real file, and we count the longest stretch of tokens that the two texts
share word for word [...]. We run the same test on the renamed copy."

Public API::

    prefix_line_count(n_lines, *, fraction=0.4, min_lines=8, max_lines=60) -> int
    continuation_prompt(module_text, repo, path, *, fraction=0.4, min_lines=8, max_lines=60)
        -> (prompt, prefix, n_prefix_lines)
    longest_shared_token_run(a, b) -> int
    continuation_item(task_id, condition, module_text, repo, path, **rule) -> ContinuationItem
    continuation_requests(items, model, *, n_samples=1, max_tokens=4096, ...) -> list[SampleRequest]
    continuation_rows(items, samples) -> pandas.DataFrame   (CONTINUATION_COLUMNS)
    renamed_path(path, module_names) -> str
    LONG_RUN_TOKENS = 50

Rules and the choices made where the appendix is not explicit:

* **Lines** are the lines of the module file (``str.splitlines``; a final newline does
  not start another line), header, comments and blank lines included.  The prefix has
  ``floor(fraction * n)`` lines (exact rational arithmetic, so 40% of 25 lines is 10),
  raised to ``min_lines`` and cut to ``max_lines``; it is also cut to ``n - 1`` so at
  least one line remains to continue (only matters for files of at most ``min_lines``
  lines, where the 8-line floor cannot hold).
* **Prompt**: one instruction paragraph naming the repository and the path, a blank
  line, then the prefix lines verbatim (ending with a newline).  For the renamed copy the
  caller passes the same repository and, by default (:func:`renamed_path`), the original
  path with the file name of the renamed module: "the same test" on a file that exists
  only in this study.
* **Tokens** (the unit of :func:`longest_shared_token_run`): TLA+ lexical tokens of
  :func:`alias.tla.lexer.tokens`, not model tokens: names (``[A-Za-z0-9_]+``, so
  ``WF_vars`` and ``1`` are one token each), string literals (one token, quotes
  included), backslash operators (``\\in``, ``\\A``, ``\\cup``, ``\\/``), multi-character
  symbols (``==``, ``/\\``, ``|->``, ``<<``, ``]_``, ``[]``, ``~>``, ``..`` ...) and any
  other single character.  Whitespace and comments (``\\*`` to the end of the line,
  nested ``(* ... *)``) are dropped, and so are separator tokens, runs of four or more
  ``-`` or ``=`` (separator lines, the dashes of a ``---- MODULE M ----`` header and the
  closing ``====`` line).  Fenced-code marker lines (a line starting with three
  backticks) are dropped from a model's output.
* **Run**: the length of the longest common contiguous token sequence of the two token
  lists, computed with a suffix automaton of the reference remainder in O(n + m).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from pathlib import PurePosixPath
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from alias.corpus.testset import TestSet
from alias.generate.types import SampleRequest
from alias.store.db import columns
from alias.store.models import Continuation
from alias.tla.lexer import tokens

__all__ = [
    "CONTINUATION_PROMPT_VERSION", "CONTINUATION_COLUMNS", "LONG_RUN_TOKENS", "ContinuationItem",
    "prefix_line_count", "continuation_prompt", "reference_remainder",
    "longest_shared_token_run", "continuation_item", "continuation_requests", "continuation_rows",
    "renamed_path", "strip_fences",
]

#: Names the exact prompt text below; store it with every sample.
CONTINUATION_PROMPT_VERSION = "alias-paper-L-v1"

#: Appendix L reports the specifications continued "with a run of at least 50 tokens".
LONG_RUN_TOKENS = 50

#: Columns of :func:`continuation_rows`: the ``continuations`` table's.
CONTINUATION_COLUMNS = columns(Continuation)

_INSTRUCTION = (
    "The following are the first {n} lines of the file {path} in the GitHub repository "
    "{repo}. Continue the file exactly as it is written in the repository, from line {next} "
    "to the end of the file. Output only the continuation, with no explanation."
)


# --------------------------------------------------------------------------- prefix
def prefix_line_count(n_lines: int, *, fraction: float = 0.4, min_lines: int = 8,
                      max_lines: int = 60) -> int:
    """Lines shown for a file of ``n_lines`` lines: ``floor(fraction * n_lines)`` clamped to
    ``[min_lines, max_lines]``, then to ``n_lines - 1`` (never below 0)."""
    if n_lines < 0 or min_lines < 0 or max_lines < min_lines:
        raise ValueError("need n_lines >= 0 and 0 <= min_lines <= max_lines")
    k = math.floor(Fraction(str(fraction)) * n_lines)
    k = min(max_lines, max(min_lines, k))
    return max(0, min(k, n_lines - 1))


def continuation_prompt(module_text: str, repo: str, path: str, *, fraction: float = 0.4,
                        min_lines: int = 8, max_lines: int = 60) -> tuple[str, str, int]:
    """``(prompt, prefix, n_prefix_lines)`` for one module file.

    ``prefix`` is the first ``n_prefix_lines`` lines of ``module_text`` with their line
    ends as in the file; the prompt shows them after the instruction (with a final
    newline added if the last shown line had none).
    """
    lines = module_text.splitlines(keepends=True)
    n = prefix_line_count(len(lines), fraction=fraction, min_lines=min_lines, max_lines=max_lines)
    prefix = "".join(lines[:n])
    shown = prefix if prefix.endswith(("\n", "\r")) or not prefix else prefix + "\n"
    prompt = _INSTRUCTION.format(n=n, path=path, repo=repo, next=n + 1) + "\n\n" + shown
    return prompt, prefix, n


def reference_remainder(module_text: str, n_prefix_lines: int) -> str:
    """The real rest of the file after its first ``n_prefix_lines`` lines."""
    return "".join(module_text.splitlines(keepends=True)[n_prefix_lines:])


def renamed_path(path: str, module_names: Mapping[str, str]) -> str:
    """``path`` with its file stem replaced by the renamed module name, when renamed
    (``specifications/Clock/Clock.tla`` -> ``specifications/Clock/Jctqc.tla``)."""
    p = PurePosixPath(path)
    new = module_names.get(p.stem)
    return str(p.with_name(new + p.suffix)) if new else path


# --------------------------------------------------------------------------- tokens
def strip_fences(text: str) -> str:
    """``text`` without markdown fence lines (lines starting with three backticks)."""
    return "".join(ln for ln in (text or "").splitlines(keepends=True) if not ln.lstrip().startswith("```"))


def longest_shared_token_run(a: str | Sequence[str], b: str | Sequence[str]) -> int:
    """Length, in TLA+ tokens (:func:`alias.tla.lexer.tokens`), of the longest contiguous
    token sequence that ``a`` (e.g. a model's continuation) and ``b`` (the real remainder)
    share.

    Strings are tokenized; token lists are used as they are.  Symmetric; 0 when either
    side is empty.  A suffix automaton of ``b`` is built and ``a`` is run through it:
    O(len(a) + len(b)) time.
    """
    ta = tokens(a) if isinstance(a, str) else list(a)
    tb = tokens(b) if isinstance(b, str) else list(b)
    if not ta or not tb:
        return 0
    # suffix automaton of tb
    link, length, nxt = [-1], [0], [dict()]
    last = 0
    for tok in tb:
        cur = len(length)
        length.append(length[last] + 1)
        link.append(-1)
        nxt.append({})
        p = last
        while p != -1 and tok not in nxt[p]:
            nxt[p][tok] = cur
            p = link[p]
        if p == -1:
            link[cur] = 0
        else:
            q = nxt[p][tok]
            if length[p] + 1 == length[q]:
                link[cur] = q
            else:
                clone = len(length)
                length.append(length[p] + 1)
                link.append(link[q])
                nxt.append(dict(nxt[q]))
                while p != -1 and nxt[p].get(tok) == q:
                    nxt[p][tok] = clone
                    p = link[p]
                link[q] = clone
                link[cur] = clone
        last = cur
    best = cur_len = state = 0
    for tok in ta:
        while state and tok not in nxt[state]:
            state = link[state]
            cur_len = length[state]
        if tok in nxt[state]:
            state = nxt[state][tok]
            cur_len += 1
        else:
            state, cur_len = 0, 0
        best = max(best, cur_len)
    return best


# ---------------------------------------------------------------------------- items
@dataclass(frozen=True)
class ContinuationItem:
    """One file to continue: ``condition`` is ``'original'`` or ``'random'`` (the renamed
    copy); ``prefix_lines`` lines shown; ``remainder`` the real rest of the file."""

    task_id: str
    condition: str
    prompt: str
    prefix: str
    prefix_lines: int
    remainder: str


def continuation_item(task_id: str, condition: str, module_text: str, repo: str, path: str, *,
                      fraction: float = 0.4, min_lines: int = 8, max_lines: int = 60) -> ContinuationItem:
    """The prompt and the true remainder of one file (see :func:`continuation_prompt`)."""
    prompt, prefix, n = continuation_prompt(module_text, repo, path, fraction=fraction,
                                            min_lines=min_lines, max_lines=max_lines)
    return ContinuationItem(task_id, condition, prompt, prefix, n, reference_remainder(module_text, n))


def continuation_requests(items: Iterable[ContinuationItem], model: str, *, n_samples: int = 1,
                          max_tokens: int | None = 4096, temperature: float | None = None,
                          top_p: float | None = None) -> list:
    """``SampleRequest`` objects (``alias.generate.types``) for ``run_batch`` or
    ``generate_local``; ``prompt_version`` is :data:`CONTINUATION_PROMPT_VERSION`.  Keys
    reuse (task_id, condition, model, sample_idx), so keep these in a ledger of their
    own, apart from the generation samples."""
    return [SampleRequest(task_id=it.task_id, condition=it.condition, model=model, sample_idx=k,
                          prompt=it.prompt, max_tokens=max_tokens, temperature=temperature, top_p=top_p,
                          prompt_version=CONTINUATION_PROMPT_VERSION)
            for it in items for k in range(n_samples)]


def _field(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


def continuation_rows(items: Iterable[ContinuationItem], samples: Iterable[Any]):
    """One row per sample of a known item, as a DataFrame with :data:`CONTINUATION_COLUMNS`.

    ``samples``: ``SampleResult`` / ``LocalResult`` objects or mappings with ``task_id``,
    ``condition``, ``model``, ``sample_idx`` and ``text`` (a ``status`` other than
    ``'succeeded'`` or a ``None`` text gives ``continuation`` and ``longest_run`` null).
    ``longest_run`` compares the continuation (fence lines removed) with the item's
    remainder.  Samples of an unknown (task_id, condition) raise ``KeyError``; rows are
    sorted by task_id, condition, model, sample_idx.
    """
    by_key = {(it.task_id, it.condition): it for it in items}
    rows = []
    for s in samples:
        key = (_field(s, "task_id"), _field(s, "condition"))
        if key not in by_key:
            raise KeyError(f"no continuation item for task {key[0]!r}, condition {key[1]!r}")
        it = by_key[key]
        text = _field(s, "text")
        status = _field(s, "status", "succeeded")
        if status != "succeeded" or not isinstance(text, str):
            text, run = None, None
        else:
            run = longest_shared_token_run(strip_fences(text), it.remainder)
        rows.append({"task_id": it.task_id, "condition": it.condition, "model": _field(s, "model"),
                     "sample_idx": int(_field(s, "sample_idx")), "prefix_lines": it.prefix_lines,
                     "continuation": text, "reference_remainder": it.remainder, "longest_run": run})
    df = pd.DataFrame(rows, columns=CONTINUATION_COLUMNS)
    df["longest_run"] = df["longest_run"].astype("Int64")
    df["prefix_lines"] = df["prefix_lines"].astype("int64")
    df["sample_idx"] = df["sample_idx"].astype("int64")
    return df.sort_values(["task_id", "condition", "model", "sample_idx"]).reset_index(drop=True)


def continuation_items(testset: TestSet, repository: str) -> list[ContinuationItem]:
    """Two items per test-set task, in task order: the original system module (with its
    corpus path) and the CIR-renamed one (its path with the renamed module names), each
    naming ``repository``. Raises ``ValueError`` when a task lacks its original or renamed
    system module."""
    mods, ren = testset.modules, testset.renamed_modules
    items = []
    for tid in testset.task_ids():
        orig = mods[(mods.task_id == tid) & (mods.role == "system")]
        rsys = ren[(ren.task_id == tid) & (ren.role == "system")]
        if len(orig) != 1 or len(rsys) != 1:
            raise ValueError(f"task {tid}: {len(orig)} original and {len(rsys)} renamed system modules, need 1 each")
        o, r = orig.iloc[0], rsys.iloc[0]
        names = dict(zip(ren.loc[ren.task_id == tid, "original_module"], ren.loc[ren.task_id == tid, "module"]))
        items.append(continuation_item(tid, "original", o.text, repository, o.path))
        items.append(continuation_item(tid, "random", r.text, repository, renamed_path(o.path, names)))
    return items
