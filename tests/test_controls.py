"""The controls stage (Appendix J): its task order (cheapest first) and Table J.1 saying when it covers part of the test set."""

import pandas as pd

from alias.report.tables import _controls_scope
from alias.stages.controls import cheapest_first


def test_the_stage_takes_the_cheapest_tasks_first():
    tasks = pd.DataFrame({"task_id": ["a", "b", "c", "d", "e"], "manifest_runtime_s": [300.0, 1.0, None, 1.0, 40.0]})
    refs = {(t, "original"): None for t in "abcd"} | {("e", "random"): None}
    assert cheapest_first(tasks, refs) == ["b", "d", "a", "c"]


def test_table_j1_says_when_the_controls_ran_on_part_of_the_test_set():
    part = pd.Series({"controlled_tasks": 90, "tasks_with_cfg": 88, "test_set_tasks": 115})
    assert _controls_scope(part).startswith("The controls ran on 90 of the 115 test-set tasks")
    assert _controls_scope(pd.Series({"controlled_tasks": 6, "tasks_with_cfg": 6, "test_set_tasks": 6})) == ""
