"""The behavior grade's refinement procedure (issue 33): values, the mapping search, and
real TLC checks of outputs the paper's renaming procedure rejects."""
from __future__ import annotations

import copy
from dataclasses import replace
import textwrap

import pytest

from alias.corpus.testset import Reference
from alias.grade import behavior_refine as br
from alias.grade.behavior import BehaviorGrader, OutputSide
from alias.grade.cache import ToolRunner
from alias.grade.refinement import (Encoding, Leaf, Match, Pair, Search, Side, complete_levels, encodings,
                                    max_matching, to_refinement)
from alias.tla.extract import extract_module
from alias.tla.values import Bool, Fcn, ModelValue, Rec, Seq, Str, parse_value, to_tla


# --------------------------------------------------------------------------- values
def test_tlc_values_parse_and_booleans_stay_apart_from_integers():
    assert parse_value("TRUE") == Bool(True) and parse_value("TRUE") != 1
    assert {parse_value("TRUE"), parse_value("1")} == {Bool(True), 1}  # a Python bool would collapse them
    assert parse_value('[b |-> <<1, "x">>, a |-> p1]') == Rec((("a", ModelValue("p1")), ("b", Seq((1, Str("x"))))))
    assert parse_value("(1 :> 10 @@ 2 :> 20)") == Seq((10, 20))  # a function on 1..n is a sequence, as in TLC
    assert parse_value('(0 :> FALSE @@ 1 :> TRUE)') == Fcn(((0, Bool(False)), (1, Bool(True))))
    assert parse_value('"a\\"b"') == Str('a"b')
    assert parse_value("1..3") == parse_value("{1, 2, 3}")
    assert type(parse_value("[S -> T]")).__name__ == "Opaque"
    assert to_tla(parse_value('[a |-> 1, b |-> <<TRUE, "x">>]')) == '[a |-> 1, b |-> <<TRUE, "x">>]'


# --------------------------------------------------------------------------- the search
def _states(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items()} for r in rows]


def test_encodings_keep_shared_values_and_map_the_rest():
    r = {parse_value(t) for t in ("0", "1")}
    g = {parse_value(t) for t in ("FALSE", "TRUE")}
    encs = encodings(r, g, subset=False)
    assert [e.pairs for e in encs] == [((Bool(False), 0), (Bool(True), 1)), ((Bool(False), 1), (Bool(True), 0))]
    # same value set: only the identity, never a permutation of it
    assert [e.identity for e in encodings(r, set(r), subset=False)] == [True]
    # shared atoms stay themselves: only "none" is free to become NIL
    r2 = {parse_value(t) for t in ('"get"', '"put"', "NIL")}
    g2 = {parse_value(t) for t in ('"get"', '"put"', '"none"')}
    (only,) = encodings(r2, g2, subset=False)
    assert dict(only.pairs) == {Str("get"): Str("get"), Str("put"): Str("put"), Str("none"): ModelValue("NIL")}


def test_a_number_is_never_encoded_as_another_number():
    # a hard negative of TLA+-Bench 1501 (factorials): the mutant reaches 0, 2 and 362880
    # where the reference reaches 0, 6 and 362880; mapping 2 to 6 would accept a wrong
    # computation. Strings and booleans for numbers stay encodable
    r = {parse_value(t) for t in ("0", "6", "362880")}
    g = {parse_value(t) for t in ("0", "2", "362880")}
    assert encodings(r, g, subset=False) == []
    assert encodings({0, 1}, {1, 2}, subset=False) == []
    s = {parse_value(t) for t in ('"a"', '"b"')}
    assert [dict(e.pairs) for e in encodings({0, 1}, s, subset=False)][0] == {Str("a"): 0, Str("b"): 1}


def test_search_finds_a_merged_record_with_a_boolean_field_and_an_auxiliary_variable():
    r_states = [{"x": str(a), "y": str(b)} for a in range(3) for b in range(2)]
    g_states = [{"st": f"[x |-> {a}, y |-> {'TRUE' if b else 'FALSE'}]", "h": str((a + b) % 2)}
                for a in range(3) for b in range(2)]
    r = Side(["x", "y"], r_states, r_states[:1])
    g = Side(["st", "h"], g_states, g_states[:1])
    found = list(Search(r, g, subset=False).matches())
    # y may also be h (its values and the joint states fit): identity encodings come first,
    # and TLC decides between them
    assert [m.describe() for m in found] == [
        {"leaves": {"x": "st.x", "y": "h"}, "auxiliary": []},
        {"leaves": {"x": "st.x", "y": "st.y via {FALSE->0, TRUE->1}"}, "auxiliary": ["h"]}]
    m = found[1]
    assert not m.invertible and not m.is_renaming
    ref = to_refinement(m, lambda v: "G_" + v)
    assert ref.forward == {"x": "G_st.x", "y": "(LET AliasX1 == G_st.y IN CASE AliasX1 = FALSE -> 0 [] AliasX1 = TRUE -> 1)"}
    assert ref.inverse is None


def test_search_tries_the_field_of_the_same_name_before_a_whole_variable():
    """TLA+-Bench 1578's merged-record control (31 PlusCal variables, many alike): R's ``b``
    and ``c`` merged into G's ``st``; with ``a`` still whole in G, every assignment fits the
    dumps, and the search put whole for whole first (``b -> a``), so 347 mappings failed at
    TLC before the budget ran out. The field of the same name comes first now."""
    r_states = [{"a": str(x), "b": str(y), "c": str(z)} for x in range(2) for y in range(2) for z in range(2)]
    g_states = [{"a": s["a"], "st": f"[b |-> {s['b']}, c |-> {s['c']}]"} for s in r_states]
    r, g = Side(["b", "c", "a"], r_states, r_states[:1]), Side(["a", "st"], g_states, g_states[:1])
    first = next(iter(Search(r, g, subset=False).matches()))
    assert first.describe()["leaves"] == {"b": "st.b", "c": "st.c", "a": "a"}


def test_a_tuple_component_is_never_read_as_another_component():
    """YoYoAllGraphs: ``active`` and ``phase`` hold one component per node, alike, so every
    permutation of the components of each fits the states, and the 1,000 mappings of the
    cap went to TLC for each negative. A component is read only as the same component, as
    a number is read only as itself (a whole variable may still be a component)."""
    rows = [("<<0, 0, 1>>", "<<1, 0, 0>>"), ("<<0, 1, 0>>", "<<0, 1, 0>>"), ("<<1, 0, 0>>", "<<0, 0, 1>>"),
            ("<<1, 1, 0>>", "<<0, 1, 1>>")]
    states = [{"a": a, "b": b} for a in (x for x, _ in rows) for b in (y for _, y in rows)]
    r, g = Side(["a", "b"], states, states), Side(["a", "b"], states, states)
    found = [m.describe()["leaves"] for m in Search(r, g, subset=False).matches()]
    assert found[0] == {"a": "a", "b": "b"}
    cut = [m for m in found if "a[1]" in m or "b[1]" in m]
    assert cut and all(v.endswith(k[k.index("["):]) for m in cut for k, v in m.items() if "[" in k), cut
    assert len(found) <= 8, found


def _counter_side(names: tuple[str, str], cut: bool) -> Side:
    """Two counters from 0: the first counts to 3, the second stays (a chain of 4 states);
    ``cut``: the dump held its first 3 states only, as a dump cut at its state limit."""
    states = [{names[0]: str(k), names[1]: "0"} for k in range(4)]
    edges = [(k, k + 1) for k in range(3)]
    if not cut:
        return Side(list(names), states, states[:1], True, tuple(edges)).with_prefix(
            complete_levels(states, [0], edges, cut=False))
    shown = states[:3]
    return Side(list(names), shown[:1], shown[:1], reachable=False).with_prefix(
        complete_levels(shown, [0], edges[:2], cut=True))


def test_a_cut_dump_still_prunes_by_its_first_levels():
    """TLA+-Bench 1105 (four counters, all 0 at first; the reference's dump over its
    limits): on initial states alone every permutation of alike counters fits, and each
    went to TLC (1,000 runs per mutant). The states the output reaches in d steps must map
    to states the reference reaches in at most d (the forward check's necessary condition),
    on the levels both dumps hold whole."""
    assert complete_levels([{"a": "0"}, {"a": "1"}, {"a": "2"}], [0], [(0, 1), (1, 2)], cut=True)[2] == 1
    assert complete_levels([{"a": "0"}, {"a": "1"}], [0], [], cut=False) is None   # a state no path reaches
    for r_cut, g_cut in ((True, False), (False, True), (True, True)):
        r, g = _counter_side(("a", "b"), r_cut), _counter_side(("x", "y"), g_cut)
        found = [m.describe()["leaves"] for m in Search(r, g, subset=False).matches()]
        assert found == [{"a": "x", "b": "y"}], (r_cut, g_cut, found)
        # a cfg that restricts R's exploration: R's levels bound nothing, both fit
        found = [m.describe()["leaves"] for m in Search(r, g, subset=True).matches()]
        assert len(found) == 2, (r_cut, g_cut, found)
    blind = lambda s: Side(s.variables, s.states, s.initial, s.reachable, s.edges)   # noqa: E731
    found = list(Search(blind(_counter_side(("a", "b"), True)), blind(_counter_side(("x", "y"), False)),
                        subset=False).matches())
    assert len(found) == 2          # without the levels: both permutations fit the initial states


def test_search_splits_a_merged_record_with_more_values_than_five_thousand():
    """TLA+-Bench 1579's merged-record control: one record of all of R's variables has a
    value per reachable state (5,510); the search parsed at most 5,000 distinct values of
    a variable for fields, so it found no counterpart of ``pc`` or ``M``."""
    r_states = [{"pc": str(a), "m": str(b)} for a in range(80) for b in range(80)]  # 6,400 states
    g_states = [{"state": f"[pc |-> {s['pc']}, m |-> {s['m']}]"} for s in r_states]
    r, g = Side(["pc", "m"], r_states, r_states[:1]), Side(["state"], g_states, g_states[:1])
    first = next(iter(Search(r, g, subset=False).matches()))
    assert first.describe()["leaves"] == {"pc": "state.pc", "m": "state.m"}


def test_search_rejects_outputs_whose_joint_states_differ():
    # each variable alone takes the same values, but G never has x = y while R always does
    r_states = [{"x": str(a), "y": str(a)} for a in range(2)]
    g_states = [{"x": str(a), "y": str(1 - a)} for a in range(2)]
    r, g = Side(["x", "y"], r_states, r_states[:1]), Side(["x", "y"], g_states, g_states[:1])
    assert list(Search(r, g, subset=False).matches()) == []


def test_a_number_for_a_label_is_re_encoded_only_in_place():
    """TLA+-Bench 528's hard negatives (a literal of ``y[2]`` shifted) passed with a crossed
    mapping: R's ``y`` from G's ``pc`` re-encoded ({"Lbl_1" -> 3, "Done" -> 4}) and R's
    ``pc`` from G's ``y`` re-encoded (5 -> "Lbl_1", 6 -> "Done"). A kind-changing
    encoding is kept only between leaves of the same name; the same re-encoding in place
    (G's ``pc`` as numbers) still fits."""
    r_states = [{"pc": '"Lbl_1"', "y": "3"}, {"pc": '"Done"', "y": "4"}]
    crossed = [{"pc": '"Lbl_1"', "y": "5"}, {"pc": '"Done"', "y": "6"}]
    r, g = Side(["pc", "y"], r_states, r_states[:1]), Side(["pc", "y"], crossed, crossed[:1])
    assert list(Search(r, g, subset=False).matches()) == []
    in_place = [{"pc": "1", "y": "3"}, {"pc": "2", "y": "4"}]
    g = Side(["pc", "y"], in_place, in_place[:1])
    found = [m.describe()["leaves"] for m in Search(r, g, subset=False).matches()]
    assert found == [{"pc": 'pc via {1->"Lbl_1", 2->"Done"}', "y": "y"}]


def test_a_search_of_many_alike_variables_stops_at_its_budget():
    # 7 variables, each 0 or 1, all equal in R's states; in G's, v6 is the others' opposite.
    # Every G variable fits every R variable alone, so the search extends thousands of
    # partial assignments (6! orders of v0..v5) before each fails on v6
    names = [f"v{i}" for i in range(7)]
    r_states = [{n: str(k) for n in names} for k in (0, 1)]
    g_states = [{n: str(k if n != "v6" else 1 - k) for n in names} for k in (0, 1)]
    r, g = Side(names, r_states, r_states), Side(names, g_states, g_states)
    full = Search(r, g, subset=False)
    assert list(full.matches()) == [] and not full.exhausted and full.rows_compared > 20_000
    cut = Search(r, g, subset=False, budget=10_000)
    assert list(cut.matches()) == [] and cut.exhausted and 10_000 < cut.rows_compared <= 10_008
    assert cut.tried_pairs < full.tried_pairs


def test_more_alike_reference_variables_than_output_variables_end_the_search_at_once():
    # 12 R variables, each 0 or 1, fit each of G's 4 alike ones alone: no assignment gives
    # them 12 distinct G variables, and a maximum matching (4) says so before any pair is tried
    # (without it the search enumerated 12 x 11 x 10 x 9 partial assignments to its budget)
    r_names, g_names = [f"r{i}" for i in range(12)], [f"g{i}" for i in range(4)]
    r_states = [{n: str(k) for n in r_names} for k in (0, 1)]
    g_states = [{n: str(k) for n in g_names} for k in (0, 1)]
    search = Search(Side(r_names, r_states, r_states), Side(g_names, g_states, g_states), subset=False)
    assert list(search.matches()) == [] and not search.exhausted
    assert search.tried_pairs == 0 and search.shortfall == (12, 4)
    assert "12 variables and fields need distinct output counterparts" in search.explain()
    assert "at most 4 of them" in search.explain()


def test_max_matching_finds_augmenting_paths():
    assert max_matching({"a": ["x", "y"], "b": ["x"], "c": ["y", "z"]}) == 3
    assert max_matching({"a": ["x"], "b": ["x"], "c": ["x", "y"]}) == 2
    assert max_matching({"a": [], "b": ["x"]}) == 1


def test_a_split_variable_is_built_back_and_inverted():
    r_states = [{"p": f"[a |-> {a}, b |-> {b}]"} for a in range(2) for b in range(2)]
    g_states = [{"a": str(a), "b": str(b)} for a in range(2) for b in range(2)]
    r, g = Side(["p"], r_states, r_states[:1]), Side(["a", "b"], g_states, g_states[:1])
    m = next(Search(r, g, subset=False).matches())
    ref = to_refinement(m, lambda v: v, lambda v: v)
    assert ref.forward == {"p": "[a |-> a, b |-> b]"}
    assert ref.inverse == {"a": "p.a", "b": "p.b"}


def test_match_of_requires_every_reference_variable():
    pair = Pair(Leaf("x"), Leaf("x"), Encoding())
    assert Match.of([pair], ["x"], ["x", "h"]).auxiliary == ["h"]
    with pytest.raises(ValueError, match="without a pair"):
        Match.of([pair], ["x", "y"], ["x"])


# --------------------------------------------------------------------------- TLC
REF = textwrap.dedent("""\
    ---- MODULE Ctr ----
    EXTENDS Naturals
    CONSTANT Max
    VARIABLES x, y
    TypeOK == x \\in 0..Max /\\ y \\in 0..1
    Init == x = 0 /\\ y = 0
    Inc == x < Max /\\ x' = x + 1 /\\ UNCHANGED y
    Flip == y' = 1 - y /\\ UNCHANGED x
    Next == Inc \\/ Flip
    Spec == Init /\\ [][Next]_<<x, y>> /\\ WF_<<x, y>>(Inc)
    Done == <>(x = Max)
    ====
    """)
CFG = "CONSTANT Max = 3\nSPECIFICATION Spec\nINVARIANT TypeOK\nPROPERTY Done\n"


def _variant(decls: str, init: str, inc: str, flip: str, vs: str, fair: str = "WF_{vs}(Inc)") -> str:
    return (f"---- MODULE Ctr ----\nEXTENDS Naturals\n{decls}\nInit == {init}\nInc == {inc}\nFlip == {flip}\n"
            f"Spec == Init /\\ [][Inc \\/ Flip]_{vs}" + (" /\\ " + fair.format(vs=vs) if fair else "") + "\n====\n")


VARIANTS = {
    "merged_record": _variant("CONSTANT Max\nVARIABLE st", "st = [x |-> 0, y |-> 0]",
                              "st.x < Max /\\ st' = [st EXCEPT !.x = @ + 1]", "st' = [st EXCEPT !.y = 1 - @]", "st"),
    "boolean_for_0_1": _variant("CONSTANT Max\nVARIABLES x, y", "x = 0 /\\ y = FALSE",
                                "x < Max /\\ x' = x + 1 /\\ UNCHANGED y", "y' = ~y /\\ UNCHANGED x", "<<x, y>>"),
    "history_variable": _variant("CONSTANT Max\nVARIABLES x, y, flips", "x = 0 /\\ y = 0 /\\ flips = 0",
                                 "x < Max /\\ x' = x + 1 /\\ UNCHANGED <<y, flips>>",
                                 "y' = 1 - y /\\ UNCHANGED x /\\ flips' = (flips + 1) % 2", "<<x, y, flips>>"),
    "constant_defined": _variant("Max == 3\nVARIABLES x, y", "x = 0 /\\ y = 0", "x < Max /\\ x' = x + 1 /\\ UNCHANGED y",
                                 "y' = 1 - y /\\ UNCHANGED x", "<<x, y>>"),
}
WRONG = {
    # the record output without fairness: x need not reach Max
    "merged_record_no_fairness": _variant("CONSTANT Max\nVARIABLE st", "st = [x |-> 0, y |-> 0]",
                                          "st.x < Max /\\ st' = [st EXCEPT !.x = @ + 1]",
                                          "st' = [st EXCEPT !.y = 1 - @]", "st", fair=""),
    # the boolean output that flips y only while x = 0
    "boolean_guarded": _variant("CONSTANT Max\nVARIABLES x, y", "x = 0 /\\ y = FALSE",
                                "x < Max /\\ x' = x + 1 /\\ UNCHANGED y", "x = 0 /\\ y' = ~y /\\ UNCHANGED x",
                                "<<x, y>>"),
}



@pytest.fixture(scope="module")
def ctr(tool_config, tmp_path_factory):
    ref = Reference(task_id="t.Ctr.Ctr", condition="original", files={"Ctr.tla": REF}, system_module="Ctr",
                    model_module="Ctr", cfg_text=CFG, wrapper_module=None, author_modules=("Ctr",))
    return ref, ToolRunner(tool_config, tmp_path_factory.mktemp("cache"))


@pytest.mark.tlc
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_restructured_outputs_fail_by_renaming_and_pass_by_refinement(ctr, name):
    ref, runner = ctr
    out = OutputSide({"Ctr": VARIANTS[name]}, "Ctr")
    paper = BehaviorGrader(ref, runner, mappings="renaming").grade(out)
    refined = BehaviorGrader(ref, runner, mappings="refinement").grade(out)
    assert not paper.passed, paper.attempts
    assert refined.passed and refined.method == "refinement_mapping", refined.attempts
    assert refined.mapping["leaves"] and refined.maps_tried >= 1


@pytest.mark.tlc
@pytest.mark.parametrize("name", sorted(WRONG))
def test_restructured_outputs_with_other_behaviors_fail_both_procedures(ctr, name):
    ref, runner = ctr
    out = OutputSide({"Ctr": WRONG[name]}, "Ctr")
    for mappings in ("renaming", "refinement"):
        v = BehaviorGrader(ref, runner, mappings=mappings).grade(out)
        assert not v.passed, (mappings, v.mapping)
    assert v.reason.startswith(("forward_", "reverse_", "no_refinement_mapping")), v.reason


@pytest.mark.tlc
def test_check_mapping_confirms_a_known_mapping_and_refuses_a_wrong_one(ctr):
    ref, runner = ctr
    out = OutputSide({"Ctr": VARIANTS["merged_record"]}, "Ctr")
    grader = BehaviorGrader(ref, runner)
    good = Match.of([Pair(Leaf("x"), Leaf("st", ("f", "x")), Encoding()),
                     Pair(Leaf("y"), Leaf("st", ("f", "y")), Encoding())], ["x", "y"], ["st"])
    swapped = Match.of([Pair(Leaf("x"), Leaf("st", ("f", "y")), Encoding()),
                        Pair(Leaf("y"), Leaf("st", ("f", "x")), Encoding())], ["x", "y"], ["st"])
    assert grader.check_mapping(out, good, {"Max": "Max"}).passed
    bad = grader.check_mapping(out, swapped, {"Max": "Max"})
    assert not bad.passed and bad.reason.startswith("forward_")



@pytest.mark.tlc
def test_an_outputs_run_keys_do_not_depend_on_the_grading_order(ctr):
    """The reference's dumps are made once per grader and shared by its outputs: each output
    that uses them names their runs, whichever output came first (reruns give the same
    ``run_keys``)."""
    ref, runner = ctr
    a, b = (OutputSide({"Ctr": VARIANTS[n]}, "Ctr") for n in sorted(VARIANTS)[:2])

    def keys(order):
        grader = BehaviorGrader(ref, runner)
        got = {}
        for name, out in order:
            worker = copy.copy(grader)
            worker.runner = runner.child()
            worker._grade(out)
            got[name] = sorted({c.run_key for c in worker.runner.calls})
        return got

    first, second = keys([("a", a), ("b", b)]), keys([("b", b), ("a", a)])
    assert first == second
    shared = set(first["a"]) & set(first["b"])
    assert any(k.startswith("dot-") for k in shared), shared


INIT_NEXT_CFG = "CONSTANT Max = 3\nINIT Init\nNEXT Next\nINVARIANT TypeOK\n"


@pytest.mark.tlc
def test_an_init_next_reference_grades_its_renamed_copy(tool_config, tmp_path):
    """Issue 33 point 4: with a cfg of INIT/NEXT, a copy whose Init and Next carry other
    names (as CIR gives them) is found by position, under both procedures."""
    ref = Reference(task_id="t.Ctr.Ctr", condition="original", files={"Ctr.tla": REF}, system_module="Ctr",
                    model_module="Ctr", cfg_text=INIT_NEXT_CFG, wrapper_module=None, author_modules=("Ctr",))
    renamed = REF.replace("Init ==", "Qwer ==").replace("Next ==", "Tyui ==") \
        .replace("[][Next]", "[][Tyui]").replace("Init /\\", "Qwer /\\")
    runner = ToolRunner(tool_config, tmp_path)
    for mappings in ("renaming", "refinement"):
        v = BehaviorGrader(ref, runner, mappings=mappings).grade(OutputSide({"Ctr": renamed}, "Ctr"))
        assert v.passed, (mappings, v.reason, v.attempts)


def test_an_init_next_reference_without_a_spec_formula_grades_its_renamed_copy(tool_config, tmp_path):
    """Issue 33 point 4, as TLA+-Bench 1498 has it: the module defines no spec formula at all
    (only Init and Next, which the cfg names) and the copy renames both. The forward check
    must run the copy's own pair (it ran ``Init``/``Next`` by the cfg's names: TLC's
    "Unknown operator: Init", and no mapping passed)."""
    no_spec = "\n".join(ln for ln in REF.splitlines() if not ln.startswith(("Spec ==", "Done ==")))
    ref = Reference(task_id="t.Ctr.Ctr", condition="original", files={"Ctr.tla": no_spec}, system_module="Ctr",
                    model_module="Ctr", cfg_text=INIT_NEXT_CFG, wrapper_module=None, author_modules=("Ctr",))
    renamed = no_spec.replace("Init ==", "Qwer ==").replace("Next ==", "Tyui ==")
    runner = ToolRunner(tool_config, tmp_path)
    for mappings in ("renaming", "refinement"):
        v = BehaviorGrader(ref, runner, mappings=mappings).grade(OutputSide({"Ctr": renamed}, "Ctr"))
        assert v.passed and v.method == "renaming", (mappings, v.reason, v.attempts)
    wrong = renamed.replace("x' = x + 1", "x' = x + 2")
    assert not BehaviorGrader(ref, runner).grade(OutputSide({"Ctr": wrong}, "Ctr")).passed


@pytest.mark.tlc
def test_a_reference_file_with_companion_modules_grades_its_own_text(tool_config, tmp_path):
    """TLA+-Bench 1009's gold file holds its module and, after it, the modules it imports.
    SANY reads those only in the root file, and the grader's root is its own module: both
    sides are split into one file per module (the forward check said "Cannot find source
    file for module Common"). A copy that renames the companion too, and a wrong copy."""
    common = "---- MODULE Common ----\nEXTENDS Naturals\nStep(v) == v + 1\n====\n"
    main = REF.replace("EXTENDS Naturals", "EXTENDS Naturals, Common").replace("x' = x + 1", "x' = Step(x)")
    ref = Reference(task_id="t.Ctr.Ctr", condition="original", files={"Ctr.tla": main + "\n" + common},
                    system_module="Ctr", model_module="Ctr", cfg_text=CFG, wrapper_module=None, author_modules=("Ctr",))
    runner = ToolRunner(tool_config, tmp_path)
    out = extract_module(main + "\n" + common, "Ctr").module_text
    v = BehaviorGrader(ref, runner).grade(OutputSide({"Ctr": out}, "Ctr"))
    assert v.passed and v.method == "renaming", (v.reason, v.error_text)
    renamed = out.replace("Common", "Zqwxyv")
    assert BehaviorGrader(ref, runner).grade(OutputSide({"Ctr": renamed}, "Ctr")).passed
    wrong = out.replace("v + 1", "v + 2")
    assert not BehaviorGrader(ref, runner).grade(OutputSide({"Ctr": wrong}, "Ctr")).passed


def test_a_redundant_reference_variable_is_derived_from_the_one_it_follows():
    """R keeps ``phase`` beside ``st`` (a function of it in every state); G keeps ``st`` only."""
    phase = {'"idle"': '"wait"', '"busy"': '"run"', '"done"': '"wait"'}
    r_states = [{"st": f"<<{a}, {b}>>", "phase": f"<<{phase[a]}, {phase[b]}>>"}
                for a in phase for b in phase]
    g_states = [{"s": f"<<{a}, {b}>>"} for a in phase for b in phase]
    r, g = Side(["st", "phase"], r_states, r_states[:1]), Side(["s"], g_states, g_states[:1])
    (m,) = list(Search(r, g, subset=False).matches())
    assert m.describe()["leaves"] == {
        "st": "s", "phase": 'derived from st via {"busy"->"run", "done"->"wait", "idle"->"wait"}'}
    ref = to_refinement(m, lambda v: v, lambda v: v)
    assert ref.forward["phase"].startswith("[AliasQ") and 'AliasX1 = "busy" -> "run"' in ref.forward["phase"]
    assert ref.inverse == {"s": "st"}  # G is recovered from R: the reverse check runs as usual


def test_a_derived_variable_never_leaves_an_output_variable_unchecked():
    """TLA+-Bench 1405's hard negative: R's ``seq`` is a function of ``res``; G keeps ``seq``
    with a wrong initial value. Deriving R's ``seq`` from ``res`` and leaving G's ``seq`` out
    as auxiliary accepted it; no mapping may do both."""
    r_states = [{"res": "0", "seq": "<<1, 2, 3>>"}, {"res": "1", "seq": "<<2, 3>>"}]
    g_states = [{"res": "0", "seq": "<<1, 2, 4>>"}, {"res": "1", "seq": "<<2, 4>>"}]
    r, g = Side(["res", "seq"], r_states, r_states[:1]), Side(["res", "seq"], g_states, g_states[:1])
    assert [m.describe() for m in Search(r, g, subset=False).matches()] == []
    # Without G's copy, deriving R's seq is still allowed (see the test above).
    g1 = Side(["res"], [{"res": s["res"]} for s in g_states], [{"res": "0"}])
    (m,) = list(Search(r, g1, subset=False).matches())
    assert m.describe()["leaves"]["seq"].startswith("derived from res") and m.auxiliary == []


def test_a_re_encoding_tlc_found_undefined_prunes_every_mapping_that_uses_it():
    """A forward check that stops on ``CASE with no conditions true`` in a re-encoding (a
    value of G outside the encoding's domain) rules out every later mapping with the same
    encoded expression and arms, whatever its bound names; a longer CASE (more arms) or the
    same arms over another G expression is still checked."""
    from alias.grade.behavior_refine import Refiner

    r = Refiner(None, None, None)
    line = 'AliasE_0 == (LET AliasX3 == AliasV_pc[2] IN CASE AliasX3 = "ncs" -> 0)'
    r._forward_text = "---- MODULE AliasForward ----\n" + line + "\n===="
    a = line.index("CASE") + 1
    r._learn_undefined("The exception was a java.lang.RuntimeException\n: Attempted to evaluate a CASE with no "
                       f"conditions true.\nline 2, col {a} to line 2, col {len(line) - 1} of module AliasForward")
    assert r.undefined == {'LET _ == AliasV_pc[2] IN CASE _ = "ncs" -> 0'}
    assert r._undefined_in({"x": '(LET AliasX1 == AliasV_pc[2] IN CASE AliasX1 = "ncs" -> 0)', "y": "AliasV_y"})
    assert r._undefined_in({"x": '(LET AliasX1 == AliasV_pc[2] IN CASE AliasX1 = "ncs" -> 0 '
                                 '[] AliasX1 = "cs" -> 1)'}) is None
    assert r._undefined_in({"x": '(LET AliasX1 == AliasV_pc[1] IN CASE AliasX1 = "ncs" -> 0)'}) is None


def test_a_mapping_whose_steps_differ_is_not_sent_to_tlc():
    # R counts 0 -> 1 -> 2 -> 0; G visits the same three values in the other order. The state
    # sets are equal, so the state search keeps the identity mapping; G's step 0 -> 2 is no
    # step of R's, which the forward check's [][Next]_x would reject: steps_fit says so first
    r_states = [{"x": "0"}, {"x": "1"}, {"x": "2"}]
    g_states = [{"x": "0"}, {"x": "2"}, {"x": "1"}]
    ring = ((0, 1), (1, 2), (2, 0))
    r, g = Side(["x"], r_states, r_states[:1], edges=ring), Side(["x"], g_states, g_states[:1], edges=ring)
    search = Search(r, g, subset=False)
    (m,) = list(search.matches())
    assert not search.steps_fit(m) and search.step_misfits == 1
    assert search.step_witness == "the output's [x = 0] -> [x = 2]"
    assert "some step of the one is no step of the other" in search.explain()
    same = Search(r, Side(["x"], r_states, r_states[:1], edges=ring + ((1, 1),)), subset=False)
    assert all(same.steps_fit(m) for m in same.matches())  # a stutter of G maps to R's stutter
    assert Search(r, g, subset=True).steps_fit(m)  # a subset dump cannot tell


def test_a_mapping_under_which_the_output_lacks_a_step_of_the_reference_is_not_sent_to_tlc():
    # A mutant that lost a step and kept every state: the forward check's safety holds, its
    # properties or the reverse check fail, under each mapping that fits the states.
    # R steps 0 -> 1 -> 2 -> 0 and 0 -> 2; G lacks 0 -> 2 (and stutters at 1, which R need not)
    states = [{"x": "0"}, {"x": "1"}, {"x": "2"}]
    ring = ((0, 1), (1, 2), (2, 0))
    r = Side(["x"], states, states[:1], edges=ring + ((0, 2),))
    search = Search(r, Side(["x"], states, states[:1], edges=ring + ((1, 1),)), subset=False)
    (m,) = list(search.matches())
    assert not search.steps_fit(m) and search.step_misfits == 1
    assert search.step_witness == "the reference's [x = 0] -> [x = 2]"
    both = Search(r, Side(["x"], states, states[:1], edges=((0, 2),) + ring), subset=False)
    assert all(both.steps_fit(m) for m in both.matches())  # the same steps, listed in another order



CYCLE = """---- MODULE Cyc ----
EXTENDS Naturals, TLC
VARIABLE x
Init == x = 0
Next == x' = (x + 1) % 5
Spec == Init /\\ [][Next]_x
Shallow == TLCGet("level") < 8
====
"""

CYCLE_STRINGS = """---- MODULE Cyc ----
EXTENDS Naturals, TLC
VARIABLE x
Succ == [v \\in {"a", "b", "c", "d", "e"} |-> CASE v = "a" -> "b" [] v = "b" -> "c" [] v = "c" -> "d"
                                                 [] v = "d" -> "e" [] v = "e" -> "a"]
Init == x = "a"
Next == x' = Succ[x]
Spec == Init /\\ [][Next]_x
Shallow == TLCGet("level") < 8
====
"""


@pytest.mark.tlc
def test_a_re_encoding_under_a_depth_bound_is_learnt_from_reachable_states(tool_config, tmp_path):
    """TLA+-Bench 1548's re-encoded control (``nSnt0`` as strings ``"v0".."v4"``; the cfg's
    CONSTRAINT is ``TLCGet("level") < 6``): the output's dump was its initial states only
    (any CONSTRAINT did that), so the re-encoding learnt was ``{"v0" -> 0}`` and TLC's
    forward check met a value it does not cover. A constraint that mentions no reference
    variable now bounds the output's dump too, which then holds its reachable states."""
    ref = Reference(task_id="t.Cyc", condition="original", files={"Cyc.tla": CYCLE}, system_module="Cyc",
                    model_module="Cyc", cfg_text="SPECIFICATION Spec\nCONSTRAINT Shallow\n", wrapper_module=None,
                    author_modules=("Cyc",))
    runner = ToolRunner(tool_config, tmp_path)
    g = BehaviorGrader(ref, runner)
    v = g.grade(OutputSide({"Cyc": CYCLE_STRINGS}, "Cyc"))
    assert v.passed and v.method == "refinement_mapping", (v.reason, v.attempts)
    assert g.variable_free_constraints() == ["Shallow"] and not g.constrained
    assert '"e"->4' in v.mapping["leaves"]["x"], v.mapping
    wrong = CYCLE_STRINGS.replace('v = "c" -> "d"', 'v = "c" -> "a"')
    assert not BehaviorGrader(ref, runner).grade(OutputSide({"Cyc": wrong}, "Cyc")).passed
    bounded = replace(ref, cfg_text="SPECIFICATION Spec\nCONSTRAINT Small\n",
                      files={"Cyc.tla": CYCLE.replace("Shallow ==", "Small == x < 3\nShallow ==")})
    assert BehaviorGrader(bounded, runner).constrained


COUNTER = """---- MODULE Ctr ----
EXTENDS Naturals
VARIABLES x, pc
Init == x = 0 /\\ pc = "a"
Next == \\/ pc = "a" /\\ pc' = "b" /\\ x' = x + 1
        \\/ pc = "b" /\\ pc' = "a" /\\ UNCHANGED x
Spec == Init /\\ [][Next]_<<x, pc>>
Small == x < 4
====
"""


@pytest.mark.tlc
def test_a_re_encoding_under_a_constraint_on_variables_is_learnt_from_the_outputs_own_bound(tool_config, tmp_path):
    """TLA+-Bench 1576's and 867's re-encoded controls (``pc`` labels as numbers; the cfg's
    CONSTRAINT mentions reference variables): the output alone has no bound of R's, so its
    dump was its initial states, the encoding learnt ``{0 -> "a"}`` and TLC's forward check
    met a value it does not cover. The output's own definition of the cfg's constraint
    name now bounds its dump."""
    ref = Reference(task_id="t.Ctr", condition="original", files={"Ctr.tla": COUNTER}, system_module="Ctr",
                    model_module="Ctr", cfg_text="SPECIFICATION Spec\nCONSTRAINT Small\n", wrapper_module=None,
                    author_modules=("Ctr",))
    numbers = COUNTER.replace('"a"', "0").replace('"b"', "1")
    runner = ToolRunner(tool_config, tmp_path)
    g = BehaviorGrader(ref, runner)
    assert g.constrained
    v = g.grade(OutputSide({"Ctr": numbers}, "Ctr"))
    assert v.passed and v.method == "refinement_mapping", (v.reason, v.attempts)
    assert v.mapping["leaves"]["pc"] == 'pc via {0->"a", 1->"b"}', v.mapping
    wrong = numbers.replace("x' = x + 1", "x' = x + 2")
    assert not BehaviorGrader(ref, runner).grade(OutputSide({"Ctr": wrong}, "Ctr")).passed
    # without a definition of the cfg's name the output's dump is unbounded: cut at the
    # profile's state limit, it compares initial states, and the encoding comes from the
    # values the cut dump saw (as for TLA+-Bench 867, whose dump is over the limit)
    unbounded = numbers.replace("Small == x < 4", "Tiny == x < 4")
    g = BehaviorGrader(ref, runner)
    v = g.grade(OutputSide({"Ctr": unbounded}, "Ctr"))
    assert v.passed and v.method == "refinement_mapping", (v.method, v.attempts)
    assert v.mapping["leaves"]["pc"] == 'pc via {0->"a", 1->"b"}', v.mapping
    assert {c.purpose for c in v.calls} >= {"profile_output", "profile_output_initial"}


def test_eight_labels_as_numbers_get_the_order_preserving_encoding():
    """TLA+-Bench 1601's re-encoded control (Fischer: eight PlusCal labels as 0..7, ``pc`` a
    function of them): more than ``MAX_ENCODED_VALUES`` atoms and none shared, so no
    bijection was tried and the search found no counterpart of ``pc``. The order-preserving
    one is tried now (TLC decides, as for every candidate)."""
    labels = ["a", "b", "c", "cs", "d", "e", "f", "t1"]
    r = {parse_value(f'<<"{x}", "{y}">>') for x in labels for y in labels}
    g = {parse_value(f"<<{i}, {j}>>") for i in range(8) for j in range(8)}
    encs = encodings(r, g, subset=False)
    assert len(encs) == 1 and encs[0].pointwise
    assert dict(encs[0].pairs) == {i: Str(x) for i, x in enumerate(labels)}


LK = textwrap.dedent("""\
    ---- MODULE Lk ----
    EXTENDS Naturals
    CONSTANT Max
    VARIABLES x, y
    Inc == x < Max /\\ x' = x + 1 /\\ UNCHANGED y
    Flip == y' = 1 - y /\\ UNCHANGED x
    ====
    """)
LKH = textwrap.dedent("""\
    ---- MODULE LkH ----
    EXTENDS Lk
    VARIABLE h
    vars == <<x, y, h>>
    Init == x = 0 /\\ y = 0 /\\ h = 0
    Tog == h' = 1 - h /\\ UNCHANGED <<x, y>>
    Next == (Inc /\\ UNCHANGED h) \\/ (Flip /\\ UNCHANGED h) \\/ Tog
    Spec == Init /\\ [][Next]_vars /\\ WF_vars(Inc /\\ UNCHANGED h)
    Done == <>(x = Max)
    ====
    """)


@pytest.mark.tlc
@pytest.mark.parametrize("guard, passes", [("TRUE", True), ("x = 0", False)])
def test_an_output_that_extends_the_references_module_of_variables_is_graded_by_refinement(
        tool_config, tmp_path, guard, passes):
    """LockHS's case (``EXTENDS Lock``, whose module declares the variables): the output
    EXTENDS the reference's own ``Lk`` and keeps ``h`` as a boolean. Its ``x`` and ``y``
    come from ``Lk``, which the checks also instantiate as the reference: staged as the
    output's own, renamed with it, they no longer collide (the search never ran:
    ``output_profile_failed``). The boolean copy passes by refinement only; one whose ``h``
    moves only while ``x = 0`` fails both procedures."""
    ref = Reference(task_id="t.LkH.LkH", condition="original", files={"Lk.tla": LK, "LkH.tla": LKH},
                    system_module="LkH", model_module="LkH", cfg_text=CFG.replace("INVARIANT TypeOK\n", ""),
                    wrapper_module=None, author_modules=("Lk", "LkH"))
    out = LKH.replace("h = 0", "h = FALSE").replace("h' = 1 - h", f"{guard} /\\ h' = ~h")
    runner = ToolRunner(tool_config, tmp_path)
    paper = BehaviorGrader(ref, runner, mappings="renaming").grade(OutputSide({"LkH": out}, "LkH"))
    refined = BehaviorGrader(ref, runner).grade(OutputSide({"LkH": out}, "LkH"))
    assert not paper.passed, paper.reason
    assert refined.passed is passes, (refined.reason, refined.error_text, refined.attempts)
    if passes:
        assert refined.method == "refinement_mapping" and refined.mapping["leaves"], refined.mapping
    else:
        assert refined.reason.startswith(("forward_", "reverse_", "no_refinement_mapping")), refined.reason
    assert BehaviorGrader(ref, runner).grade(OutputSide({"LkH": LKH}, "LkH")).passed


INNER = textwrap.dedent("""\
    ---- MODULE Inner ----
    EXTENDS Naturals
    VARIABLE x
    Small == x < 4
    ====
    """)


@pytest.mark.parametrize("instance", ["I == INSTANCE Inner", "I == INSTANCE Inner WITH x <- x"])
def test_a_constraint_through_a_named_instance_mentions_the_variables(tool_config, tmp_path, instance):
    """EWD998ChanID (``EWD998ChanStateConstraint == EWD998Chan!StateConstraint``): the
    constraint reaches R's variables only through the instance, so it counted as
    variable-free and went into the output's profile, where R's variables are a dummy
    string; TLC failed there (``output_profile_failed``) and a defined constant, a
    history variable or a merged record went unsearched. A depth bound stays free."""
    outer = textwrap.dedent(f"""\
        ---- MODULE Outer ----
        EXTENDS Naturals, TLC
        VARIABLE x
        {instance}
        Bound == I!Small
        Depth == TLCGet("level") < 9
        Init == x = 0
        Next == x' = x + 1
        Spec == Init /\\ [][Next]_x
        ====
        """)
    ref = Reference(task_id="t.Outer", condition="original", files={"Inner.tla": INNER, "Outer.tla": outer},
                    system_module="Outer", model_module="Outer", wrapper_module=None,
                    cfg_text="SPECIFICATION Spec\nCONSTRAINT Bound Depth\n", author_modules=("Inner", "Outer"))
    assert BehaviorGrader(ref, ToolRunner(tool_config, tmp_path)).variable_free_constraints() == ["Depth"]


@pytest.mark.tlc
def test_where_no_dump_is_available_the_variables_one_to_one_maps_go_to_tlc(tool_config, tmp_path, monkeypatch):
    """GameOfLife's equivalence controls (65,536 initial states, every dump of R over its
    limit in bytes: ``reference_profile_unavailable``): the defined-constant and the
    history-variable copies were never checked. With no dump, the one-to-one maps of R's
    variables to G's (G's others auxiliary) go to TLC; a wrong copy still fails."""
    monkeypatch.setattr(br, "PROFILE_MAX_BYTES", 16)   # every profile over its limit
    ref = Reference(task_id="t.Ctr", condition="original", files={"Ctr.tla": COUNTER.replace("EXTENDS Naturals",
                    "EXTENDS Naturals\nCONSTANT Max")}, system_module="Ctr", model_module="Ctr",
                    cfg_text="CONSTANT Max = 4\nSPECIFICATION Spec\nCONSTRAINT Small\n", wrapper_module=None,
                    author_modules=("Ctr",))
    defined = COUNTER.replace("EXTENDS Naturals", "EXTENDS Naturals\nMax == 4")
    history = COUNTER.replace("VARIABLES x, pc", "VARIABLES x, pc, h").replace('pc = "a"\n', 'pc = "a" /\\ h = 0\n') \
        .replace("Next ==", "Step ==").replace("Spec ==", "Next == Step /\\ h' = x\nSpec ==") \
        .replace("<<x, pc>>", "<<x, pc, h>>")
    runner = ToolRunner(tool_config, tmp_path)
    for text in (defined, history):
        v = BehaviorGrader(ref, runner).grade(OutputSide({"Ctr": text}, "Ctr"))
        assert v.passed and v.method == "refinement_mapping", (v.reason, v.attempts)
        purposes = [c.purpose for c in v.calls]   # R's profile, its cut, its initial states: all too large
        assert "profile_output" not in purposes and "forward_refinement" in purposes, purposes
        wrong = BehaviorGrader(ref, runner).grade(OutputSide({"Ctr": text.replace("x' = x + 1", "x' = x + 2")}, "Ctr"))
        assert not wrong.passed and wrong.reason.startswith("forward_"), (wrong.reason, wrong.attempts)


def test_the_checks_without_a_dump_end_after_three_alike_failures_over_every_constant_map(monkeypatch):
    """TLA+-Bench 866 and 867 (gemini default): the output does not parse as staged, so its
    profile fails under each of 24 constant maps, and each sent three maps to TLC (72 runs,
    every one a parse error). Three alike failures that are not violations end the checks
    for the output; violations go on, to at most ``UNPROFILED_MAPS`` over all maps."""
    from types import SimpleNamespace

    from alias.grade.behavior import BehaviorVerdict

    def run(reason: str) -> int:
        r = br.Refiner(SimpleNamespace(r_vars=["a", "b", "c"]), None, BehaviorVerdict(passed=False))
        monkeypatch.setattr(r, "check", lambda st, m: reason)
        for k in range(24):   # one staged output per constant map
            st = br.Staged({}, "M", {"K": f"K{k}"}, ["x", "y", "z"], [])
            assert r._unprofiled(st, set(), 1000, "output_profile_failed") == reason
        return len(r.unprofiled)

    assert run("forward_parse_error") == 3
    assert run("forward_invariant_violated") == br.UNPROFILED_MAPS


# --------------------------------------------------------------------------- index shifts
def test_a_domain_shift_moves_a_zero_based_board_onto_a_one_based_one_and_back():
    """TLA+-Bench 784 (Game of Life on ``(0..N-1) \\X (0..N-1)`` where the reference's board
    is ``(1..N) \\X (1..N)``): the shift is found from the values, applied, written as TLA+
    both ways, and refused where the domains already agree or no single offset fits."""
    from alias.grade.refinement import domain_shift, shifted_encodings
    r = {parse_value("(<<1, 1>> :> TRUE @@ <<1, 2>> :> FALSE @@ <<2, 1>> :> FALSE @@ <<2, 2>> :> TRUE)")}
    g = {parse_value("(<<0, 0>> :> TRUE @@ <<0, 1>> :> FALSE @@ <<1, 0>> :> FALSE @@ <<1, 1>> :> TRUE)")}
    assert domain_shift(r, g, subset=False) == (1, 1)
    [enc] = shifted_encodings(r, g, subset=False)
    assert {enc.apply(v) for v in g} == r and {enc.inverse().apply(v) for v in r} == g
    assert not enc.identity and enc.inverse().shift == (-1, -1)
    ref = to_refinement(Match.of([Pair(Leaf("grid"), Leaf("grid"), enc)], ["grid"], ["grid"]), lambda v: f"G_{v}")
    assert "AliasQ2[1] + 1, AliasQ2[2] + 1" in ref.forward["grid"] and "G_grid" in ref.forward["grid"]
    assert "[<<AliasK3[1] + 1, AliasK3[2] + 1>>]" in ref.inverse["grid"]
    assert ref.shifted == ["G_grid"]
    # the forward module has TLC hold G's new board in full before the shift reads it
    from types import SimpleNamespace

    from alias.grade.behavior import BehaviorVerdict
    refiner = br.Refiner(SimpleNamespace(r_vars=["grid"]), None, BehaviorVerdict(passed=False))
    staged = br.Staged({}, "AliasOut", {}, ["grid"], [])
    moved = to_refinement(Match.of([Pair(Leaf("grid"), Leaf("grid"), enc)], ["grid"], ["grid"]), br.g_name)
    lines = refiner._product(staged, moved.forward, moved.shifted)
    assert "AliasFNext == AliasG!AliasOutNext /\\ AliasV_grid' = AliasV_grid' /\\ grid' = AliasE_0'" in lines
    same = to_refinement(Match.of([Pair(Leaf("grid"), Leaf("grid"), Encoding())], ["grid"], ["grid"]), br.g_name)
    assert same.shifted == [] and "AliasFNext == AliasG!AliasOutNext /\\ grid' = AliasE_0'" in \
        refiner._product(staged, same.forward, same.shifted)
    assert domain_shift(r, r, subset=False) is None                       # already alike
    skew = {parse_value("(<<0, 0>> :> TRUE @@ <<0, 1>> :> FALSE @@ <<1, 0>> :> FALSE @@ <<1, 2>> :> TRUE)")}
    assert domain_shift(r, skew, subset=False) is None                    # no single offset
    # a sequence (keys 1..3) from a 0-based function, with a boolean for 0/1 on the values
    seq = {parse_value("<<TRUE, FALSE, FALSE>>")}
    fcn = {parse_value("(0 :> 1 @@ 1 :> 0 @@ 2 :> 0)")}
    [both] = shifted_encodings(seq, fcn, subset=False)
    assert both.shift == (1,) and both.pointwise and {both.apply(v) for v in fcn} == seq


def test_an_index_shift_is_offered_only_where_nothing_else_fits_a_leaf_of_the_same_name():
    """A shift is a renumbering of elements, which the grammar otherwise leaves out
    (:func:`alias.grade.refinement._reindexed`): it is offered for a leaf of R and one of G
    that end in the same name when no other encoding fits them, never across names."""
    r = Side(["a"], [{"a": "<<TRUE, FALSE>>"}, {"a": "<<FALSE, TRUE>>"}], [{"a": "<<TRUE, FALSE>>"}])
    g_same = Side(["a"], [{"a": "(0 :> TRUE @@ 1 :> FALSE)"}, {"a": "(0 :> FALSE @@ 1 :> TRUE)"}],
                  [{"a": "(0 :> TRUE @@ 1 :> FALSE)"}])
    [m] = list(Search(r, g_same, subset=False).matches())
    assert m.describe()["leaves"] == {"a": "a indices moved by 1"}
    g_other = Side(["b"], [{"b": s["a"]} for s in g_same.states], [{"b": "(0 :> TRUE @@ 1 :> FALSE)"}])
    assert list(Search(r, g_other, subset=False).matches()) == []
    g_plain = Side(["a"], r.states, r.initial)   # the identity fits: no shift offered beside it
    search = Search(r, g_plain, subset=False)
    assert [enc.shift for _, enc in search._compatible(Leaf("a"))] == [()]



def test_the_shift_pass_dumps_the_output_only_where_a_variable_of_both_names_takes_integer_keyed_functions(
        monkeypatch):
    """:meth:`Refiner._unprofiled_shifts` rules a shift out without G's dump where no
    same-named variable of R takes functions of integer (tuple) keys in R's first states."""
    from types import SimpleNamespace

    from alias.grade.behavior import BehaviorVerdict
    from alias.grade.refinement import integer_keyed
    assert integer_keyed({parse_value("<<TRUE, FALSE>>"), parse_value("(<<0, 1>> :> 1)")}) is False   # shapes differ
    assert integer_keyed({parse_value("(<<1, 1>> :> TRUE @@ <<1, 2>> :> FALSE)")})
    assert not integer_keyed({parse_value('[a |-> 1]')}) and not integer_keyed({parse_value("<<>>")})
    assert not integer_keyed({parse_value("1")}) and not integer_keyed(set())
    dumps = []

    def run(values: dict) -> bool:
        grader = SimpleNamespace(r_vars=["a", "b"], reference_cut_values=lambda: values)
        r = br.Refiner(grader, None, BehaviorVerdict(passed=False))
        monkeypatch.setattr(r, "_sampled_values", lambda st: dumps.append(st) or None)
        return r._unprofiled_shifts(br.Staged({}, "M", {}, ["a", "c"], []), 60)

    assert run({"a": ['"x"', '"y"'], "b": ["<<1, 2>>"]}) is False and dumps == []   # b has no G namesake
    assert run({"a": ["<<TRUE, FALSE>>"]}) is False and len(dumps) == 1


ROT = """---- MODULE Rot ----
EXTENDS Naturals
CONSTANT N
VARIABLE a
TypeOK == a \\in [1..N -> BOOLEAN]
Init == a \\in [1..N -> BOOLEAN]
Next == a' = [i \\in 1..N |-> a[IF i = N THEN 1 ELSE i + 1]]
Spec == Init /\\ [][Next]_a
====
"""
ROT_ZERO = """---- MODULE Rot ----
EXTENDS Naturals
CONSTANT N
VARIABLE a
Init == a \\in [0..N-1 -> BOOLEAN]
Next == a' = [i \\in 0..N-1 |-> a[(i + {step}) % N]]
Spec == Init /\\ [][Next]_a
====
"""


@pytest.fixture(scope="module")
def rot(tool_config, tmp_path_factory):
    ref = Reference(task_id="t.Rot", condition="original", files={"Rot.tla": ROT}, system_module="Rot",
                    model_module="Rot", cfg_text="CONSTANT N = 3\nSPECIFICATION Spec\nINVARIANT TypeOK\n",
                    wrapper_module=None, author_modules=("Rot",))
    return ref, ToolRunner(tool_config, tmp_path_factory.mktemp("cache"))


@pytest.mark.tlc
@pytest.mark.parametrize("unprofiled", [False, True])
def test_a_zero_based_output_passes_by_an_index_shift_and_a_wrong_one_fails(rot, monkeypatch, unprofiled):
    """The 0-based rotation (``a[(i + 1) % N]``) is the reference's 1-based one with every
    index moved by 1: the renaming procedure rejects it (TypeOK), the refinement procedure
    passes it with the shift, from the dumps' search or, where no dump of R is available
    (784's 65,536 initial states), from the first states TLC dumps of each; the rotation the
    other way fails both."""
    ref, runner = rot
    if unprofiled:
        monkeypatch.setattr(BehaviorGrader, "reference_side", lambda self: None)
    good = OutputSide({"Rot": ROT_ZERO.format(step=1)}, "Rot")
    assert not BehaviorGrader(ref, runner, mappings="renaming").grade(good).passed
    v = BehaviorGrader(ref, runner, mappings="refinement").grade(good)
    assert v.passed and v.method == "refinement_mapping", (v.reason, v.attempts)
    assert v.mapping["leaves"] == {"a": "a indices moved by 1"}
    assert ("profile_reference_cut" in [c.purpose for c in v.calls]) == unprofiled
    wrong_side = OutputSide({"Rot": ROT_ZERO.format(step=2)}, "Rot")
    wrong = BehaviorGrader(ref, runner, mappings="refinement").grade(wrong_side)
    assert not wrong.passed and wrong.reason.startswith(("forward_", "reverse_", "no_refinement_mapping")), \
        (wrong.reason, wrong.attempts)


STONES = """---- MODULE Parts ----
EXTENDS Naturals, TLC
CONSTANT W
Sols == {<<a, b>> \\in (1..W) \\X (1..W) : a + b = W /\\ a <= b}
ASSUME PrintT(Sols)
====
"""


@pytest.mark.tlc
def test_a_constant_level_reference_compares_the_outputs_assumptions(tool_config, tmp_path):
    """TLA+-Bench 967 (Stones: no variable, an ASSUME that prints a solution): the refinement
    procedure passes a variable-free output whose assumptions hold under the task's cfg
    (``constant_level``) and fails one whose assumption is false or that declares a
    variable; the paper's procedure keeps its refusal."""
    ref = Reference(task_id="t.Parts", condition="original", files={"Parts.tla": STONES}, system_module="Parts",
                    model_module="Parts", cfg_text="CONSTANT W = 6\n", wrapper_module=None, author_modules=("Parts",))
    runner = ToolRunner(tool_config, tmp_path)
    other = STONES.replace("CONSTANT W", "CONSTANT Total").replace("W", "Total").replace("Sols", "Pairs")
    v = BehaviorGrader(ref, runner).grade(OutputSide({"Parts": other}, "Parts"))
    assert v.passed and v.method == "constant_level" and v.mapping["constants"] == {"W": "Total"}, v.attempts
    paper = BehaviorGrader(ref, runner, mappings="renaming").grade(OutputSide({"Parts": other}, "Parts"))
    assert not paper.passed and paper.reason.startswith("reference_without_variables")
    false = STONES.replace("ASSUME PrintT(Sols)", "ASSUME Sols = {}")
    bad = BehaviorGrader(ref, runner).grade(OutputSide({"Parts": false}, "Parts"))
    assert not bad.passed and bad.reason.startswith("constant_level_"), (bad.reason, bad.attempts)
    stateful = STONES.replace("CONSTANT W", "CONSTANT W\nVARIABLE x")
    assert BehaviorGrader(ref, runner).grade(OutputSide({"Parts": stateful}, "Parts")).reason == \
        "variable_count_differs: reference 0, output 1"
