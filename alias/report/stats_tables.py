"""Table 1, the Appendix U hidden-name split and the Appendix P disagreements, from the
store's views in ``sql/10_stats.sql`` and the statistics in :mod:`alias.stats`.

Paper: Methods, "Metrics" (per-task pass rate over five samples; mean difference with a
95% bootstrap interval over tasks; two-sided sign test over the tasks whose rates differ;
TOST at a 5-point margin, equivalence when the 90% interval lies inside it), Methods,
Experiment 3 "Disagreements", Results (Table 1), Appendices P and U.

Every ``*_table`` function returns a numeric :class:`pandas.DataFrame` (rates in percent,
differences in percentage points; ``None``/NaN where there is no data) and has a
``format_*`` counterpart that turns it into display strings for Markdown, where missing
cells read ``no data`` (never 0). Decreases are ``original - random``: positive means the
renamed condition scores lower. Only tasks with both an original and a random rate enter a
comparison ("paired tasks").

Task sets ("scope"): ``test set`` is every test-set task with data; ``behavior-covered``
is the tasks the behavior-based grade covers (eligible and reference accepted against
itself, Appendix J). The behavior grade is reported on covered tasks only, and the name
grade on both, so Experiment 3 compares the two grades on the same tasks.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from alias.report.tables import sources_markdown, to_markdown
from alias.stats import (DEFAULT_RESAMPLES, DEFAULT_SEED, mean_difference, sign_test,
                         tost_equivalence)
from alias.store.db import query

TEST_SET = "test set"
COVERED = "behavior-covered"
#: Table 1 rows per model: (grade, scope). Parse and name over the test set (Experiment 1),
#: behavior and name over covered tasks (Experiment 3 compares them on the same tasks).
TABLE_1_ROWS = (("parse", TEST_SET), ("name", TEST_SET), ("behavior", COVERED), ("name", COVERED))
#: Appendix U rows per model and hidden split: name over the test set (Results, "Hidden
#: names"), name and behavior over covered tasks (Appendix U).
HIDDEN_ROWS = (("name", TEST_SET), ("name", COVERED), ("behavior", COVERED))
#: Equivalence margin of the TOST, in percentage points (Methods, "Metrics").
MARGIN = 5.0
GRADE_LABELS = {"parse": "Parse (SANY)", "name": "Correct, name", "behavior": "Correct, behavior"}

_STAT_COLUMNS = ["tasks", "original_pct", "random_pct", "decrease", "ci95_low", "ci95_high",
                 "ci90_low", "ci90_high", "tost_equivalent", "tost_p", "n_lower", "n_higher",
                 "sign_p"]


def _to_markdown(df: pd.DataFrame) -> str:
    # Imported here: alias.report.tables may import this module at its top.

    return to_markdown(df)


# --------------------------------------------------------------------------- statistics
def paired_stats(original, random, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                 margin: float = MARGIN) -> dict[str, Any]:
    """Every Table 1 statistic of two aligned per-task rate vectors (fractions in [0, 1]).

    Returns a dict with the keys of ``_STAT_COLUMNS``: ``tasks``; ``original_pct`` and
    ``random_pct`` (mean rates in percent); ``decrease`` with its 95% bootstrap interval
    ``ci95_low``/``ci95_high`` (:func:`alias.stats.mean_difference`); the 90% interval
    ``ci90_low``/``ci90_high``, ``tost_equivalent`` and the bootstrap TOST ``tost_p``
    (:func:`alias.stats.tost_equivalence` at ``margin`` points); ``n_lower``/``n_higher``
    (tasks whose random rate is lower/higher than the original) and ``sign_p``
    (:func:`alias.stats.sign_test`). With no task every value is ``None``; with one task
    the TOST values are ``None`` (it needs two).
    """
    a = np.asarray(original, dtype=float)
    b = np.asarray(random, dtype=float)
    out: dict[str, Any] = dict.fromkeys(_STAT_COLUMNS)
    if a.size == 0:
        return out
    md = mean_difference(a, b, n_resamples=n_resamples, seed=seed)
    st = sign_test(a, b)
    out.update(tasks=int(a.size), original_pct=md.mean_a, random_pct=md.mean_b, decrease=md.estimate,
               ci95_low=md.ci_low, ci95_high=md.ci_high, n_lower=st.n_a_higher, n_higher=st.n_b_higher,
               sign_p=st.p_value)
    if a.size >= 2:
        t = tost_equivalence(a, b, margin=margin, n_resamples=n_resamples, seed=seed)
        out.update(ci90_low=t.ci_low, ci90_high=t.ci_high, tost_equivalent=t.equivalent, tost_p=t.p_boot)
    return out


def _models(db) -> list:
    """Models of Experiment 1 with samples or verdicts, sorted: neither grader controls
    (``control:*``) nor the adapters the ``exposure`` stage sampled (``model_key =
    'exposure'``; Experiment 2 has Tables 2, F.1, O.1); ``[None]`` when there are none (so
    the tables still have rows, which then read ``no data``)."""
    df = query("SELECT model FROM (SELECT model FROM samples UNION SELECT model FROM verdicts) "
               "WHERE model NOT LIKE 'control:%' AND model NOT IN "
               "(SELECT DISTINCT model FROM samples WHERE model_key = 'exposure' AND model IS NOT NULL) "
               "ORDER BY model", db)
    models = df["model"].tolist()
    return models or [None]


def _paired(frame: pd.DataFrame, model, grade: str, scope: str,
            a_col: str = "original_rate", b_col: str = "random_rate") -> pd.DataFrame:
    sel = frame[(frame["model"] == model) & (frame["grade"] == grade)
                & frame[a_col].notna() & frame[b_col].notna()]
    if scope == COVERED:
        sel = sel[sel["behavior_covered"].astype(bool)]
    return sel.sort_values("task_id")


# --------------------------------------------------------------------------- Table 1
def table_1(db: str | Path, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
            margin: float = MARGIN) -> pd.DataFrame:
    """Table 1 (Results; Appendix U for the covered rows): one row per model and
    ``TABLE_1_ROWS`` entry with ``model``, ``grade``, ``scope``, the :func:`paired_stats`
    columns over the paired tasks of that scope, and ``meaningful_pct`` /
    ``meaningful_tasks`` (the mean meaningful-condition rate over the tasks of that scope
    that have one; Appendix R compares the conditions on those tasks)."""
    paired = query("SELECT * FROM v_paired_rates", db)
    rows = []
    for model in _models(db):
        for grade, scope in TABLE_1_ROWS:
            sel = _paired(paired, model, grade, scope)
            row = {"model": model, "grade": grade, "scope": scope}
            row.update(paired_stats(sel["original_rate"].to_numpy(), sel["random_rate"].to_numpy(),
                                    n_resamples=n_resamples, seed=seed, margin=margin))
            m = paired[(paired["model"] == model) & (paired["grade"] == grade)
                       & paired["meaningful_rate"].notna()]
            if scope == COVERED:
                m = m[m["behavior_covered"].astype(bool)]
            row["meaningful_pct"] = float(m["meaningful_rate"].mean() * 100) if len(m) else None
            row["meaningful_tasks"] = int(len(m)) if len(m) else None
            rows.append(row)
    return pd.DataFrame(rows, columns=["model", "grade", "scope", *_STAT_COLUMNS, "meaningful_pct",
                                       "meaningful_tasks"])


# --------------------------------------------------------------------------- Appendix U
def table_u_hidden(db: str | Path, *, n_resamples: int = DEFAULT_RESAMPLES,
                   seed: int = DEFAULT_SEED, margin: float = MARGIN) -> pd.DataFrame:
    """The hidden-name split (Results "Hidden names"; Appendix U): one row per model,
    ``HIDDEN_ROWS`` entry and ``split`` (``hidden``: the cfg lists a name the description
    never mentions; ``stated``: every required name is stated), with the
    :func:`paired_stats` columns over that split's paired tasks."""
    split = query("SELECT * FROM v_hidden_split", db)
    rows = []
    for model in _models(db):
        for grade, scope in HIDDEN_ROWS:
            for name, hidden in (("hidden", True), ("stated", False)):
                sel = _paired(split, model, grade, scope)
                sel = sel[sel["has_hidden"].astype(bool) == hidden]
                row = {"model": model, "grade": grade, "scope": scope, "split": name}
                row.update(paired_stats(sel["original_rate"].to_numpy(), sel["random_rate"].to_numpy(),
                                        n_resamples=n_resamples, seed=seed, margin=margin))
                rows.append(row)
    return pd.DataFrame(rows, columns=["model", "grade", "scope", "split", *_STAT_COLUMNS])


# --------------------------------------------------------------------------- Appendix P
def table_p_disagreements(db: str | Path) -> pd.DataFrame:
    """Appendix P counts: one row per model and condition (covered tasks) with ``tasks``,
    ``samples``, ``behavior_only``, ``name_only``, ``both``, ``neither``. A model without
    samples graded by both grades gets rows of ``None`` for the original and random
    conditions."""
    df = query("SELECT * FROM v_grade_disagreements ORDER BY model, condition", db)
    order = {"original": 0, "random": 1, "meaningful": 2}
    conditions = sorted(set(df["condition"]) | {"original", "random"}, key=lambda c: (order.get(c, 3), c))
    rows = []
    for model in _models(db):
        for cond in conditions:
            hit = df[(df["model"] == model) & (df["condition"] == cond)]
            row = {"model": model, "condition": cond}
            if len(hit):
                h = hit.iloc[0]
                row.update(tasks=int(h.n_tasks), samples=int(h.n_samples), behavior_only=int(h.behavior_only),
                           name_only=int(h.name_only), both=int(h.both_pass), neither=int(h.neither))
            elif cond not in ("original", "random"):
                continue
            rows.append(row)
    return pd.DataFrame(rows, columns=["model", "condition", "tasks", "samples", "behavior_only",
                                       "name_only", "both", "neither"])


def disagreement_causes(db: str | Path) -> pd.DataFrame:
    """Disagreeing samples counted by cause: one row per model, ``disagreement``
    (``name_only`` | ``behavior_only``) and ``failing_reason`` (the failing grade's
    reason code), with ``samples`` and ``tasks``, most frequent first."""
    return query("SELECT model, disagreement, coalesce(failing_reason, '(none)') AS failing_reason, "
                 "count(*) AS samples, count(DISTINCT task_id) AS tasks "
                 "FROM v_disagreement_samples GROUP BY ALL "
                 "ORDER BY model, disagreement, samples DESC, failing_reason", db)


def upper_bound_table(db: str | Path, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                      margin: float = MARGIN) -> pd.DataFrame:
    """Appendix P upper bound: per model, the decrease when a sample counts as correct if
    either grade passes it (every name-only pass credited), over covered paired tasks, with
    the :func:`paired_stats` columns."""
    ub = query("SELECT model, task_id, condition, rate FROM v_upper_bound", db)
    by_cond = {c: ub[ub["condition"] == c].set_index(["model", "task_id"])["rate"] for c in ("original", "random")}
    wide = pd.concat(by_cond, axis=1, join="inner").reset_index()
    rows = []
    for model in _models(db):
        sel = wide[wide["model"] == model].sort_values("task_id")
        row = {"model": model, "grade": "behavior or name", "scope": COVERED}
        row.update(paired_stats(sel["original"].to_numpy(dtype=float), sel["random"].to_numpy(dtype=float),
                                n_resamples=n_resamples, seed=seed, margin=margin))
        rows.append(row)
    return pd.DataFrame(rows, columns=["model", "grade", "scope", *_STAT_COLUMNS])


# --------------------------------------------------------------------------- formatting
def _missing(v) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))


def _num(v, digits: int = 1):
    return None if _missing(v) else f"{float(v):.{digits}f}"


def _p(v):
    if _missing(v):
        return None
    v = float(v)
    if v < 0.0001:
        return "<0.0001"
    return f"{v:.2g}" if v < 0.01 else f"{v:.2f}"


def _eq(p: str) -> str:
    return p if p.startswith("<") else "=" + p


def _interval(est, lo, hi):
    if _missing(est):
        return None
    if _missing(lo) or _missing(hi):
        return _num(est)
    return f"{float(est):.1f} [{float(lo):.1f}, {float(hi):.1f}]"


def _stat_cells(r) -> dict[str, Any]:
    ci90 = None if _missing(r["ci90_low"]) else f"[{float(r['ci90_low']):.1f}, {float(r['ci90_high']):.1f}]"
    tost = None
    if not _missing(r["tost_equivalent"]):
        tost = ("equivalent" if bool(r["tost_equivalent"]) else "not shown") + f" (p{_eq(_p(r['tost_p']))})"
    sign = None
    if not _missing(r["sign_p"]):
        sign = f"{int(r['n_lower'])} lower / {int(r['n_higher'])} higher, p{_eq(_p(r['sign_p']))}"
    return {"tasks": None if _missing(r["tasks"]) else str(int(r["tasks"])),
            "original %": _num(r["original_pct"]), "random %": _num(r["random_pct"]),
            "decrease [95% CI]": _interval(r["decrease"], r["ci95_low"], r["ci95_high"]),
            "90% CI": ci90, f"TOST ±{MARGIN:g}": tost, "sign test": sign}


def _label(grade: str) -> str:
    return GRADE_LABELS.get(grade, grade)


def format_table_1(df: pd.DataFrame) -> pd.DataFrame:
    """Display strings of :func:`table_1` (``None`` where there is no data)."""
    rows = []
    for _, r in df.iterrows():
        cells = {"model": r["model"], "measure": _label(r["grade"]), "tasks set": r["scope"]}
        cells.update(_stat_cells(r))
        cells["meaningful % (tasks)"] = (None if _missing(r["meaningful_pct"]) else
                                         f"{float(r['meaningful_pct']):.1f} ({int(r['meaningful_tasks'])})")
        rows.append(cells)
    return pd.DataFrame(rows)


def format_table_u(df: pd.DataFrame) -> pd.DataFrame:
    """Display strings of :func:`table_u_hidden`."""
    rows = []
    for _, r in df.iterrows():
        cells = {"model": r["model"], "measure": _label(r["grade"]), "tasks set": r["scope"],
                 "required names": "hidden name" if r["split"] == "hidden" else "all stated"}
        cells.update(_stat_cells(r))
        rows.append(cells)
    return pd.DataFrame(rows)


def format_upper_bound(df: pd.DataFrame) -> pd.DataFrame:
    """Display strings of :func:`upper_bound_table`."""
    rows = []
    for _, r in df.iterrows():
        cells = {"model": r["model"], "measure": "Correct, behavior or name", "tasks set": r["scope"]}
        cells.update(_stat_cells(r))
        rows.append(cells)
    return pd.DataFrame(rows)


def format_counts(df: pd.DataFrame) -> pd.DataFrame:
    """Integer cells as text, ``None`` left for ``no data``."""
    out = df.astype(object).copy()
    for c in out.columns:
        out[c] = [None if _missing(v) else (str(int(v)) if isinstance(v, (int, np.integer, float)) else v)
                  for v in out[c]]
    return out


# --------------------------------------------------------------------------- report
def write_stats_reports(db: str | Path, out_dir: str | Path, *, n_resamples: int = DEFAULT_RESAMPLES,
                        seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Write ``table_1.md``, ``table_U_hidden.md`` and ``table_P_disagreements.md`` under
    ``out_dir`` from the store ``db``.

    Returns a JSON-serialisable dict: ``files`` (name -> path written) and ``stats``, a flat
    dict of headline numbers keyed ``"<model>/<grade>/<scope>/<field>"`` for the Table 1
    rows and ``"<model>/upper_bound/<field>"`` for Appendix P (``field`` one of ``tasks``,
    ``original_pct``, ``random_pct``, ``decrease``, ``ci95_low``, ``ci95_high``,
    ``sign_p``), ``None`` where there is no data; and ``tables``, the numeric frames of
    Table 1 (``"1"``) and Appendix U (``"U"``) that the figures plot.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t1 = table_1(db, n_resamples=n_resamples, seed=seed)
    tu = table_u_hidden(db, n_resamples=n_resamples, seed=seed)
    tp = table_p_disagreements(db)
    ub = upper_bound_table(db, n_resamples=n_resamples, seed=seed)
    causes = disagreement_causes(db)
    note = (f"Rates in percent, differences in percentage points (original - random) over paired "
            f"tasks, 95% percentile bootstrap CIs and 90% CIs from {n_resamples} resamples of tasks "
            f"(seed {seed}); TOST at ±{MARGIN:g} points (equivalent when the 90% CI lies inside); "
            "two-sided sign test over tasks whose rates differ ('lower': the random rate is lower).\n\n")

    files = {}
    p = out / "table_1.md"
    sources = "\n" + sources_markdown(db)
    p.write_text("# Table 1: models on the test set\n\n" + note
                 + "The behavior-based rows and the second name-based row use the tasks the "
                   "behavior-based grade covers.\n\n" + _to_markdown(format_table_1(t1)) + sources)
    files[p.name] = str(p)

    p = out / "table_U_hidden.md"
    p.write_text("# Appendix U: split by hidden required names\n\n" + note
                 + _to_markdown(format_table_u(tu)) + sources)
    files[p.name] = str(p)

    p = out / "table_P_disagreements.md"
    p.write_text("# Appendix P: disagreements between the two grades\n\n"
                 "Samples on the tasks the behavior-based grade covers.\n\n" + _to_markdown(format_counts(tp))
                 + "\n## Upper bound: a sample is correct if either grade passes it\n\n" + note
                 + _to_markdown(format_upper_bound(ub))
                 + "\n## Disagreeing samples by cause (reason of the failing grade)\n\n"
                 + (_to_markdown(format_counts(causes)) if len(causes) else "no data\n") + sources)
    files[p.name] = str(p)

    def clean(v, f):
        if _missing(v):
            return None
        if isinstance(v, float) and v.is_integer() and f == "tasks":
            return int(v)
        return v.item() if isinstance(v, np.generic) else v

    fields = ("tasks", "original_pct", "random_pct", "decrease", "ci95_low", "ci95_high", "sign_p")
    stats: dict[str, Any] = {}
    for _, r in t1.iterrows():
        for f in fields:
            stats[f"{r['model']}/{r['grade']}/{r['scope']}/{f}"] = clean(r[f], f)
    for _, r in ub.iterrows():
        for f in fields:
            stats[f"{r['model']}/upper_bound/{f}"] = clean(r[f], f)
    return {"files": files, "stats": stats, "tables": {"1": t1, "U": tu}}
