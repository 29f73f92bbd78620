"""Equivalence controls: behavior-preserving restructurings of a reference (issue 33).

Appendix J's positive controls are renamings only, so how often the behavior grade
rejects a correct output written another way is unknown (paper, "Construct validity").
An equivalence control is a source-to-source restructuring of a reference's system
module, made by a generator that knows the refinement mapping between the two (each of
R's variables as an expression over the variant's: :class:`alias.grade.refinement.Match`)
and the constant map. It counts only when TLC confirms it against the reference under
that mapping in both directions (:func:`confirm`, through
:meth:`alias.grade.behavior.BehaviorGrader.check_mapping`); the controls stage then grades
it like any output, with both procedures.

Classes (:data:`GENERATORS`, in this order; one generator each):

``reorder``              conjuncts (assignments, UNCHANGED) and disjuncts reordered where TLC
                         evaluates them the same (:mod:`.structure`);
``inline_extract``       a definition inlined at its uses, or a conjunct extracted into one;
``merge_record``         several variables merged into one record or tuple (:mod:`.variables`);
``split_variable``       a record or tuple variable split into one variable per part;
``constant_definition``  a constant defined as its cfg value, or a definition made a CONSTANT;
``reencode``             a finite-domain variable re-encoded (BOOLEAN and 0/1, strings,
                         numbers and model values);
``history_variable``     an auxiliary variable that never constrains the others;
``split_action``         an action split into two named sub-actions whose disjunction is it.

A generator that cannot apply to a reference yields :class:`NotApplicable` with the reason.
Generation is pure Python (tree-sitter-tlaplus); only the split and re-encoding classes
need the reference's reachable states (a TLC state dump, :class:`alias.grade.refinement.Side`).
"""

from __future__ import annotations

from dataclasses import dataclass

from alias.corpus.testset import Reference
from alias.grade.behavior import BehaviorGrader, BehaviorVerdict, _declared, _extends_closure
from alias.grade.refinement import Side
from alias.tla.syntax import module_info

from . import structure, variables  # noqa: F401  (registers the generators)
from .base import GENERATORS, Context, NotApplicable, Variant, generator

#: The classes in the issue's order (the order the controls try them and Table J.2 shows them).
CLASSES = ("reorder", "inline_extract", "merge_record", "split_variable", "constant_definition", "reencode",
           "history_variable", "split_action")
assert set(CLASSES) == set(GENERATORS), "every registered class has its place in CLASSES"

__all__ = ["CLASSES", "GENERATORS", "Variant", "NotApplicable", "Context", "Confirmation", "generator",
           "context", "generate", "confirm"]


def context(ref: Reference, states: Side | None = None) -> Context:
    """The generators' view of ``ref`` (variables and constants of its model's EXTENDS
    closure, as the behavior grade declares them); ``states``: its reachable states."""
    r_vars, r_consts = _declared(_extends_closure(ref.model_module, ref.files))
    return Context(ref, r_vars, r_consts, states)


def generate(cx: Context, cls: str, limit: int | None = None) -> tuple[list[Variant], list[NotApplicable]]:
    """The first ``limit`` variants of class ``cls`` (all with ``None``), distinct texts,
    and the reasons of the candidates that did not apply. A generator that raises gives
    one ``generator_error`` reason. Raises KeyError for an unknown class."""
    gen = GENERATORS[cls]
    made: list[Variant] = []
    skipped: list[NotApplicable] = []
    texts = {cx.ref.system_text}
    try:
        for r in gen(cx):
            if isinstance(r, NotApplicable):
                skipped.append(r)
            elif r.text not in texts:
                texts.add(r.text)
                made.append(r)
            if limit is not None and len(made) >= limit:
                break
    except Exception as e:  # one reference a generator misreads never stops the controls
        skipped.append(NotApplicable(cls, f"generator_error: {type(e).__name__}: {e}"))
    return made, skipped


@dataclass
class Confirmation:
    """Whether TLC confirms a variant under its known mapping in both directions:
    ``kept``; ``reason`` (``None`` when kept, else the failed check's reason); ``verdict``."""

    kept: bool
    reason: str | None
    verdict: BehaviorVerdict | None = None


def confirm(grader: BehaviorGrader, variant: Variant) -> Confirmation:
    """The forward and reverse TLC checks of ``variant`` against ``grader``'s reference
    under the variant's known mapping and constant map
    (:meth:`~alias.grade.behavior.BehaviorGrader.check_mapping`). Never raises."""
    ref = grader.ref
    outside = [v for v in grader.r_vars if v not in ref.variables]
    g_vars = module_info(variant.text).variables + outside
    try:
        match = variant.match(list(grader.r_vars), g_vars)
        v = grader.check_mapping(variant.side(ref), match, dict(variant.consts))
    except Exception as e:
        return Confirmation(False, f"grader_error: {type(e).__name__}: {e}")
    return Confirmation(v.passed, v.reason, v)
