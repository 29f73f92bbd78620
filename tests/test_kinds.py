"""Identifier kinds (Appendix C) and required/hidden names."""
from __future__ import annotations

import pytest

from alias.rename.kinds import category, mentions, required_names, split_identifier


@pytest.mark.parametrize("name,parts", [
    ("FinishUpdate", ["Finish", "Update"]), ("max_val", ["max", "val"]),
    ("TypeOK", ["Type", "OK"]), ("ABCorrectness", ["AB", "Correctness"]), ("Inv2", ["Inv", "2"]),
])
def test_split_identifier(name, parts):
    assert split_identifier(name) == parts


@pytest.mark.parametrize("name,cat", [
    ("BarrierProperty", "domain"), ("FinishUpdate", "domain"), ("max_val", "domain"),
    ("door", "domain"), ("DoorSafety", "domain"),
    # regular inflections of dictionary lemmas are words
    ("Values", "domain"), ("OnlyGreenDeparts", "domain"), ("WaitingSeesGreen", "domain"),
    ("stopped", "domain"),
    ("TypeOK", "convention"), ("Init", "convention"), ("vars", "convention"), ("MCInit", "convention"),
    ("Inv2", "convention"), ("pc", "convention"),
    ("hr", "abbreviation"), ("msgs", "abbreviation"), ("N", "abbreviation"), ("x", "abbreviation"),
])
def test_category(name, cat):
    assert category(name) == cat


def test_mentions_whole_words_only():
    assert mentions("the invariant TypeOK holds", "TypeOK")
    assert not mentions("the invariant TypeOKay holds", "TypeOK")
    assert not mentions("a specification", "Spec")
    assert mentions("N processes (N > 1)", "N")
    assert not mentions("", "N")


SYSTEM = """---- MODULE Sys ----
EXTENDS Naturals
CONSTANTS N, Data
VARIABLE x
Init == x = 0
Next == x' = (x + 1) % N
Spec == Init /\\ [][Next]_x
TypeOK == x \\in 0..N
Bounded == x < N
====
"""

WRAPPER = """---- MODULE MCSys ----
EXTENDS Sys
MCN == 3
MCSpec == Spec /\\ WF_x(Next)
MCInv == TypeOK /\\ Bounded
====
"""


def test_required_names_plain_model():
    cfg = "CONSTANTS N = 3 Data = {d1}\nSPECIFICATION Spec\nINVARIANT TypeOK Bounded\n"
    assert required_names(cfg, SYSTEM, None) == [
        ("N", "constant"), ("Data", "constant"), ("TypeOK", "invariant"), ("Bounded", "invariant")]


def test_required_names_wrapper_model():
    """Names the wrapper defines are supplied by the task; the system-module names it
    refers to are required; Init/Next/Spec never are."""
    cfg = "CONSTANT N <- MCN\nSPECIFICATION MCSpec\nINVARIANT MCInv\n"
    req = required_names(cfg, SYSTEM, WRAPPER)
    assert req == [("N", "constant"), ("Bounded", "wrapper_reference"), ("TypeOK", "wrapper_reference"),
                   ("x", "wrapper_reference")]
