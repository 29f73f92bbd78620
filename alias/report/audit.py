"""The benchmark builder's audit of a built corpus (``alias-cir audit``; README "Your own
specifications"): what to read before publishing a renamed benchmark.

Per task (view ``v_audit_tasks``): whether the renamed copy verified (else the reason), the
cfg names its description never states (the paper's hidden names, Methods "Hidden required
names") with their kind, the names the name grade needs, what the descriptions would have
to add so that a correct answer written from them can pass the name grade, whether the
behavior grade can grade it (Appendix J's eligibility and the reference against itself)
and the original names left in the renamed copy (``v_leftover_names``). One summary line
per corpus (``v_audit_summary``): tasks, verified, tasks with hidden names, hidden names by
kind (the counts of ``v_hidden_names_*``, Table U's split).

The audit reads any store snapshot, a released one too: it works on a temporary store
restored from it, into which it writes the ``leftover_names`` rows computed afresh from the
renamed copies (:func:`store_leftovers`) and the views of ``sql/``; the store itself is
unchanged.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import duckdb
import pandas as pd

from alias.rename.cir import RenameResult, leftover_identifiers
from alias.rename.comments import leftover_rows
from alias.store.db import restore_store, table_frame
from alias.store.models import LeftoverName
from alias.tla.cfg import CfgError, parse_cfg
from alias.tla.syntax import STANDARD_MODULES

__all__ = ["store_leftovers", "audit_store", "write_audit", "summary_line"]

#: The per-task columns of the Markdown table (the CSV has every column of v_audit_tasks).
_MD_COLUMNS = ("task_id", "verified", "reason", "n_hidden", "add_to_description", "behavior_gradable",
               "behavior_why_not", "n_leftover")


def _cfg_names(cfg_text: str | None) -> set[str]:
    try:
        return {n for v in parse_cfg(cfg_text or "").names().values() for n in v}
    except CfgError:
        return set()


def store_leftovers(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """The ``leftover_names`` rows of every renamed task of a store, computed from its
    renamed modules, cfg and description (:func:`alias.rename.comments.leftover_rows`)."""
    q = lambda sql: con.execute(sql).df()  # noqa: E731
    tasks = q("SELECT t.task_id, t.cfg_text, r.cfg_text AS renamed_cfg, r.description FROM tasks t "
              "JOIN renamed_tasks r USING (task_id) WHERE r.status = 'ok'")
    modules, mods = q("SELECT task_id, module, role, text FROM modules"), q("SELECT task_id, module, text FROM renamed_modules")
    maps = q("SELECT task_id, old, new, kind FROM rename_map")
    rows: list[dict] = []
    for t in tasks.itertuples():
        m = maps[maps.task_id == t.task_id]
        mapping = dict(zip(m.old, m.new))
        own = modules[modules.task_id == t.task_id]
        library = {m.module: m.text for m in own.itertuples() if m.role == "library"}
        renamed = {m.module: m.text for m in mods[mods.task_id == t.task_id].itertuples()}
        res = RenameResult(mapping, [], renamed, {}, t.renamed_cfg, library_modules=library)
        rows += leftover_rows(t.task_id, mapping, renamed, t.renamed_cfg, t.description,
                              leftover_identifiers(res, set(mapping)), cfg_names=_cfg_names(t.cfg_text),
                              module_names=set(STANDARD_MODULES) | set(m.old[m.kind == "module"]) | set(library))
    return table_frame(rows, LeftoverName)


def audit_store(snapshot: str | Path, sql_dir: str | Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``(tasks, summary, hidden by kind)``: the audit views of the store snapshot
    ``snapshot`` (module docstring), computed on a temporary store restored from it (every
    table in today's columns, a released snapshot's too) with the views of ``sql_dir``."""
    with tempfile.TemporaryDirectory(prefix="alias-audit-") as tmp:
        copy = Path(tmp) / "audit.duckdb"
        restore_store(snapshot, copy)
        con = duckdb.connect(str(copy))
        try:
            con.register("_leftovers", store_leftovers(con))
            con.execute("DELETE FROM leftover_names")
            con.execute("INSERT INTO leftover_names SELECT * FROM _leftovers")
            for f in sorted(Path(sql_dir).glob("*.sql")):
                con.execute(f.read_text(encoding="utf-8"))
            return (con.execute("SELECT * FROM v_audit_tasks").df(), con.execute("SELECT * FROM v_audit_summary").df(),
                    con.execute("SELECT * FROM v_audit_hidden_by_kind").df())
        finally:
            con.close()


def summary_line(label: str, summary: pd.DataFrame) -> str:
    """The corpus's summary line: tasks, verified, tasks with hidden names, hidden names by
    kind, behavior-gradable tasks, leftover names."""
    s = summary.iloc[0]
    return (f"{label}: {s.candidates} candidates, {s.tasks} tasks, {s.verified} verified; "
            f"{s.tasks_with_hidden_names}/{s.verified} verified tasks with hidden names, {s.hidden_names} hidden "
            f"names ({s.hidden_by_kind or 'none'}); behavior grade: {s.behavior_gradable} gradable, "
            f"{s.behavior_unknown} without a controls verdict yet; {s.leftover_names} leftover original "
            f"names ({s.kept_english_words} English words kept in comments, counted apart)")


def _md_table(df: pd.DataFrame) -> str:
    cells = lambda v: "" if v is None or (not isinstance(v, str) and pd.isna(v)) else str(v).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(cells(v) for v in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)


def write_audit(snapshot: str | Path, sql_dir: str | Path, out: str | Path, label: str) -> dict[str, object]:
    """Write ``audit.md``, ``audit_tasks.csv`` and ``audit_summary.csv`` under ``out`` for
    the store snapshot ``snapshot``; returns the summary (``label`` names the corpus)."""
    tasks, summary, by_kind = audit_store(snapshot, sql_dir)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    line = summary_line(label, summary)
    tasks.to_csv(out / "audit_tasks.csv", index=False)
    summary.assign(corpus=label).to_csv(out / "audit_summary.csv", index=False)
    md = ["# Audit: the renamed corpus before publishing", "", line, "",
          "Hidden names (stated by no description) of the verified tasks by cfg kind:", "",
          _md_table(by_kind) if len(by_kind) else "none", "",
          "## Per task", "", "Every column, and the names the name grade needs: `audit_tasks.csv`, "
          "`alias-cir query \"SELECT * FROM v_audit_tasks\"` (in a pipeline folder: "
          "`alias-cir query --params ../../params.yaml --params params.yaml \"SELECT * FROM v_audit_tasks\"`).", "", _md_table(tasks[list(_MD_COLUMNS)])]
    (out / "audit.md").write_text("\n".join(md) + "\n", encoding="utf-8")
    return {"summary": line, "tasks": len(tasks)}
