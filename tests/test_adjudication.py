"""People's readings of TLA+-Bench outputs the grades disagree on (issue 33, point 5): the
CSV, the views of sql/19_adjudication.sql and the report table."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from alias.errors import AliasError
from alias.report.adjudication import adjudication_rows, write_tables
from alias.store.db import build_store, columns, query
from alias.store.models import TABLE_SOURCES

SQL = Path(__file__).resolve().parents[1] / "sql"
M = "tlabench_cfgaware/claude"


def _verdict(task: str, grade: str, passed: bool, reason: str | None = None) -> dict:
    return {"task_id": task, "condition": "original", "model": M, "sample_idx": 0, "grade": grade,
            "passed": passed, "reason": reason}


def _store(tmp_path: Path, readings: pd.DataFrame) -> Path:
    # t1: their TLC passes, name passes, behavior fails under both procedures (a real difference);
    # t2: their TLC passes, renaming fails (another count of variables), refinement passes;
    # t3: everyone agrees it passes: no row.
    grades = {"t1": (True, False, False), "t2": (True, False, True), "t3": (True, True, True)}
    verdicts = []
    for t, (name, renaming, refinement) in grades.items():
        verdicts += [_verdict(t, "name", name), _verdict(t, "tlabench", True),
                     _verdict(t, "behavior_renaming", renaming, None if renaming else
                              ("no_map_passes" if t == "t1" else "variable_count_differs: reference 2, output 3")),
                     _verdict(t, "behavior", refinement, None if refinement else "no_refinement_mapping_fits")]
    rows = {
        "samples": pd.DataFrame([{"task_id": t, "condition": "original", "model": M, "sample_idx": 0, "text": "x"}
                                 for t in grades]),
        "verdicts": pd.DataFrame(verdicts),
        "test_set": pd.DataFrame([{"task_id": t, "in_test_set": True} for t in grades]),
        "external_verdicts": pd.DataFrame([{"source": "tla-bench", "regime": "cfgaware", "model": "claude",
                                            "task_id": t, "sany_pass": True, "tlc_pass": True, "sample_model": M}
                                           for t in grades]),
        "adjudications": readings,
    }
    rows = {k: v.reindex(columns=columns(TABLE_SOURCES[k][0])) for k, v in rows.items()}
    db = tmp_path / "s.duckdb"
    empty = {k: tmp_path / "none" for k in ("ingest", "rename", "verify", "identifiers", "controls", "samples",
                                             "grades", "continuation", "exposure", "meaningful")}
    build_store(db, empty, SQL, tables=rows)
    return db


def test_readings_join_the_disagreements_and_count_before_and_after(tmp_path):
    csv = tmp_path / "adjudications.csv"
    csv.write_text("model,task_id,judgment,category,evidence,note\n"
                   f"{M},t1,real_difference,initial_state,\"TLC: rdy = FALSE initially\",fixes a free flag\n")
    db = _store(tmp_path, adjudication_rows(csv))
    d = query("SELECT task_id, disagreement, judgment FROM v_tlabench_disagreements ORDER BY task_id", db)
    assert d.values.tolist() == [["t1", "name only", "real_difference"]]
    ba = query("SELECT * FROM v_tlabench_behavior_before_after", db).iloc[0]
    assert (ba.their_tlc_passes, ba.fail_before, ba.no_comparison_before, ba.fail_after, ba.no_comparison_after,
            ba.after_real_difference, ba.after_not_read) == (3, 2, 1, 1, 0, 1, 0)
    counts = write_tables(db, tmp_path)
    assert counts == {"real_difference": 1}
    text = (tmp_path / "table_tlabench_adjudication.md").read_text()
    assert "| tlabench_cfgaware/claude | t1 | name only | no_refinement_mapping_fits | real_difference |" in text
    assert pd.read_csv(tmp_path / "table_tlabench_adjudication.csv").note.tolist() == ["fixes a free flag"]


def test_a_bad_reading_stops_with_the_line(tmp_path):
    csv = tmp_path / "a.csv"
    csv.write_text("model,task_id,judgment,category,evidence,note\nm,t,maybe,,,\n")
    with pytest.raises(AliasError, match=r"a.csv: line 2: judgment must be one of real_difference"):
        adjudication_rows(csv)
    csv.write_text("model,task_id,judgment\nm,t,grader_limit\n")
    with pytest.raises(AliasError, match="missing column category"):
        adjudication_rows(csv)
    assert adjudication_rows(tmp_path / "none.csv").empty
