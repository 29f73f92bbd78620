"""Experiment 2 tables: Table 2, Table F.1, Table O.1 and the Appendix T likelihood row, from
the views of ``sql/15_exposure.sql`` and :func:`alias.stats.exposure_effects`.

Paper: Methods, Experiment 2 ("Fine-tuned models", "Randomized exposure", "Log-likelihood",
"Analysis"); Results (Table 2); Appendices F (Gemma), O (specification-only exposure) and T.

Which fine-tuned model trained on which half comes from the exposure stage
(``data/exposure/exposure_arms.parquet``: its own adapters, family = the base model's name)
and, for fine-tuned models from elsewhere (e.g. replayed outputs), from a parameter
(``params.yaml``)::

    report:
      exposure:
        - {family: Qwen2.5-Coder-14B, arm: task-pair, half_A: qwen-A, half_B: qwen-B}
        - {family: Qwen2.5-Coder-14B, arm: spec-only, half_A: qwen-spec-A, half_B: qwen-spec-B}

``family`` is a free label, ``arm`` is ``task-pair`` (the model saw each task's description
and reference) or ``spec-only`` (the raw .tla file alone, Appendix O), and ``half_A`` /
``half_B`` name the models (as in ``samples.model``, ``verdicts.model``, ``loglik.model``)
trained on the tasks of half A / B of the ``split`` table. The ``load`` stage writes both
into the store's ``exposure_arms`` table (:func:`exposure_arm_rows` for the parameter).

Effects (points for pass rates, nats per token for log-likelihoods) come with 95% percentile
bootstrap intervals over tasks. The name grade and the likelihoods use the test-set tasks
with all four cells, the behavior grade the tasks the behavior grade covers (110 and 90
tasks in the paper's Table 2; Table O.1 counts likelihoods over 110). Every table says ``no data`` until the experiment has run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from alias.report.stats_tables import _missing
from alias.report.tables import sources_markdown, to_markdown
from alias.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, ExposureEffects, exposure_effects
from alias.store.db import query

__all__ = ["ARMS", "exposure_arm_rows", "exposure_effects_table", "table_2", "table_f1", "table_o1",
           "write_exposure_reports"]

#: The two exposure arms (Methods, Experiment 2; Appendix O).
ARMS = ("task-pair", "spec-only")
#: Measures of the effects table: (kind, key, label). kind "grade" reads v_exposure_paired,
#: kind "loglik" reads v_loglik_paired.
MEASURES = (("grade", "behavior", "Correct, behavior"), ("grade", "name", "Correct, name"),
            ("loglik", "all", "Likelihood"), ("loglik", "outside", "Likelihood, other"),
            ("loglik", "identifiers", "Likelihood, identifiers"))
_CELLS = ["original_seen", "original_unseen", "renamed_seen", "renamed_unseen"]
_EFFECTS = ("exposure_original", "exposure_renamed", "did", "unseen_cost")


def exposure_arm_rows(entries: Iterable[Any]) -> pd.DataFrame:
    """The ``exposure_arms`` rows (``family, arm, half, model``) of the ``report.exposure``
    entries (:class:`alias.config.ReportExposureEntry`: ``family``, ``arm``, ``half_A``,
    ``half_B``, checked when the configuration is read); empty for no entries."""
    rows = []
    for e in entries:
        rows += [{"family": e.family, "arm": e.arm, "half": "A", "model": e.half_A},
                 {"family": e.family, "arm": e.arm, "half": "B", "model": e.half_B}]
    return pd.DataFrame(rows, columns=["family", "arm", "half", "model"])


def _effects(frame: pd.DataFrame, *, scale: float, n_resamples: int, seed: int) -> ExposureEffects | None:
    f = frame.dropna(subset=_CELLS).sort_values("task_id")
    if f.empty:
        return None
    return exposure_effects(*(f[c].to_numpy(float) for c in _CELLS), n_resamples=n_resamples, seed=seed,
                            scale=scale)


def exposure_effects_table(db: str | Path, *, n_resamples: int = DEFAULT_RESAMPLES,
                           seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """One row per (family, arm, measure of :data:`MEASURES`) with ``tasks``, the four cell
    means (``mean_original_seen`` ... in percent or nats/token), the effects ``exposure_original``,
    ``exposure_renamed``, ``did``, ``unseen_cost`` each with ``*_low``/``*_high`` (95%), and
    ``seen_higher`` (log-likelihoods: tasks whose seen model gives the original reference the
    higher likelihood). One row of ``None`` per configured arm and measure without data; no
    rows when no arm is configured."""
    arms = query("SELECT DISTINCT family, arm FROM exposure_arms ORDER BY family, arm", db)
    grades = query("SELECT * FROM v_exposure_paired", db)
    ll = query("SELECT * FROM v_loglik_paired", db)
    rows = []
    for _, a in arms.iterrows():
        for kind, key, label in MEASURES:
            row: dict[str, Any] = {"family": a["family"], "arm": a["arm"], "measure": key, "label": label,
                                   "kind": kind}
            if kind == "grade":
                f = grades[(grades["family"] == a["family"]) & (grades["arm"] == a["arm"])
                           & (grades["grade"] == key)]
                if key == "behavior":
                    f = f[f["behavior_covered"].astype(bool)]
                e = _effects(f, scale=100.0, n_resamples=n_resamples, seed=seed)
            else:
                f = ll[(ll["family"] == a["family"]) & (ll["arm"] == a["arm"]) & (ll["measure"] == key)]
                e = _effects(f, scale=1.0, n_resamples=n_resamples, seed=seed)
                if e is not None:
                    g = f.dropna(subset=_CELLS)
                    row["seen_higher"] = int((g["original_seen"] > g["original_unseen"]).sum())
            if e is not None:
                row["tasks"] = e.n_tasks
                for c in _CELLS:
                    row[f"mean_{c}"] = getattr(e, f"mean_{c}")
                for k in _EFFECTS:
                    b = getattr(e, k)
                    row.update({k: b.estimate, f"{k}_low": b.ci_low, f"{k}_high": b.ci_high})
            rows.append(row)
    cols = ["family", "arm", "measure", "label", "kind", "tasks", *[f"mean_{c}" for c in _CELLS],
            *[f"{k}{s}" for k in _EFFECTS for s in ("", "_low", "_high")], "seen_higher"]
    return pd.DataFrame(rows, columns=cols)


def _ci(r, k: str, digits: int):
    if _missing(r.get(k)):
        return None
    def f(v) -> str:
        text = f"{float(v):.{digits}f}"
        return text[1:] if text.startswith("-") and float(text) == 0 else text

    return f"{f(r[k])} [{f(r[k + '_low'])}, {f(r[k + '_high'])}]"


def _digits(r) -> int:
    return 1 if r["kind"] == "grade" else 2


def table_2(effects: pd.DataFrame) -> pd.DataFrame:
    """Table 2 (display strings): per family, the task-pair arm's behavior, name and
    likelihood rows with ``tasks``, ``Exposure``, ``DiD`` and ``Unseen cost`` (the paper
    reports no unseen cost for likelihoods: different texts)."""
    out = []
    for _, r in effects[effects["arm"] == "task-pair"].iterrows():
        d = _digits(r)
        out.append({"family": r["family"], "measure": r["label"],
                    "tasks": None if _missing(r["tasks"]) else str(int(r["tasks"])),
                    "Exposure": _ci(r, "exposure_original", d), "DiD": _ci(r, "did", d),
                    "Unseen cost": (_ci(r, "unseen_cost", d) if r["kind"] == "grade" else
                                    ("n/a (different texts)" if not _missing(r["tasks"]) else None))})
    return pd.DataFrame(out, columns=["family", "measure", "tasks", "Exposure", "DiD", "Unseen cost"])


def table_f1(effects: pd.DataFrame) -> pd.DataFrame:
    """Table F.1 (display strings): per family, task-pair arm, a row per quantity and a
    column per grade (behavior, name): tasks, the four cell rates (seen / unseen, percent),
    exposure effect, DiD and unseen cost (points, 95% CIs)."""
    out = []
    for family, g in effects[(effects["arm"] == "task-pair") & (effects["kind"] == "grade")].groupby(
            "family", sort=True):
        by = {r["measure"]: r for _, r in g.iterrows()}

        def cell(grade, fn):
            r = by.get(grade)
            return None if r is None or _missing(r["tasks"]) else fn(r)

        def pair(a, b):
            return lambda r: f"{float(r[a]):.1f} / {float(r[b]):.1f}"

        for label, fn in (("Tasks", lambda r: str(int(r["tasks"]))),
                          ("Original, seen / unseen", pair("mean_original_seen", "mean_original_unseen")),
                          ("Renamed, seen / unseen", pair("mean_renamed_seen", "mean_renamed_unseen")),
                          ("Exposure effect", lambda r: _ci(r, "exposure_original", 1)),
                          ("DiD", lambda r: _ci(r, "did", 1)),
                          ("Unseen cost", lambda r: _ci(r, "unseen_cost", 1))):
            out.append({"family": family, "measure": label, "Behavior grade": cell("behavior", fn),
                        "Name grade": cell("name", fn)})
    return pd.DataFrame(out, columns=["family", "measure", "Behavior grade", "Name grade"])


def table_o1(effects: pd.DataFrame) -> pd.DataFrame:
    """Table O.1 (display strings): per family, a row per quantity and a column per arm
    (task-pair, specification-only): exposure effects with original and renamed
    descriptions, DiD and unseen cost under the behavior grade on covered tasks; the
    log-likelihood DiD over all tokens and outside renamed identifiers; and the tasks whose
    seen model gives the reference the higher likelihood."""
    out = []
    for family, g in effects.groupby("family", sort=True):
        def get(arm, measure):
            hit = g[(g["arm"] == arm) & (g["measure"] == measure)]
            return None if hit.empty or _missing(hit.iloc[0]["tasks"]) else hit.iloc[0]

        specs = (("Exposure effect, original descriptions", "behavior", lambda r: _ci(r, "exposure_original", 1)),
                 ("Exposure effect, renamed descriptions", "behavior", lambda r: _ci(r, "exposure_renamed", 1)),
                 ("Difference in differences", "behavior", lambda r: _ci(r, "did", 1)),
                 ("Renaming cost, unseen tasks", "behavior", lambda r: _ci(r, "unseen_cost", 1)),
                 ("Log-likelihood, difference in differences", "all", lambda r: _ci(r, "did", 2)),
                 ("Log-likelihood, tokens outside renamed identifiers", "outside", lambda r: _ci(r, "did", 2)),
                 ("Log-likelihood higher when seen (tasks)", "all",
                  lambda r: f"{int(r['seen_higher'])}/{int(r['tasks'])}"))
        for label, measure, fn in specs:
            row = {"family": family, "measure": label}
            for arm, col in (("task-pair", "Task-pair exposure"), ("spec-only", "Specification-only exposure")):
                r = get(arm, measure)
                row[col] = None if r is None else fn(r)
            out.append(row)
    return pd.DataFrame(out, columns=["family", "measure", "Task-pair exposure", "Specification-only exposure"])


def write_exposure_reports(db: str | Path, out_dir: str | Path, *, n_resamples: int = DEFAULT_RESAMPLES,
                           seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Write ``table_2.md``, ``table_F1.md`` and ``table_O1.md`` under ``out_dir``. Returns
    ``{"files": {...}, "effects": <exposure_effects_table>}``."""

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    eff = exposure_effects_table(db, n_resamples=n_resamples, seed=seed)
    n_split = int(query("SELECT count(*) AS n FROM split", db)["n"].iloc[0])
    n_ll = int(query("SELECT count(*) AS n FROM loglik", db)["n"].iloc[0])
    status = (f"Store: {len(eff[['family', 'arm']].drop_duplicates()) if len(eff) else 0} arm(s) in `exposure_arms` "
              f"(the exposure stage's adapters and `params.report.exposure`), {n_split} tasks in `split`, "
              f"{n_ll} `loglik` rows.\n\n")
    note = (f"Effects in percentage points for correctness and in mean token log-likelihood (nats) for "
            f"likelihood, with 95% percentile bootstrap CIs from {n_resamples} resamples of tasks (seed {seed}). "
            "Exposure = seen - unseen with the original descriptions; DiD = (original - renamed)_seen - "
            "(original - renamed)_unseen; unseen cost = original - renamed on unseen tasks. The name grade and "
            "the likelihoods use the test-set tasks, the behavior grade the tasks the behavior grade covers.\n\n")
    empty = "no data: the exposure experiment has not run (no configured arm with split, samples or loglik)\n"
    files = {}
    t2 = table_2(eff)
    p = out / "table_2.md"
    sources = "\n" + sources_markdown(db, exposure=True)
    p.write_text("# Table 2: effects of task-pair exposure\n\n" + status + note
                 + (to_markdown(t2) if len(t2) else empty) + sources)
    files[p.name] = str(p)
    f1 = table_f1(eff)
    p = out / "table_F1.md"
    p.write_text("# Table F.1: pass rates and effects under task-pair exposure, per model family\n\n" + status
                 + note + (to_markdown(f1) if len(f1) else empty) + sources)
    files[p.name] = str(p)
    o1 = table_o1(eff)
    p = out / "table_O1.md"
    p.write_text("# Table O.1: task-pair and specification-only exposure\n\n" + status + note
                 + (to_markdown(o1) if len(o1) else empty) + sources)
    files[p.name] = str(p)
    return {"files": files, "effects": eff}
