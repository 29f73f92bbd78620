"""Grade every generated sample by parse, name and behavior (paths.grades)."""

from __future__ import annotations

from typing import Any

from alias.config import Config, Paths
from alias.corpus.testset import TestSet
from alias.generate.samples import load_samples
from alias.grade.cache import ToolRunner
from alias.grade.run import grade_samples
from alias.progress import progress_bar
from alias.stages.common import grade_tool_config

NAME = "grade"


def run(config: Config, paths: Paths) -> dict[str, Any]:
    """Grade the samples of every model of ``generate`` (``paths.samples/KEY``) and of the
    exposure stage (``paths.exposure/samples.parquet``, when it ran) against the reference of their
    condition (Methods "Name-based grade", "Behavior-based grade"); the journal and the
    tool-run cache under ``paths.grades`` make a killed run resume. Returns the counts and
    ``passed``: ``{model: {grade: "k/n"}}``."""
    exposure = [p for p in (paths.exposure / "samples.parquet",) if p.exists()]
    samples = load_samples(paths.samples, config.generate.models, exposure)
    refs = TestSet.load(paths, meaningful=True).references()
    runner = ToolRunner(grade_tool_config(config), paths.grades / "cache")
    rows = [{"task_id": r.task_id, "condition": r.condition, "model": r.model, "sample_idx": int(r.sample_idx),
             "text": r.text if isinstance(r.text, str) else ""} for r in samples.itertuples()]
    with progress_bar("grade", total=len(rows)) as bar:
        verdicts = grade_samples(rows, refs, runner, paths.grades, parallel=config.grade.parallel,
                                 max_maps=config.grade.max_maps, progress=bar.advance)
    passed: dict[str, dict[str, str]] = {}
    for (model, grade), grp in verdicts.groupby(["model", "grade"]):
        passed.setdefault(model, {})[grade] = f"{int(grp.passed.fillna(False).sum())}/{len(grp)}"
    return {"samples": len(rows), "verdicts": len(verdicts), "passed": passed}
