"""The forward check evaluates the reference's constant-level definitions once.

TLC pre-evaluates the zero-arity constant-level definitions of the root module's EXTENDS
closure, but not those of a module it instantiates with parameters: read through an
INSTANCE, a ``TypeOK`` over a constant set is evaluated again in every state.  On the
real corpus this made the forward check of BinarySearch (``SortedSeqs``), btree and
EWD998ChanID run past 300 s (900 s for EWD998ChanID) where the model alone takes 5 s.
The forward module therefore EXTENDS the reference's model and instantiates the output.

The test counts evaluations with ``PrintT`` in the set's filter: 4 elements, so one
evaluation prints 4 lines; 12 reachable states print 48 more if TLC re-evaluates it."""
from __future__ import annotations

import textwrap

import pytest

from alias.grade.behavior import FORWARD, BehaviorGrader, OutputSide
from alias.grade.cache import ToolRunner
from alias.corpus.testset import Reference

pytestmark = pytest.mark.tlc

SYS = textwrap.dedent("""\
    ---- MODULE Ctr ----
    EXTENDS Naturals, TLC
    VARIABLES x, y
    Big == {n \\in 0..3 : PrintT(<<"AliasEvalBig", n>>)}
    TypeOK == x \\in Big /\\ y \\in 0..2
    Init == x = 0 /\\ y = 0
    Next == \\/ x' = (x + 1) % 4 /\\ UNCHANGED y
            \\/ y' = (y + 1) % 3 /\\ UNCHANGED x
    Spec == Init /\\ [][Next]_<<x, y>>
    ====
    """)

CFG = "SPECIFICATION Spec\nINVARIANT TypeOK\n"


@pytest.fixture(scope="module")
def runner(tool_config, tmp_path_factory) -> ToolRunner:
    return ToolRunner(tool_config, tmp_path_factory.mktemp("cache"))


def test_forward_check_evaluates_the_references_constant_set_once(runner):
    ref = Reference(task_id="t.Ctr.Ctr", condition="original", files={"Ctr.tla": SYS}, system_module="Ctr",
                    model_module="Ctr", cfg_text=CFG, wrapper_module=None, author_modules=("Ctr",))
    v = BehaviorGrader(ref, runner).grade(OutputSide({"Ctr": SYS}, "Ctr"))
    assert v.passed, v.attempts
    forward = [c for c in v.calls if c.purpose == "forward"]
    assert len(forward) == 1
    entry = runner._load(forward[0].run_key)
    assert entry["distinct_states"] == 12
    # evaluated while TLC processes the constants (once per module that defines it),
    # never during the search: the old forward module (the reference as an INSTANCE)
    # printed 48 more lines here, 4 per state
    before, search = entry["output"].split("Computing initial states", 1)
    assert search.count('"AliasEvalBig"') == 0, search[-2000:]
    assert 4 <= before.count('"AliasEvalBig"') <= 8


def test_forward_module_extends_the_reference_and_instantiates_the_output(runner):
    ref = Reference(task_id="t.Ctr.Ctr", condition="original", files={"Ctr.tla": SYS}, system_module="Ctr",
                    model_module="Ctr", cfg_text=CFG, wrapper_module=None, author_modules=("Ctr",))
    g = BehaviorGrader(ref, runner)
    files, model = g._stage(OutputSide({"Ctr": SYS}, "Ctr"), {})
    seen = {}

    class Spy:
        config = runner.config

        def tlc(self, files, main, cfg_text, flags, purpose=""):
            seen.update(files=files, main=main, cfg=cfg_text)
            return runner.tlc(files, main, cfg_text, flags, purpose=purpose)

    g.runner = Spy()
    r = g.forward(files, model, "Spec")
    assert r.passed and seen["main"] == FORWARD
    body = seen["files"][f"{FORWARD}.tla"]
    assert "EXTENDS Ctr\n" in body and f"AliasG == INSTANCE {model}" in body
    cfg = " ".join(seen["cfg"].split())
    assert "SPECIFICATION AliasGSpec" in cfg and "INVARIANT AliasRefInv0" in cfg
    assert "PROPERTIES AliasRefSpec" in cfg
    assert "AliasRefInv0 == TypeOK" in body and "AliasGSpec == AliasG!Spec" in body


BASE = textwrap.dedent("""\
    ---- MODULE Base ----
    EXTENDS Naturals
    VARIABLE x
    Init == x = 0
    Next == x' = (x + 1) % 3
    Spec == Init /\\ [][Next]_x
    ====
    """)

HIST = textwrap.dedent("""\
    ---- MODULE Hist ----
    EXTENDS Base
    VARIABLE h
    InitH == Init /\\ h = 0
    NextH == Next /\\ h' = (h + x) % 2
    SpecH == InitH /\\ [][NextH]_<<x, h>>
    ====
    """)


def test_a_renamed_spec_is_not_taken_for_the_spec_of_a_module_it_extends(runner):
    """TLA+-Bench 1559 (LockHS EXTENDS Lock; cfg SPECIFICATION SpecHS): in the operator-renamed
    copy SpecHS has another name, and the grader took Lock's ``Spec`` by its fallback name,
    a formula without LockHS's history variables (TLC: "current state is not a legal
    state", h unassigned). The fallback name counts only where the output defines it; the
    renamed formula is found at the reference's position."""
    ref = Reference(task_id="t.Hist", condition="original", files={"Base.tla": BASE, "Hist.tla": HIST},
                    system_module="Hist", model_module="Hist", cfg_text="SPECIFICATION SpecH\n",
                    wrapper_module=None, author_modules=("Base", "Hist"))
    renamed = HIST.replace("InitH", "Qwrts").replace("NextH", "Zxcvb").replace("SpecH", "Plkmn")
    v = BehaviorGrader(ref, runner).grade(OutputSide({"Hist": renamed}, "Hist"))
    assert v.passed and v.method == "renaming", v.attempts
    # the operator-renamed control's side holds Base too, its operators renamed but Spec
    # (a name the cfg may check) kept: still not the output's formula
    base = BASE.replace("Init", "Ikjh").replace("Next", "Nmbv")
    side = OutputSide({"Hist": renamed.replace("Init", "Ikjh").replace("Next", "Nmbv"), "Base": base}, "Hist")
    v = BehaviorGrader(ref, runner).grade(side)
    assert v.passed and v.method == "renaming", v.attempts


SUBST = textwrap.dedent("""\
    ---- MODULE Sub ----
    EXTENDS Naturals
    VARIABLES y, z
    fixed == 1
    INSTANCE Inner WITH x <- fixed
    ====

    ---- MODULE Inner ----
    EXTENDS Naturals
    VARIABLES x, y, z
    Init == x \\in {1, 2} /\\ y = 0 /\\ z \\in {0, 1}
    Next == y < 3 /\\ y' = y + 1 /\\ UNCHANGED <<x, z>>
    Spec == Init /\\ [][Next]_<<x, y, z>>
    ====
    """)


def test_a_spec_taken_by_instance_with_substitution_is_split_where_it_is_defined(runner):
    """TLA+-Bench 1394 (TLC's regression spec Github702: ``Spec`` of ``x_unchanged``, taken by
    ``INSTANCE x_unchanged WITH x <- fizzbuzz``): the split formula's definitions were
    appended to the model, where the subscript ``<<x, y, z>>`` names an ``x`` it lacks
    (SANY: "Unknown operator: `x'"), so the reference failed against itself. They go into
    the instantiated module now, read through the substitution."""
    ref = Reference(task_id="t.Sub", condition="original", files={"Sub.tla": SUBST}, system_module="Sub",
                    model_module="Sub", cfg_text="SPECIFICATION Spec\nCHECK_DEADLOCK FALSE\n", wrapper_module=None,
                    author_modules=("Sub",))
    v = BehaviorGrader(ref, runner).grade(OutputSide({"Sub": SUBST}, "Sub"))
    assert v.passed and v.method == "renaming", (v.reason, v.attempts)
    wrong = SUBST.replace("y < 3", "y < 2")
    v = BehaviorGrader(ref, runner).grade(OutputSide({"Sub": wrong}, "Sub"))
    assert not v.passed and "reverse property_violated" in v.attempts[0], (v.reason, v.attempts)


def test_a_formula_shadowed_by_an_earlier_import_is_not_split_in_the_instantiated_module(runner):
    """Two imported modules define ``Spec``: SANY keeps the first in import order (a warning),
    here ``Short``'s through ``EXTENDS Mid``, while the spec search finds ``Inner``'s (the
    one taken ``WITH`` a substitution). Splitting ``Inner``'s formula there would let the
    reverse check see a formula TLC never runs, and pass an output that stops a step
    short; the split stays in the model, where ``Inner``'s ``x`` is unknown: rejected."""
    ref = Reference(task_id="t.Sub", condition="original", files={"Sub.tla": SUBST}, system_module="Sub",
                    model_module="Sub", cfg_text="SPECIFICATION Spec\nCHECK_DEADLOCK FALSE\n", wrapper_module=None,
                    author_modules=("Sub",))
    model = textwrap.dedent("""\
        ---- MODULE Sub ----
        EXTENDS Naturals, Mid
        fixed == 1
        INSTANCE Inner WITH x <- fixed
        ====
        """)
    mid = "---- MODULE Mid ----\nEXTENDS Naturals\nVARIABLES y, z\nINSTANCE Short\n====\n"
    short = textwrap.dedent("""\
        ---- MODULE Short ----
        EXTENDS Naturals
        VARIABLES y, z
        Init == y = 0 /\\ z \\in {0, 1}
        Next == y < 2 /\\ y' = y + 1 /\\ UNCHANGED z
        Spec == Init /\\ [][Next]_<<y, z>>
        ====
        """)
    inner = SUBST.split("====\n\n", 1)[1]
    side = OutputSide({"Sub": model, "Mid": mid, "Short": short, "Inner": inner}, "Sub")
    v = BehaviorGrader(ref, runner).grade(side)
    assert not v.passed, (v.method, v.attempts)
