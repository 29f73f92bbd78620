"""The controls stage (Appendix J): its task order (cheapest first), its parts (controls@K),
and Table J.1 saying when it covers part of the test set."""

from pathlib import Path

import pandas as pd
from click.testing import CliRunner
from conftest import folders_under

from alias.cli import main
from alias.report.tables import _controls_scope
from alias.stages.controls import cheapest_first, part_of
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
