"""Markdown tables and DVC metrics from the store's views (Tables K.1, C.1; hidden names)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from alias.store.db import query


def to_markdown(df: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table; ``None``/NaN cells read ``no data``."""
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        cells = ["no data" if (v is None or (isinstance(v, float) and pd.isna(v)) or v is pd.NA) else str(v)
                 for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def sources_markdown(db: str | Path, *, exposure: bool = False) -> str:
    """The "where the outputs come from" section of a report: one row per model of
    Experiment 1 (``exposure``: of the exposure stage's adapters) with its ``source``
    (embedded fixture, local model, provider model, released outputs)."""
    cond = "model_key = 'exposure'" if exposure else "coalesce(model_key, '') <> 'exposure'"
    df = query(f"SELECT model, coalesce(any_value(samples.source), 'unknown') AS source FROM samples "
               f"WHERE model NOT LIKE 'control:%' AND {cond} GROUP BY model ORDER BY model", db)
    return "## Where the outputs come from\n\n" + (to_markdown(df) if len(df) else "no model outputs yet\n")


def _controls_scope(c: pd.Series) -> str:
    """The sentence Table J.1 opens with when the controls ran on part of the test set
    (``controls.tasks``); empty when they ran on all of it."""
    if int(c.controlled_tasks) >= int(c.test_set_tasks):
        return ""
    return (f"The controls ran on {int(c.controlled_tasks)} of the {int(c.test_set_tasks)} test-set tasks "
            "(params `controls.tasks`); the others are not in this table. ")


def write_reports(db: str | Path, out: Path) -> dict:
    """Write ``table_K1.md``, ``table_C1.md``, ``hidden_names.md``, ``excluded.md``,
    ``table_J1.md`` and ``metrics.json`` under ``out``; returns the metrics dict."""
    out.mkdir(parents=True, exist_ok=True)
    k1 = query('SELECT "set", n, used_for FROM v_table_k1', db)
    c1 = query("SELECT * FROM v_table_c1", db)
    per_task = query("SELECT * FROM v_hidden_names_per_task ORDER BY task_id", db)
    mismatch = query("SELECT * FROM v_manifest_mismatch ORDER BY task_id", db)
    ids = query("SELECT n_renamed FROM v_identifiers_per_task", db)
    _write_task_tables(db, out, k1, c1, per_task, mismatch)
    j1, counts = _write_table_j1(db, out)
    ran = int(counts.controlled_tasks.iloc[0]) > 0
    metrics = {
        "test_set_tasks": int(k1.loc[k1["set"].str.contains("test set"), "n"].iloc[0]),
        "candidate_tasks": int(k1.loc[k1["set"].str.startswith("Candidate"), "n"].iloc[0]),
        "tasks_with_hidden_name": int((per_task.n_hidden > 0).sum()),
        "hidden_names": int(per_task.n_hidden.sum()),
        "renamed_identifiers": int(c1.renamed.sum()),
        "median_renamed_per_task": float(ids.n_renamed.median()) if len(ids) else None,
        "manifest_mismatches": len(mismatch),
        "grader_self_accepted": int(j1.passed.iloc[0]) if len(j1) and int(j1.n.iloc[0]) else None,
        "grader_eligible": int(counts.eligible.iloc[0]) if ran else None,
        "grader_mutants_kept": int(j1.n.iloc[3]) if len(j1) > 3 and ran else None,
        "grader_mutants_accepted": int(j1.passed.iloc[3]) if len(j1) > 3 and ran else None,
        "grader_hard_negatives_kept": int(j1.n.iloc[4]) if len(j1) > 4 and ran else None,
        "grader_hard_negatives_accepted": int(j1.passed.iloc[4]) if len(j1) > 4 and ran else None,
    }
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")
    return metrics


def _write_task_tables(db, out: Path, k1: pd.DataFrame, c1: pd.DataFrame, per_task: pd.DataFrame,
                       mismatch: pd.DataFrame) -> None:
    """``table_K1.md``, ``table_C1.md``, ``hidden_names.md`` and ``excluded.md``."""
    by_kind = query("SELECT * FROM v_hidden_names_by_kind ORDER BY n_hidden DESC, cfg_kind", db)
    excluded = query("SELECT stage, reason, count(*) AS n FROM v_excluded GROUP BY ALL ORDER BY stage, n DESC, reason", db)
    excluded_all = query("SELECT * FROM v_excluded ORDER BY stage, reason, task_id", db)
    (out / "table_K1.md").write_text("# Table K.1: task counts\n\n" + to_markdown(k1))
    total = pd.DataFrame([{"category": "total", "renamed": int(c1.renamed.sum()), "renamed_pct": 100.0 if c1.renamed.sum() else None,
                           "hidden": int(c1.hidden.sum()), "hidden_pct": 100.0 if c1.hidden.sum() else None}])
    (out / "table_C1.md").write_text("# Table C.1: identifier kinds in the test set\n\n" +
                                     to_markdown(pd.concat([c1, total], ignore_index=True)))
    n_tasks = len(per_task)
    with_hidden = int((per_task.n_hidden > 0).sum())
    five_plus = int((per_task.n_hidden >= 5).sum())
    hidden_total = int(per_task.n_hidden.sum())
    conv = int(per_task.n_hidden_convention.sum())
    text = (
        "# Hidden required names\n\n"
        f"In {with_hidden}/{n_tasks} test-set tasks the cfg lists at least one hidden name; "
        f"{five_plus} list five or more. The {hidden_total} hidden names by cfg kind:\n\n"
        + to_markdown(by_kind) +
        f"\n{conv} hidden names follow TLA+ conventions.\n\n## Per task\n\n" + to_markdown(per_task)
    )
    (out / "hidden_names.md").write_text(text)
    (out / "excluded.md").write_text(
        "# Excluded candidates\n\n" + to_markdown(excluded) + "\n## Every excluded candidate\n\n"
        + to_markdown(excluded_all) + "\n## Manifest mismatches (test set)\n\n"
        + (to_markdown(mismatch) if len(mismatch) else "none\n"))


def _write_table_j1(db, out: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``table_J1.md``; returns ``v_table_j1`` and ``v_control_counts``."""
    j1 = query("SELECT control, expected, n, passed, tasks FROM v_table_j1", db)
    counts = query("SELECT * FROM v_control_counts", db)
    failures = query("SELECT task_id, kind, reason, maps_tried FROM v_grader_failures", db)
    errors = query("SELECT * FROM v_control_errors", db)
    hardneg = query("SELECT * FROM v_hard_negatives", db)
    if int(counts.controlled_tasks.iloc[0]) == 0:   # the controls stage saw no task
        j1_text = "# Table J.1: validation of the behavior-based grade\n\nno data: the controls stage has not run\n"
    else:
        c = counts.iloc[0]
        j1_text = (
            "# Table J.1: validation of the behavior-based grade\n\n"
            + _controls_scope(c) +
            f"{int(c.eligible)} of {int(c.tasks_with_cfg)} test-set tasks with a cfg are eligible. "
            "A positive control should pass and a negative control should fail.\n\n"
            + to_markdown(j1) +
            f"\nOperator-renamed copies that do not count: {int(c.oprenamed_nothing_to_rename)} have no operator "
            f"to rename, {int(c.oprenamed_sany_fails)} fail SANY, {int(c.oprenamed_tlc_fails)} fail TLC. "
            f"Mutants: {int(c.mutants_kept)} kept of {int(c.mutants_tried)} run through TLC.\n\n"
            + _hard_negatives_text(c, hardneg) +
            "## Positive controls the behavior-based grade does not accept\n\n"
            + (to_markdown(failures) if len(failures) else "none\n")
            + "\n## Controls graded wrongly\n\n" + (to_markdown(errors) if len(errors) else "none\n"))
    (out / "table_J1.md").write_text(j1_text)
    return j1, counts


def _hard_negatives_text(counts, by_operator: pd.DataFrame) -> str:
    """Table J.1's paragraph and table on the hard negatives (issue 33)."""
    tried = int(counts.get("hardneg_tried", 0) or 0)
    if not tried:
        return ""
    re_encoded = int(counts.get("hardneg_re_encoded", 0) or 0)
    unchecked = int(counts.get("hardneg_relabel_unchecked", 0) or 0)
    return ("## Mutants with the same reachable states (hard negatives)\n\n"
            f"{int(counts.hardneg_kept)} kept of {tried} run through TLC ({int(counts.hardneg_same_states)} had the "
            "reference's number of distinct states; kept when TLC's forward or reverse check under the identity "
            "mapping shows a behavior of one the other lacks and the candidate's state graph is not the "
            f"reference's re-encoded: {re_encoded} were, with values renamed or constant components added, and "
            f"{unchecked} could not be compared). Accepted per procedure (behavior: the configured "
            "procedure; behavior_renaming: the paper's):\n\n" + to_markdown(by_operator) + "\n")
