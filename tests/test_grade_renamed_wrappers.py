"""Behavior grade on renamed copies of references whose cfg overrides definitions through
a wrapper, found on the real corpus's Paxos, Voting and NanoBlockchain models:

* the wrapper defines a second formula of the shape ``I /\\ [][N]_v`` after the system
  module's ``Spec``; the renamed copy renames both, so the grader must take the one at
  the reference spec's position, not the last one defined (Voting's ``MCSpec``);
* a qualified cfg override ``NoVal = [Helper] NoValV`` of a module imported by a *named*
  INSTANCE: the renamed copy's ``Helper`` has another name and needs the same override;
* a qualified substitution ``Lim <- [Sys] MCLim`` whose right side only the reference's
  wrapper defines.

Each case: the reference passes against itself and its CIR-renamed copy (with renamed
modules) passes too; a mutant of the renamed copy fails."""
from __future__ import annotations

import textwrap

import pytest

from alias.grade.behavior import BehaviorGrader, OutputSide
from alias.grade.cache import ToolRunner
from alias.corpus.testset import Reference
from alias.rename.cir import rename_task

pytestmark = pytest.mark.tlc

HELPER = textwrap.dedent("""\
    ---- MODULE Helper ----
    EXTENDS Naturals
    NoVal == CHOOSE v : v \\notin Nat
    Bump(n) == n + 1
    ====
    """)

SYS = textwrap.dedent("""\
    ---- MODULE Sys ----
    EXTENDS Naturals
    CONSTANT Items
    VARIABLES count, last
    H == INSTANCE Helper
    Lim == 100
    TypeOK == count \\in 0..Lim /\\ (last \\in Items \\/ last = H!NoVal)
    Init == count = 0 /\\ last = H!NoVal
    Next == count < Lim /\\ count' = H!Bump(count) /\\ last' \\in Items
    Spec == Init /\\ [][Next]_<<count, last>>
    ====
    """)

MC = textwrap.dedent("""\
    ---- MODULE MC ----
    EXTENDS Sys, TLC
    CONSTANT NoValV, i1, i2
    MCItems == {i1, i2}
    MCLim == 3
    MCSpecFromTypeOK == TypeOK /\\ [][Next]_<<count, last>>
    ====
    """)

CFG = textwrap.dedent("""\
    CONSTANTS
      NoValV = NoValV
      i1 = i1
      i2 = i2
      Items <- MCItems
      Lim <- [Sys] MCLim
      NoVal = [Helper] NoValV
    SPECIFICATION Spec
    INVARIANT TypeOK
    CHECK_DEADLOCK FALSE
    """)


@pytest.fixture(scope="module")
def runner(tool_config, tmp_path_factory) -> ToolRunner:
    return ToolRunner(tool_config, tmp_path_factory.mktemp("cache"))


def reference() -> Reference:
    files = {"Helper.tla": HELPER, "Sys.tla": SYS, "MC.tla": MC}
    return Reference(task_id="t.Sys.MC", condition="original", files=files, system_module="Sys",
                     model_module="MC", cfg_text=CFG, wrapper_module="MC",
                     author_modules=("Helper", "MC", "Sys"))


def renamed_side(ref: Reference) -> tuple[OutputSide, dict[str, str]]:
    mods = {m: ref.files[f"{m}.tla"] for m in ref.author_modules}
    r = rename_task(mods, set(mods), ref.cfg_text, 7, "t")
    return OutputSide(dict(r.modules), r.module_names["Sys"], r.module_names["MC"]), r.mapping


def test_reference_passes_against_itself(runner):
    ref = reference()
    v = BehaviorGrader(ref, runner).grade(OutputSide({"Sys": SYS}, "Sys"))
    assert v.passed, v.attempts


def test_renamed_copy_with_renamed_modules_passes(runner):
    ref = reference()
    side, mapping = renamed_side(ref)
    # the renamed copy really renames the spec, the helper module and the overridden defs
    assert {"Spec", "Helper", "NoVal", "Lim", "MCSpecFromTypeOK"} <= set(mapping)
    v = BehaviorGrader(ref, runner).grade(side)
    assert v.passed, v.attempts
    assert v.mapping["variables"] == {"count": mapping["count"], "last": mapping["last"]}


def test_mutant_of_the_renamed_copy_fails(runner):
    ref = reference()
    side, mapping = renamed_side(ref)
    sys_name = side.system
    text = side.modules[sys_name]
    lim, cnt = mapping["Lim"], mapping["count"]
    mutated = text.replace(f"{cnt} < {lim}", f"{cnt} < {lim} + 1")
    assert mutated != text
    # a few maps suffice: the right one (declaration order) is tried first and must fail
    # (the paper's renaming procedure; the refinement procedure's rejections of mutants
    # and hard negatives are tested in test_hardneg.py and test_grading_suite.py)
    v = BehaviorGrader(ref, runner, max_maps=4, mappings="renaming").grade(OutputSide(side.modules | {sys_name: mutated}, sys_name, side.wrapper))
    assert not v.passed and v.maps_tried >= 1
    assert v.attempts[0].startswith(f"map {{'count': '{cnt}'")


def test_substitution_target_renamed_by_the_wrapper_is_paired_by_position(runner):
    """``Items <- MCItems``: the renamed wrapper calls ``MCItems`` otherwise; the grader
    stages the output's definition at the same position under the cfg's name, so the
    output alone (no reference definitions: the Appendix I state-graph dump) is a model
    TLC accepts.  Found on BinarySearch (``Seq <- LimitedSeq``), whose renamed and
    operator-renamed copies lost the state-graph fallback to a config error."""
    from alias.grade.behavior import BehaviorVerdict

    ref = reference()
    side, mapping = renamed_side(ref)
    g = BehaviorGrader(ref, runner)
    defs = g._overridden_definitions(side)
    assert defs.get(mapping["MCItems"]) == "MCItems"
    assert defs.get(mapping["MCLim"]) == "MCLim"  # `Lim <- [Sys] MCLim`
    g._defs = defs
    vm = {"count": mapping["count"], "last": mapping["last"]}
    cm = {c: mapping[c] for c in g.r_consts}
    v = BehaviorVerdict(passed=False)
    assert g._data_graph(side, cm, vm, v), v.attempts
    assert v.attempts[-1].startswith("data graph on ['count', 'last']: equivalent")
