"""The grade registry (:mod:`alias.grade.registry`): a new grade is one class plus its
registration, and the grade stage and ``alias-cir grade-file`` then give it like the
built-in ones; unknown names are one-line errors naming the registered grades."""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from alias.cli import main
from alias.errors import AliasError
from alias.grade.registry import SampleWork, grade_names, make_grades, register_grade, unregister_grade
from alias.stages import grade as grade_stage
from alias.store.db import write_table
from alias.store.models import Sample

REPO = Path(__file__).resolve().parents[1]
CLOCK = "Clock.Clock.Clock"


class MentionsVariables:
    """A toy grade: the output names every variable of the reference of its condition."""

    name = "mentions"

    def grade(self, work: SampleWork) -> dict:
        if work.ref is None:
            return {"passed": False, "reason": "no_reference"}
        missing = [v for v in work.ref.variables if not re.search(rf"\b{v}\b", work.text)]
        return {"passed": not missing, "reason": f"missing: {', '.join(missing)}" if missing else None,
                "error_text": None, "unknown_field": "dropped"}


@pytest.fixture
def toy():
    register_grade(MentionsVariables)
    yield MentionsVariables
    unregister_grade("mentions")


def _samples(wd: Path, config, clock_text: str) -> None:
    """A few fixture samples of Clock (the other model keys: empty tables)."""
    rows = [{"task_id": CLOCK, "condition": "original", "model": "m", "sample_idx": 0, "text": clock_text},
            {"task_id": CLOCK, "condition": "original", "model": "m", "sample_idx": 1, "text": "VARIABLE hr"},
            {"task_id": "NoSuch.Task", "condition": "original", "model": "m", "sample_idx": 0, "text": "hr qtr"}]
    for key in config.generate.models:
        write_table(rows if key == "fixture" else [], Sample, config.paths.samples / key / "samples.parquet")


def test_a_toy_grade_runs_through_the_grade_stage_and_grade_file(toy, embedded_stage_inputs, tmp_path):
    wd, c = embedded_stage_inputs
    paths = dataclasses.replace(c.paths, samples=tmp_path / "samples", grades=tmp_path / "grades",
                                work=tmp_path / "work")
    config = dataclasses.replace(c, paths=paths, grade=dataclasses.replace(c.grade, grades=("mentions",)))
    clock = (REPO / "alias/corpus/embedded/specifications/Clock/Clock.tla").read_text()
    _samples(wd, config, clock)
    summary = grade_stage.run(config, paths)
    v = pd.read_parquet(paths.grades / "verdicts.parquet")
    assert summary["passed"] == {"m": {"mentions": "1/3"}}
    assert list(v.grade) == ["mentions"] * 3
    got = [(r.task_id, r.sample_idx, r.passed, r.reason) for r in v.astype(object).where(v.notna(), None).itertuples()]
    assert got == [(CLOCK, 0, True, None), (CLOCK, 1, False, "missing: qtr"), ("NoSuch.Task", 0, False, "no_reference")]
    out = tmp_path / "o.tla"
    out.write_text("VARIABLES qtr\n")
    res = CliRunner().invoke(main, ["grade-file", str(out), "--task", CLOCK, "--grades", "mentions", "--json",
                                    "--store", str(wd / "data"), "--params", str(REPO / "params.yaml")])
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.output)
    assert (row["grade"], row["passed"], row["reason"]) == ("mentions", False, "missing: hr")


def test_unknown_grades_name_the_registered_ones(toy):
    assert grade_names()[:4] == ("parse", "name", "behavior", "tlabench") and "mentions" in grade_names()
    with pytest.raises(AliasError, match=r"no grade 'nope' \(registered: parse, name, behavior, tlabench, behavior_renaming, mentions"):
        make_grades(["mentions", "nope"])
    assert list(make_grades(["mentions", "parse"])) == ["parse", "mentions"]  # registry order
    res = CliRunner().invoke(main, ["grade-file", __file__, "--task", "T", "--grades", "name,nope"])
    assert res.exit_code == 2 and "nope: the registered grades are parse, name, behavior, tlabench" in res.output
