"""Table J.2: the behavior grade on correct outputs written another way (issue 33).

From the views of ``sql/18_equivalence_controls.sql``: per equivalence class (conjuncts
reordered, definitions inlined, variables merged or split, constants defined, values
re-encoded, a history variable added, an action split) and procedure (the refinement
mappings of the configured ``behavior`` grade; the paper's renamings, grade
``behavior_renaming``), how many TLC-confirmed variants each procedure accepts. Every
variant is a correct output, so each rejection is a false negative of the grade.
``table_J2.md`` also lists the variants TLC did not confirm (with the reason) and the
kept variants the configured procedure rejects. Cells without data say ``no data``.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pandas as pd

from alias.report.tables import to_markdown
from alias.store.db import query

__all__ = ["write_equivalence_report", "FILE"]

FILE = "table_J2.md"
_TITLE = "# Table J.2: the behavior grade on equivalent restructurings of the references\n\n"


def _rate(row) -> str | None:
    if row.kept is None or pd.isna(row.kept) or not row.kept:
        return None
    return f"{100 * row.accepted / row.kept:.1f}%"


def _query(sql: str, db) -> pd.DataFrame | None:
    """A view's rows; None when the store has no such view (a snapshot older than the view)."""
    try:
        return query(sql, db)
    except duckdb.CatalogException:
        return None


def _table(j2: pd.DataFrame) -> pd.DataFrame:
    out = j2.astype(object).where(j2.notna(), None)
    out["accepted_pct"] = [_rate(r) for r in out.itertuples()]
    return out[["class", "procedure", "kept", "accepted", "accepted_pct", "tasks"]]


def write_equivalence_report(db: str | Path, out: Path) -> dict:
    """Write ``table_J2.md`` under ``out``; returns ``{"metrics": ..., "files": [...]}``:
    ``grader_equivalence_kept`` and ``grader_equivalence_accepted/<procedure>`` (None
    without data)."""
    j2 = _query("SELECT class, procedure, kept, accepted, tasks FROM v_table_j2", db)
    ran = j2 is not None and j2.kept.notna().any()
    metrics: dict = {"grader_equivalence_kept": None, "grader_equivalence_accepted/refinement": None,
                     "grader_equivalence_accepted/renaming": None}
    if not ran:
        text = _TITLE + "no data: the controls stage has not generated equivalence controls\n"
    else:
        for proc in ("refinement", "renaming"):
            part = j2[j2.procedure == proc]
            metrics[f"grader_equivalence_accepted/{proc}"] = int(part.accepted.fillna(0).sum())
        metrics["grader_equivalence_kept"] = int(j2[j2.procedure == "refinement"].kept.fillna(0).sum())
        not_kept = _query("SELECT * FROM v_equivalence_not_kept", db)
        rejected = _query("SELECT class, task_id, variant_id, reason FROM v_equivalence_rejected", db)
        text = (_TITLE
                + "Each variant is a reference's system module restructured so that its behaviors stay the same "
                "(alias/grade/equivalence), kept only when TLC confirms it against the reference under the "
                "mapping its generator knows, in both directions. `refinement`: the grade `behavior` "
                "(params `grade.behavior.mappings`); `renaming`: the paper's procedure (grade "
                "`behavior_renaming`). Every rejection is a false negative.\n\n"
                + to_markdown(_table(j2))
                + "\n## Kept variants the refinement procedure rejects\n\n"
                + (to_markdown(rejected) if rejected is not None and len(rejected) else "none\n")
                + "\n## Variants not kept, and classes that made none for a task\n\n"
                + (to_markdown(not_kept) if not_kept is not None and len(not_kept) else "none\n"))
    (out / FILE).write_text(text)
    return {"metrics": metrics, "files": [FILE]}
