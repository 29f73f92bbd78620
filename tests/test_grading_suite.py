"""A hand-written suite for the two grades (paper: Methods "Name-based grade" and
"Behavior-based grade", Appendices H, I and P, Limitations).

Every case is one output for a small reference, with the verdict that BOTH grades must
give and, where it means something, a reason.  The cases cover each cause of a
disagreement between the grades named in Appendix P and each limit of the
behavior-based grade named in the Limitations:

* behavior-only passes: a correct output that misses a hidden name of the cfg;
* name-only passes with different behavior: a weakened invariant (TLC checks the
  output's own TypeOK), a flag fixed in the initial state, a spec that never moves;
* name-only passes from limits of the behavior grade: TRUE/FALSE for 0/1, an extra or a
  derived constant, a split variable, a spec formula the grader does not parse;
* both pass: other names, reordered and split actions, extra fairness (the reverse check
  tests only the output's safety formula), PlusCal with other labels (Appendix I);
* both fail: a missing action, missing fairness, a syntax error.

The last tests weaken each grader (behavior without the reverse check, name ignoring
TLC) and show which cases of the suite then get the wrong verdict, so the suite
detects the weakening.  The three tests under "grader bugs" are regression tests for
bugs the suite found (empty cfg sections after clearing an entry; one TLC run per map
for an output that does not parse).

References: ``Lamp`` (written here: two variables, one constant, 8 states), the embedded
``Clock`` (liveness), ``Peterson`` (PlusCal, ``pc``) and ``TokenRing`` (wrapper
``MCTokenRing``, helper ``RingUtil``).  Each TLC run costs 1-3 s; all runs go through
one session-scoped :class:`ToolRunner` cache; the cases the selected tests need are graded
once per session, two at a time, and the weakened-grader tests reuse the cached runs.
"""
from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from alias.grade import name as name_mod
from alias.grade.behavior import BehaviorGrader, BehaviorVerdict, CheckResult, grade_behavior
from alias.grade.cache import ToolRunner
from alias.grade.name import NameVerdict
from alias.corpus.testset import Reference
from alias.grade.run import grade_sample

EMBEDDED = Path(__file__).resolve().parents[1] / "alias" / "corpus" / "embedded" / "specifications"


def _read(task: str, name: str) -> str:
    return (EMBEDDED / task / name).read_text(encoding="utf-8")


# =========================================================================== references

#: A lamp with a use counter.  ``on`` is 0/1 and free in the initial state; the lamp can
#: be switched on at most ``Max`` times, then the counter is reset.  8 states, no
#: deadlock, no fairness, two invariants whose names the "description" never states.
LAMP = r"""---- MODULE Lamp ----
EXTENDS Naturals
CONSTANT Max
VARIABLES on, count
vars == <<on, count>>
TypeOK == /\ on \in {0, 1}
          /\ count \in 0..Max
CountBounded == count <= Max
Init == /\ on \in {0, 1}
        /\ count = 0
TurnOn == /\ on = 0
          /\ count < Max
          /\ on' = 1
          /\ count' = count + 1
TurnOff == /\ on = 1
           /\ on' = 0
           /\ UNCHANGED count
Reset == /\ on = 0
         /\ count = Max
         /\ count' = 0
         /\ UNCHANGED on
Next == TurnOn \/ TurnOff \/ Reset
Spec == Init /\ [][Next]_vars
====
"""
LAMP_CFG = "CONSTANT Max = 3\nSPECIFICATION Spec\nINVARIANTS TypeOK CountBounded\n"

_PETERSON_WF = "/\\ \\A self \\in {0, 1} : WF_vars(Proc(self))"
#: the embedded Peterson with its processes' weak fairness replaced by TRUE
PETERSON_SAFETY = _read("Peterson", "Peterson.tla").replace(_PETERSON_WF, "/\\ \\A self \\in {0, 1} : TRUE")

PETERSON_BAD_FAIRNESS = _read("Peterson", "Peterson.tla").replace(
    _PETERSON_WF, "/\\ \\A self \\in {0, 1} : WF_vars(pc[self] = \"cs\" /\\ pc' = [pc EXCEPT ![self] = \"leave\"])")

ONCE = r"""---- MODULE Once ----
EXTENDS Naturals
VARIABLES x, pc
vars == << x, pc >>
Init == /\ x \in 0..2
        /\ pc = "Lbl_1"
Lbl_1 == /\ pc = "Lbl_1"
         /\ x' = x + 1
         /\ pc' = "Done"
Terminating == pc = "Done" /\ UNCHANGED vars
Next == Lbl_1 \/ Terminating
Spec == Init /\ [][Next]_vars
====
"""
#: ONCE with another label and no Terminating step: TLC reports a deadlock at "Done"
#: (TLA+-Bench 508's outputs), with ONCE's data graph
ONCE_DEADLOCK = ONCE.replace("Lbl_1", "step").replace("Terminating == pc = \"Done\" /\\ UNCHANGED vars\n", "") \
    .replace("Next == step \\/ Terminating", "Next == step")
ONCE_OTHER_LABEL = ONCE.replace("Lbl_1", "step")

REFS: dict[str, Reference] = {
    "Lamp": Reference("Lamp", "original", {"Lamp.tla": LAMP}, "Lamp", "Lamp", LAMP_CFG,
                      author_modules=("Lamp",)),
    "Clock": Reference("Clock", "original", {"Clock.tla": _read("Clock", "Clock.tla")}, "Clock",
                       "Clock", _read("Clock", "Clock.cfg"), author_modules=("Clock",)),
    "Peterson": Reference("Peterson", "original", {"Peterson.tla": _read("Peterson", "Peterson.tla")},
                          "Peterson", "Peterson", _read("Peterson", "Peterson.cfg"),
                          author_modules=("Peterson",), pluscal=True),
    # Peterson without fairness and its liveness property: Appendix I's data graph may
    # decide where no label map fits (it compares safety only)
    "PetersonSafety": Reference("PetersonSafety", "original", {"Peterson.tla": PETERSON_SAFETY},
                                "Peterson", "Peterson", "SPECIFICATION Spec\nINVARIANTS TypeOK MutualExclusion\n",
                                author_modules=("Peterson",), pluscal=True),
    # Peterson whose fairness TLC cannot evaluate (the action leaves flag and turn
    # unprimed; TLA+-Bench 1103 has the like) and whose cfg checks no PROPERTY
    "PetersonBadFair": Reference("PetersonBadFair", "original", {"Peterson.tla": PETERSON_BAD_FAIRNESS},
                                 "Peterson", "Peterson", "SPECIFICATION Spec\nINVARIANTS TypeOK MutualExclusion\n",
                                 author_modules=("Peterson",), pluscal=True),
    # PetersonSafety with an INIT/NEXT cfg: an output without a specification formula is
    # run through its Init and Next on the data-graph path too
    "PetersonSafetyInitNext": Reference("PetersonSafetyInitNext", "original", {"Peterson.tla": PETERSON_SAFETY},
                                        "Peterson", "Peterson", "INIT Init\nNEXT Next\nINVARIANTS TypeOK MutualExclusion\n",
                                        author_modules=("Peterson",), pluscal=True),
    "TokenRing": Reference(
        "TokenRing", "original",
        {f"{m}.tla": _read("TokenRing", f"{m}.tla") for m in ("TokenRing", "MCTokenRing", "RingUtil")},
        "TokenRing", "MCTokenRing", _read("TokenRing", "MCTokenRing.cfg"), wrapper_module="MCTokenRing",
        author_modules=("MCTokenRing", "RingUtil", "TokenRing")),
    # a terminating PlusCal translation: its Terminating step stutters at "Done", so TLC
    # finds no deadlock under the cfg (which leaves deadlock checking on)
    "Once": Reference("Once", "original", {"Once.tla": ONCE}, "Once", "Once", "SPECIFICATION Spec\n",
                      author_modules=("Once",), pluscal=True),
    # the Lamp with an INIT/NEXT cfg (many real tasks have one); see the regression test below
    "LampInitNext": Reference("LampInitNext", "original", {"Lamp.tla": LAMP}, "Lamp", "Lamp",
                              "CONSTANT Max = 3\nINIT Init\nNEXT Next\nINVARIANTS TypeOK CountBounded\n",
                              author_modules=("Lamp",)),
}


# =========================================================================== outputs
# Every output is a whole module as a model would write it.  Lamp outputs only differ
# from LAMP where their comment says.

#: 1a. Correct, other names for variables and operators; the cfg's invariants TypeOK and
#: CountBounded (hidden names) are missing and there are several candidate operators.
OTHER_NAMES_HIDDEN_INVARIANT = r"""---- MODULE Lamp ----
EXTENDS Naturals
CONSTANT Max
VARIABLES lit, uses
state == <<lit, uses>>
TypeInvariant == /\ lit \in {0, 1}
                 /\ uses \in 0..Max
UsesBounded == uses <= Max
Init == /\ lit \in {0, 1}
        /\ uses = 0
SwitchOn == /\ lit = 0
            /\ uses < Max
            /\ lit' = 1
            /\ uses' = uses + 1
SwitchOff == /\ lit = 1
             /\ lit' = 0
             /\ uses' = uses
Rewind == /\ lit = 0
          /\ uses = Max
          /\ uses' = 0
          /\ lit' = lit
Next == SwitchOn \/ SwitchOff \/ Rewind
Spec == Init /\ [][Next]_state
====
"""

#: 1b. Correct, keeps the invariant names but calls the constant Limit (hidden name Max).
OTHER_NAMES_HIDDEN_CONSTANT = r"""---- MODULE Lamp ----
EXTENDS Naturals
CONSTANT Limit
VARIABLES on, count
vars == <<on, count>>
TypeOK == /\ on \in {0, 1}
          /\ count \in 0..Limit
CountBounded == count <= Limit
Init == /\ on \in {0, 1}
        /\ count = 0
TurnOn == /\ on = 0
          /\ count < Limit
          /\ on' = 1
          /\ count' = count + 1
TurnOff == /\ on = 1
           /\ on' = 0
           /\ UNCHANGED count
Reset == /\ on = 0
         /\ count = Limit
         /\ count' = 0
         /\ UNCHANGED on
Next == TurnOn \/ TurnOff \/ Reset
Spec == Init /\ [][Next]_vars
====
"""

#: 1c. Correct, defines exactly one operator besides Init/Next/Spec (``Safe``): Appendix
#: H points both invariant entries at it, so the name grade passes too.
OTHER_NAMES_ONE_OPERATOR = r"""---- MODULE Lamp ----
EXTENDS Naturals
CONSTANT Max
VARIABLES on, count
Init == on \in {0, 1} /\ count = 0
Next == \/ /\ on = 0
           /\ count < Max
           /\ on' = 1
           /\ count' = count + 1
        \/ /\ on = 1
           /\ on' = 0
           /\ UNCHANGED count
        \/ /\ on = 0
           /\ count = Max
           /\ count' = 0
           /\ UNCHANGED on
Spec == Init /\ [][Next]_<<on, count>>
Safe == on \in {0, 1} /\ count \in 0..Max
====
"""

#: 1d. Correct, but the names cross: ``count`` is the lamp and ``on`` the counter.  The
#: identity map fails; the second map (swap) passes.  With ``max_maps=1`` the grade fails
#: (Limitations: at most 60 maps are searched).
SWAPPED_NAMES = r"""---- MODULE Lamp ----
EXTENDS Naturals
CONSTANT Max
VARIABLES count, on   \* count: the lamp, 0 or 1; on: how often it was switched on
vars == <<count, on>>
TypeOK == /\ count \in {0, 1}
          /\ on \in 0..Max
CountBounded == on <= Max
Init == /\ count \in {0, 1}
        /\ on = 0
TurnOn == /\ count = 0
          /\ on < Max
          /\ count' = 1
          /\ on' = on + 1
TurnOff == /\ count = 1
           /\ count' = 0
           /\ UNCHANGED on
Reset == /\ count = 0
         /\ on = Max
         /\ on' = 0
         /\ UNCHANGED count
Next == TurnOn \/ TurnOff \/ Reset
Spec == Init /\ [][Next]_vars
====
"""

#: 2a. Different behavior (the lamp can be switched on Max+1 times) with weakened
#: invariants: TLC checks the output's own TypeOK, which is TRUE.
WEAK_INVARIANT = r"""---- MODULE Lamp ----
EXTENDS Naturals
CONSTANT Max
VARIABLES on, count
vars == <<on, count>>
TypeOK == TRUE
CountBounded == count <= Max + 1
Init == /\ on \in {0, 1}
        /\ count = 0
TurnOn == /\ on = 0
          /\ count <= Max
          /\ on' = 1
          /\ count' = count + 1
TurnOff == /\ on = 1
           /\ on' = 0
           /\ UNCHANGED count
Reset == /\ on = 0
         /\ count > Max
         /\ count' = 0
         /\ UNCHANGED on
Next == TurnOn \/ TurnOff \/ Reset
Spec == Init /\ [][Next]_vars
====
"""

#: 2b. The same behavior as 2a with the reference's invariants: TLC finds TypeOK violated.
STRICT_INVARIANT_VIOLATED = WEAK_INVARIANT.replace(
    "TypeOK == TRUE\nCountBounded == count <= Max + 1\n",
    "TypeOK == /\\ on \\in {0, 1}\n          /\\ count \\in 0..Max\nCountBounded == count <= Max\n")

#: 3. The flag ``on`` is fixed to 0 in the initial state; the reference leaves it free.
FIXED_FLAG = LAMP.replace("Init == /\\ on \\in {0, 1}", "Init == /\\ on = 0")

#: 4. The Reset action is missing: the lamp deadlocks after Max uses.
MISSING_ACTION = LAMP.replace("Next == TurnOn \\/ TurnOff \\/ Reset", "Next == TurnOn \\/ TurnOff")

#: 5. The spec never moves (only stuttering steps, which TLC does not count as deadlock).
NEVER_MOVES = LAMP.replace("Next == TurnOn \\/ TurnOff \\/ Reset", "Next == UNCHANGED vars")

#: 6a. Extra fairness: weak fairness on Next, which the reference does not have.
EXTRA_FAIRNESS = LAMP.replace("Spec == Init /\\ [][Next]_vars",
                              "Spec == Init /\\ [][Next]_vars /\\ WF_vars(Next)")

#: 7. TRUE/FALSE for the reference's 0/1.
BOOLEAN_FLAG = r"""---- MODULE Lamp ----
EXTENDS Naturals
CONSTANT Max
VARIABLES on, count
vars == <<on, count>>
TypeOK == /\ on \in BOOLEAN
          /\ count \in 0..Max
CountBounded == count <= Max
Init == /\ on \in BOOLEAN
        /\ count = 0
TurnOn == /\ ~on
          /\ count < Max
          /\ on' = TRUE
          /\ count' = count + 1
TurnOff == /\ on
           /\ on' = FALSE
           /\ UNCHANGED count
Reset == /\ ~on
         /\ count = Max
         /\ count' = 0
         /\ UNCHANGED on
Next == TurnOn \/ TurnOff \/ Reset
Spec == Init /\ [][Next]_vars
====
"""

#: 8a. An extra constant (the value the counter starts from), which the cfg does not assign.
EXTRA_CONSTANT = (LAMP.replace("CONSTANT Max\n", "CONSTANTS Max, Start\n")
                  .replace("/\\ count = 0\n", "/\\ count = Start\n"))

#: 8b. A derived constant: ``Max == 3`` instead of ``CONSTANT Max`` (the cfg's
#: ``Max = 3`` overrides the definition, so TLC runs it).
DERIVED_CONSTANT = LAMP.replace("CONSTANT Max\n", "Max == 3\n")

#: 8c. A split variable: the counter is kept as two binary digits ``hi`` and ``lo``
#: (count = 2 * hi + lo); same behavior, one variable more.
SPLIT_VARIABLE = r"""---- MODULE Lamp ----
EXTENDS Naturals
CONSTANT Max
VARIABLES on, hi, lo
vars == <<on, hi, lo>>
Count == 2 * hi + lo
TypeOK == /\ on \in {0, 1}
          /\ hi \in {0, 1}
          /\ lo \in {0, 1}
CountBounded == Count <= Max
Init == /\ on \in {0, 1}
        /\ hi = 0
        /\ lo = 0
TurnOn == /\ on = 0
          /\ Count < Max
          /\ on' = 1
          /\ lo' = 1 - lo
          /\ hi' = IF lo = 1 THEN hi + 1 ELSE hi
TurnOff == /\ on = 1
           /\ on' = 0
           /\ UNCHANGED <<hi, lo>>
Reset == /\ on = 0
         /\ Count = Max
         /\ hi' = 0
         /\ lo' = 0
         /\ UNCHANGED on
Next == TurnOn \/ TurnOff \/ Reset
Spec == Init /\ [][Next]_vars
====
"""

#: 9. Equivalent next-state relation: disjuncts reordered, conjuncts reordered (some
#: primed before the guard) and TurnOn split into two actions.
REORDERED = r"""---- MODULE Lamp ----
EXTENDS Naturals
CONSTANT Max
VARIABLES on, count
vars == <<count, on>>
TypeOK == /\ count \in 0..Max
          /\ on \in {0, 1}
CountBounded == count <= Max
Init == /\ count = 0
        /\ on \in {0, 1}
Reset == /\ UNCHANGED on
         /\ count' = 0
         /\ count = Max
         /\ on = 0
FirstOn == /\ count = 0
           /\ count' = 1
           /\ on' = 1
           /\ on = 0
           /\ count < Max
AgainOn == /\ on = 0
           /\ count > 0
           /\ count < Max
           /\ count' = count + 1
           /\ on' = 1
TurnOff == /\ on' = 0
           /\ UNCHANGED count
           /\ on = 1
Next == Reset \/ AgainOn \/ TurnOff \/ FirstOn
Spec == Init /\ [][Next]_vars
====
"""

#: 11a. The spec formula hides ``[][Next]_vars`` in another definition (``Always``); the
#: grader expands conjuncts that name temporal definitions.
SPEC_NOT_PARSED = LAMP.replace("Spec == Init /\\ [][Next]_vars",
                               "Always == [][Next]_vars\nSpec == Init /\\ Always")

#: 12a. A syntax error (a missing operand).
#: 11c. The spec formula inside a LET: the grader does not parse this form (Appendix P's
#: "a form the grader does not parse"), and neither does TLC 2.15 (config error).
SPEC_IN_LET = LAMP.replace("Spec == Init /\\ [][Next]_vars",
                                 "Spec == LET N == Next IN Init /\\ [][N]_vars")

SYNTAX_ERROR = LAMP.replace("/\\ count < Max\n", "/\\ count <\n")

#: 13. Correct only on the checked instance: the bound 3 is hard-coded instead of Max.
HARDCODED_BOUND = LAMP.replace("count < Max", "count < 3").replace("count = Max", "count = 3")

#: 6b. Clock without the weak fairness the reference has: it may stop ticking.
CLOCK_NO_FAIRNESS = _read("Clock", "Clock.tla").replace(
    "Spec == Init /\\ [][Next]_vars /\\ WF_vars(Next)", "Spec == Init /\\ [][Next]_vars")

#: 11b. Clock with ``Spec == SafetyPart /\ LivePart``, both parts temporal.  The grader
#: expands conjuncts that name temporal definitions, so it finds ``I /\ [][N]_v`` inside
#: SafetyPart and keeps LivePart's fairness: both grades pass.
CLOCK_SAFETY_LIVE = _read("Clock", "Clock.tla").replace(
    "Spec == Init /\\ [][Next]_vars /\\ WF_vars(Next)",
    "SafetyPart == Init /\\ [][Next]_vars\nLivePart == WF_vars(Next)\nSpec == SafetyPart /\\ LivePart")

#: 10d. Peterson without its processes' weak fairness (a hard negative of issue 33): the
#: same data graph, but a process may wait forever. StarvationFree names pc, so the
#: data-graph comparison checks the output's own StarvationFree, which fails.
PETERSON_NO_FAIRNESS = PETERSON_SAFETY

#: 10a. Peterson as a translation with other label names (and other action names).
PETERSON_OTHER_LABELS = r"""---- MODULE Peterson ----
EXTENDS Naturals, TLC
VARIABLES flag, turn, pc

Other(p) == 1 - p

vars == << flag, turn, pc >>

ProcSet == ({0, 1})

Init == /\ flag = [i \in {0, 1} |-> FALSE]
        /\ turn = 0
        /\ pc = [self \in ProcSet |-> "start"]

start(self) == /\ pc[self] = "start"
               /\ pc' = [pc EXCEPT ![self] = "raise"]
               /\ UNCHANGED << flag, turn >>

raise(self) == /\ pc[self] = "raise"
               /\ flag' = [flag EXCEPT ![self] = TRUE]
               /\ pc' = [pc EXCEPT ![self] = "give"]
               /\ turn' = turn

give(self) == /\ pc[self] = "give"
              /\ turn' = Other(self)
              /\ pc' = [pc EXCEPT ![self] = "await"]
              /\ flag' = flag

await(self) == /\ pc[self] = "await"
               /\ flag[Other(self)] = FALSE \/ turn = self
               /\ pc' = [pc EXCEPT ![self] = "crit"]
               /\ UNCHANGED << flag, turn >>

crit(self) == /\ pc[self] = "crit"
              /\ TRUE
              /\ pc' = [pc EXCEPT ![self] = "exit"]
              /\ UNCHANGED << flag, turn >>

exit(self) == /\ pc[self] = "exit"
              /\ flag' = [flag EXCEPT ![self] = FALSE]
              /\ pc' = [pc EXCEPT ![self] = "start"]
              /\ turn' = turn

P(self) == start(self) \/ raise(self) \/ give(self) \/ await(self)
              \/ crit(self) \/ exit(self)

Next == (\E self \in {0, 1}: P(self))

Spec == /\ Init /\ [][Next]_vars
        /\ \A self \in {0, 1} : WF_vars(P(self))

TypeOK == /\ flag \in [{0, 1} -> BOOLEAN]
          /\ turn \in {0, 1}
          /\ pc \in [{0, 1} -> {"start", "raise", "give", "await", "crit", "exit"}]

MutualExclusion == ~(pc[0] = "crit" /\ pc[1] = "crit")

StarvationFree == \A p \in {0, 1} : (pc[p] = "give") ~> (pc[p] = "crit")
====
"""

#: 10b. Peterson without the ``cs: skip`` step: five labels instead of six, so no label
#: map exists; on the data variables (flag, turn) the behaviors are the same.
PETERSON_NO_CS = r"""---- MODULE Peterson ----
EXTENDS Naturals, TLC
VARIABLES flag, turn, pc

Other(p) == 1 - p

vars == << flag, turn, pc >>

ProcSet == ({0, 1})

Init == /\ flag = [i \in {0, 1} |-> FALSE]
        /\ turn = 0
        /\ pc = [self \in ProcSet |-> "Lbl_1"]

Lbl_1(self) == /\ pc[self] = "Lbl_1"
               /\ pc' = [pc EXCEPT ![self] = "enter"]
               /\ UNCHANGED << flag, turn >>

enter(self) == /\ pc[self] = "enter"
               /\ flag' = [flag EXCEPT ![self] = TRUE]
               /\ pc' = [pc EXCEPT ![self] = "yield"]
               /\ turn' = turn

yield(self) == /\ pc[self] = "yield"
               /\ turn' = Other(self)
               /\ pc' = [pc EXCEPT ![self] = "wait"]
               /\ flag' = flag

wait(self) == /\ pc[self] = "wait"
              /\ flag[Other(self)] = FALSE \/ turn = self
              /\ pc' = [pc EXCEPT ![self] = "leave"]
              /\ UNCHANGED << flag, turn >>

leave(self) == /\ pc[self] = "leave"
               /\ flag' = [flag EXCEPT ![self] = FALSE]
               /\ pc' = [pc EXCEPT ![self] = "Lbl_1"]
               /\ turn' = turn

Proc(self) == Lbl_1(self) \/ enter(self) \/ yield(self) \/ wait(self) \/ leave(self)

Next == (\E self \in {0, 1}: Proc(self))

Spec == /\ Init /\ [][Next]_vars
        /\ \A self \in {0, 1} : WF_vars(Proc(self))

TypeOK == /\ flag \in [{0, 1} -> BOOLEAN]
          /\ turn \in {0, 1}
          /\ pc \in [{0, 1} -> {"Lbl_1", "enter", "yield", "wait", "leave"}]

MutualExclusion == ~(pc[0] = "leave" /\ pc[1] = "leave")

StarvationFree == \A p \in {0, 1} : (pc[p] = "yield") ~> (pc[p] = "leave")
====
"""

#: 10c. Peterson with other labels whose wait step ignores the other process (no
#: mutual exclusion): no label map and no data-graph equivalence may accept it.
PETERSON_NO_WAIT = PETERSON_OTHER_LABELS.replace(
    "               /\\ flag[Other(self)] = FALSE \\/ turn = self\n", "")

#: 1e. TokenRing (graded beside the wrapper MCTokenRing) with other variable and action
#: names; it keeps the names the cfg needs (Order, TypeOK, MutualExclusion, Spec).
TOKENRING_OTHER_NAMES = r"""---- MODULE TokenRing ----
EXTENDS Naturals, Sequences
CONSTANT Order
VARIABLES token, status

Ring == INSTANCE RingUtil WITH Ring <- Order
Node == Ring!Nodes
vars == <<token, status>>

TypeOK == /\ token \in Node
          /\ status \in [Node -> {"idle", "waiting", "critical"}]

Init == /\ token = Order[1]
        /\ status = [n \in Node |-> "idle"]

Ask(n) == /\ status[n] = "idle"
          /\ status' = [status EXCEPT ![n] = "waiting"]
          /\ UNCHANGED token

Go(n) == /\ status[n] = "waiting"
         /\ token = n
         /\ status' = [status EXCEPT ![n] = "critical"]
         /\ UNCHANGED token

Done(n) == /\ status[n] = "critical"
           /\ status' = [status EXCEPT ![n] = "idle"]
           /\ UNCHANGED token

Hand == /\ status[token] /= "critical"
        /\ token' = Ring!Succ(token)
        /\ UNCHANGED status

Next == Hand \/ \E n \in Node : Ask(n) \/ Go(n) \/ Done(n)

Spec == Init /\ [][Next]_vars /\ WF_vars(Hand)

MutualExclusion == \A n \in Node : status[n] = "critical" => token = n
====
"""

#: 12b. A correct output (other variable names) wrapped in markdown prose.
MARKDOWN = (
    "Here is a TLA+ specification of the lamp.\n\n```tla\n"
    + OTHER_NAMES_HIDDEN_INVARIANT.replace("TypeInvariant", "TypeOK").replace("UsesBounded", "CountBounded")
    + "```\n\nThe invariant `TypeOK` checks the types; `CountBounded` bounds the uses.\n")


# =========================================================================== the table

@dataclass(frozen=True)
class Case:
    """One output and the verdicts both grades must give.

    ``name_reason`` / ``behavior_reason``: substrings of the verdicts' ``reason``;
    ``first_attempt``: a substring of the behavior grade's first attempt line, the one of
    the identity map.  A failing verdict's ``reason`` is that of the *last* map tried,
    which for a failing output is some meaningless permutation (e.g. ``on -> count``), so
    the telling check is the identity map's; ``method``: the behavior grade's method on a
    pass; ``max_maps``: the behavior grade's map budget.
    """

    id: str
    ref: str
    text: str
    name: bool
    behavior: bool
    cause: str
    name_reason: str | None = None
    behavior_reason: str | None = None
    first_attempt: str | None = None
    method: str | None = None
    max_maps: int = 60
    #: The verdict of the refinement procedure (issue 33) where it differs from the
    #: paper's renaming procedure (``behavior``), and its method on a pass.
    refinement: bool | None = None
    refinement_method: str | None = None

    @property
    def refined(self) -> bool:
        return self.behavior if self.refinement is None else self.refinement


CASES: list[Case] = [
    Case("reference", "Lamp", LAMP, True, True, "the reference itself", method="renaming"),
    # 1. behavior-only passes: hidden names (Appendix P, first sentence)
    Case("1a_hidden_invariant", "Lamp", OTHER_NAMES_HIDDEN_INVARIANT, False, True,
         "other names; the cfg's invariant names are hidden and missing",
         name_reason="tlc_config_error", method="renaming"),
    Case("1b_hidden_constant", "Lamp", OTHER_NAMES_HIDDEN_CONSTANT, False, True,
         "other constant name; the cfg assigns Max", name_reason="tlc_config_error",
         method="renaming"),
    Case("1c_one_operator", "Lamp", OTHER_NAMES_ONE_OPERATOR, True, True,
         "Appendix H: the only other operator takes the invariant entries", method="renaming"),
    Case("1d_swapped_names", "Lamp", SWAPPED_NAMES, True, True,
         "crossing variable names; the second map passes", method="renaming"),
    Case("1d_swapped_names_one_map", "Lamp", SWAPPED_NAMES, True, False,
         "Limitations: bounded map search (max_maps=1)", behavior_reason="forward_", max_maps=1,
         refinement=True, refinement_method="refinement_mapping"),
    Case("1e_wrapper_other_names", "TokenRing", TOKENRING_OTHER_NAMES, True, True,
         "other names beside the task's wrapper and helper module", method="renaming"),
    # 2.-5. name-only passes with different behavior (Appendix P)
    Case("2a_weak_invariant", "Lamp", WEAK_INVARIANT, True, False,
         "TypeOK == TRUE hides an extra use; TLC checks the output's own invariant",
         first_attempt="forward invariant_violated: Error: Invariant AliasRefInv0"),
    Case("2b_invariant_violated", "Lamp", STRICT_INVARIANT_VIOLATED, False, False,
         "the same behavior with the reference's invariants",
         name_reason="tlc_invariant_violated",
         first_attempt="forward invariant_violated: Error: Invariant AliasRefInv0"),
    Case("3_fixed_flag", "Lamp", FIXED_FLAG, True, False,
         "a flag fixed in the initial state that the reference leaves free",
         first_attempt="reverse property_violated"),
    Case("4_missing_action", "Lamp", MISSING_ACTION, False, False,
         "a missing action (deadlock)", name_reason="tlc_deadlock", first_attempt="forward deadlock"),
    Case("5_never_moves", "Lamp", NEVER_MOVES, True, False,
         "Next == UNCHANGED vars", first_attempt="reverse property_violated"),
    # 6. fairness.  6a: the forward check runs G's spec (with WF) and checks R's spec (no
    # fairness): fine; the reverse check runs R and checks only G's safety part
    # Init /\ [][Next]_vars, so the extra WF is never checked against R's behaviors and
    # the output passes.  This is what the paper says (Limitations: "Its reverse check
    # tests only the output's safety formula, so it accepts extra fairness conditions"),
    # although R has behaviors (stopping forever) that G forbids.  The name grade passes:
    # the cfg checks no property that fairness could break.
    Case("6a_extra_fairness", "Lamp", EXTRA_FAIRNESS, True, True,
         "Limitations: the reverse check tests only the output's safety formula",
         method="renaming"),
    Case("6b_missing_fairness", "Clock", CLOCK_NO_FAIRNESS, False, False,
         "weaker fairness than the reference: its liveness properties fail",
         name_reason="tlc_property_violated",
         # 2.15: "Temporal properties were violated"; v1.8.0 names them
         first_attempt="forward property_violated: Error: Temporal properties "),
    # 7.-8. name-only passes from limits of the behavior grade (Appendix P, Limitations)
    Case("7_boolean_encoding", "Lamp", BOOLEAN_FLAG, True, False,
         "TRUE/FALSE for the reference's 0/1",
         first_attempt="forward eval_error: Error: Attempted to check equality of integer 0",
         refinement=True, refinement_method="refinement_mapping"),
    Case("8a_extra_constant", "Lamp", EXTRA_CONSTANT, False, False,
         "an extra constant (the cfg does not assign it, so TLC fails too)",
         name_reason="tlc_config_error", behavior_reason="constant_count_differs: reference 1, output 2"),
    Case("8b_derived_constant", "Lamp", DERIVED_CONSTANT, True, False,
         "a derived constant (a definition instead of CONSTANT)",
         behavior_reason="constant_count_differs: reference 1, output 0",
         refinement=True, refinement_method="refinement_mapping"),
    Case("8c_split_variable", "Lamp", SPLIT_VARIABLE, True, False,
         "a variable split in two (Limitations): count = 2 * hi + lo, an arithmetic split the "
         "refinement procedure's grammar (fields, components, re-encodings) does not cover",
         behavior_reason="variable_count_differs: reference 2, output 3"),
    # 9. equivalent restructuring
    Case("9_reordered_split", "Lamp", REORDERED, True, True,
         "disjuncts and conjuncts reordered, an action split in two", method="renaming"),
    # 10. PlusCal labels (Appendix I)
    Case("10a_pluscal_other_labels", "Peterson", PETERSON_OTHER_LABELS, True, True,
         "other label names: a 1-to-1 map of label strings", method="label_map"),
    Case("10b_pluscal_label_dropped", "PetersonSafety", PETERSON_NO_CS.replace(_PETERSON_WF, "/\\ TRUE"),
         True, True, "a label fewer: the projected data graphs are equivalent", method="data_graph"),
    Case("10b2_pluscal_label_dropped_fair", "Peterson", PETERSON_NO_CS, True, False,
         "a label fewer under weak fairness: the data graphs see safety only, so R's fairness "
         "cannot be checked and no data-graph pass is given (TLA+-Bench 1579's hard negative "
         "moved WF from an action to a sub-action and had R's data graph)",
         behavior_reason="forward_property_violated", refinement=False),
    Case("10b3_pluscal_fairness_tlc_cannot_evaluate", "PetersonBadFair", PETERSON_NO_CS, True, True,
         "a label fewer; TLC cannot evaluate R's fairness (its fairness probe errs), so the data "
         "graph decides", method="data_graph"),
    Case("10b4_pluscal_label_dropped_init_next", "PetersonSafetyInitNext",
         PETERSON_NO_CS.replace(_PETERSON_WF, "/\\ TRUE").replace("Spec == /\\ Init /\\ [][Next]_vars\n        /\\ TRUE\n", ""),
         True, True, "a label fewer, no specification formula, an INIT/NEXT cfg: the data graph decides and "
         "TLC's deadlock check runs the output's Init and Next (review of 91f0d01: it named undefined "
         "AliasOutInit)", method="data_graph"),
    Case("10c_pluscal_no_wait", "PetersonSafety", PETERSON_NO_WAIT.replace(
        "/\\ \\A self \\in {0, 1} : WF_vars(P(self))", "/\\ TRUE"), False, False,
         "other labels and no mutual exclusion", name_reason="tlc_invariant_violated",
         behavior_reason="data_graph_differs"),
    Case("10d_pluscal_no_fairness", "Peterson", PETERSON_NO_FAIRNESS, False, False,
         "weak fairness dropped: the labels map, R's fairness fails (no data-graph pass under fairness)",
         first_attempt="forward property_violated: Error: Temporal propert"),
    Case("10e_pluscal_deadlock", "Once", ONCE_DEADLOCK, False, False,
         "another label and no Terminating step: TLC finds a deadlock at \"Done\" where the reference "
         "stutters; the data graphs see no deadlock, so a data-graph pass needs TLC's deadlock check of "
         "the output as the forward check has it (TLA+-Bench 508)",
         name_reason="tlc_deadlock", behavior_reason="data_properties_deadlock"),
    Case("10f_pluscal_other_label_terminating", "Once", ONCE_OTHER_LABEL, True, True,
         "another label, the Terminating step kept", method="label_map"),
    # 11. spec formula forms
    Case("11a_spec_named_box", "Lamp", SPEC_NOT_PARSED, True, True,
         "Spec == Init /\\ Always: the named box is expanded", method="renaming"),
    Case("11b_safety_live_parts", "Clock", CLOCK_SAFETY_LIVE, True, True,
         "Spec == SafetyPart /\\ LivePart: expanded, fairness kept", method="renaming"),
    Case("11c_spec_in_let", "Lamp", SPEC_IN_LET, True, False,
         "Spec == LET N == Next IN ...: TLC v1.8.0 checks it (2.15 stopped with a cfg error), the behavior "
         "grade does not parse the form; the refinement procedure falls back to Init and Next",
         behavior_reason="no_spec_formula", refinement=True, refinement_method="refinement_mapping"),
    # 13. Limitations: correctness is passing TLC on the finite instance
    Case("13_hardcoded_bound", "Lamp", HARDCODED_BOUND, True, True,
         "Limitations: correct only for Max = 3, the checked instance", method="renaming"),
]
CASE_BY_ID = {c.id: c for c in CASES}
assert len(CASE_BY_ID) == len(CASES)

#: Graded through grade_sample (raw text -> extraction -> parse/name/behavior rows):
#: (id, raw text, expected parse, name, behavior, reason substring of the failing rows)
SAMPLES = [
    ("12a_syntax_error", SYNTAX_ERROR, False, False, False, "sany_parse_error"),
    ("12b_markdown_prose", MARKDOWN, True, True, True, None),
]


# =========================================================================== grading

@pytest.fixture(scope="session")
def runner(tool_config, tmp_path_factory) -> ToolRunner:
    if shutil.which(tool_config.java) is None:
        pytest.skip("no java")
    return ToolRunner(tool_config, tmp_path_factory.mktemp("grading_suite_cache"))


#: Workers that grade the selected cases at once (each runs one tool process at a time).
WORKERS = 2
_VERDICTS: dict[str, tuple[NameVerdict, BehaviorVerdict]] = {}


def grade_both(case: Case, runner: ToolRunner) -> tuple[NameVerdict, BehaviorVerdict]:
    """Both grades of one case with the real graders.  The name grade is looked up on
    its module, so a monkeypatched one is used."""
    ref = REFS[case.ref]
    return (name_mod.grade_name(ref, case.text, runner),
            grade_behavior(ref, case.text, runner, max_maps=case.max_maps, mappings="renaming"))


def uses(*case_ids: str):
    """Declare the cases a test reads through ``graded`` (they are graded up front)."""
    def mark(fn):
        fn.suite_cases = case_ids
        return fn
    return mark


@pytest.fixture(scope="session")
def verdicts(runner, request) -> dict[str, tuple[NameVerdict, BehaviorVerdict]]:
    """Grade, once per session and WORKERS at a time, every case the selected tests use
    (the Peterson cases, the slowest, first)."""
    wanted: set[str] = set()
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "case_id" in params:
            wanted.add(params["case_id"])
        wanted.update(getattr(getattr(item, "function", None), "suite_cases", ()))
    todo = sorted((CASE_BY_ID[c] for c in wanted - set(_VERDICTS)), key=lambda c: c.ref != "Peterson")
    with ThreadPoolExecutor(WORKERS) as pool:
        for case, v in zip(todo, pool.map(lambda c: grade_both(c, runner), todo)):
            _VERDICTS[case.id] = v
    return _VERDICTS


@pytest.fixture
def graded(verdicts, runner):
    """``graded(case_id) -> (NameVerdict, BehaviorVerdict)`` of the real graders."""
    def get(case_id: str) -> tuple[NameVerdict, BehaviorVerdict]:
        if case_id not in verdicts:
            verdicts[case_id] = grade_both(CASE_BY_ID[case_id], runner)
        return verdicts[case_id]
    return get


def _describe(nv: NameVerdict, bv: BehaviorVerdict) -> str:
    return (f"name: passed={nv.passed} reason={nv.reason} changes={nv.cfg_changes}\n"
            f"behavior: passed={bv.passed} reason={bv.reason} method={bv.method} "
            f"maps_tried={bv.maps_tried}\n  " + "\n  ".join(bv.attempts))


# =========================================================================== tests

def test_suite_covers_both_directions_of_disagreement():
    """Appendix P: the suite has behavior-only passes, name-only passes (with different
    behavior and from grader limits), outputs both grades accept and both reject."""
    kinds = {(c.name, c.behavior) for c in CASES}
    assert kinds == {(True, True), (False, True), (True, False), (False, False)}
    assert {"label_map", "data_graph", "renaming"} <= {c.method for c in CASES}
    # the refinement procedure accepts what the paper's rejects only for representation
    assert {c.id for c in CASES if c.refined != c.behavior} == {
        "1d_swapped_names_one_map", "7_boolean_encoding", "8b_derived_constant", "11c_spec_in_let"}


@pytest.mark.tlc
@uses("10b_pluscal_label_dropped", "10b2_pluscal_label_dropped_fair", "10b3_pluscal_fairness_tlc_cannot_evaluate")
def test_the_data_graph_gives_no_pass_where_the_reference_has_fairness(graded):
    """Appendix I's projected graphs compare safety; under R's ``WF_vars(Proc(self))``
    the same output that passes by data graph without fairness is refused, and says why."""
    _, safe = graded("10b_pluscal_label_dropped")
    _, fair = graded("10b2_pluscal_label_dropped_fair")
    assert safe.passed and safe.method == "data_graph"
    assert not fair.passed and fair.method is None
    _, bad = graded("10b3_pluscal_fairness_tlc_cannot_evaluate")
    assert any(a.startswith("data graph: the reference's fairness is not checked, TLC cannot evaluate it")
               for a in bad.attempts), bad.attempts
    assert "data graph not run: the reference's specification has fairness " \
           "\\A self \\in {0, 1} : WF_vars(Proc(self))" in fair.attempts


@pytest.mark.tlc
@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_case(case_id, graded):
    case = CASE_BY_ID[case_id]
    nv, bv = graded(case_id)
    info = _describe(nv, bv)
    assert nv.parsed, info
    assert nv.passed == case.name, info
    assert bv.passed == case.behavior, info
    if case.name_reason:
        assert case.name_reason in (nv.reason or ""), info
    if case.behavior_reason:
        assert case.behavior_reason in (bv.reason or ""), info
    if case.first_attempt:
        assert bv.attempts and case.first_attempt in bv.attempts[0], info
    if case.method:
        assert bv.method == case.method, info


@pytest.mark.tlc
@pytest.mark.parametrize("case_id", [c.id for c in CASES if c.refined != c.behavior or not c.behavior])
def test_case_by_refinement(case_id, runner):
    """The refinement procedure on every case the paper's procedure rejects: it accepts the
    representation limits (booleans for 0/1, a derived constant, a spec formula it cannot
    parse, the map search cut) and still rejects every output whose behaviors differ (and
    the arithmetic split of 8c, outside its grammar)."""
    case = CASE_BY_ID[case_id]
    bv = grade_behavior(REFS[case.ref], case.text, runner, max_maps=case.max_maps, mappings="refinement")
    assert bv.passed == case.refined, (bv.reason, bv.attempts)
    if case.refinement_method:
        assert bv.method == case.refinement_method, (bv.method, bv.attempts)


@pytest.mark.tlc
@uses("1a_hidden_invariant", "1b_hidden_constant", "1c_one_operator", "1d_swapped_names", "3_fixed_flag",
      "5_never_moves", "6a_extra_fairness", "10a_pluscal_other_labels", "10b_pluscal_label_dropped",
      "10c_pluscal_no_wait")
def test_case_details(graded):
    """Details that say *why* a verdict holds."""
    # 1c: Appendix H's redirection of both invariant entries to the only other operator
    nv, _ = graded("1c_one_operator")
    assert nv.cfg_changes == ["INVARIANTS TypeOK->Safe", "INVARIANTS CountBounded->Safe"]
    # 1a: the hidden invariant name is what TLC reports
    nv, bv = graded("1a_hidden_invariant")
    assert nv.reason == "tlc_config_error" and not nv.cfg_changes
    assert bv.mapping["variables"] == {"on": "lit", "count": "uses"}
    # 1b: the constant is mapped Max -> Limit
    _, bv = graded("1b_hidden_constant")
    assert bv.mapping["constants"] == {"Max": "Limit"}
    # 1d: identity map first, then the swap
    _, bv = graded("1d_swapped_names")
    assert bv.maps_tried == 2 and bv.mapping["variables"] == {"on": "count", "count": "on"}
    # 3 and 5: forward passes under the identity map (every behavior of G is one of R),
    # reverse fails (G allows too few behaviors)
    for cid in ("3_fixed_flag", "5_never_moves"):
        _, bv = graded(cid)
        first = bv.attempts[0]
        assert "{'on': 'on', 'count': 'count'}" in first and "reverse property_violated" in first, cid
    # 6a: with the paper's checks, stronger fairness passes both directions
    _, bv = graded("6a_extra_fairness")
    assert (bv.forward, bv.reverse) == ("success", "success")
    # 10a: the label map of Appendix I
    _, bv = graded("10a_pluscal_other_labels")
    assert bv.mapping["labels"] == {"start": "Lbl_1", "raise": "enter", "give": "yield",
                                    "await": "wait", "crit": "cs", "exit": "leave"}
    # 10b: no label map (5 labels vs 6), equivalence on the data variables
    _, bv = graded("10b_pluscal_label_dropped")
    assert any("data graph on ['flag', 'turn']: equivalent" in a for a in bv.attempts)
    # 10c: neither a label map nor the data graph accepts it
    _, bv = graded("10c_pluscal_no_wait")
    assert any("data graph" in a and "differs" in a for a in bv.attempts), bv.attempts


@pytest.mark.tlc
@pytest.mark.parametrize("sample_id,text,parse,name,behavior,reason", SAMPLES, ids=[s[0] for s in SAMPLES])
def test_sample_through_grade_sample(sample_id, text, parse, name, behavior, reason, runner):
    """Raw model text through extraction and all three grades."""
    sample = {"task_id": "Lamp", "condition": "original", "model": "suite", "sample_idx": 0, "text": text}
    rows = {r["grade"]: r for r in grade_sample(sample, REFS["Lamp"], runner)}
    got = (rows["parse"]["passed"], rows["name"]["passed"], rows["behavior"]["passed"])
    assert got == (parse, name, behavior), rows
    ext = json.loads(rows["parse"]["extraction"])
    assert ext["ok"], ext
    if sample_id == "12b_markdown_prose":
        assert {"strip_fence", "strip_prose_before", "strip_prose_after"} <= set(ext["actions"]), ext
        assert rows["behavior"]["method"] == "renaming"
    if reason:
        assert reason in rows["parse"]["reason"] and reason in rows["name"]["reason"], rows
        assert rows["behavior"]["reason"], rows


# --------------------------------------------------------------------------- weakened graders

REVERSE_PROBE = ("reference", "3_fixed_flag", "4_missing_action", "5_never_moves", "6a_extra_fairness")
NAME_PROBE = ("reference", "1a_hidden_invariant", "2a_weak_invariant", "2b_invariant_violated",
              "4_missing_action")


@pytest.mark.tlc
@uses(*REVERSE_PROBE)
def test_weakened_behavior_grade_without_reverse_check_is_detected(graded, runner, monkeypatch):
    """A behavior grade whose reverse check always passes accepts the output that never
    moves and the one with a fixed flag, and nothing else changes: these two cases are
    what detects the weakening (the missing action is caught by the forward deadlock)."""
    real = {cid: graded(cid)[1].passed for cid in REVERSE_PROBE}
    assert real == {cid: CASE_BY_ID[cid].behavior for cid in REVERSE_PROBE}
    monkeypatch.setattr(BehaviorGrader, "reverse",
                        lambda self, files, model: CheckResult(True, "success"))
    weak = {cid: grade_behavior(REFS[CASE_BY_ID[cid].ref], CASE_BY_ID[cid].text, runner,
                                mappings="renaming").passed
            for cid in REVERSE_PROBE}
    assert sorted(c for c in REVERSE_PROBE if weak[c] != real[c]) == ["3_fixed_flag", "5_never_moves"]


@pytest.mark.tlc
@uses(*NAME_PROBE)
def test_weakened_name_grade_ignoring_tlc_is_detected(graded, runner, monkeypatch):
    """A name grade that ignores TLC's result (passed = parsed) accepts the output that
    violates TypeOK, the deadlocking one and the one missing a hidden invariant name."""
    real = {cid: graded(cid)[0].passed for cid in NAME_PROBE}
    assert real == {cid: CASE_BY_ID[cid].name for cid in NAME_PROBE}
    real_grade = name_mod.grade_name

    def weak_grade(ref, module_text, runner_):
        v = real_grade(ref, module_text, runner_)
        return replace(v, passed=v.parsed, reason=None)

    monkeypatch.setattr(name_mod, "grade_name", weak_grade)
    weak = {cid: name_mod.grade_name(REFS[CASE_BY_ID[cid].ref], CASE_BY_ID[cid].text, runner).passed
            for cid in NAME_PROBE}
    assert sorted(c for c in NAME_PROBE if weak[c] != real[c]) == [
        "1a_hidden_invariant", "2b_invariant_violated", "4_missing_action"]
    # the same weakening through grade_sample (the registry's grades hold their own reference to grade_name)
    monkeypatch.setattr("alias.grade.registry.grade_name", weak_grade)
    sample = {"task_id": "Lamp", "condition": "original", "model": "suite", "sample_idx": 0,
              "text": MISSING_ACTION}
    rows = {r["grade"]: r for r in grade_sample(sample, REFS["Lamp"], runner)}
    assert rows["name"]["passed"] is True and rows["behavior"]["passed"] is False


# --------------------------------------------------------------------------- grader bugs (fixed)
# Regression tests for grader bugs this suite found (all fixed).

@pytest.mark.tlc
def test_reference_with_init_next_cfg_passes_against_itself(runner):
    """The Lamp against itself with an INIT/NEXT cfg.  Bug: write_cfg keeps a section
    whose entry the grade cleared, so the forward cfg says ``SPECIFICATION AliasOut...``
    next to empty ``INIT`` and ``NEXT`` sections and TLC refuses it; every output that
    defines a spec formula fails on a task whose cfg uses INIT/NEXT."""
    bv = grade_behavior(REFS["LampInitNext"], LAMP, runner)
    assert bv.passed, bv.attempts


@pytest.mark.tlc
@uses("5_never_moves")
def test_initial_values_prune_maps(graded):
    """The initial values of ``on`` (0/1) and ``count`` (0) rule out the swapped map.
    Bug (same cause): the output-side initial-value dump writes an empty SPECIFICATION
    section next to INIT/NEXT, TLC answers config_error, so no map is ever pruned on a
    SPECIFICATION task, every permutation costs TLC runs, and a failing verdict's reason
    is that of a meaningless permutation."""
    _, bv = graded("5_never_moves")
    assert all(c.kind == "success" for c in bv.calls if c.purpose == "init_dump")
    assert bv.maps_tried == 1 and bv.reason == "reverse_property_violated", bv.attempts


@pytest.mark.tlc
def test_parse_error_ends_the_map_search(runner):
    """A parse error of the output does not depend on the map.  Bug: the behavior grade
    runs TLC once per map anyway (2 here; up to max_maps for a task with 5 variables)."""
    bv = grade_behavior(REFS["Lamp"], SYNTAX_ERROR, runner)
    assert not bv.passed and bv.reason == "forward_parse_error"
    assert bv.maps_tried == 1, bv.attempts


@pytest.mark.tlc
def test_the_data_graph_path_stops_at_its_state_budget(runner, monkeypatch):
    """A wrong PlusCal output (10c): its refinement data-graph path dumps a mapping's product
    graph; with the path's budget at 0 states it dumps none and says so (a count of states,
    not seconds), and the verdict is the same failure."""
    from alias.grade import behavior_refine as br
    case = CASE_BY_ID["10c_pluscal_no_wait"]
    full = grade_behavior(REFS[case.ref], case.text, runner, max_maps=case.max_maps, mappings="refinement")
    monkeypatch.setattr(br, "DATA_GRAPH_BUDGET_STATES", 0)
    cut = grade_behavior(REFS[case.ref], case.text, runner, max_maps=case.max_maps, mappings="refinement")
    dumped = [a for a in full.attempts if a.startswith("data graph {")]
    assert len(dumped) == 1 and "differs" in dumped[0], full.attempts
    assert not [a for a in cut.attempts if a.startswith("data graph {")], cut.attempts
    assert "data graph: stopped after dumping 0 states of the output's product graphs" in cut.attempts
    assert not full.passed and not cut.passed and cut.reason == full.reason
