"""Original names in comments (alias.rename.comments): renamed by whole words, Toolbox
annotations included; the leftover scan finds what is left and says why it stays."""
from __future__ import annotations

from alias.rename.comments import leftover_rows, prose_keeps, rename_cfg_comments, rename_module_comments

MAPPING = {"Leader": "Qwmzrt", "Procs": "Xkvzw", "sentUnacked": "plmvqzrxkwo", "leader": "zqxwvr",
           "x": "y", "a": "b", "Limit": "Zkqwv"}


def test_prose_keeps_only_lowercase_english_words():
    assert prose_keeps("leader") and prose_keeps("a") and prose_keeps("chosen")
    assert not prose_keeps("Leader") and not prose_keeps("msgs") and not prose_keeps("x")
    assert not prose_keeps("sentUnacked")


def test_module_comments_renamed_english_kept():
    text = ("---- MODULE M ----\n\\* Leader sends to Procs; sentUnacked counts, the leader waits; x and a\n"
            "(* Leader-elected, LeaderX, Procs. *)\nVARIABLE x\n====\n")
    out = rename_module_comments(text, MAPPING)
    assert "\\* Qwmzrt sends to Xkvzw; plmvqzrxkwo counts, the leader waits; y and a\n" in out
    assert "(* Qwmzrt-elected, LeaderX, Xkvzw. *)" in out
    assert "VARIABLE x" in out            # code is not this function's business


def test_toolbox_annotation_in_cfg_and_module():
    cfg = "\\* CONSTANT definitions @modelParameterConstants:0Limit\nCONSTANT Limit = 3\n"
    assert rename_cfg_comments(cfg, MAPPING).startswith("\\* CONSTANT definitions @modelParameterConstants:0Zkqwv\n")
    mc = "---- MODULE MC ----\n\\* CONSTANT definitions @modelParameterConstants:12Limit\nc == 1\n====\n"
    assert "@modelParameterConstants:12Zkqwv" in rename_module_comments(mc, MAPPING)


def test_leftover_rows_by_place_and_reason():
    module = ("---- MODULE M ----\n\\* Leader and the leader\nA == \"Leader\"\n"
              "(* --algorithm a\nvariables p = \"Procs\"; \\* leader here\nbegin skip; end algorithm *)\n====\n")
    rows = leftover_rows("t", MAPPING, {"M": module}, "INIT Init\n\\* Procs\n", "Leader and sentUnacked, leader",
                         [("M", "Procs", 3)], cfg_names=set(), module_names=set())
    got = {(r["place"], r["name"]): (r["kept"], r["n"], r["first_line"]) for r in rows}
    assert got[("module_code", "Procs")] == (None, 1, 3)
    assert got[("module_comment", "Leader")] == (None, 1, 2)
    assert got[("module_comment", "leader")] == ("english_word", 2, 2)   # prose, and a comment in PlusCal
    assert got[("module_comment", "Procs")] == ("string_value", 1, 5)    # a string in PlusCal code
    assert got[("module_string", "Leader")] == ("string_value", 1, 3)
    assert got[("cfg_comment", "Procs")] == (None, 1, 2)
    assert got[("description", "leader")] == ("description_rule", 1, 1)
    assert got[("description", "Leader")] == (None, 1, 1)
    assert leftover_rows("t", {}, {"M": module}, None, None) == []
