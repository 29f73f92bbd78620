"""Tests for alias.grade.mutants (negative-control mutants, paper Appendix J).

Tests marked ``tlc`` run the real SANY/TLC (one SANY run per embedded specification,
three TLC runs on a real-corpus specification).
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest

from alias.grade.mutants import KINDS, Mutant, generate_mutants, rename_module
from alias.tla.syntax import module_info, parse

EMBEDDED = Path(__file__).resolve().parents[1] / "alias" / "corpus" / "embedded" / "specifications"
EMBEDDED_SPECS = sorted(p for p in EMBEDDED.glob("*/*.tla"))

SMALL = """---- MODULE Small ----
EXTENDS Naturals
CONSTANT N
VARIABLES x, mode
ASSUME N >= 1
(* Comment with 7 and x < 3 and "str". *)
Init == /\\ x = 0
        /\\ mode = "off"
Up == /\\ x < N
      /\\ x' = x + 2
      /\\ mode' = "on"
Reset == /\\ mode = "on"
         /\\ x' = 0 /\\ mode' = "off"
Next == Up \\/ Reset
Spec == Init /\\ [][Next]_<<x, mode>>
TypeOK == x \\in 0..10
THEOREM Spec => [](x >= 0)
====
"""

#: Every mutant of SMALL, in output order: (id, kind, old text, new text); ``old`` is
#: unique in SMALL, so the expected module is ``SMALL.replace(old, new)``.
SMALL_EXPECTED = [
    ("num+1@L7C16", "numeric_literal", "x = 0\n", "x = 1\n"),
    ("num+1@L10C19", "numeric_literal", "x + 2", "x + 3"),
    ("num-1@L10C19", "numeric_literal", "x + 2", "x + 1"),
    ("num+1@L13C18", "numeric_literal", "x' = 0", "x' = 1"),
    ("cmp@L9C12", "comparison", "x < N", "x >= N"),
    ("cmp@L12C18", "comparison", 'mode = "on"', 'mode # "on"'),
    ("str@L8C19", "init_string", 'mode = "off"\nUp', 'mode = "on"\nUp'),
    ("conj@L10C7", "action_conjunct", "/\\ x' = x + 2\n      ", ""),
    ("conj@L11C7", "action_conjunct", "\n      /\\ mode' = \"on\"", ""),
    ("conj@L13C10", "action_conjunct", "\n         /\\ x' = 0 /\\ mode' = \"off\"", ""),
    ("conj@L13C13", "action_conjunct", "x' = 0 /\\ ", ""),
    ("conj@L13C23", "action_conjunct", " /\\ mode' = \"off\"", ""),
    ("guard@L9C7", "action_guard", "/\\ x < N\n      ", ""),
    ("guard@L12C10", "action_guard", "/\\ mode = \"on\"\n         ", ""),
    ("disj@L14C9", "next_disjunct", "Up \\/ Reset", "Reset"),
    ("disj@L14C15", "next_disjunct", "Up \\/ Reset", "Up"),
]


def _one_span(a: str, b: str) -> tuple[int, int, int]:
    """(prefix length, end of the differing span in a, end in b)."""
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    s = 0
    while s < min(len(a), len(b)) - p and a[len(a) - 1 - s] == b[len(b) - 1 - s]:
        s += 1
    return p, len(a) - s, len(b) - s


# --------------------------------------------------------------------------- pure


def test_small_spec_every_kind_exact():
    ms = generate_mutants(SMALL)
    got = [(m.mutant_id, m.kind) for m in ms]
    assert got == [(i, k) for i, k, _, _ in SMALL_EXPECTED]
    assert {m.kind for m in ms} == set(KINDS)
    for m, (_, _, old, new) in zip(ms, SMALL_EXPECTED):
        assert SMALL.count(old) == 1, old
        assert m.text == SMALL.replace(old, new), m.mutant_id
        assert m.line == int(m.mutant_id.split("@L")[1].split("C")[0])
        assert SMALL[m.span[0]:m.span[1]] != m.replacement
        assert SMALL[:m.span[0]] + m.replacement + SMALL[m.span[1]:] == m.text


def test_mutant_is_frozen_and_descriptions_name_the_change():
    m = generate_mutants(SMALL)[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.text = ""  # type: ignore[misc]
    assert isinstance(m, Mutant)
    d = {x.mutant_id: x.description for x in generate_mutants(SMALL)}
    assert d["num+1@L10C19"] == "numeric literal 2 -> 3 in Up"
    assert d["cmp@L9C12"] == "comparison < -> >= in Up: x < N"
    assert d["str@L8C19"] == 'initial string "off" -> "on"'
    assert d["guard@L12C10"] == 'delete guard of Reset: mode = "on"'
    assert d["disj@L14C15"] == "delete disjunct of Next: Reset"


@pytest.mark.parametrize("path", EMBEDDED_SPECS, ids=lambda p: p.stem)
def test_each_mutant_differs_in_exactly_one_span(path):
    text = path.read_text(encoding="utf-8")
    ms = generate_mutants(text)
    assert len({m.mutant_id for m in ms}) == len(ms)
    assert len({m.text for m in ms}) == len(ms)
    tree = parse(text)
    units = [(u.start_byte, u.end_byte) for u in tree.root_node.children[0].named_children]
    for m in ms:
        assert m.text != text
        a, b = m.span
        # everything outside the recorded span is byte-identical ...
        assert m.text == text[:a] + m.replacement + text[b:]
        # ... the minimal differing span is no longer than it (a deletion may slide) ...
        p, end_a, end_b = _one_span(text, m.text)
        assert end_a - p <= b - a and end_b - p <= len(m.replacement)
        # ... and it lies inside one top-level definition (ASCII text: chars == bytes)
        assert any(lo <= a and b <= hi for lo, hi in units), m.mutant_id
        assert not parse(m.text).root_node.has_error, m.mutant_id


def test_comments_pluscal_assume_theorem_never_mutated():
    # 7 (comment), 1 (ASSUME) and 0 (THEOREM) are never touched, even with scope='all'.
    for scope in ("behavior", "all"):
        for m in generate_mutants(SMALL, scope=scope):
            lines = m.text.splitlines()
            assert lines[4] == "ASSUME N >= 1"
            assert lines[5] == '(* Comment with 7 and x < 3 and "str". *)'
            assert lines[-2] == "THEOREM Spec => [](x >= 0)"
    text = (EMBEDDED / "Peterson" / "Peterson.tla").read_text()
    start, end = text.index("(* --algorithm"), text.index("end algorithm; *)")
    ms = generate_mutants(text)
    assert ms
    for m in ms:
        assert m.span[1] <= start or m.span[0] >= end, m.mutant_id


def test_scope_behavior_leaves_invariants_alone():
    beh = {m.mutant_id for m in generate_mutants(SMALL)}
    every = {m.mutant_id: m for m in generate_mutants(SMALL, scope="all")}
    extra = set(every) - beh
    # TypeOK (0..10, \in) and Spec are mutated only with scope='all'
    assert {every[i].description.split(" in ")[-1].split(":")[0] for i in extra} == {"TypeOK"}
    assert extra == {"num+1@L16C17", "num+1@L16C20", "num-1@L16C20", "cmp@L16C13"}
    with pytest.raises(ValueError):
        generate_mutants(SMALL, scope="some")


def test_assignments_are_not_flipped():
    flipped = {m.description for m in generate_mutants(SMALL) if m.kind == "comparison"}
    # x' = ..., mode' = ... and Init's x = 0 / mode = "off" are assignments
    assert flipped == {"comparison < -> >= in Up: x < N",
                       'comparison = -> # in Reset: mode = "on"'}


def test_disj_list_single_items_and_nested_disjunctions():
    text = """---- MODULE L ----
VARIABLES x, y
Init == x = 0 /\\ y = 0
A == /\\ x' = 1
B == x' = 2 /\\ y' = y
Next == \\/ A /\\ y' = y
        \\/ \\E i \\in {1, 2} : B \\/ (x' = i /\\ y' = i)
====
"""
    ms = generate_mutants(text)
    by_id = {m.mutant_id: m for m in ms}
    # a one-item conj_list (A) is never deleted
    assert not any(m.kind == "action_conjunct" and "of A:" in m.description for m in ms)
    # bulleted disjuncts: the first item goes with its bullet, the last after the previous
    assert by_id["disj@L6C9"].text.endswith("Next == \\/ \\E i \\in {1, 2} : B \\/ (x' = i /\\ y' = i)\n====\n")
    assert "Next == \\/ A /\\ y' = y\n====" in by_id["disj@L7C9"].text
    # nested infix disjunction under \E
    assert "{1, 2} : (x' = i /\\ y' = i)" in by_id["disj@L7C30"].text
    assert "{1, 2} : B\n" in by_id["disj@L7C35"].text
    # conjunctions inside a disjunct and inside parentheses are action conjuncts
    assert "{1, 2} : B \\/ (y' = i)" in by_id["conj@L7C36"].text
    assert "Next == \\/ A\n" in by_id["conj@L6C17"].text
    assert "Next == \\/ y' = y\n" in by_id["conj@L6C12"].text
    assert sorted(i for i in by_id if i.startswith(("conj", "guard", "disj"))) == [
        "conj@L5C16", "conj@L5C6", "conj@L6C12", "conj@L6C17", "conj@L7C36", "conj@L7C46",
        "disj@L6C9", "disj@L7C30", "disj@L7C35", "disj@L7C9"]
    assert {m.kind for m in ms} >= {"action_conjunct", "next_disjunct"}


def test_deleting_last_item_keeps_the_following_comment():
    text = """---- MODULE C ----
VARIABLE x
Init == x = 0
Next == /\\ x < 3
        /\\ x' = x + 1

(* A comment that tree-sitter puts inside the last item. *)
Inv == x >= 0
====
"""
    m = next(m for m in generate_mutants(text) if m.mutant_id == "conj@L5C9")
    assert m.text == text.replace("\n        /\\ x' = x + 1", "")
    assert "(* A comment" in m.text and not parse(m.text).root_node.has_error


def test_multiline_operand_keeps_its_column():
    text = """---- MODULE ML ----
VARIABLES x, y
Init == x = 0 /\\ y = 0
Next == x' = 5 /\\ y' = y \\/
        /\\ x' = 1
        /\\ y' = 2
====
"""
    m = next(m for m in generate_mutants(text) if m.mutant_id == "disj@L4C9")
    assert m.text == text.replace("x' = 5 /\\ y' = y \\/\n", "\n")
    body = parse(m.text).root_node.children[0]
    nxt = [d for d in body.named_children if d.type == "operator_definition"][-1]
    lst = nxt.child_by_field_name("definition")
    assert lst.type == "conj_list" and len([c for c in lst.named_children if c.type == "conj_item"]) == 2


def test_called_operators_give_next_disjuncts_peterson():
    text = (EMBEDDED / "Peterson" / "Peterson.tla").read_text()
    ms = [m for m in generate_mutants(text) if m.kind == "next_disjunct"]
    # Next == (\E self \in {0, 1}: Proc(self)); the six actions are disjuncts of Proc
    assert len(ms) == 6 and all("of Proc:" in m.description for m in ms)
    assert [m for m in ms if m.description.endswith("wait(self)")][0].text.count("wait(self)") == 1


def test_init_and_next_from_spec_or_cfg():
    hour = """---- MODULE Hour ----
EXTENDS Naturals
VARIABLE hr
HCini == hr \\in (1 .. 12)
HCnxt == hr' = IF hr # 12 THEN hr + 1 ELSE 1
HC == HCini /\\ [][HCnxt]_hr
Other == hr' = 7
LSpec == HC /\\ WF_hr(HCnxt)
====
"""
    # no Init/Next/Spec: the definition of the shape I /\ [][N]_v is found
    shape = [m.mutant_id for m in generate_mutants(hour)]
    assert "cmp@L5C22" in shape and "num+1@L4C18" in shape
    assert not any(i.endswith("L7C16") for i in shape)  # Other is not used
    assert shape == [m.mutant_id for m in generate_mutants(hour, cfg="SPECIFICATION LSpec\n")]
    # the cfg's specification defined in a wrapper (MCEcho's TestSpec): the module's own formula
    assert shape == [m.mutant_id for m in generate_mutants(hour, cfg="SPECIFICATION WrapperSpec\n")]
    assert shape == [m.mutant_id for m in generate_mutants(hour, init="HCini", next="HCnxt")]
    via_cfg = [m.mutant_id for m in generate_mutants(hour, cfg="INIT HCini\nNEXT Other\n")]
    assert "num+1@L7C16" in via_cfg and "cmp@L5C22" not in via_cfg
    # a definition substituted for a constant in the cfg is part of the model: not mutated
    model = """---- MODULE Model ----
EXTENDS Naturals
CONSTANT Max
VARIABLE x
MCMax == 3
Bound == Max + 0
Init == x = 1
Next == x < Bound /\\ x' = x + MCMax
====
"""
    plain = {m.description for m in generate_mutants(model)}
    subst = {m.description for m in generate_mutants(model, cfg="CONSTANT Max <- MCMax\nINIT Init\nNEXT Next\n")}
    assert "numeric literal 3 -> 4 in MCMax" in plain
    assert not any("MCMax" in d and "numeric" in d for d in subst)
    assert "numeric literal 0 -> 1 in Bound" in subst


def test_no_module_or_no_roots():
    assert generate_mutants("just prose") == []
    util = (EMBEDDED / "TokenRing" / "RingUtil.tla").read_text()
    assert generate_mutants(util) == []  # no Init / Next / Spec
    assert any(m.kind == "numeric_literal" for m in generate_mutants(util, scope="all"))


def test_deterministic_and_seeded_subsets():
    text = (EMBEDDED / "Peterson" / "Peterson.tla").read_text()
    a, b = generate_mutants(text), generate_mutants(text)
    assert a == b
    full_ids = [m.mutant_id for m in a]
    s1 = generate_mutants(text, max_per_kind=2, seed=1)
    assert s1 == generate_mutants(text, max_per_kind=2, seed=1)
    counts = Counter(m.kind for m in s1)
    full = Counter(m.kind for m in a)
    assert all(counts[k] == min(2, full[k]) for k in full)
    ids = [m.mutant_id for m in s1]
    assert ids == [i for i in full_ids if i in set(ids)]  # a subset, in the full order
    others = {tuple(m.mutant_id for m in generate_mutants(text, max_per_kind=2, seed=s))
              for s in range(2, 8)}
    assert len(others | {tuple(ids)}) > 1  # the seed matters
    assert generate_mutants(text, max_per_kind=1000) == a


def test_rename_module_changes_only_the_header():
    out = rename_module(SMALL, "Small2")
    assert out == SMALL.replace("MODULE Small ", "MODULE Small2 ", 1)
    with pytest.raises(ValueError):
        rename_module(SMALL, "bad name")


# --------------------------------------------------------------------------- tools


def _counts(text: str) -> dict[str, int]:
    c = Counter(m.kind for m in generate_mutants(text))
    return {k: c[k] for k in KINDS}


def test_embedded_counts_per_kind():
    """Pinned so that a change in what is mutated is noticed (see the report)."""
    got = {p.stem: _counts(p.read_text()) for p in EMBEDDED_SPECS}
    assert got == {
        "BoundedBuffer": dict(zip(KINDS, (6, 2, 0, 6, 2, 2))),
        "Clock": dict(zip(KINDS, (15, 2, 0, 2, 0, 0))),
        "Inventory": dict(zip(KINDS, (4, 3, 2, 4, 2, 2))),
        "Peterson": dict(zip(KINDS, (12, 8, 1, 15, 8, 6))),
        "MCTokenRing": dict(zip(KINDS, (0, 0, 0, 0, 0, 0))),
        "RingUtil": dict(zip(KINDS, (0, 0, 0, 0, 0, 0))),
        "TokenRing": dict(zip(KINDS, (2, 5, 1, 8, 5, 5))),
        "TrafficLight": dict(zip(KINDS, (7, 7, 1, 10, 7, 5))),
    }


@pytest.mark.tlc
@pytest.mark.parametrize("folder", ["BoundedBuffer", "Clock", "Inventory", "Peterson",
                                    "TokenRing", "TrafficLight"])
def test_every_embedded_mutant_passes_sany(folder, sany):
    """All mutants of a specification in one SANY run: each mutant is renamed to its own
    module and instantiated by a wrapper that declares the same constants/variables."""
    main = folder
    text = (EMBEDDED / folder / f"{main}.tla").read_text()
    ms = generate_mutants(text)
    assert ms
    info = module_info(text)
    files = {p.name: p.read_text() for p in (EMBEDDED / folder).glob("*.tla") if p.stem != main}
    lines = ["---- MODULE AllMutants ----"]
    if info.constants:
        lines.append("CONSTANTS " + ", ".join(info.constants))
    if info.variables:
        lines.append("VARIABLES " + ", ".join(info.variables))
    for i, m in enumerate(ms):
        name = f"{main}Mut{i}"
        files[f"{name}.tla"] = rename_module(m.text, name)
        lines.append(f"I{i} == INSTANCE {name}")
    files["AllMutants.tla"] = "\n".join(lines + ["====", ""])
    ok, out = sany(files, "AllMutants")
    assert ok, out[-3000:]
    for i in range(len(ms)):  # SANY really processed every mutant module
        assert f"Semantic processing of module {main}Mut{i}\n" in out


@pytest.mark.tlc
@pytest.mark.corpus
def test_real_corpus_mutants_change_distinct_states(corpus_root, tool_config):
    from alias.tla.cfg import for_jar, parse_cfg
    from alias.tla.tools import run_tlc

    folder = corpus_root / "specifications" / "transaction_commit"
    if not (folder / "TCommit.tla").is_file():
        pytest.skip("TCommit not in the corpus")
    text = (folder / "TCommit.tla").read_text()
    cfg = (folder / "TCommit.cfg").read_text()
    cfg_text, flags = for_jar(parse_cfg(cfg), False, supports_alias=False)
    ms = generate_mutants(text, cfg=cfg)
    assert {m.kind for m in ms} == set(KINDS) - {"numeric_literal"}  # TCommit has no numbers
    ref = run_tlc({"TCommit.tla": text}, "TCommit", cfg_text, tool_config, flags)
    assert ref.kind == "success" and ref.distinct_states == 34
    picked = [m for m in ms if m.mutant_id in ("disj@L41C41", "str@L11C38")]
    assert len(picked) == 2
    counts = {}
    for m in picked:
        r = run_tlc({"TCommit.tla": m.text}, "TCommit", cfg_text, tool_config, flags)
        assert r.kind == "success", (m.mutant_id, r.kind, r.error_message)
        counts[m.mutant_id] = r.distinct_states
    # without Decide only Prepare steps remain: each RM working or prepared
    assert counts["disj@L41C41"] == 8
    assert any(v != ref.distinct_states for v in counts.values())

