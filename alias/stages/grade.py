"""Grade every generated sample by the grades of ``grade.grades`` (paths.grades)."""

from __future__ import annotations

from typing import Any

from alias.config import Config, Paths
from alias.corpus.testset import TestSet
from alias.generate.samples import load_samples
from alias.grade.cache import ToolRunner
from alias.grade.registry import make_grades
from alias.grade.run import grade_samples
from alias.progress import progress_bar
from alias.stages.common import executor, grade_tool_config, worker_tools

NAME = "grade"


def run(config: Config, paths: Paths) -> dict[str, Any]:
    """Grade (on ``config.executor``: a local pool of ``grade.parallel`` processes or a Dask
    cluster) the samples of every model of ``generate`` (``paths.samples/KEY``) and of the
    exposure stage (``paths.exposure/samples.parquet``, when it ran) against the reference of their
    condition by every grade of ``grade.grades`` (:mod:`alias.grade.registry`; Methods
    "Name-based grade", "Behavior-based grade"); the journal and the
    tool-run cache under ``paths.work`` make a killed run resume. Returns the counts and
    ``passed``: ``{model: {grade: "k/n"}}``."""
    exposure = [p for p in (paths.exposure / "samples.parquet",) if p.exists()]
    samples = load_samples(paths.samples, config.generate.models, exposure)
    refs = TestSet.load(paths, meaningful=True).references()
    runner = ToolRunner(worker_tools(config, grade_tool_config(config)), paths.work / NAME / "cache")
    g = config.grade
    grades = make_grades(g.grades, config)
    rows = [{"task_id": r.task_id, "condition": r.condition, "model": r.model, "sample_idx": int(r.sample_idx),
             "text": r.text if isinstance(r.text, str) else ""} for r in samples.itertuples()]
    with progress_bar("grade", total=len(rows)) as bar, executor(config, g.parallel) as ex:
        verdicts = grade_samples(rows, refs, runner, paths.grades, journal=paths.work / NAME / "journal.jsonl",
                                 max_maps=g.max_maps, progress=bar.advance, grades=grades, executor=ex)
    passed: dict[str, dict[str, str]] = {}
    for (model, grade), grp in verdicts.groupby(["model", "grade"]):
        passed.setdefault(model, {})[grade] = f"{int(grp.passed.fillna(False).sum())}/{len(grp)}"
    return {"samples": len(rows), "verdicts": len(verdicts), "passed": passed}
