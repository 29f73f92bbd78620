"""Figures S.1, T.1 and U.1 as PNG (matplotlib, Agg backend) and as the data DVC plots
renders (CSV under ``reports/plots/``; ``plots:`` in ``dvc.yaml``).

Paper: Appendix S, Figure S.1 (name-based grade, split by whether a required name is
hidden); Appendix T, Figure T.1 (randomized exposure: (a) behavior-based pass rates of the
four cells, (b) their effects with 95% CIs, (c) the likelihood effects with 95% CIs);
Appendix U, Figure U.1 (name vs behavior grade on
the tasks the behavior grade covers; decreases original - random with 95% CIs).

Each figure's numbers come from the same functions as the tables
(:func:`alias.report.stats_tables.table_u_hidden`, :func:`~alias.report.stats_tables.table_1`,
:func:`alias.report.exposure.exposure_effects_table`), so figures and tables agree. A
figure with no data draws a labeled empty panel that says "no data"; its CSV then holds
the header only. Every bar carries its value, a zero bar shows as a line at 0, and effects
are points with their intervals, so a figure of zeros (the tiny model's) still reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from alias.report.stats_tables import COVERED, TEST_SET, _missing  # noqa: E402

__all__ = ["figure_s1_data", "figure_u1_data", "figure_t1_data", "write_figures", "FIGURES"]

#: Figure name -> (PNG file under figures/, CSV file(s) under plots/).
FIGURES = {
    "S1": ("figure_S1.png", ("figure_S1.csv",)),
    "T1": ("figure_T1.png", ("figure_T1a.csv", "figure_T1b.csv", "figure_T1c.csv")),
    "U1": ("figure_U1.png", ("figure_U1.csv",)),
}
_COND_COLORS = {"original": "#4C72B0", "random": "#DD8452"}
_GRADE_COLORS = {"name": "#8172B3", "behavior": "#55A868"}
_DPI = 120


def _num(v):
    return None if _missing(v) else float(v)


def figure_s1_data(table_u: pd.DataFrame) -> pd.DataFrame:
    """Figure S.1 data from :func:`~alias.report.stats_tables.table_u_hidden`: one row per
    model, split (``hidden`` | ``stated``) and condition with ``pass_pct`` (name grade, test
    set, percent) and ``tasks``; rows without data are left out."""
    rows = []
    sel = table_u[(table_u["grade"] == "name") & (table_u["scope"] == TEST_SET)]
    for _, r in sel.iterrows():
        if r["model"] is None or _missing(r["tasks"]):
            continue
        for cond, col in (("original", "original_pct"), ("random", "random_pct")):
            rows.append({"model": r["model"], "split": r["split"], "condition": cond,
                         "pass_pct": _num(r[col]), "tasks": int(r["tasks"]),
                         "series": f"{r['model']} / {r['split']} / {cond}"})
    return pd.DataFrame(rows, columns=["model", "split", "condition", "pass_pct", "tasks", "series"])


def figure_u1_data(table1: pd.DataFrame) -> pd.DataFrame:
    """Figure U.1 data from :func:`~alias.report.stats_tables.table_1`: one row per model and
    grade (``name``, ``behavior``) on the covered tasks with ``original_pct``,
    ``random_pct``, ``decrease`` and its 95% CI (points) and ``tasks``."""
    rows = []
    sel = table1[(table1["scope"] == COVERED) & table1["grade"].isin(["name", "behavior"])]
    for _, r in sel.iterrows():
        if r["model"] is None or _missing(r["decrease"]):
            continue
        rows.append({"model": r["model"], "grade": r["grade"], "tasks": int(r["tasks"]),
                     "original_pct": _num(r["original_pct"]), "random_pct": _num(r["random_pct"]),
                     "decrease": _num(r["decrease"]), "ci_low": _num(r["ci95_low"]),
                     "ci_high": _num(r["ci95_high"]), "series": f"{r['model']} / {r['grade']}"})
    return pd.DataFrame(rows, columns=["model", "grade", "tasks", "original_pct", "random_pct", "decrease",
                                       "ci_low", "ci_high", "series"])


_T1_CELLS = (("original_seen", "original, seen"), ("original_unseen", "original, unseen"),
             ("renamed_seen", "renamed, seen"), ("renamed_unseen", "renamed, unseen"))
_T1_EFFECTS = (("exposure_original", "exposure, original"), ("exposure_renamed", "exposure, renamed"),
               ("did", "DiD"), ("unseen_cost", "unseen cost"))


def _effect_rows(sel: pd.DataFrame) -> list[dict]:
    out = []
    for _, r in sel.iterrows():
        if _missing(r["tasks"]):
            continue
        for key, label in _T1_EFFECTS:
            out.append({"family": r["family"], "arm": r["arm"], "measure": r["label"], "effect": label,
                        "estimate": _num(r[key]), "ci_low": _num(r[f"{key}_low"]), "ci_high": _num(r[f"{key}_high"]),
                        "tasks": int(r["tasks"]), "series": f"{r['family']} / {r['arm']} / {r['label']} / {label}"})
    return out


def figure_t1_data(effects: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Figure T.1 data from :func:`alias.report.exposure.exposure_effects_table`: (a) one
    row per family, arm and cell with ``pass_pct`` (behavior grade, covered tasks); (b) one
    row per family, arm and effect of the behavior grade with ``estimate`` and its 95% CI
    (points); (c) the same for the reference likelihood (``Likelihood``: nats per token)."""
    a = []
    beh = effects[(effects["kind"] == "grade") & (effects["measure"] == "behavior")] if len(effects) else effects
    for _, r in beh.iterrows():
        if not _missing(r["tasks"]):
            a += [{"family": r["family"], "arm": r["arm"], "cell": label, "pass_pct": _num(r[f"mean_{key}"]),
                   "tasks": int(r["tasks"]), "series": f"{r['family']} / {r['arm']} / {label}"}
                  for key, label in _T1_CELLS]
    ll = effects[(effects["kind"] == "loglik") & (effects["measure"] == "all")] if len(effects) else effects
    cols = ["family", "arm", "measure", "effect", "estimate", "ci_low", "ci_high", "tasks", "series"]
    return (pd.DataFrame(a, columns=["family", "arm", "cell", "pass_pct", "tasks", "series"]),
            pd.DataFrame(_effect_rows(beh), columns=cols),
            # the unseen cost compares the likelihoods of two different texts: n/a (Table 2)
            pd.DataFrame([r for r in _effect_rows(ll) if r["effect"] != "unseen cost"], columns=cols))


def _tasks(n: int) -> str:
    return f"{n} task" if n == 1 else f"{n} tasks"


def _no_data(ax, title: str, why: str) -> None:
    ax.set_title(title)
    ax.text(0.5, 0.5, f"no data\n({why})", ha="center", va="center", transform=ax.transAxes, fontsize=12,
            color="0.35")
    ax.set_xticks([])
    ax.set_yticks([])


def _offsets(n_groups: int, n_series: int) -> tuple[list[list[float]], float]:
    width = 0.8 / max(1, n_series)
    return [[g + (i - (n_series - 1) / 2) * width for g in range(n_groups)] for i in range(n_series)], width


def _bars(ax, groups: list[str], series: dict[str, list], colors: dict[str, str], ylabel: str, fmt: str = "%.0f") -> None:
    """Grouped bars, each labeled with its value; a zero bar is drawn as a line at 0 so
    that it is visible (a figure of zeros must not look empty)."""
    xs_all, width = _offsets(len(groups), len(series))
    for (name, values), xs in zip(series.items(), xs_all):
        bars = ax.bar(xs, values, width, label=name, color=colors.get(name))
        color = bars.patches[0].get_facecolor() if bars.patches else None
        ax.bar_label(bars, fmt=fmt, fontsize=7, padding=1)
        zero = [x for x, v in zip(xs, values) if v == 0]
        ax.hlines([0] * len(zero), [x - width / 2 for x in zero], [x + width / 2 for x in zero], colors=[color],
                  linewidth=6)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=min(4, max(1, len(series))))


def _points(ax, groups: list[str], series: dict[str, list], errors: dict[str, tuple[list, list]], ylabel: str) -> None:
    """Estimates as points with their 95% intervals (visible at 0 too), around a 0 line;
    the axis spans at least the interval of the data or +-1 unit."""
    xs_all, _width = _offsets(len(groups), len(series))
    lows, highs = [], []
    for (name, values), xs in zip(series.items(), xs_all):
        lo, hi = errors[name]
        ax.errorbar(xs, values, yerr=[[v - l for v, l in zip(values, lo)], [h - v for v, h in zip(values, hi)]],
                    fmt="o", markersize=7, capsize=4, label=name)
        lows += lo
        highs += hi
    span = max([abs(x) for x in lows + highs if x == x] + [1e-9])
    pad = span * 0.25 if span > 1e-6 else 1.0
    ax.set_ylim(min(min(lows, default=0), 0) - pad, max(max(highs, default=0), 0) + pad)
    ax.axhline(0, color="0.3", linewidth=0.8)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=min(4, max(1, len(series))))


def _plot_s1(df: pd.DataFrame, path: Path) -> None:
    models = list(dict.fromkeys(df["model"])) if len(df) else []
    fig, axes = plt.subplots(1, max(1, len(models)), figsize=(4.2 * max(1, len(models)), 4.2), squeeze=False)
    if not models:
        _no_data(axes[0][0], "Figure S.1: name-based grade by hidden names", "no graded model samples")
    for ax, model in zip(axes[0], models):
        d = df[df["model"] == model]
        splits = [s for s in ("hidden", "stated") if s in set(d["split"])]
        labels = [f"{'hidden name' if s == 'hidden' else 'all stated'}\n({_tasks(int(d[d.split == s].tasks.iloc[0]))})"
                  for s in splits]
        series = {c: [float(d[(d.split == s) & (d.condition == c)].pass_pct.iloc[0]) for s in splits]
                  for c in ("original", "random")}
        _bars(ax, labels, series, _COND_COLORS, "correct, name (%)")
        ax.set_ylim(0, 108)
        ax.set_title(str(model))
    fig.suptitle("Figure S.1: name-based grade, split by hidden required names")
    fig.tight_layout()
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)


def _plot_u1(df: pd.DataFrame, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    if df.empty:
        _no_data(ax, "Figure U.1: name vs behavior grade (covered tasks)", "no samples graded by both grades")
    else:
        models = list(dict.fromkeys(df["model"]))
        series, errors = {}, {}
        for g in ("name", "behavior"):
            vals, lo, hi = [], [], []
            for m in models:
                hit = df[(df.model == m) & (df.grade == g)]
                v = float(hit.decrease.iloc[0]) if len(hit) else float("nan")
                vals.append(v)
                lo.append(float(hit.ci_low.iloc[0]) if len(hit) else v)
                hi.append(float(hit.ci_high.iloc[0]) if len(hit) else v)
            series[g] = vals
            errors[g] = (lo, hi)
        _points(ax, [str(m) for m in models], series, errors, "decrease, original - random (points)")
        ax.set_title("Figure U.1: decrease under each grade, covered tasks (95% CI)")
    fig.tight_layout()
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)


def _effects_panel(ax, df: pd.DataFrame, arms: list[str], ylabel: str, title: str) -> None:
    key = df["family"] + " / " + df["arm"]
    series, errors = {}, {}
    for _, label in (e for e in _T1_EFFECTS if e[1] in set(df.effect)):
        rows = [df[(key == arm) & (df.effect == label)] for arm in arms]
        series[label] = [float(r.estimate.iloc[0]) if len(r) else float("nan") for r in rows]
        errors[label] = ([float(r.ci_low.iloc[0]) if len(r) else float("nan") for r in rows],
                         [float(r.ci_high.iloc[0]) if len(r) else float("nan") for r in rows])
    _points(ax, arms, series, errors, ylabel)
    ax.set_title(title)


def _plot_t1(a: pd.DataFrame, b: pd.DataFrame, c: pd.DataFrame, path: Path) -> None:
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(15, 4.4))
    if a.empty and c.empty:
        for ax, title in ((ax1, "(a) behavior-based pass rate"), (ax2, "(b) effects, behavior (95% CI)"),
                          (ax3, "(c) effects, likelihood (95% CI)")):
            _no_data(ax, title, "exposure experiment not run")
    else:
        arms = list(dict.fromkeys(pd.concat([a["family"] + " / " + a["arm"], c["family"] + " / " + c["arm"]])))
        key_a = a["family"] + " / " + a["arm"]
        series = {label: [float(a[(key_a == arm) & (a.cell == label)].pass_pct.iloc[0])
                          if ((key_a == arm) & (a.cell == label)).any() else float("nan") for arm in arms]
                  for _, label in _T1_CELLS}
        _bars(ax1, arms, series, {}, "correct, behavior (%)")
        ax1.set_ylim(0, 105)
        ax1.set_title("(a) behavior-based pass rate")
        _effects_panel(ax2, b, arms, "points", "(b) effects, behavior (95% CI)")
        _effects_panel(ax3, c, arms, "nats per token", "(c) effects, likelihood (95% CI)")
    fig.suptitle("Figure T.1: randomized exposure")
    fig.tight_layout()
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)


def write_figures(out_dir: str | Path, *, table_u: pd.DataFrame, table1: pd.DataFrame,
                  effects: pd.DataFrame) -> dict[str, Any]:
    """Write ``figures/figure_{S1,T1,U1}.png`` and ``plots/figure_{S1,T1a,T1b,T1c,U1}.csv`` under
    ``out_dir`` from the tables' data frames. Returns ``{"files": {relative name: path},
    "rows": {csv name: data rows}}``."""
    out = Path(out_dir)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    (out / "plots").mkdir(parents=True, exist_ok=True)
    s1 = figure_s1_data(table_u)
    u1 = figure_u1_data(table1)
    t1a, t1b, t1c = figure_t1_data(effects)
    data = {"figure_S1.csv": s1, "figure_U1.csv": u1, "figure_T1a.csv": t1a, "figure_T1b.csv": t1b,
            "figure_T1c.csv": t1c}
    files: dict[str, str] = {}
    for name, df in data.items():
        p = out / "plots" / name
        df.to_csv(p, index=False, float_format="%.4f")
        files[f"plots/{name}"] = str(p)
    for key, plot in (("S1", lambda p: _plot_s1(s1, p)), ("U1", lambda p: _plot_u1(u1, p)),
                      ("T1", lambda p: _plot_t1(t1a, t1b, t1c, p))):
        p = out / "figures" / FIGURES[key][0]
        plot(p)
        files[f"figures/{p.name}"] = str(p)
    return {"files": files, "rows": {k: int(len(v)) for k, v in data.items()}}
