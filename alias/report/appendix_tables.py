"""Appendices L (file continuation), M (known algorithm names) and N (truncation) from the
store's views (``sql/11_samples_truncation.sql``, ``sql/13_known_names.sql``,
``sql/14_continuation.sql``) and the statistics in :mod:`alias.stats`.

Every ``table_*`` function returns a numeric :class:`pandas.DataFrame` (rates in percent,
differences in percentage points, ``None`` where there is no data); the ``format_*`` /
``write_appendix_reports`` side turns missing cells into ``no data``. Decreases are
``original - random`` per task (positive: the renamed condition scores lower).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from alias.generate.continuation import LONG_RUN_TOKENS
from alias.report.stats_tables import (COVERED, TEST_SET, _STAT_COLUMNS, _label, _missing, _models, _num, _p,
                                       _paired, _stat_cells, paired_stats)
from alias.report.tables import sources_markdown, to_markdown
from alias.stats import (DEFAULT_RESAMPLES, DEFAULT_SEED, exposure_effects, permutation_test_groups,
                         spearman_permutation)
from alias.store.db import query

__all__ = ["KNOWN_NAME_ROWS", "table_m_known_names", "known_name_tasks", "table_n_truncation",
           "truncation_shares", "table_l_continuation", "write_appendix_reports"]

#: Appendix M rows per model: (grade, scope); the paper reports both grades.
KNOWN_NAME_ROWS = (("name", TEST_SET), ("behavior", COVERED))
#: Appendix N rows per model (Experiment 1 style rates on the truncation subset).
TRUNCATION_ROWS = (("name", TEST_SET), ("behavior", COVERED))
LISTS = ("fixed", "broader")
#: Appendix L: the percentile of runs on renamed copies above which a task counts as
#: continued far beyond what common TLA+ text explains.
RENAMED_RUN_PERCENTILE = 95.0


def _perm(values: np.ndarray, mask: np.ndarray, n_permutations: int, seed: int):
    """Permutation test of mean(values[mask]) - mean(values[~mask]) (fractions); ``None``
    unless both groups are non-empty."""
    if values.size == 0 or mask.all() or not mask.any():
        return None
    return permutation_test_groups(values, mask, n_permutations=n_permutations, seed=seed)


# --------------------------------------------------------------------------- Appendix M
def known_name_tasks(db: str | Path) -> pd.DataFrame:
    """Test-set tasks marked by each list: ``list_name``, ``marked`` tasks, ``tasks``, and
    ``terms`` (term -> tasks, most frequent first), from ``v_known_names``."""
    k = query("SELECT * FROM v_known_names ORDER BY list_name, task_id", db)
    rows = []
    for name in LISTS:
        sel = k[k["list_name"] == name]
        terms: dict[str, int] = {}
        for t in sel["matched_terms"].dropna():
            for term in str(t).split("; "):
                terms[term] = terms.get(term, 0) + 1
        rows.append({"list_name": name, "marked": int(sel["marked"].sum()) if len(sel) else 0,
                     "tasks": int(len(sel)),
                     "terms": ", ".join(f"{t} ({n})" for t, n in sorted(terms.items(), key=lambda x: (-x[1], x[0])))
                     or None})
    return pd.DataFrame(rows)


def table_m_known_names(db: str | Path, *, n_resamples: int = DEFAULT_RESAMPLES,
                        seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """Appendix M: one row per model, ``KNOWN_NAME_ROWS`` entry, list (``fixed`` |
    ``broader``) and group (``known name`` | ``other``) with the :func:`paired_stats`
    columns over that group's paired tasks, and ``perm_diff`` / ``perm_p``: the difference
    of the two groups' mean decreases (known minus other, points) and its two-sided
    permutation p-value (:func:`alias.stats.permutation_test_groups`; ``None`` unless both
    groups have tasks)."""
    split = query("SELECT * FROM v_known_name_split", db)
    rows = []
    for model in _models(db):
        for grade, scope in KNOWN_NAME_ROWS:
            sel_all = _paired(split, model, grade, scope)
            for name in LISTS:
                sel = sel_all[sel_all["list_name"] == name]
                mask = sel["marked"].astype(bool).to_numpy()
                dec = (sel["original_rate"] - sel["random_rate"]).to_numpy(float)
                perm = _perm(dec, mask, n_resamples, seed)
                for group, m in (("known name", mask), ("other", ~mask)):
                    g = sel[m]
                    row = {"model": model, "grade": grade, "scope": scope, "list": name, "group": group}
                    row.update(paired_stats(g["original_rate"].to_numpy(float), g["random_rate"].to_numpy(float),
                                            n_resamples=n_resamples, seed=seed))
                    row.update(perm_diff=None if perm is None else perm.estimate,
                               perm_p=None if perm is None else perm.p_value)
                    rows.append(row)
    return pd.DataFrame(rows, columns=["model", "grade", "scope", "list", "group", *_STAT_COLUMNS,
                                       "perm_diff", "perm_p"])


def format_table_m(df: pd.DataFrame) -> pd.DataFrame:
    """Display strings of :func:`table_m_known_names`."""
    out = []
    for _, r in df.iterrows():
        cells = {"model": r["model"], "measure": _label(r["grade"]), "tasks set": r["scope"],
                 "list": r["list"], "group": r["group"]}
        c = _stat_cells(r)
        cells.update({k: c[k] for k in ("tasks", "original %", "random %", "decrease [95% CI]")})
        cells["known - other (perm. p)"] = (None if _missing(r["perm_diff"]) else
                                            f"{float(r['perm_diff']):.1f} (p={_p(r['perm_p'])})")
        out.append(cells)
    return pd.DataFrame(out)


# --------------------------------------------------------------------------- Appendix N
def truncation_shares(db: str | Path) -> pd.DataFrame:
    """``v_truncation_rates``: truncated outputs per model and condition (share in percent,
    ``None`` when no sample's truncation is known)."""
    t = query("SELECT * FROM v_truncation_rates ORDER BY model, condition", db)
    t["truncated_pct"] = [None if _missing(v) else float(v) * 100 for v in t["truncated_share"]]
    return t.drop(columns=["truncated_share"])


def table_n_truncation(db: str | Path, *, n_resamples: int = DEFAULT_RESAMPLES,
                       seed: int = DEFAULT_SEED) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Appendix N. Returns ``(rates, exposure)``:

    * ``rates``: one row per model and ``TRUNCATION_ROWS`` entry with ``subset_tasks`` /
      ``all_tasks`` (tasks of that scope with no truncated output in any condition for the
      model, out of the model's paired tasks) and the :func:`paired_stats` columns over the
      subset (``v_truncation_subset``).
    * ``exposure``: one row per (family, arm, grade) of Experiment 2 with the exposure
      effects on the tasks where neither model of the arm has a truncated output
      (``v_exposure_truncation``; :func:`alias.stats.exposure_effects`): ``tasks``,
      ``exposure_original``, ``exposure_renamed``, ``did``, ``unseen_cost`` (points) each
      with ``*_low``/``*_high`` 95% bounds. Empty until the exposure experiment has data.
    """
    sub = query("SELECT * FROM v_truncation_subset", db)
    paired = query("SELECT * FROM v_paired_rates", db)
    rows = []
    for model in _models(db):
        for grade, scope in TRUNCATION_ROWS:
            s = _paired(sub, model, grade, scope)
            a = _paired(paired, model, grade, scope)
            row = {"model": model, "grade": grade, "scope": scope,
                   "subset_tasks": int(len(s)) if len(a) else None, "all_tasks": int(len(a)) if len(a) else None}
            row.update(paired_stats(s["original_rate"].to_numpy(float), s["random_rate"].to_numpy(float),
                                    n_resamples=n_resamples, seed=seed))
            rows.append(row)
    rates = pd.DataFrame(rows, columns=["model", "grade", "scope", "subset_tasks", "all_tasks", *_STAT_COLUMNS])

    ex = query("SELECT * FROM v_exposure_truncation WHERE no_truncation ORDER BY family, arm, grade, task_id", db)
    erows = []
    for (family, arm, grade), g in ex.groupby(["family", "arm", "grade"], sort=True):
        if grade == "behavior":
            g = g[g["behavior_covered"].astype(bool)]
        g = g.dropna(subset=["original_seen", "original_unseen", "renamed_seen", "renamed_unseen"])
        if grade not in ("name", "behavior") or g.empty:
            continue
        e = exposure_effects(g["original_seen"], g["original_unseen"], g["renamed_seen"], g["renamed_unseen"],
                             n_resamples=n_resamples, seed=seed)
        row = {"family": family, "arm": arm, "grade": grade, "tasks": e.n_tasks}
        for k in ("exposure_original", "exposure_renamed", "did", "unseen_cost"):
            b = getattr(e, k)
            row.update({k: b.estimate, f"{k}_low": b.ci_low, f"{k}_high": b.ci_high})
        erows.append(row)
    cols = ["family", "arm", "grade", "tasks"] + [f"{k}{s}" for k in ("exposure_original", "exposure_renamed",
                                                                       "did", "unseen_cost")
                                                  for s in ("", "_low", "_high")]
    return rates, pd.DataFrame(erows, columns=cols)


# --------------------------------------------------------------------------- Appendix L
_L_COLUMNS = ["model", "tasks", "long_original", "long_renamed", "long_decrease", "other_decrease", "long_perm_p",
              "spearman_rho", "spearman_p", "renamed_p95", "above_p95", "above_decrease", "above_perm_p"]


def table_l_continuation(db: str | Path, *, n_resamples: int = DEFAULT_RESAMPLES,
                         seed: int = DEFAULT_SEED, long_run: int = LONG_RUN_TOKENS) -> pd.DataFrame:
    """Appendix L: one row per continuation model (``v_continuation_paired``) with

    * ``tasks``: tasks with a run on both copies; ``long_original`` / ``long_renamed``:
      tasks whose original file / renamed copy was continued with a run of at least
      ``long_run`` (50) tokens;
    * over the tasks that also have a name-grade decrease: ``long_decrease`` /
      ``other_decrease`` (mean decrease, points, tasks with / without a long original run)
      and ``long_perm_p`` (permutation p of their difference);
    * ``spearman_rho`` / ``spearman_p``: Spearman correlation of the run difference
      (original - renamed) with the decrease and its permutation p
      (:func:`alias.stats.spearman_permutation`; ``None`` with fewer than 3 tasks or a
      constant input);
    * ``renamed_p95``: the 95th percentile of the runs on renamed copies; ``above_p95``
      tasks whose original run exceeds it, their mean decrease ``above_decrease`` and
      ``above_perm_p`` (vs the other tasks).

    With no continuations the table has one row per model (or a ``None`` model) whose
    cells are ``None``.
    """
    cp = query("SELECT * FROM v_continuation_paired ORDER BY model, task_id", db)
    models = sorted(cp["model"].unique().tolist()) or [None]
    rows = []
    for model in models:
        row: dict[str, Any] = dict.fromkeys(_L_COLUMNS)
        row["model"] = model
        sel = cp[cp["model"] == model]
        if len(sel):
            orig = sel["original_run"].to_numpy(float)
            ren = sel["renamed_run"].to_numpy(float)
            row.update(tasks=int(len(sel)), long_original=int((orig >= long_run).sum()),
                       long_renamed=int((ren >= long_run).sum()))
            p95 = float(np.percentile(ren, RENAMED_RUN_PERCENTILE))
            row["renamed_p95"] = p95
            row["above_p95"] = int((orig > p95).sum())
            d = sel.dropna(subset=["decrease"])
            if len(d):
                dec = d["decrease"].to_numpy(float)
                long_mask = d["original_run"].to_numpy(float) >= long_run
                above = d["original_run"].to_numpy(float) > p95
                if long_mask.any():
                    row["long_decrease"] = float(dec[long_mask].mean() * 100)
                if (~long_mask).any():
                    row["other_decrease"] = float(dec[~long_mask].mean() * 100)
                perm = _perm(dec, long_mask, n_resamples, seed)
                row["long_perm_p"] = None if perm is None else perm.p_value
                if above.any():
                    row["above_decrease"] = float(dec[above].mean() * 100)
                perm = _perm(dec, above, n_resamples, seed)
                row["above_perm_p"] = None if perm is None else perm.p_value
                x = d["run_difference"].to_numpy(float)
                if len(d) >= 3 and np.ptp(x) > 0 and np.ptp(dec) > 0:
                    sp = spearman_permutation(x, dec, n_permutations=n_resamples, seed=seed)
                    row.update(spearman_rho=sp.rho, spearman_p=sp.p_value)
        rows.append(row)
    return pd.DataFrame(rows, columns=_L_COLUMNS)


def format_table_l(df: pd.DataFrame) -> pd.DataFrame:
    """Display strings of :func:`table_l_continuation`."""
    def i(v):
        return None if _missing(v) else str(int(v))

    out = []
    for _, r in df.iterrows():
        out.append({
            "model": r["model"], "tasks": i(r["tasks"]),
            f"original run >= {LONG_RUN_TOKENS}": i(r["long_original"]),
            f"renamed run >= {LONG_RUN_TOKENS}": i(r["long_renamed"]),
            "decrease, long / other (perm. p)": (None if _missing(r["long_perm_p"]) else
                                                 f"{_num(r['long_decrease'])} / {_num(r['other_decrease'])} "
                                                 f"(p={_p(r['long_perm_p'])})"),
            "Spearman run diff. vs decrease (p)": (None if _missing(r["spearman_rho"]) else
                                                   f"{float(r['spearman_rho']):.2f} (p={_p(r['spearman_p'])})"),
            "renamed run p95": _num(r["renamed_p95"]),
            "tasks above p95, decrease (perm. p)": (None if _missing(r["above_p95"]) else
                                                    f"{int(r['above_p95'])}" + (
                                                        "" if _missing(r["above_decrease"]) else
                                                        f", {_num(r['above_decrease'])}") + (
                                                        "" if _missing(r["above_perm_p"]) else
                                                        f" (p={_p(r['above_perm_p'])})")),
        })
    return pd.DataFrame(out)


# --------------------------------------------------------------------------- writing
def _ci(est, lo, hi, digits: int = 1):
    if _missing(est):
        return None
    return " ".join([_f(est, digits), f"[{_f(lo, digits)}, {_f(hi, digits)}]"])


def _f(v, digits: int) -> str:
    text = f"{float(v):.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def write_appendix_reports(db: str | Path, out_dir: str | Path, *, n_resamples: int = DEFAULT_RESAMPLES,
                           seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Write ``table_M_known_names.md``, ``table_N_truncation.md`` and
    ``table_L_continuation.md`` under ``out_dir``. Returns ``{"files": {name: path},
    "metrics": {...}}`` with the marked-task counts of Appendix M."""

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    note = (f"Rates in percent, decreases (original - random) in percentage points with 95% bootstrap CIs "
            f"from {n_resamples} resamples of tasks (seed {seed}); permutation tests with {n_resamples} "
            "permutations.\n\n")
    boot = {"n_resamples": n_resamples, "seed": seed}
    marked = known_name_tasks(db)
    p_m, tm = _write_table_m(db, out, marked, note, boot)
    p_n, rates, expo = _write_table_n(db, out, note, boot)
    p_l, tl = _write_table_l(db, out, boot)
    files = {p.name: str(p) for p in (p_m, p_n, p_l)}
    metrics = {f"known_name_tasks_{r['list_name']}": int(r["marked"]) for _, r in marked.iterrows()}
    return {"files": files, "metrics": metrics, "tables": {"M": tm, "N": rates, "N_exposure": expo, "L": tl}}


def _write_table_m(db, out: Path, marked: pd.DataFrame, note: str, boot: dict) -> tuple[Path, pd.DataFrame]:
    """Appendix M's file; returns its path and the table."""
    tm = table_m_known_names(db, **boot)
    terms = query("SELECT task_id, list_name, matched_terms FROM v_known_names WHERE marked "
                  "ORDER BY list_name DESC, task_id", db)
    p = out / "table_M_known_names.md"
    p.write_text("# Appendix M: known algorithm names\n\n"
                 "A test-set task is marked when its renamed description contains a term of the list "
                 "(`v_known_name_terms`; the broader list adds problem words to the fixed one).\n\n"
                 + to_markdown(marked.rename(columns={"list_name": "list", "tasks": "test-set tasks"}))
                 + "\n## Correctness and decrease, marked tasks vs the others\n\n" + note
                 + to_markdown(format_table_m(tm))
                 + "\n## Marked tasks\n\n" + (to_markdown(terms) if len(terms) else "none\n")
                 + "\n" + sources_markdown(db))
    return p, tm


def _write_table_n(db, out: Path, note: str, boot: dict) -> tuple[Path, pd.DataFrame, pd.DataFrame]:
    """Appendix N's file; returns its path, the rates and the Experiment 2 rows."""
    shares = truncation_shares(db)
    rates, expo = table_n_truncation(db, **boot)
    rates_fmt = []
    for _, r in rates.iterrows():
        c = _stat_cells(r)
        rates_fmt.append({"model": r["model"], "measure": _label(r["grade"]), "tasks set": r["scope"],
                          "tasks without truncation": (None if _missing(r["subset_tasks"]) else
                                                       f"{int(r['subset_tasks'])}/{int(r['all_tasks'])}"),
                          **{k: c[k] for k in ("original %", "random %", "decrease [95% CI]", "sign test")}})
    expo_fmt = [{"family": r["family"], "arm": r["arm"], "measure": _label(r["grade"]), "tasks": str(int(r["tasks"])),
                 "exposure, original": _ci(r["exposure_original"], r["exposure_original_low"],
                                           r["exposure_original_high"]),
                 "exposure, renamed": _ci(r["exposure_renamed"], r["exposure_renamed_low"],
                                          r["exposure_renamed_high"]),
                 "DiD": _ci(r["did"], r["did_low"], r["did_high"]),
                 "unseen cost": _ci(r["unseen_cost"], r["unseen_cost_low"], r["unseen_cost_high"])}
                for _, r in expo.iterrows()]
    share_fmt = shares.assign(truncated_pct=[_num(v) for v in shares["truncated_pct"]])
    p = out / "table_N_truncation.md"
    p.write_text("# Appendix N: truncation\n\n"
                 "An output is truncated when it reaches the token limit or lacks the closing line of a module "
                 "(`v_sample_meta.truncated_output`).\n\n## Truncated outputs\n\n"
                 + (to_markdown(share_fmt) if len(shares) else "no data\n")
                 + "\n## Tasks with no truncated output in any condition\n\n" + note
                 + to_markdown(pd.DataFrame(rates_fmt))
                 + "\n## Experiment 2 on the tasks with no truncated output (either model of the arm)\n\n"
                 + (to_markdown(pd.DataFrame(expo_fmt)) if expo_fmt else "no data\n")
                 + "\n" + sources_markdown(db))
    return p, rates, expo


def _write_table_l(db, out: Path, boot: dict) -> tuple[Path, pd.DataFrame]:
    """Appendix L's file; returns its path and the table."""
    tl = table_l_continuation(db, **boot)
    p = out / "table_L_continuation.md"
    p.write_text("# Appendix L: file continuation\n\n"
                 "Longest run of TLA+ tokens a continuation shares with the real rest of the file (comments and "
                 "separator lines removed), on the original file and on its renamed copy; decreases are the "
                 "same model's name-grade decreases (points).\n\n" + to_markdown(format_table_l(tl))
                 + "\n" + sources_markdown(db))
    return p, tl
