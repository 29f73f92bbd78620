"""Meaningful names (Appendix R): prompt, reply parsing and validation, applying a map,
captures, and re-verification with SANY + TLC on the embedded TokenRing and Clock."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from alias.rename.meaningful import (
    CFG_KEYWORDS, TLA_RESERVED_WORDS, apply_meaningful_map, compose_map, extract_json_object,
    meaningful_identifiers, naming_prompt, parse_name_map, propose_meaningful_map, validate_name_map,
    verify_meaningful,
)

SPECS = Path(__file__).resolve().parents[1] / "alias" / "corpus" / "embedded" / "specifications"


def _folder(name: str) -> dict[str, str]:
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted((SPECS / name).glob("*.tla"))}


TOKENRING_MAP = {
    "MCOrder": "ModelRingOrder", "MCTokenRing": "ModelTokenPassing", "n1": "nodeA", "n2": "nodeB",
    "n3": "nodeC", "Hops": "HopCount", "Nodes": "RingNodes", "Pos": "IndexOf", "Ring": "RingSeq",
    "RingUtil": "RingHelpers", "Succ": "Clockwise", "Enter": "EnterCritical", "Exit": "LeaveCritical",
    "Init": "InitialState", "MutualExclusion": "AtMostOneCritical", "Next": "Step", "Node": "Participant",
    "Order": "RingOrder", "Pass": "PassToken", "R": "Geometry", "Request": "AskForAccess",
    "Spec": "Behaviour", "TokenRing": "TokenPassing", "TokenStaysNear": "TokenNearStart",
    "TypeOK": "WellTyped", "holder": "tokenHolder", "state": "phase", "vars": "allVars",
}

CLOCK_MAP = {
    "Clock": "QuarterClock", "Init": "StartAtMidnight", "MidnightRecurs": "TwelveInfinitelyOften",
    "Next": "Advance", "NoonLeadsToOne": "TwelveThenOne", "Spec": "ClockBehaviour", "Tick": "QuarterTick",
    "TypeOK": "HandsInRange", "hr": "hour", "qtr": "quarter", "vars": "hands",
}

EXPECTED = ["hr", "qtr", "Tick", "TypeOK"]


# ------------------------------------------------------------------------ parsing
def test_valid_reply_parses_without_problems():
    reply = json.dumps({"hr": "hour", "qtr": "quarter", "Tick": "Advance", "TypeOK": "HandsInRange"})
    mapping, problems = parse_name_map(reply, EXPECTED)
    assert problems == []
    assert mapping == {"hr": "hour", "qtr": "quarter", "Tick": "Advance", "TypeOK": "HandsInRange"}


def test_prose_and_fence_around_json():
    reply = ("Sure! Here are meaningful names, following the format {\"old\": \"new\"}.\n\n"
             "```json\n{\n  \"hr\": \"hour\",\n  \"qtr\": \"quarter\",\n  \"Tick\": \"Advance\",\n"
             "  \"TypeOK\": \"HandsInRange\"\n}\n```\nLet me know if you want changes {or not}.")
    mapping, problems = parse_name_map(reply, EXPECTED)
    assert problems == []
    assert mapping["Tick"] == "Advance" and len(mapping) == 4


def test_unfenced_json_in_prose_and_wrapper_object():
    reply = 'The map is {"renames": {"hr": "hour", "qtr": "quarter", "Tick": "Advance", "TypeOK": "Ok1"}} done.'
    mapping, problems = parse_name_map(reply, EXPECTED)
    assert problems == [] and mapping["TypeOK"] == "Ok1"
    assert extract_json_object("no json here", EXPECTED) is None
    mapping, problems = parse_name_map('{"hr": "hour", "qtr": "quarter", "Tick": "Advance", '
                                       '"TypeOK": "HandsInRange",\n}', EXPECTED)
    assert problems == [] and mapping["TypeOK"] == "HandsInRange"
    mapping, problems = parse_name_map("I cannot do that.", EXPECTED)
    assert mapping == {} and [p.kind for p in problems] == ["no_json"]


def test_missing_identifier_reported():
    reply = '```\n{"hr": "hour", "qtr": "quarter", "Tick": "Advance"}\n```'
    mapping, problems = parse_name_map(reply, EXPECTED)
    assert [(p.kind, p.name) for p in problems] == [("missing", "TypeOK")]
    assert "TypeOK" not in mapping


@pytest.mark.parametrize("new,kind", [
    ("VARIABLE", "reserved_word"), ("CHOOSE", "reserved_word"), ("BOOLEAN", "reserved_word"),
    ("WF_hour", "reserved_word"), ("INVARIANT", "reserved_word"), ("SPECIFICATION", "reserved_word"),
    ("Len", "standard_operator"), ("Cardinality", "standard_operator"), ("Nat", "standard_operator"),
    ("Naturals", "standard_module"), ("FiniteSets", "standard_module"),
    ("2hour", "invalid_identifier"), ("hour-hand", "invalid_identifier"), ("", "invalid_identifier"),
    ("__", "invalid_identifier"), ("héure", "invalid_identifier"),
])
def test_bad_new_names(new, kind):
    reply = json.dumps({"hr": new, "qtr": "quarter", "Tick": "Advance", "TypeOK": "HandsInRange"})
    _, problems = parse_name_map(reply, EXPECTED)
    assert [(p.kind, p.name) for p in problems] == [(kind, "hr")]


def test_reserved_word_list_is_complete():
    for w in ("ASSUME", "ASSUMPTION", "AXIOM", "CASE", "CHOOSE", "CONSTANT", "CONSTANTS", "DOMAIN",
              "ELSE", "ENABLED", "EXCEPT", "EXTENDS", "IF", "IN", "INSTANCE", "LET", "LOCAL", "MODULE",
              "OTHER", "SF_", "SUBSET", "THEN", "THEOREM", "UNCHANGED", "UNION", "VARIABLE", "VARIABLES",
              "WF_", "WITH", "ACTION", "BY", "COROLLARY", "DEF", "DEFINE", "DEFS", "HAVE", "HIDE", "LAMBDA",
              "LEMMA", "NEW", "OBVIOUS", "OMITTED", "ONLY", "PICK", "PROOF", "PROPOSITION", "PROVE", "QED",
              "RECURSIVE", "STATE", "SUFFICES", "TAKE", "TEMPORAL", "USE", "WITNESS", "TRUE", "FALSE",
              "STRING", "BOOLEAN"):
        assert w in TLA_RESERVED_WORDS, w
    assert {"INIT", "NEXT", "PROPERTY", "CONSTRAINT", "SYMMETRY", "VIEW"} <= CFG_KEYWORDS


def test_duplicate_new_names_reported():
    reply = json.dumps({"hr": "hand", "qtr": "hand", "Tick": "Advance", "TypeOK": "HandsInRange"})
    mapping, problems = parse_name_map(reply, EXPECTED)
    assert sorted((p.kind, p.name) for p in problems) == [("duplicate", "hr"), ("duplicate", "qtr")]
    # a key given twice in the JSON object is a problem too, not a silent overwrite
    reply = '{"hr": "hour", "hr": "hours", "qtr": "quarter", "Tick": "Advance", "TypeOK": "Ok"}'
    _, problems = parse_name_map(reply, EXPECTED)
    assert [(p.kind, p.name) for p in problems] == [("duplicate_key", "hr")]


def test_unchanged_original_unexpected_and_taken():
    reply = json.dumps({"hr": "hr", "qtr": "Tick", "Tick": "Advance", "TypeOK": "n", "Extra": "X"})
    _, problems = parse_name_map(reply, EXPECTED, taken={"n", "i"})
    assert [(p.kind, p.name) for p in problems] == [
        ("collision", "TypeOK"), ("unchanged", "hr"), ("original_name", "qtr"), ("unexpected", "Extra")]
    # not_string
    _, problems = parse_name_map('{"hr": 3, "qtr": "q1", "Tick": "T1", "TypeOK": "Ok"}', EXPECTED)
    assert [(p.kind, p.name) for p in problems] == [("not_string", "hr")]


def test_best_object_chosen_among_several():
    reply = ('Format: {"x": "y"}. Answer:\n```json\n'
             + json.dumps({"hr": "hour", "qtr": "quarter", "Tick": "Advance", "TypeOK": "HandsInRange"})
             + "\n```")
    mapping, problems = parse_name_map(reply, EXPECTED)
    assert problems == [] and mapping["hr"] == "hour"


# ------------------------------------------------------------------------- prompt
def test_prompt_lists_identifiers_kinds_and_modules():
    mods = _folder("TokenRing")
    cfg = (SPECS / "TokenRing" / "MCTokenRing.cfg").read_text()
    ids = meaningful_identifiers(mods, None, cfg)
    assert {r["name"] for r in ids} == set(TOKENRING_MAP)
    p = naming_prompt({"modules": mods, "cfg_text": cfg, "model_module": "MCTokenRing"}, ids)
    assert "- Ring: constant, defined in module RingUtil" in p
    assert "- holder: variable, defined in module TokenRing" in p
    assert "- Hops: recursive, defined in module RingUtil" in p
    assert "- R: instance, defined in module TokenRing" in p
    assert "JSON object" in p and "Cardinality" in p
    assert mods["RingUtil"].rstrip("\n") in p and cfg.rstrip("\n") in p
    assert p.count("\n- ") == len(TOKENRING_MAP)


def test_prompt_random_view_and_compose():
    from alias.rename.cir import rename_task

    mods = _folder("Clock")
    cfg = (SPECS / "Clock" / "Clock.cfg").read_text()
    rr = rename_task(mods, None, cfg, 0, "Clock")
    p = naming_prompt({"modules": rr.modules, "cfg_text": rr.cfg_text}, rr.identifiers, view="random")
    listing = p.split("Identifiers to rename", 1)[1].split("\nModule ", 1)[0]
    for old, new in rr.mapping.items():
        assert f"- {new}: " in listing
        assert f"- {old}: " not in listing
    assert f"defined in module {rr.mapping['Clock']}" in listing
    reply_map = {new: CLOCK_MAP[old] for old, new in rr.mapping.items()}
    out = propose_meaningful_map({"modules": rr.modules, "cfg_text": rr.cfg_text}, rr.identifiers,
                                 lambda prompt: "```json\n" + json.dumps(reply_map) + "\n```", view="random")
    assert out["problems"] == []
    assert compose_map(rr.mapping, out["mapping"]) == CLOCK_MAP
    # in the random view an original name proposed back is refused
    back = dict(reply_map, **{rr.mapping["TypeOK"]: "TypeOK"})
    out = propose_meaningful_map({"modules": rr.modules}, rr.identifiers, lambda _: json.dumps(back), view="random")
    assert [(p.kind, p.name) for p in out["problems"]] == [("original_name", rr.mapping["TypeOK"])]


def test_propose_with_fake_llm():
    mods = _folder("Clock")
    ids = meaningful_identifiers(mods)
    seen = []

    def fake(prompt: str) -> str:
        seen.append(prompt)
        return "Here you go:\n" + json.dumps(CLOCK_MAP)

    out = propose_meaningful_map({"modules": mods}, ids, fake)
    assert out["problems"] == [] and out["mapping"] == CLOCK_MAP and seen == [out["prompt"]]


# ------------------------------------------------------------------------ applying
def test_apply_tokenring_renames_modules_cfg_and_description():
    mods = _folder("TokenRing")
    cfg = (SPECS / "TokenRing" / "MCTokenRing.cfg").read_text()
    desc = ("The TokenRing module checks TypeOK and MutualExclusion. Each node has a state; "
            "the holder passes the token (Pass) along the Order. Naturals is used.")
    r = apply_meaningful_map(mods, cfg, desc, TOKENRING_MAP)
    assert r.ok, r.problems
    assert set(r.modules) == {"TokenPassing", "RingHelpers", "ModelTokenPassing"}
    assert r.module("MCTokenRing") == "ModelTokenPassing"
    sys = r.modules["TokenPassing"]
    assert "Geometry == INSTANCE RingHelpers WITH RingSeq <- RingOrder" in sys
    assert "tokenHolder' = Geometry!Clockwise(tokenHolder)" in sys
    assert "WF_allVars(PassToken)" in sys
    assert "\\E n \\in Participant : AskForAccess(n)" in sys          # bound n kept
    assert "EXTENDS TokenPassing" in r.modules["ModelTokenPassing"]
    assert "RingOrder <- ModelRingOrder" in r.cfg_text and "nodeA = nodeA" in r.cfg_text
    assert "INVARIANTS WellTyped AtMostOneCritical" in r.cfg_text
    # three-part rule: cfg names always, lowercase words kept, other names renamed
    assert "checks WellTyped and AtMostOneCritical" in r.description
    assert "has a state;" in r.description and "the holder passes" in r.description
    assert "(PassToken)" in r.description and "along the RingOrder" in r.description
    # ... and module names (author or standard) are kept, as in the random condition
    assert "The TokenRing module" in r.description and "Naturals is used" in r.description


def test_apply_refuses_capture_of_bound_variable():
    mods = _folder("TokenRing")
    cfg = (SPECS / "TokenRing" / "MCTokenRing.cfg").read_text()
    bad = dict(TOKENRING_MAP, Node="n")          # \E n \in Node : ... would capture n
    r = apply_meaningful_map(mods, cfg, None, bad)
    assert not r.ok and r.modules == {} and r.cfg_text is None
    assert [p.kind for p in r.problems] == ["capture"] and "n" in r.error


def test_apply_refuses_capture_of_kept_operator():
    lib = "---- MODULE Helpers ----\nEXTENDS Naturals\nDouble(x) == 2 * x\n====\n"
    main = ("---- MODULE Main ----\nEXTENDS Helpers\nVARIABLE v\nInit == v = 0\n"
            "Next == v' = Double(v) + 1\n====\n")
    ok = apply_meaningful_map({"Main": main}, None, None,
                              {"Main": "Counter", "v": "count", "Init": "Start", "Next": "Step"},
                              library_modules={"Helpers": lib})
    assert ok.ok and "count' = Double(count) + 1" in ok.modules["Counter"]
    bad = apply_meaningful_map({"Main": main}, None, None,
                               {"Main": "Counter", "v": "count", "Init": "Double", "Next": "Step"},
                               library_modules={"Helpers": lib})
    assert not bad.ok and [p.kind for p in bad.problems] == ["capture"]
    clash = apply_meaningful_map({"Main": main}, None, None,
                                 {"Main": "Helpers", "v": "count", "Init": "Start", "Next": "Step"},
                                 library_modules={"Helpers": lib})
    assert not clash.ok and [(p.kind, p.name) for p in clash.problems] == [("collision", "Main")]


def test_apply_requires_the_whole_map():
    mods = _folder("Clock")
    partial = {k: v for k, v in CLOCK_MAP.items() if k != "qtr"}
    r = apply_meaningful_map(mods, None, None, partial)
    assert not r.ok and [(p.kind, p.name) for p in r.problems] == [("missing", "qtr")]
    r = apply_meaningful_map(mods, None, None, dict(CLOCK_MAP, hr="Len"))
    assert not r.ok and [(p.kind, p.name) for p in r.problems] == [("standard_operator", "hr")]


# ------------------------------------------------------------------------ verifying
@pytest.mark.tlc
def test_tokenring_meaningful_copy_verifies(tool_config):
    mods = _folder("TokenRing")
    cfg = (SPECS / "TokenRing" / "MCTokenRing.cfg").read_text()
    r = apply_meaningful_map(mods, cfg, None, TOKENRING_MAP)
    assert r.ok
    files = {f"{k}.tla": v for k, v in mods.items()}
    v = verify_meaningful(files, "MCTokenRing", cfg, r, tool_config)
    assert v.verified, (v.reason, v.detail)
    assert v.original["kind"] == v.meaningful["kind"] == "success"
    assert v.original["distinct_states"] == v.meaningful["distinct_states"] == 36
    assert v.original["depth"] == v.meaningful["depth"]
    assert v.to_row("TokenRing")["meaningful_distinct_states"] == 36


@pytest.mark.tlc
def test_clock_meaningful_copy_verifies_against_known_original(tool_config):
    mods = _folder("Clock")
    cfg = (SPECS / "Clock" / "Clock.cfg").read_text()
    r = apply_meaningful_map(mods, cfg, None, CLOCK_MAP)
    assert r.ok
    manifest = json.loads((SPECS / "Clock" / "manifest.json").read_text())["modules"][0]["models"][0]
    original = {"kind": "success", "distinct_states": manifest["distinctStates"], "depth": manifest["stateDepth"]}
    v = verify_meaningful({"Clock.tla": mods["Clock"]}, "Clock", cfg, r, tool_config, original=original)
    assert v.verified, (v.reason, v.detail)
    assert v.meaningful["distinct_states"] == 48 and v.meaningful["depth"] == original["depth"]


@pytest.mark.tlc
def test_layout_breaking_map_fails_verification(tool_config):
    # A longer operator name moves the first bullet of a junction list to the right of the
    # following bullets: SANY then reads /\ and \/ as mixed infix operators and rejects it.
    spec = ("---- MODULE Flip ----\nVARIABLE x\nInit == x = 0\n"
            "Go == \\/ /\\ x = 0\n         /\\ x' = 1\n      \\/ /\\ x = 1\n         /\\ x' = 0\n"
            "Spec == Init /\\ [][Go]_x\n====\n")
    cfg = "SPECIFICATION Spec\n"
    m = {"Flip": "Toggle", "x": "bit", "Init": "Start", "Go": "ToggleBit", "Spec": "Behaviour"}
    r = apply_meaningful_map({"Flip": spec}, cfg, None, m)
    assert r.ok
    v = verify_meaningful({"Flip.tla": spec}, "Flip", cfg, r, tool_config,
                          original={"kind": "success", "distinct_states": 2, "depth": 2})
    assert not v.verified and v.reason == "sany_meaningful", (v.reason, v.detail)
    # an invalid map never reaches the tools
    bad = apply_meaningful_map({"Flip": spec}, cfg, None, dict(m, Go="Start"))
    v = verify_meaningful({"Flip.tla": spec}, "Flip", cfg, bad, tool_config,
                          original={"kind": "success", "distinct_states": 2, "depth": 2})
    assert not v.verified and v.reason == "apply_error" and "duplicate" in v.detail


def test_validate_name_map_directly():
    assert validate_name_map({"a": "b"}, ["a"]) == []
    assert [p.kind for p in validate_name_map({"a": "b"}, ["a"], original_names=["a", "b"])] == ["original_name"]
