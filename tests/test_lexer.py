"""Tests for alias.tla.lexer: comments, strings and tokens of TLA+ text from tree-sitter."""
from __future__ import annotations

import time

import pytest

from alias.tla.lexer import (SYMBOLS, Lexed, comment_spans, comment_string_spans, lex, string_spans,
                             strip_comments, tokens)


def spans_text(text: str, spans) -> list[str]:
    return [text[s:e] for s, e in spans]


# --------------------------------------------------------------------------- comments

def test_nested_block_comments():
    text = "a (* b (* c *) d *) e (* f *) g"
    assert tokens(text) == ["a", "e", "g"]  # a non-nesting reader would end at the first *)
    assert spans_text(text, comment_spans(text)) == ["(* b (* c *) d *)", "(* f *)"]
    assert strip_comments(text) == "a  e  g"


def test_line_comments_keep_the_line_end():
    text = "A == 1 \\* one\r\nB == 2 \\* two"
    assert tokens(text) == ["A", "==", "1", "B", "==", "2"]
    assert strip_comments(text) == "A == 1 \nB == 2 "  # the \r belongs to the comment, as before
    assert spans_text(text, comment_spans(text)) == ["\\* one\r", "\\* two"]


def test_comment_markers_inside_strings():
    text = 'x == "a \\* b" \\/ "c (* d" \\/ "e \\" (* f" \\* real comment\ny == 1'
    assert tokens(text) == ["x", "==", '"a \\* b"', "\\/", '"c (* d"', "\\/", '"e \\" (* f"', "y", "==", "1"]
    assert spans_text(text, string_spans(text)) == ['"a \\* b"', '"c (* d"', '"e \\" (* f"']
    assert spans_text(text, comment_spans(text)) == ["\\* real comment"]


def test_unclosed_block_comment_runs_to_the_end():
    for text in ["x == 1 (* open (* nested *) still", "x == 1 (*) y", "x == 1 (*"]:
        assert tokens(text) == ["x", "==", "1"]
        (s, e), = comment_spans(text)
        assert text[s:s + 2] == "(*" and e == len(text)
    assert tokens("(* open") == [] and tokens("") == [] and tokens(None) == []


def test_unclosed_string_ends_at_the_line_end():
    text = 'x == "abc \\* not a comment\ny == "d"'
    assert tokens(text) == ["x", "==", '"abc \\* not a comment', "y", "==", '"d"']
    assert comment_spans(text) == []


def test_separators():
    text = ("------------------------- MODULE M -------------------------\nEXTENDS Naturals\n"
            "x == 1\n-----\ny == x - 1\n=====================================\n")
    assert tokens(text) == ["MODULE", "M", "EXTENDS", "Naturals", "x", "==", "1", "y", "==", "x", "-", "1"]
    seps = [t for t in tokens(text, separators=True) if set(t) <= {"-", "="} and len(t) >= 4]
    assert seps == ["-" * 25, "-" * 25, "-----", "=" * 37]


def test_text_outside_the_module():
    text = ('Here is "the" spec (* not TLA+ *):\n```tla\n---- MODULE M ----\nx == 1\n====\n```\n'
            "\\* Modification History\n\\* Last modified by someone\n")
    assert tokens(text) == ["Here", "is", '"the"', "spec", ":", "`", "`", "`", "tla", "MODULE", "M", "x", "==",
                            "1", "`", "`", "`"]
    assert "\\* Modification History" in spans_text(text, comment_spans(text))


def test_pluscal_algorithm_is_one_comment_even_when_broken():
    ok = '(* --algorithm a\nbegin L: x := "q"; end algorithm; *)\nNext == pc = "L"'
    # P- and C-syntax mixed (a model's output): tree-sitter's PlusCal parse fails and,
    # left on, would leave the whole rest of the text out of comments and strings
    broken = ("(*--algorithm Ring\nvariables x = [i \\in 1..N |-> 0];\nprocess (proc \\in 1..N)\n{\n  L1:\n"
              "    x[self] := 1;\n}\nend algorithm; *)\nNext == pc = \"L\"")
    for text in (ok, broken):
        assert tokens(text) == ["Next", "==", "pc", "=", '"L"']
        assert spans_text(text, comment_spans(text))[0].startswith("(*")


def test_broken_fragments_read_like_a_lexer():
    # a remainder cut mid-expression: tree-sitter's error recovery alone would read the
    # closing quote of "l1" as an opening one
    text = '{"l1","l2"}\n----\n\\* CONSTANT definitions\nc == \n{4,5}\n'
    assert tokens(text) == ["{", '"l1"', ",", '"l2"', "}", "c", "==", "{", "4", ",", "5", "}"]
    prose = 'See the atomic "COMMIT" label, and "a \\* b" or "(*" here. \\* note\nx'
    assert tokens(prose) == ["See", "the", "atomic", '"COMMIT"', "label", ",", "and", '"a \\* b"', "or", '"(*"',
                             "here", ".", "x"]


def test_junk_is_lexed_in_about_linear_time():
    junk = 'x ) "a (* b" ' * 800
    t0 = time.monotonic()
    assert tokens(junk) == ["x", ")", '"a (* b"'] * 800
    assert time.monotonic() - t0 < 20


# --------------------------------------------------------------------------- tokens

def test_token_rule():
    text = ("Spec == Init /\\ [][Next]_vars /\\ WF_vars(Next) /\\ x \\in 1..N /\\ y = 1.5\n"
            "f == [i \\in S |-> <<i, \"s t\">>] /\\ a /= b /\\ P ~> Q /\\ c' = c /\\ z \\X w")
    assert tokens(text) == [
        "Spec", "==", "Init", "/\\", "[]", "[", "Next", "]_", "vars", "/\\", "WF_vars", "(", "Next", ")",
        "/\\", "x", "\\in", "1", "..", "N", "/\\", "y", "=", "1", ".", "5",
        "f", "==", "[", "i", "\\in", "S", "|->", "<<", "i", ",", '"s t"', ">>", "]", "/\\", "a", "/=", "b",
        "/\\", "P", "~>", "Q", "/\\", "c", "'", "=", "c", "/\\", "z", "\\X", "w"]
    assert tokens("a /\\* b") == ["a", "/\\", "*", "b"]  # longest match: /\ then *, no comment
    assert list(SYMBOLS) == sorted(SYMBOLS, key=len, reverse=True)


def test_unicode_operators_and_offsets():
    text = "x ≜ a ∧ b ∈ S (* ∀ y *) \\* ∃ z\ncafé == ⟨1⟩"
    assert tokens(text) == ["x", "≜", "a", "∧", "b", "∈", "S", "caf", "é", "==", "⟨", "1", "⟩"]
    # offsets are characters, not UTF-8 bytes
    assert spans_text(text, comment_spans(text)) == ["(* ∀ y *)", "\\* ∃ z"]
    assert strip_comments(text) == "x ≜ a ∧ b ∈ S  \ncafé == ⟨1⟩"


@pytest.mark.parametrize("text", ["\ud800 x (* \udfff *) y", "\x00\x01\"\\", "\\", '"\\', "(**)(*", "*)*)"])
def test_never_raises(text):
    lexed = lex(text)
    assert isinstance(lexed, Lexed) and lexed.text == text
    tokens(text)
    strip_comments(text)


def test_spans_are_sorted_and_disjoint():
    text = 'a == "x" (* c *) \\* d\nb == "y" (* e (* f *) *) "z"\n====\n\\* footer'
    both = comment_string_spans(text)
    assert both == sorted(comment_spans(text) + string_spans(text))
    assert all(e1 <= s2 for (_, e1), (s2, _) in zip(both, both[1:]))
    assert spans_text(text, string_spans(text)) == ['"x"', '"y"', '"z"']
