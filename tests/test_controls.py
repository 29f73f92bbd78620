"""The controls stage's task order (Appendix J): cheapest first by the manifest's runtime."""

import pandas as pd

from alias.stages.controls import cheapest_first


def test_the_stage_takes_the_cheapest_tasks_first():
    tasks = pd.DataFrame({"task_id": ["a", "b", "c", "d", "e"], "manifest_runtime_s": [300.0, 1.0, None, 1.0, 40.0]})
    refs = {(t, "original"): None for t in "abcd"} | {("e", "random"): None}
    assert cheapest_first(tasks, refs) == ["b", "d", "a", "c"]
