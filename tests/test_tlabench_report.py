"""The TLA+-Bench tables print NULL text cells (a behavior verdict without a map, when the
variable counts differ) as empty, not crash on them (issue 34)."""
from __future__ import annotations

import duckdb

from alias.report import tlabench as T


def test_a_missing_behavior_map_is_an_empty_cell(tmp_path):
    db = tmp_path / "s.duckdb"
    con = duckdb.connect(str(db))
    con.execute("""CREATE TABLE v_tlabench_name_vs_behavior AS SELECT * FROM (VALUES
                   ('m', 't', true, false, NULL, NULL, 'variable_count: 2 vs 3', NULL, NULL),
                   ('m', 'u', false, true, 'tlc_fail', 'Error: x', NULL, '{"variables": {"a": "b"}}', NULL))
                   AS v(model, task_id, name_passed, behavior_passed, name_reason, name_error, behavior_reason,
                        behavior_mapping, behavior_error)""")
    con.close()
    text = T._name_vs_behavior(db)
    assert "| m | t | True | False |  | variable_count: 2 vs 3 |" in text
    assert '| m | u | False | True | {"variables": {"a": "b"}} | Error: x |' in text
