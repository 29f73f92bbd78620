"""ALIAS's grades as Inspect scorers.

A scorer grades the model's completion (``state.output.completion``, the raw text, as the
grade stage grades a sample) against the reference of the sample's task and condition
(the sample metadata of :mod:`alias.inspect.dataset`) with one grade of the registry
(:mod:`alias.grade.registry`), configured from the task's settings files. The verdicts
come from the same code as the grade stage's: the tool-run cache and the journal live in
``<paths.work>/inspect/`` (a rerun of the same eval grades nothing again), the sample key
is ``(task id, condition, model, epoch - 1)``.

The score: ``value`` ``C`` (passed) or ``I``; ``explanation`` the reason and TLC's or SANY's error text; ``metadata`` the verdict
(the store's verdict columns with ``mapping``, ``cfg_changes``, ``attempts`` and
``extraction`` decoded, as :func:`alias.grade_output` returns it).
"""

from __future__ import annotations

import asyncio
import functools
import threading
from pathlib import Path
from typing import Any

from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target
from inspect_ai.solver import TaskState

from alias.api import load_test_set, readable_verdict
from alias.corpus.testset import Reference
from alias.grade.cache import ToolRunner
from alias.grade.registry import make_grades
from alias.grade.run import Journal, grade_sample, needs_grading, read_journal, signature, tool_settings
from alias.inspect.dataset import Settings
from alias.stages.common import grade_tool_config

__all__ = ["StoreGrader", "grader_for", "score_state"]


class StoreGrader:
    """Grades outputs against the references of one store with the grades configured by its
    settings (thread-safe; one journal per grade under ``<paths.work>/inspect/``)."""

    def __init__(self, where: Settings):
        config = where.config()
        self.config = config
        self.refs: dict[tuple[str, str], Reference] = load_test_set(where.store).references()
        work = Path(config.paths.work)
        if not work.is_absolute():
            work = where.params[-1].parent / work
        self.work = work / "inspect"
        self.runner = ToolRunner(grade_tool_config(config), self.work / "cache")
        self.tools = tool_settings(self.runner.config)
        self._grades: dict[str, Any] = {}
        self._journals: dict[str, tuple[Journal, dict]] = {}
        self._lock = threading.Lock()

    def _setup(self, grade: str) -> tuple[Any, Journal, dict]:
        with self._lock:
            if grade not in self._grades:
                self._grades |= make_grades([grade], self.config)
                journal = Journal(self.work / grade / "journal.jsonl")
                self._journals[grade] = (journal, read_journal(journal.path))
            return (self._grades[grade], *self._journals[grade])

    def grade(self, grade: str, sample: dict) -> dict[str, Any]:
        """The verdict of one sample (``task_id``, ``condition``, ``model``, ``sample_idx``,
        ``text``) by ``grade``, journaled: the decoded verdict row."""
        instance, journal, done = self._setup(grade)
        ref = self.refs.get((sample["task_id"], sample["condition"]))
        key = (sample["task_id"], sample["condition"], sample["model"], int(sample["sample_idx"]))
        sig = signature(sample, ref, self.config.grade.max_maps, None, {grade: instance}, self.tools)
        if needs_grading(done.get(key), sig):
            rows = grade_sample(sample, ref, self.runner.child(), max_maps=self.config.grade.max_maps,
                                grades={grade: instance})
            journal.append(key, sig, rows)
            done[key] = (sig, rows)
        return readable_verdict(done[key][1][0])


@functools.lru_cache(maxsize=16)
def grader_for(where: Settings) -> StoreGrader:
    """One :class:`StoreGrader` per store and settings (references read once)."""
    return StoreGrader(where)


def _score(verdict: dict[str, Any]) -> Score:
    why = "; ".join(str(x) for x in (verdict.get("reason"), verdict.get("error_text")) if x)
    return Score(value=CORRECT if verdict.get("passed") else INCORRECT, explanation=why or "passed",
                 metadata=verdict)


async def score_state(grade: str, state: TaskState, _target: Target) -> Score:
    """Grade ``state``'s completion by ``grade`` (in a worker thread: SANY and TLC block)."""
    md = state.metadata or {}
    if "task_id" not in md or "store" not in md:
        raise ValueError("an ALIAS scorer needs the samples of an alias_cir task (task_id, condition, store)")
    sample = {"task_id": md["task_id"], "condition": md["condition"], "model": str(state.model),
              "sample_idx": int(state.epoch) - 1, "text": state.output.completion if state.output else ""}
    grader = grader_for(Settings.from_metadata(md))
    return _score(await asyncio.to_thread(grader.grade, grade, sample))
