"""Tests for alias.tla.cfg: tokenizer, renaming, parser/writer round trip."""
from __future__ import annotations

import pytest

from alias.tla.cfg import rename_cfg, tokenize

SAMPLE = """\\* header comment
CONSTANTS
    N = 3   \\* trailing
    Procs = {p1, p2}
    Keys = {"A", "B"}
    Nat <- [ZSeq] ZNat
(* block (* nested N *) still N *)
SPECIFICATION Spec
INVARIANT TypeOK Safe
CHECK_DEADLOCK FALSE
"""


def test_tokenize_lossless_and_kinds():
    toks = tokenize(SAMPLE)
    assert "".join(t.text for t in toks) == SAMPLE
    for t in toks:
        assert SAMPLE[t.start:t.end] == t.text
    kinds = {t.text: t.kind for t in toks}
    assert kinds["CONSTANTS"] == "keyword"
    assert kinds["FALSE"] == "keyword"
    assert kinds["N"] == "ident"
    assert kinds["3"] == "number"
    assert kinds['"A"'] == "string"
    assert kinds["<-"] == "op"
    assert kinds["(* block (* nested N *) still N *)"] == "comment"
    assert kinds["\\* trailing"] == "comment"


@pytest.mark.parametrize("text", ["", "(* unterminated", '"open', "\\*", "a\r\nb", "é ≜ x"])
def test_tokenize_never_fails(text):
    assert "".join(t.text for t in tokenize(text)) == text


def test_rename_cfg_only_idents():
    out = rename_cfg(SAMPLE, {"N": "Size", "p1": "q1", "Spec": "S", "A": "Z", "ZSeq": "M"})
    assert "Size = 3" in out
    assert "{q1, p2}" in out
    assert '{"A", "B"}' in out  # strings untouched
    assert "(* block (* nested N *) still N *)" in out  # comments untouched
    assert "SPECIFICATION S" in out
    assert "[M] ZNat" in out
    assert rename_cfg(SAMPLE, {}) == SAMPLE


def test_tokenize_corpus_lossless(corpus_root):
    files = sorted(corpus_root.glob("specifications/**/*.cfg"))
    assert files
    for f in files:
        text = f.read_text()
        assert "".join(t.text for t in tokenize(text)) == text, f


# --------------------------------------------------------------------------- parser

from alias.tla.cfg import CfgError, Constant, for_jar, parse_cfg, write_cfg  # noqa: E402


def test_parse_sample_fields():
    cfg = parse_cfg(SAMPLE)
    assert cfg.constants == [
        Constant("N", "=", "3"),
        Constant("Procs", "=", "{p1, p2}"),
        Constant("Keys", "=", '{"A", "B"}'),
        Constant("Nat", "<-", "ZNat", "ZSeq"),
    ]
    assert cfg.specification == "Spec"
    assert cfg.invariants == ["TypeOK", "Safe"]
    assert cfg.check_deadlock is False
    assert [c.text for c in cfg.comments] == [
        "\\* header comment", "\\* trailing", "(* block (* nested N *) still N *)"]
    assert cfg.comments[1].inline and cfg.comments[1].after == 1
    names = cfg.names()
    assert names["constants"] == ["N", "Procs", "Keys", "Nat"]
    assert names["model_values"] == ["p1", "p2"]
    assert names["substitutions"] == ["ZNat"]
    assert names["modules"] == ["ZSeq"]
    assert names["invariants"] == ["TypeOK", "Safe"]
    out = write_cfg(cfg)
    assert "N = 3 \\* trailing" in out
    assert parse_cfg(out) == cfg


def test_parse_all_keywords_round_trip():
    text = """CONSTANT A = -3 B = <<1, "x">> C = TRUE D = [M]v
INIT I NEXT N
INVARIANT P PROPERTY L PROPERTIES L2
CONSTRAINT C1 CONSTRAINTS C2 ACTION_CONSTRAINT AC
SYMMETRY Sym VIEW V ALIAS Al POSTCONDITION Post CHECK_DEADLOCK TRUE
"""
    cfg = parse_cfg(text)
    assert [c.value for c in cfg.constants] == ["-3", '<<1, "x">>', "TRUE", "v"]
    assert cfg.constants[3].module == "M"
    assert (cfg.init, cfg.next, cfg.symmetry, cfg.view, cfg.alias, cfg.postcondition) == (
        "I", "N", "Sym", "V", "Al", "Post")
    assert cfg.properties == ["L", "L2"]
    assert cfg.constraints == ["C1", "C2"] and cfg.action_constraints == ["AC"]
    assert cfg.check_deadlock is True
    assert parse_cfg(write_cfg(cfg)) == cfg


@pytest.mark.parametrize("text,line", [
    ("INIT Init\nFOO Bar\n", 2),
    ("\n\nCHECK_DEADLOCK maybe\n", 3),
    ("CONSTANT N 3\n", 1),
    ("CONSTANT S = {a, b\n", 2),
    ("INIT A B\n", 1),
    ("Init\n", 1),
])
def test_parse_errors_have_line(text, line):
    with pytest.raises(CfgError) as ei:
        parse_cfg(text)
    assert ei.value.line == line


def test_for_jar_check_deadlock():
    cfg = parse_cfg("SPECIFICATION Spec\nCHECK_DEADLOCK FALSE\n")
    text, flags = for_jar(cfg, supports_check_deadlock=False)
    assert flags == ("-deadlock",) and "CHECK_DEADLOCK" not in text
    assert parse_cfg(text).specification == "Spec"
    text, flags = for_jar(cfg, supports_check_deadlock=True)
    assert flags == () and "CHECK_DEADLOCK FALSE" in text
    text, flags = for_jar(parse_cfg("SPECIFICATION S CHECK_DEADLOCK TRUE"), False)
    assert flags == () and "CHECK_DEADLOCK" not in text
    assert cfg.check_deadlock is False  # input untouched


def test_for_jar_drops_alias_for_old_jars():
    cfg = parse_cfg("SPECIFICATION Spec\nINVARIANT Inv\nALIAS Trace\nCHECK_DEADLOCK FALSE\n")
    text, flags = for_jar(cfg, False, supports_alias=False)
    assert flags == ("-deadlock",)
    again = parse_cfg(text)
    assert again.alias is None and again.invariants == ["Inv"] and again.specification == "Spec"
    text, _ = for_jar(cfg, True)
    assert parse_cfg(text).alias == "Trace" and cfg.alias == "Trace"


def test_for_jar_passes_the_authors_cfg_unchanged_to_a_jar_that_reads_it():
    raw = "\\* the author's layout\nSPECIFICATION\n  Spec\nALIAS Trace\nCHECK_DEADLOCK FALSE\n"
    assert for_jar(parse_cfg(raw), True, text=raw) == (raw, ())
    old, flags = for_jar(parse_cfg(raw), False, supports_alias=False, text=raw)
    assert flags == ("-deadlock",) and "ALIAS" not in old and "CHECK_DEADLOCK" not in old


def _corpus_cfgs():
    from pathlib import Path
    root = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "tlaplus-examples"
    return sorted(root.glob("specifications/**/*.cfg"))


@pytest.mark.corpus
@pytest.mark.parametrize("path", _corpus_cfgs(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_cfg_round_trip(path, corpus_root):
    text = path.read_text()
    cfg = parse_cfg(text)
    out = write_cfg(cfg)
    assert parse_cfg(out) == cfg
    assert write_cfg(parse_cfg(out)) == out  # the writer is a fixed point
    # comments survive verbatim, and renaming by tokens keeps the rest intact
    assert all(c.text in text for c in cfg.comments)
    assert rename_cfg(text, {}) == text


def test_corpus_cfg_count(corpus_root):
    assert len(_corpus_cfgs()) == 226


@pytest.mark.parametrize("text", [
    'CONSTANT K = {"\\\\*"} (* a *) (* b\n c *)\nINIT I \\* x\nNEXT (* y *) N',
    "CONSTANTS (* c *) A = 1 B = \\* mid\n 2 \\* end\n",
    "SPECIFICATION S\nCONSTANT A = 1\n\\* between\nCONSTANT B = 2 INVARIANT X (* i *)",
    "CHECK_DEADLOCK (* why *) FALSE \\* t\n\\* last\n(* very last *)",
    "CONSTANT S = { {a, b}, <<1, -2>> } \\* nested\n",
])
def test_round_trip_tricky_comments(text):
    cfg = parse_cfg(text)
    out = write_cfg(cfg)
    assert parse_cfg(out) == cfg, out
    assert write_cfg(parse_cfg(out)) == out
    for c in cfg.comments:
        assert c.text in out


def test_possible_section_of_tlc_1_8():
    """v1.8.0's ``_POSSIBLE`` section (TLA+-Bench cfgs use it): parsed as a list, written
    back, renamed with the spec, and dropped for the 2.15 jar that lacks it."""
    text = "SPECIFICATION\nSpec\nINVARIANT\nTypeOK\n_POSSIBLE HasFour PourAction\nPOSTCONDITION PossibleCounts\n"
    cfg = parse_cfg(text)
    assert cfg.possible == ["HasFour", "PourAction"] and cfg.postcondition == "PossibleCounts"
    assert parse_cfg(write_cfg(cfg)).possible == ["HasFour", "PourAction"]
    assert cfg.names()["possible"] == ["HasFour", "PourAction"]
    renamed = parse_cfg(rename_cfg(text, {"HasFour": "XyzAbc", "PourAction": "QwertyAsdf"}))
    assert renamed.possible == ["XyzAbc", "QwertyAsdf"]
    old, _ = for_jar(cfg, False, supports_alias=False)
    assert "_POSSIBLE" not in old and parse_cfg(old).invariants == ["TypeOK"]
    assert for_jar(cfg, True, text=text) == (text, ())
