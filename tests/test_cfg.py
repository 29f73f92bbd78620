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
