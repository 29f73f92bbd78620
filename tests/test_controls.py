"""The controls stage (Appendix J): its task order (cheapest first), its parts (controls@K),
and Table J.1 saying when it covers part of the test set."""

import dataclasses
import shutil
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from conftest import embedded_config, folders_under

from alias.cli import main
from alias.report.tables import _controls_scope
from alias.stages import controls
from alias.stages.controls import cheapest_first, part_of
from alias.stages.load import warn_stray
from alias.store.db import build_store, query, write_parquet

REPO = Path(__file__).resolve().parents[1]


def test_the_stage_takes_the_cheapest_tasks_first():
    tasks = pd.DataFrame({"task_id": ["a", "b", "c", "d", "e"], "manifest_runtime_s": [300.0, 1.0, None, 1.0, 40.0]})
    refs = {(t, "original"): None for t in "abcd"} | {("e", "random"): None}
    assert cheapest_first(tasks, refs) == ["b", "d", "a", "c"]


def test_table_j1_says_when_the_controls_ran_on_part_of_the_test_set():
    part = pd.Series({"controlled_tasks": 90, "tasks_with_cfg": 88, "test_set_tasks": 115})
    assert _controls_scope(part).startswith("The controls ran on 90 of the 115 test-set tasks")
    assert _controls_scope(pd.Series({"controlled_tasks": 6, "tasks_with_cfg": 6, "test_set_tasks": 6})) == ""


def test_the_parts_are_disjoint_and_hold_every_task_cheap_and_costly_alike():
    order = [f"t{i:02d}" for i in range(21)]  # cheapest first
    parts = [part_of(order, k, 8) for k in range(1, 9)]
    assert sorted(t for p in parts for t in p) == order
    assert parts[0] == ["t00", "t08", "t16"] and parts[7] == ["t07", "t15"]
    assert part_of(order, 1, 1) == order and part_of(["a"], 2, 2) == []


def test_a_part_not_in_controls_parts_is_a_one_line_error():
    res = CliRunner().invoke(main, ["controls", "--part", "3", "--params", str(REPO / "params.yaml")])
    assert res.exit_code == 1 and res.output.strip().endswith("no part '3' in controls.parts (have: 1)"), res.output
    assert res.output.count("\n") == 1


def test_load_names_what_the_controls_folder_holds_besides_its_parts(tmp_path, capsys):
    """The tables an ALIAS before the parts wrote in ``data/controls`` itself, or a part of a
    larger split, stay after an upgrade (DVC removes no output of a stage that is gone): not
    loaded, but hashed as ``load``'s input, so ``load`` names them."""
    (tmp_path / "1").mkdir()
    (tmp_path / "verdicts.parquet").write_text("old")
    (tmp_path / "9").mkdir()
    assert warn_stray(tmp_path, ["1"]) == ["9", "verdicts.parquet"]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds 9, verdicts.parquet besides the parts of controls.parts" in err
    assert warn_stray(tmp_path, ["1", "9", "verdicts.parquet"]) == [] and capsys.readouterr().err == ""
    assert warn_stray(tmp_path / "none", ["1"]) == []


def test_the_store_reads_the_part_folders_of_controls_parts_only(tmp_path):
    """Each part writes its own folder (``data/controls/K``); ``load`` reads those of
    ``controls.parts`` (a folder left by an earlier, larger split is not read)."""
    folders = folders_under(tmp_path)
    for part, tasks in (("1", ["a", "c"]), ("2", ["b"]), ("3", ["stale"])):
        write_parquet(pd.DataFrame({"task_id": tasks, "eligible": True, "reason": None}),
                      folders["controls"] / part / "eligibility.parquet")
    build_store(tmp_path / "s.duckdb", folders, tmp_path / "none", only={"controls": ["1", "2"]})
    got = query("SELECT task_id FROM control_eligibility ORDER BY task_id", tmp_path / "s.duckdb")
    assert got.task_id.tolist() == ["a", "b", "c"]


@pytest.mark.tlc
def test_two_parts_hold_what_one_part_builds_and_grades(embedded_stage_inputs, tmp_path):
    """``controls@1`` and ``controls@2`` of a two-part split write the tasks of a one-part
    run between them, each task in one part, with the same controls and verdicts (each run
    with its own journal and tool cache: nothing is replayed from the other)."""
    wd, _ = embedded_stage_inputs
    shutil.copytree(wd / "data", tmp_path / "data")
    small = {"controls.tasks": ["Clock.Clock.Clock", "TrafficLight.TrafficLight.TrafficLight", "Inventory.Inventory.Inventory"],
             "controls.max_mutants_tried_per_task": 2, "controls.hard_negatives.max_tried_per_task": 0,
             "controls.equivalence.classes": ["reorder"]}
    two = embedded_config(small | {"controls.parts": [1, 2]})
    paths = two.paths.under(tmp_path)
    for part in ("1", "2"):
        controls.run(two, paths, part)
    one_paths = dataclasses.replace(paths, controls=tmp_path / "one", work=tmp_path / "work-one")
    controls.run(embedded_config(small | {"controls.parts": [1]}), one_paths, "1")

    def table(folders, name):
        df = pd.concat([pd.read_parquet(f / name) for f in folders], ignore_index=True)
        df = df.sort_values(list(df.columns[:4])).reset_index(drop=True).astype(object)
        return df.where(df.notna(), None)  # one null, whichever dtype the concatenation gave

    parts = [paths.controls / "1", paths.controls / "2"]
    assert table(parts[:1], "eligibility.parquet").task_id.tolist() == ["Clock.Clock.Clock", "Inventory.Inventory.Inventory"]
    assert table(parts[1:], "eligibility.parquet").task_id.tolist() == ["TrafficLight.TrafficLight.TrafficLight"]
    for name in ("eligibility.parquet", "control_samples.parquet", "verdicts.parquet"):
        pd.testing.assert_frame_equal(table(parts, name), table([tmp_path / "one" / "1"], name))
    v = table(parts, "verdicts.parquet")
    assert set(v.model) >= {"control:self", "control:renamed", "control:oprenamed", "control:equiv_reorder"}
    assert v[v.grade == "behavior"].passed.sum() >= 9  # self, renamed, oprenamed of three tasks
