"""Tests for alias.tla.extract: raw LLM text -> one TLA+ module (no Java needed)."""

from __future__ import annotations

import random

import pytest

from alias.tla.extract import split_modules, asciify, extract_module

FOO = """---- MODULE Foo ----
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x' = x + 1
====
"""


def test_plain_module_is_returned_unchanged():
    r = extract_module(FOO)
    assert r.ok and r.error is None
    assert r.module_text == FOO
    assert r.module_name == "Foo"
    assert r.actions == []
    assert r.truncated is False


def test_realistic_answer_with_prose_fence_and_explanation():
    raw = (
        "Sure! Here is a TLA+ specification of the counter.\n\n"
        "```tla\n" + FOO + "```\n\n"
        "Explanation: `Init` sets x to 0 and `Next` increments it.\n"
    )
    r = extract_module(raw, "Foo")
    assert r.ok
    assert r.module_text == FOO
    assert r.actions == ["strip_fence", "strip_prose_before", "strip_prose_after"]


@pytest.mark.parametrize("tag", ["tla", "tlaplus", "", "TLA+"])
def test_fence_tags(tag):
    r = extract_module(f"```{tag}\n{FOO}```\n")
    assert r.module_text == FOO
    assert r.actions == ["strip_fence"]


def test_prefers_fenced_block_with_module_header():
    raw = "```sh\njava -cp tla2tools.jar tlc2.TLC Foo\n```\nThe spec:\n```\n" + FOO + "```\n```\nINIT Init\n```\n"
    r = extract_module(raw)
    assert r.module_text == FOO
    assert r.actions == ["strip_fence", "strip_prose_before", "strip_prose_after"]


def test_prose_without_fences_and_crlf():
    raw = "The module:\r\n" + FOO.replace("\n", "\r\n") + "Hope this helps.\r\n"
    r = extract_module(raw)
    assert r.module_text == FOO
    assert r.actions == ["normalize_newlines", "strip_prose_before", "strip_prose_after"]


def test_long_dash_runs_and_extra_equals_are_accepted():
    text = "-------------------------- MODULE Foo --------------------------\nVARIABLE x\n=============================\n"
    r = extract_module("text\n" + text)
    assert r.ok and r.module_text == text and r.module_name == "Foo"
    assert r.actions == ["strip_prose_before"]


def test_header_needs_four_dashes():
    r = extract_module("--- MODULE Foo ---\nVARIABLE x\n====\n")
    assert not r.ok and r.module_text is None
    assert r.error.startswith("no_module_header:")


def test_two_modules_expected_name_chooses():
    helper = "---- MODULE Helper ----\nMax(a, b) == IF a > b THEN a ELSE b\n====\n"
    main = "---- MODULE Main ----\nEXTENDS Helper\nVARIABLE x\nInit == x = Max(1, 2)\n====\n"
    raw = "First a helper:\n```tla\n" + helper + "```\nThen the main spec:\n```tla\n" + main + "```\n"
    r = extract_module(raw, "Main")
    # Main imports Helper: the helper follows it (SANY reads it from the same file).
    assert r.ok and r.module_text == main + "\n" + helper and r.module_name == "Main"
    assert r.actions == ["strip_fence", "choose_module:Main", "strip_prose_before", "keep_companions:Helper"]
    assert split_modules(r.module_text) == {"Main": main, "Helper": helper}
    # Without an expected name the first module wins.
    r2 = extract_module(raw)
    assert r2.module_text == helper
    assert r2.actions == ["strip_fence", "choose_module:Helper", "strip_prose_before", "strip_prose_after"]
    # Expected name matching neither: first module, renamed.
    r3 = extract_module(helper + main, "Spec")
    assert r3.module_name == "Helper"
    assert r3.module_text == helper.replace("MODULE Helper", "MODULE Spec")
    assert r3.actions == ["choose_module:Helper", "strip_prose_after", "rename_module:Helper->Spec"]


def test_companions_are_kept_transitively_and_only_when_imported():
    common = "---- MODULE Common ----\nK == 3\n====\n"
    lib = "---- MODULE Lib ----\nEXTENDS Common\nF == K\n====\n"
    other = "---- MODULE MC ----\nEXTENDS Main\n====\n"
    main = "---- MODULE Main ----\nL == INSTANCE Lib\nVARIABLE x\n====\n"
    r = extract_module(main + lib + other + common, "Main")
    assert r.module_text == main + "\n" + lib + "\n" + common
    assert r.actions == ["choose_module:Main", "strip_prose_after", "keep_companions:Lib,Common"]
    # An unclosed companion is not kept: it would be a truncated module.
    r2 = extract_module(main + lib.replace("====\n", ""), "Main")
    assert r2.module_text == main and "keep_companions" not in " ".join(r2.actions)


def test_nested_module_stays_inside_its_parent():
    text = (
        "---- MODULE Outer ----\nVARIABLE x\n---- MODULE Inner ----\nC == 1\n====\n"
        "I == INSTANCE Inner\n====\n"
    )
    r = extract_module(text)
    assert r.module_text == text and r.module_name == "Outer"
    assert r.actions == []


def test_rename_rewrites_only_the_header_name():
    text = "----- MODULE counter_v2 -----\n\\* counter_v2 is the name\nVARIABLE x\n====\n"
    r = extract_module(text, "Counter")
    assert r.module_name == "counter_v2"
    assert r.module_text == "----- MODULE Counter -----\n\\* counter_v2 is the name\nVARIABLE x\n====\n"
    assert r.actions == ["rename_module:counter_v2->Counter"]


def test_unicode_symbols_to_ascii_with_junction_alignment():
    raw = (
        "---- MODULE U ----\n"
        "EXTENDS Naturals\n"
        "VARIABLE x\n"
        "Init ≜ ∧ x ∈ {1,\n"
        "              2}\n"
        "       ∧ ∀y∈{1} : y ≥ 0\n"
        "Next ≜ ∨ x′ ≠ x ⇒ x′ = x + 1\n"
        "       ∨ UNCHANGED ⟨x⟩\n"
        'Msg == "a ∧ b"\n'
        "Spec ≜ Init ∧ □[Next]_x\n"
        "====\n"
    )
    expected = (
        "---- MODULE U ----\n"
        "EXTENDS Naturals\n"
        "VARIABLE x\n"
        "Init == /\\ x \\in {1,\n"
        "                  2}\n"
        "        /\\ \\A y\\in{1} : y >= 0\n"
        "Next == \\/ x' /= x => x' = x + 1\n"
        "        \\/ UNCHANGED <<x>>\n"
        'Msg == "a ∧ b"\n'
        "Spec == Init /\\ [][Next]_x\n"
        "====\n"
    )
    r = extract_module(raw)
    assert r.ok
    assert r.module_text == expected
    assert r.actions == ["ascii_symbols:19"]
    assert "tree_sitter_errors" not in r.actions


def test_asciify_keeps_strings_and_pads_only_indentation():
    text, n = asciify('A ≜ "≜"\n  B\nC')
    assert (text, n) == ('A == "≜"\n  B\nC', 1)
    # Line 2's indentation column (2) is right of the widened ≜ on line 1.
    text, n = asciify("≜ x\n  y")
    assert (text, n) == ("== x\n   y", 1)


def test_truncated_output_gets_closing_line():
    raw = "```tla\n---- MODULE Foo ----\nVARIABLE x\nInit == /\\ x = 0\n       /\\ x"
    r = extract_module(raw)
    assert r.ok and r.truncated
    assert r.module_text == "---- MODULE Foo ----\nVARIABLE x\nInit == /\\ x = 0\n       /\\ x\n====\n"
    assert r.actions[:2] == ["strip_fence", "add_closing_line"]


def test_truncated_inside_closed_fence_drops_trailing_blanks():
    raw = "```\n---- MODULE Foo ----\nVARIABLE x\n\n\n```\nmore prose\n"
    r = extract_module(raw)
    assert r.truncated
    assert r.module_text == "---- MODULE Foo ----\nVARIABLE x\n====\n"
    assert r.actions == ["strip_fence", "strip_prose_after", "add_closing_line"]


def test_tree_sitter_errors_are_recorded_not_fatal():
    r = extract_module("---- MODULE Foo ----\nInit == == (\n====\n")
    assert r.ok
    assert r.actions == ["tree_sitter_errors"]


@pytest.mark.parametrize(
    "name",
    ["../etc/passwd", "a b", "x" * 100, "Foo.tla", "1abc-", "Fóo"],
)
def test_unsafe_module_names(name):
    r = extract_module(f"---- MODULE {name} ----\nVARIABLE x\n====\n", "Foo")
    assert not r.ok and r.module_text is None
    assert r.error.startswith("unsafe_module_name:")
    assert r.module_name == name


def test_empty_name_is_unsafe_and_64_chars_is_safe():
    assert extract_module("---- MODULE ----\n====\n").error.startswith("unsafe_module_name:")
    assert extract_module("---- MODULE " + "x" * 64 + " ----\n====\n").ok
    assert not extract_module("---- MODULE " + "x" * 65 + " ----\n====\n").ok


def test_unsafe_expected_name():
    r = extract_module(FOO, "../Foo")
    assert not r.ok and r.error.startswith("unsafe_expected_name:")


@pytest.mark.parametrize("raw", ["", "   ", "\n\n\t \r\n", "\ufeff"])
def test_empty_input(raw):
    r = extract_module(raw)
    assert not r.ok and r.module_text is None
    assert r.error.startswith("empty:")


def test_no_header():
    r = extract_module("I cannot write this specification.")
    assert not r.ok and r.error.startswith("no_module_header:")


def test_non_str_raises_type_error():
    with pytest.raises(TypeError):
        extract_module(b"---- MODULE Foo ----\n====\n")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        extract_module(FOO, 3)  # type: ignore[arg-type]


def _check_invariants(r):
    assert isinstance(r.actions, list)
    if r.ok:
        assert r.error is None
        assert r.module_text.endswith("\n")
        lines = r.module_text.split("\n")
        assert "MODULE" in lines[0] and lines[-2].strip().startswith("====")
    else:
        assert r.module_text is None and r.error


def test_fuzz_never_raises():
    rng = random.Random(1234)
    alphabet = "-=`~ \n\r\t\"\\MODULEFo∧∨≜⟨⟩′x{}()*"
    valid = (
        "Here you go:\n```tlaplus\n---- MODULE Foo ----\nEXTENDS Naturals\nVARIABLE x\n"
        "Init ≜ ∧ x = 0\n       ∧ x ∈ {0}\nNext ≜ x′ = x + 1\n\\* comment \"q\n(* block ∧ *)\n====\n```\nDone.\n"
    )
    for _ in range(1500):
        n = rng.randrange(0, 80)
        s = "".join(rng.choice(alphabet) for _ in range(n))
        _check_invariants(extract_module(s))
        b = bytes(rng.randrange(256) for _ in range(n))
        _check_invariants(extract_module(b.decode("utf-8", "surrogateescape"), "Foo"))
        _check_invariants(extract_module(b.decode("latin-1")))
    ok_cuts = 0
    for _ in range(2000):
        cut = rng.randrange(len(valid) + 1)
        r = extract_module(valid[:cut], rng.choice([None, "Foo", "Bar"]))
        _check_invariants(r)
        ok_cuts += r.ok
    assert ok_cuts > 0
    # Every cut past the header line must extract; the full text must not be truncated.
    head_end = valid.index("----\n", valid.index("MODULE")) + 5
    for cut in range(head_end, len(valid) + 1):
        r = extract_module(valid[:cut])
        assert r.ok, cut
    assert not extract_module(valid).truncated
