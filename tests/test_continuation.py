"""File continuation (Appendix L): prefix rule, prompt, TLA+ tokens, longest shared run, rows."""
from __future__ import annotations

import random
import re
from pathlib import Path

import pandas as pd
import pytest

from alias.generate.continuation import (
    CONTINUATION_COLUMNS, CONTINUATION_PROMPT_VERSION, continuation_item, continuation_prompt,
    continuation_requests, continuation_rows, longest_shared_token_run, prefix_line_count,
    reference_remainder, renamed_path,
)
from alias.tla.lexer import tokens as tla_tokens

SPECS = Path(__file__).resolve().parents[1] / "alias" / "corpus" / "embedded" / "specifications"
REPO = "tlaplus/Examples"


def _module(n_lines: int) -> str:
    """A module of exactly ``n_lines`` lines (header and closing line included)."""
    body = [f"Op{i} == {i}" for i in range(n_lines - 2)]
    return "\n".join(["---- MODULE Big ----", *body, "===="]) + "\n"


# --------------------------------------------------------------------------- prefix
@pytest.mark.parametrize("n,expected", [
    # short (< 20 lines): the floor of 8 lines applies
    (2, 1), (5, 4), (9, 8), (12, 8), (15, 8), (19, 8), (20, 8),
    # medium: floor(40%)
    (21, 8), (22, 8), (23, 9), (25, 10), (38, 15), (50, 20), (99, 39), (100, 40), (149, 59),
    # long (> 150 lines): the cap of 60 lines applies
    (150, 60), (151, 60), (152, 60), (200, 60), (1000, 60),
])
def test_prefix_rule(n, expected):
    assert prefix_line_count(n) == expected
    prompt, prefix, k = continuation_prompt(_module(n), REPO, "specs/Big.tla")
    assert k == expected
    assert prefix.count("\n") == expected
    assert prefix == "".join(_module(n).splitlines(keepends=True)[:expected])
    assert prefix + reference_remainder(_module(n), k) == _module(n)


def test_prefix_rule_parameters_and_bad_input():
    assert prefix_line_count(100, fraction=0.5, min_lines=10, max_lines=30) == 30
    assert prefix_line_count(10, fraction=0.5, min_lines=2, max_lines=30) == 5
    assert prefix_line_count(0) == 0 and prefix_line_count(1) == 0
    with pytest.raises(ValueError):
        prefix_line_count(10, min_lines=9, max_lines=8)


def test_real_module_prompt():
    text = (SPECS / "Clock" / "Clock.tla").read_text()
    n = len(text.splitlines())
    prompt, prefix, k = continuation_prompt(text, REPO, "specifications/Clock/Clock.tla")
    assert k == max(8, int(0.4 * n)) and 8 <= k <= 60
    assert "specifications/Clock/Clock.tla" in prompt and REPO in prompt
    assert f"line {k + 1}" in prompt and "exactly" in prompt
    assert prompt.endswith("\n\n" + prefix)
    assert prefix.startswith("------------------------------- MODULE Clock")
    # a file without a final newline still gets a newline after the shown lines
    p2, pre2, _ = continuation_prompt("a\nb\nc", REPO, "x.tla", min_lines=1, fraction=1.0)
    assert pre2 == "a\nb\n" and p2.endswith("a\nb\n")


def test_renamed_path():
    assert renamed_path("specifications/Clock/Clock.tla", {"Clock": "Jctqc"}) == "specifications/Clock/Jctqc.tla"
    assert renamed_path("specifications/Clock/Clock.tla", {"Other": "X"}) == "specifications/Clock/Clock.tla"


# --------------------------------------------------------------------------- tokens
def test_tokens():
    text = ('---- MODULE M ----\n(* block (* nested *) still comment *)\nSpec == Init /\\ [][Next]_vars '
            '\\* trailing comment\n  /\\ WF_vars(Next) /\\ x \\in 1..N /\\ s = "a \\" (* b" /\\ f = [i |-> <<>>]\n'
            '--------------------------------\n====\n')
    assert tla_tokens(text) == [
        "MODULE", "M", "Spec", "==", "Init", "/\\", "[]", "[", "Next", "]_", "vars",
        "/\\", "WF_vars", "(", "Next", ")", "/\\", "x", "\\in", "1", "..", "N", "/\\", "s", "=",
        '"a \\" (* b"', "/\\", "f", "=", "[", "i", "|->", "<<", ">>", "]"]
    assert tla_tokens("") == [] and tla_tokens("(* open") == []


# ------------------------------------------------------------------ longest run
REMAINDER = r"""
Next == \/ /\ x' = x + 1
           /\ UNCHANGED y
        \/ /\ y' = y - 1
           /\ UNCHANGED x
Spec == Init /\ [][Next]_vars
"""


def test_run_identical_and_disjoint():
    n = len(tla_tokens(REMAINDER))
    assert n == 33
    assert longest_shared_token_run(REMAINDER, REMAINDER) == n
    assert longest_shared_token_run("Foo Bar Baz", "Qux Quux") == 0
    assert longest_shared_token_run("", REMAINDER) == 0 and longest_shared_token_run(REMAINDER, "") == 0


def test_run_ignores_whitespace_comments_and_separators():
    squeezed = ("Next==\\/ /\\ x'=x+1 /\\ UNCHANGED y (* decrement *)\n\\/ /\\ y'=y-1 /\\ UNCHANGED x\n"
                "--------------------\n\\* the spec\nSpec == Init/\\[][Next]_vars\n=======\n")
    assert longest_shared_token_run(squeezed, REMAINDER) == len(tla_tokens(REMAINDER))


def test_run_broken_by_renamed_identifiers():
    # variable x -> Zq: the longest stretch without x is "+ 1 /\ UNCHANGED y \/ /\ y ' = y - 1 /\ UNCHANGED"
    renamed = re.sub(r"\bx\b", "Zq", REMAINDER)
    assert "Next" in renamed and "Zq'" in renamed
    assert longest_shared_token_run(renamed, REMAINDER) == 15
    # renaming Next too leaves the middle stretch; the tail "Spec == Init /\ [] [ Next ]_ vars"
    # is cut after its first 6 tokens
    assert longest_shared_token_run(renamed.replace("Next", "Bzwx"), REMAINDER) == 15
    assert longest_shared_token_run("Spec == Init /\\ [][Bzwx]_vars", "Spec == Init /\\ [][Next]_vars") == 6
    # one renamed token in the middle splits the run into its two sides
    a = "A B C D E F G H I J"
    b = "A B C D X F G H I J"
    assert longest_shared_token_run(a, b) == 5
    assert longest_shared_token_run("A B C D", "C D A B C") == 3


def _dp(a: list[str], b: list[str]) -> int:
    best, prev = 0, [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        cur = [0] * (len(b) + 1)
        for j in range(1, len(b) + 1):
            if a[i - 1] == b[j - 1]:
                cur[j] = prev[j - 1] + 1
                best = max(best, cur[j])
        prev = cur
    return best


def test_run_matches_quadratic_reference():
    rng = random.Random(7)
    for _ in range(300):
        alphabet = "abc"[: rng.randint(1, 3)]
        a = [rng.choice(alphabet) for _ in range(rng.randint(0, 25))]
        b = [rng.choice(alphabet) for _ in range(rng.randint(0, 25))]
        assert longest_shared_token_run(a, b) == _dp(a, b) == longest_shared_token_run(b, a), (a, b)


# ---------------------------------------------------------------------------- rows
def test_items_requests_and_rows():
    orig = (SPECS / "Clock" / "Clock.tla").read_text()
    ren = orig.replace("hr", "pn").replace("MODULE Clock", "MODULE Jctqc")
    items = [continuation_item("Clock", "original", orig, REPO, "specifications/Clock/Clock.tla"),
             continuation_item("Clock", "random", ren, REPO, "specifications/Clock/Jctqc.tla")]
    reqs = continuation_requests(items, "opus", n_samples=2)
    assert [(r.condition, r.sample_idx) for r in reqs] == [("original", 0), ("original", 1),
                                                          ("random", 0), ("random", 1)]
    assert reqs[0].prompt == items[0].prompt and reqs[0].prompt_version == CONTINUATION_PROMPT_VERSION

    class Result:  # a SampleResult-like object
        def __init__(self, **kw):
            self.__dict__.update(kw)

    true_rest = items[0].remainder
    samples = [
        {"task_id": "Clock", "condition": "original", "model": "opus", "sample_idx": 0,
         "text": "```tla\n" + true_rest + "```\n"},
        Result(task_id="Clock", condition="original", model="opus", sample_idx=1, status="errored", text=None),
        {"task_id": "Clock", "condition": "random", "model": "opus", "sample_idx": 0, "text": true_rest},
        {"task_id": "Clock", "condition": "random", "model": "opus", "sample_idx": 1, "text": ""},
    ]
    df = continuation_rows(items, samples)
    assert list(df.columns) == CONTINUATION_COLUMNS and len(df) == 4
    full = len(tla_tokens(true_rest))
    r = df.set_index(["condition", "sample_idx"])
    assert r.loc[("original", 0), "longest_run"] == full          # fences removed
    assert pd.isna(r.loc[("original", 1), "continuation"]) and pd.isna(r.loc[("original", 1), "longest_run"])
    assert 0 < r.loc[("random", 0), "longest_run"] < full           # renamed copy: runs broken by pn
    assert r.loc[("random", 1), "longest_run"] == 0
    assert (df.prefix_lines == items[0].prefix_lines).all()
    assert r.loc[("random", 0), "reference_remainder"] == items[1].remainder
    with pytest.raises(KeyError):
        continuation_rows(items, [{"task_id": "Other", "condition": "original", "model": "m",
                                   "sample_idx": 0, "text": "x"}])
