"""Grader validation (Appendix J): controls and mutants built and graded, one part of the
tasks per stage (paths.controls/PART, ``controls@PART``)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from alias.config import Config, Paths
from alias.corpus.testset import TestSet
from alias.grade.cache import ToolRunner
from alias.errors import AliasError
from alias.grade.controls import CONTROL_GRADES, EquivalenceSettings, run_controls
from alias.grade.equivalence import CLASSES
from alias.grade.registry import make_grades
from alias.progress import progress_bar
from alias.stages.common import executor, grade_tool_config, worker_tools

NAME = "controls"
KEYED = "controls.parts"
KEY_OPTION = "part"


def cheapest_first(tasks: pd.DataFrame, refs: dict) -> list[str]:
    """The task ids of ``refs`` (original condition) by the manifest's runtime
    (``tasks.manifest_runtime_s``, none last), then by id: a stopped run has done the most tasks."""
    by_cost = tasks.sort_values(["manifest_runtime_s", "task_id"], na_position="last").task_id
    return [t for t in by_cost if (t, "original") in refs]


def part_of(tasks: list[str], part: int, n_parts: int) -> list[str]:
    """Part ``part`` (1-based) of ``n_parts``: every ``n_parts``-th task of ``tasks`` from
    the ``part``-th on, so each part gets cheap and costly tasks alike. The parts are
    disjoint and together hold every task."""
    return tasks[part - 1::n_parts]


def run(config: Config, paths: Paths, key: str = "1") -> dict[str, Any]:
    """Build the positive and negative controls of part ``key`` of the eligible test-set
    tasks (:func:`part_of` of ``controls.tasks``, else every task cheapest first) and grade
    them on ``config.executor``; writes eligibility, control samples, samples and verdicts
    under ``paths.controls/KEY``. Each part is a DVC stage with its own outputs, so a
    finished part survives a stopped run and travels with ``dvc push``/``pull``; within a
    part, the grading journal and the tool-run cache under ``paths.work`` (shared by the
    parts) let a killed run resume. Returns the part's Table J.1 counts."""
    test_set = TestSet.load(paths)
    refs = test_set.references()
    parts = config.controls.parts
    order = part_of(list(config.controls.tasks) or cheapest_first(test_set.tasks, refs), int(key), len(parts))
    runner = ToolRunner(worker_tools(config, grade_tool_config(config)), paths.work / NAME / "cache")
    c, g = config.controls, config.grade
    unknown = [x for x in c.equivalence.classes if x not in CLASSES]
    if unknown:
        raise AliasError(f"controls.equivalence.classes: unknown class {unknown[0]!r} (known: {', '.join(CLASSES)})")
    eq = EquivalenceSettings(tuple(c.equivalence.classes), c.equivalence.kept_per_class, c.equivalence.tried_per_class)
    with progress_bar("controls", total=None) as bar, executor(config, g.parallel) as ex:
        return run_controls(refs, runner, paths.controls / key, journal=paths.work / NAME / "journal.jsonl", seed=c.seed,
                            max_mutants_tried=c.max_mutants_tried_per_task, max_mutants_kept=c.max_mutants_kept_per_task,
                            parallel=g.parallel, max_maps=g.max_maps, tasks=order,
                            progress=lambda _what: bar.advance(), mutant_timeout_s=c.mutant_timeout_s, executor=ex,
                            grades=make_grades(CONTROL_GRADES, config), hard_negatives=c.hard_negatives,
                            equivalence_settings=eq)
