"""People's readings of real outputs where the grades disagree (issue 33, point 5).

The readings live in a CSV tracked by git (``paths.adjudications``; the TLA+-Bench
pipeline's ``pipelines/tlabench/adjudications.csv``), one row per output: ``model`` (the
samples' model, ``<replay key>/<release model>``), ``task_id``, ``judgment``
(:data:`JUDGMENTS`), ``category``, ``evidence``, ``note``. The ``load`` stage reads them
into the ``adjudications`` table; ``sql/19_adjudication.sql`` joins them with the verdicts
(``v_tlabench_grade_disagreements``, ``v_tlabench_behavior_before_after``) and :func:`write_tables`
writes ``reports/table_tlabench_adjudication.md`` and ``.csv``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from alias.errors import AliasError
from alias.report.tables import to_markdown
from alias.store.db import query

#: What a reading can say of an output.
JUDGMENTS = ("real_difference", "grader_limit", "behavior_correct")
COLUMNS = ("model", "task_id", "judgment", "category", "evidence", "note")


def adjudication_rows(path: str | Path) -> pd.DataFrame:
    """The readings in the CSV ``path`` (a missing file: none). Raises :class:`AliasError`
    with one line naming the file and the row for a missing column, an unknown judgment
    or an output read twice."""
    path = Path(path)
    if not path.is_file():
        return pd.DataFrame(columns=list(COLUMNS))
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise AliasError(f"{path}: missing column {missing[0]} (columns: {', '.join(COLUMNS)})")
    df = df[list(COLUMNS)].replace({"": None})
    bad = df[~df.judgment.isin(JUDGMENTS)]
    if len(bad):
        row = bad.index[0] + 2
        raise AliasError(f"{path}: line {row}: judgment must be one of {', '.join(JUDGMENTS)}, "
                         f"got {bad.judgment.iloc[0]!r}")
    dup = df[df.duplicated(["model", "task_id"])]
    if len(dup):
        raise AliasError(f"{path}: line {dup.index[0] + 2}: {dup.model.iloc[0]} {dup.task_id.iloc[0]} is read twice")
    return df.reset_index(drop=True)


def write_tables(db: str | Path, out: str | Path) -> dict:
    """``table_tlabench_adjudication.md`` and ``.csv`` under ``out``: the before/after counts
    per model and regime and every disagreement with its reading (``not read`` where the
    readings lack it). Returns the counts of the readings by judgment."""
    out = Path(out)
    before_after = query("SELECT * FROM v_tlabench_behavior_before_after", db)
    rows = query("SELECT * FROM v_tlabench_grade_disagreements", db)
    rows.to_csv(out / "table_tlabench_adjudication.csv", index=False)
    if not len(rows) and not len(before_after):
        (out / "table_tlabench_adjudication.md").write_text(
            "# Real outputs adjudicated\n\nno data: no external verdicts in this store\n")
        return {}
    shown = rows[["model", "task_id", "disagreement", "behavior_reason", "judgment", "category", "evidence"]]
    counts = rows.judgment.fillna("not read").value_counts().to_dict()
    (out / "table_tlabench_adjudication.md").write_text(
        "# Real outputs adjudicated (issue 33)\n\n"
        "Outputs that pass the benchmark's own TLC check, and how many of them fail by behavior under "
        "the paper's renaming procedure (before) and the refinement procedure (after); `no comparison`: "
        "failures where the grade compared no behaviors (another number of variables or constants, no "
        "specification formula, an evaluation error, a reference without variables).\n\n" +
        to_markdown(before_after) +
        "\n## Every output where the grades disagree, with its reading\n\n"
        f"Readings: {', '.join(f'{k} {v}' for k, v in sorted(counts.items()))}. The full rows, with the "
        "notes, are in `table_tlabench_adjudication.csv`.\n\n" + to_markdown(shown))
    return counts
