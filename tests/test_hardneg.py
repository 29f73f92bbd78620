"""Hard negatives (issue 33, point 3): mutants with the reference's number of distinct
states whose behaviors TLC shows to differ; both behavior-grade procedures must reject them."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from alias.corpus.testset import Reference
from alias.errors import AliasError
from alias.grade.behavior import BehaviorGrader, OutputSide
from alias.grade.cache import ToolRunner
from alias.config import HardNegativesConfig
from alias.grade.controls import HARDNEG, hard_negative_controls, run_controls
from alias.grade.hardneg import OPERATORS, TURNS, counterexample, generate_hard_negatives
from alias.tla.syntax import parse
from alias.tla.tool_server import server_classes
from alias.tla.tools import default_jvm_cache

FIX = Path(__file__).parent / "fixtures" / "hardneg"
#: The fixture each operator is shown on: HNSteps (every state initial, so steps can change
#: and the reachable set stays), HNIndex (an EXCEPT index) and HNFair (SF needed; PROPERTY).
FIXTURE_OF = {op: "HNSteps" for op in OPERATORS} | {"except_index": "HNIndex"} | \
    {op: "HNFair" for op in OPERATORS if op.startswith("fairness")}


def fixture_reference(name: str) -> Reference:
    return Reference(task_id=f"hardneg.{name}", condition="original", files={f"{name}.tla": (FIX / f"{name}.tla").read_text()},
                     system_module=name, model_module=name, cfg_text=(FIX / f"{name}.cfg").read_text(),
                     author_modules=(name,))


def test_every_operator_has_a_fixture_candidate_that_parses():
    """Each operator makes at least one mutant on its fixture; each reads cleanly, differs
    from the reference and carries its operator's name in its id."""
    for op, name in FIXTURE_OF.items():
        ref = fixture_reference(name)
        cands = list(generate_hard_negatives(ref.system_text, ref.cfg_text, operators=[op]))
        assert cands, op
        for c in cands:
            assert c.operator == op and c.mutant_id.startswith(f"{op}@L") and c.text != ref.system_text
            assert not parse(c.text).root_node.has_error


def test_operators_make_the_edits_they_name():
    ref = fixture_reference("HNSteps")
    (swapped,) = generate_hard_negatives(ref.system_text, ref.cfg_text, operators=["guard_swap"])
    assert swapped.mutant_id == "guard_swap@L9C10"
    assert "Up == /\\ x = 2" in swapped.text and "Down == /\\ x = 0" in swapped.text
    flips = list(generate_hard_negatives(ref.system_text, ref.cfg_text, operators=["arith_flip"]))
    assert [f.mutant_id for f in flips] == ["arith_flip@L10C18", "arith_flip@L13C20"]
    assert "x' = (x - 1) % 3" in flips[0].text and "x' = (x - 2) % 3" in flips[1].text
    idx = fixture_reference("HNIndex")
    (only,) = generate_hard_negatives(idx.system_text, idx.cfg_text, operators=["except_index"])
    assert "[f EXCEPT ![j] = 1]" in only.text


def test_fairness_operators_need_a_property_and_unknown_operators_are_named():
    fair = fixture_reference("HNFair")
    ops = [op for op in OPERATORS if op.startswith("fairness")]
    assert list(generate_hard_negatives(fair.system_text, fair.cfg_text, operators=ops))
    assert list(generate_hard_negatives(fair.system_text, "SPECIFICATION Spec\n", operators=ops)) == []
    with pytest.raises(AliasError, match="no operator 'nope'.*known: guard_swap"):
        list(generate_hard_negatives(fair.system_text, fair.cfg_text, operators=["nope"]))


def test_seeded_order_lets_operators_take_turns():
    """Operators take turns in TURNS order (every operator listed once)."""
    assert sorted(TURNS) == sorted(OPERATORS)
    ref = fixture_reference("HNSteps")
    first = [c.operator for c in generate_hard_negatives(ref.system_text, ref.cfg_text, seed="s")][:8]
    assert len(set(first)) == 8 and first == sorted(first, key=TURNS.index)
    again = [c.mutant_id for c in generate_hard_negatives(ref.system_text, ref.cfg_text, seed="s")]
    assert again == [c.mutant_id for c in generate_hard_negatives(ref.system_text, ref.cfg_text, seed="s")]


def test_counterexample_keeps_the_error_and_the_start_of_the_trace():
    out = "TLC2 Version\nstuff\nError: Invariant Inv is violated.\nError: The behavior up to this point is:\n" \
          "State 1: <Initial predicate>\n/\\ x = 0\n\nState 2: <Up>\n/\\ x = 1\n"
    assert counterexample(out, 4) == ["Error: Invariant Inv is violated.", "Error: The behavior up to this point is:",
                                      "State 1: <Initial predicate>", "/\\ x = 0"]
    assert counterexample("Model checking completed. No error has been found.") == []


@pytest.fixture(scope="module")
def runner(tool_config, tmp_path_factory):
    """A cached runner; through the TLC server where Java can build it (same run keys and
    verdicts as a TLC process, tests/test_tool_server.py; these runs take a second each)."""
    config = dataclasses.replace(tool_config, jvm_cache=default_jvm_cache())
    if server_classes(config.java, config.jar, config.jvm_cache) is not None:
        config = dataclasses.replace(config, tlc_server=True)
    return ToolRunner(config, tmp_path_factory.mktemp("hardneg_cache"))


def _kept(name: str, op: str, runner: ToolRunner):
    ref = fixture_reference(name)
    n = len(list(generate_hard_negatives(ref.system_text, ref.cfg_text, operators=[op])))
    cs = hard_negative_controls(ref, runner, seed=1, max_tried=n, max_kept=1, timeout_s=60, operators=(op,))
    return ref, cs, [c for c in cs if c.valid]


@pytest.mark.tlc
@pytest.mark.parametrize("op", sorted(FIXTURE_OF))
def test_each_operator_keeps_a_hard_negative_on_its_fixture(op, runner):
    """With real TLC: a kept candidate has the reference's distinct-state count and a TLC
    counterexample from the identity-mapping forward or reverse check."""
    ref, cs, kept = _kept(FIXTURE_OF[op], op, runner)
    assert len(kept) == 1, [c.detail for c in cs]
    c = kept[0]
    assert c.kind == HARDNEG and c.mutant_kind == op and c.reference_states == c.control_states
    d = json.loads(c.detail)
    assert d["check"].split("_")[0] in ("forward", "reverse")
    assert d["counterexample"][0].startswith("Error:")
    # point (c): a fairness mutant has the reference's very state graph; the others other steps
    assert d["relabel"].split(":")[0] == ("identical" if op.startswith("fairness") else "different"), d


def _all_candidates(name: str, runner: ToolRunner, operators: tuple[str, ...]):
    ref = fixture_reference(name)
    n = len(list(generate_hard_negatives(ref.system_text, ref.cfg_text, operators=operators)))
    cs = hard_negative_controls(ref, runner, seed=1, max_tried=n, max_kept=n, timeout_s=60, operators=operators)
    return ref, {json.loads(c.detail)["description"]: c for c in cs}


@pytest.mark.tlc
def test_a_candidate_that_renames_a_value_is_not_kept(runner):
    """Point (c), VoucherCancel's case: Go writing "c" where the reference writes "b" (no
    action tells them apart) violates Inv under the identity mapping, but its state graph is
    the reference's with "c" for "b", and the refinement procedure accepts it by that
    bijection: not a hard negative. A candidate with other steps is still kept, and so is
    one whose graph differs only by renumbering."""
    ref, cs = _all_candidates("HNRelabel", runner, ("update_copy", "update_swap", "arith_flip"))
    c = cs["update of st in Go replaced by Other's: st' = \"c\""]
    d = json.loads(c.detail)
    assert (c.valid, d["check"], d["relabel"]) == (False, "forward_invariant_violated",
                                                   'relabeled: equal up to st via {"c"->"b"}')
    assert d["counterexample"][0] == "Error: Invariant AliasRefInv0 is violated."  # R's Inv, in the check's wrapper
    v = BehaviorGrader(ref, runner).grade(OutputSide({ref.system_module: c.text}, ref.system_module))
    assert v.passed and "cancel" not in str(v.mapping) and "st" in json.dumps(v.mapping), v.mapping
    kept = [k for k, x in cs.items() if x.valid]
    assert kept and all(json.loads(cs[k].detail)["relabel"].startswith("different") for k in kept), kept
    relabeled = [k for k, x in cs.items() if json.loads(x.detail).get("relabel", "").startswith("relabeled")]
    assert len(relabeled) == 2 and not any(cs[k].valid for k in relabeled)
    # the counter run the other way is n via {1->2, 2->1}: numbers read as other numbers are
    # other arithmetic, not a re-encoding (nor does the grade's grammar accept them): kept
    flip = cs["+ -> - in Back: n' = (n + 1) % 3"]
    assert flip.valid and json.loads(flip.detail)["relabel"].startswith("different")


@pytest.mark.tlc
def test_a_candidate_with_an_inert_process_is_not_kept(runner):
    """Point (c), Peterson's case (ProcSet == 1..3 while Next ranges over 1..2): the third
    component of x never moves, so the graphs are equal once it is dropped; the refinement
    procedure accepts it with x <- <<x[1], x[2]>>; nothing of HNInert is kept."""
    ref, cs = _all_candidates("HNInert", runner, ("literal_shifted",))
    c = cs["numeric literal 2 -> 3 in Init"]
    d = json.loads(c.detail)
    assert (c.valid, d["check"], d["relabel"]) == (False, "forward_property_violated",
                                                   "relabeled: equal up to components constant in every state")
    assert c.control_states == c.reference_states == 9
    v = BehaviorGrader(ref, runner).grade(OutputSide({ref.system_module: c.text}, ref.system_module))
    assert v.passed, v.reason
    assert not any(x.valid for x in cs.values())


@pytest.mark.tlc
def test_state_counts_would_accept_what_both_procedures_reject(runner, tmp_path):
    """Through the controls (build_controls' hook, the grading of every control with both
    procedures): every kept hard negative has the reference's distinct-state count and TLC
    runs it without error, so a grader comparing state counts alone would accept it; the
    refinement procedure and the paper's renaming procedure both reject every one."""
    refs = {(r.task_id, "original"): r for r in map(fixture_reference, ("HNSteps", "HNIndex", "HNFair"))}
    h = HardNegativesConfig(max_tried_per_task=16, max_kept_per_task=2, timeout_s=60, reach_time_factor=3,
                            min_reach_timeout_s=10, operators=())
    s = run_controls(refs, runner, tmp_path, seed=1, max_mutants_tried=0, max_mutants_kept=0, mutant_timeout_s=60,
                     parallel=1, hard_negatives=h)
    cs = pd.read_parquet(tmp_path / "control_samples.parquet")
    kept = cs[(cs.kind == HARDNEG) & cs.valid]
    assert len(kept) >= 5 and kept.task_id.nunique() == 3
    assert (kept.control_states == kept.reference_states).all()
    assert all(json.loads(d)["reach"] == "success" for d in kept.detail)
    v = pd.read_parquet(tmp_path / "verdicts.parquet")
    v = v[v.model == f"control:{HARDNEG}"]
    assert sorted(v.grade.unique()) == ["behavior", "behavior_renaming"] and len(v) == 2 * len(kept)
    assert not v.passed.any()
    assert s[HARDNEG] == {"n": len(kept), "tasks": 3, "passed": 0, "passed_renaming": 0}
    assert s["self"] == {"n": 3, "passed": 3}


def test_table_j1_counts_hard_negatives_per_procedure(tmp_path):
    """Table J.1's fifth row and v_hard_negatives: kept hard negatives, their tasks, and how
    many each procedure accepted; an accepted one is a control graded wrongly."""
    from test_stats_views import ELIGIBLE, _frame, make_store, synthetic_tables

    from alias.report.tables import _hard_negatives_text
    from alias.store.db import query

    tables = synthetic_tables()
    t1, t2 = sorted(ELIGIBLE)[:2]
    relabeled = json.dumps({"check": "forward_invariant_violated", "relabel": 'relabeled: equal up to st via {"c"->"b"}'})
    cut = json.dumps({"check": "forward_invariant_violated", "relabel": "undecided: no map of states found"})
    cs = [{"task_id": t, "kind": "hardneg", "model": "control:hardneg", "sample_idx": i, "valid": ok,
           "mutant_kind": op, "reference_states": 6, "control_states": n, "detail": d}
          for t, i, ok, op, n, d in ((t1, 0, True, "guard_swap", 6, "{}"), (t1, 1, False, "arith_flip", 7, "{}"),
                                     (t1, 2, True, "arith_flip", 6, "{}"), (t2, 0, True, "guard_swap", 6, "{}"),
                                     (t2, 1, False, "update_copy", 6, relabeled), (t2, 2, False, "arith_flip", 6, cut))]
    verdicts = [{"task_id": r["task_id"], "condition": "original", "model": "control:hardneg",
                 "sample_idx": r["sample_idx"], "grade": g, "passed": (r["task_id"], r["sample_idx"], g) == (t2, 0, "behavior_renaming")}
                for r in cs if r["valid"] for g in ("behavior", "behavior_renaming")]
    tables["control_samples"] = _frame("control_samples", cs)
    tables["verdicts"] = pd.concat([tables["verdicts"], _frame("verdicts", verdicts)], ignore_index=True)
    db = make_store(tmp_path, tables)
    row = query("SELECT * FROM v_table_j1 WHERE ord = 5", db).iloc[0]
    assert (row.control, row.n, row.passed, row.tasks) == ("Mutant with the same reachable states", 3, 0, 2)
    hn = query("SELECT * FROM v_hard_negatives", db).set_index(["operator", "procedure"])
    assert hn.loc[("all", "behavior_renaming")].tolist() == [3, 2, 1]
    assert hn.loc[("guard_swap", "behavior")].tolist() == [2, 2, 0]
    errors = query("SELECT * FROM v_control_errors WHERE kind = 'hardneg'", db)
    assert errors[["task_id", "grade"]].values.tolist() == [[t2, "behavior_renaming"]]
    counts = query("SELECT * FROM v_control_counts", db).iloc[0]
    assert (counts.hardneg_tried, counts.hardneg_kept, counts.hardneg_same_states) == (6, 3, 5)
    assert (counts.hardneg_re_encoded, counts.hardneg_relabel_unchecked) == (1, 1)
    text = _hard_negatives_text(counts, hn.reset_index())
    assert "3 kept of 6 run through TLC (5 had the reference's" in text
    assert "re-encoded: 1 were, with values renamed or constant components added, and 1 could not be compared" in text


@pytest.mark.tlc
def test_fairness_dropped_on_a_pc_reference_is_rejected(runner):
    """The keep-check keeps the mutant (TLC's forward check finds the liveness
    counterexample; the data graphs are equal) and both procedures reject it (Appendix I's
    data-graph comparison, which sees no fairness, once accepted it)."""
    ref, cs, kept = _kept("HNPcLive", "fairness_drop", runner)
    assert len(kept) == 1 and "liveness" in json.loads(kept[0].detail)["check"]
    side = OutputSide({ref.system_module: kept[0].text}, ref.system_module)
    assert not any(BehaviorGrader(ref, runner, mappings=p).grade(side).passed for p in ("refinement", "renaming"))


def test_the_recorded_counterexample_holds_no_date_or_wall_time():
    """A kept hard negative's detail is the same bytes on a rerun: TLC's finishing lines
    (wall time, date) are placeholders, the violation and the trace as TLC wrote them."""
    from alias.grade.hardneg import counterexample

    def run(at: str) -> list[str]:
        return counterexample(f"TLC2 Version 2.19\nError: Invariant Inv is violated.\nError: The behavior up to "
                              f"this point is:\nState 1: <Initial predicate>\nx = 1\n\nFinished checking temporal "
                              f"properties in 00s at {at}\nFinished in 01s at ({at})\n")

    a, b = run("2026-12-05 02:25:07"), run("2026-12-05 04:35:06")
    assert a == b and a[:4] == ["Error: Invariant Inv is violated.", "Error: The behavior up to this point is:",
                                "State 1: <Initial predicate>", "x = 1"]
    assert not any("2026" in ln for ln in a)


def test_candidates_do_not_depend_on_the_hash_seed():
    """The seeded order is the whole order: update_swap/update_copy walked a set of shared
    variables, whose order follows Python's string hash, so Table J.1's hard negatives
    changed from one `dvc repro` to the next (18 kept of 44, 47, 38 run)."""
    text = ("---- MODULE T ----\nVARIABLES a, b, c, d\nInit == a = 0 /\\ b = 0 /\\ c = 0 /\\ d = 0\n"
            "P == a' = 1 /\\ b' = 2 /\\ c' = 3 /\\ d' = 4\nQ == a' = 5 /\\ b' = 6 /\\ c' = 7 /\\ d' = 8\n"
            "Next == P \\/ Q\n====\n")
    code = ("import sys; from alias.grade.hardneg import generate_hard_negatives as g; "
            "print([c.description for c in g(sys.stdin.read(), 'INIT Init\\nNEXT Next', "
            "operators=('update_swap', 'update_copy'), seed='0:t')])")
    runs = {subprocess.run([sys.executable, "-c", code], input=text, capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(s)}).stdout for s in range(6)}
    assert len(runs) == 1, runs
    assert "updates of a in P and Q swapped" in runs.pop()
