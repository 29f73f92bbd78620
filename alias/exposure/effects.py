"""Exposure effects on the likelihood of the reference (paper, Methods, Experiment 2,
"Analysis"; Appendices O and T).

Per task and arm, the "seen" model is the adapter trained on the task's half and the
"unseen" model the adapter trained on the other half. The exposure effect in a condition
is the mean over tasks of seen minus unseen; the DiD and the renaming cost on unseen tasks
come from :func:`alias.stats.exposure_effects` with ``scale=1.0`` (log-likelihood units).

Public API::

    LOGLIK_MEASURES = ("mean_loglik", "outside_loglik", "identifier_loglik")
    seen_unseen_cells(loglik, split, measure) -> DataFrame   # one row per (arm, task)
    loglik_effects(loglik, split, *, n_resamples=10000, seed=...) -> DataFrame
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from alias.exposure.split import other_half
from alias.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, exposure_effects

__all__ = ["LOGLIK_MEASURES", "seen_unseen_cells", "loglik_effects", "EFFECT_COLUMNS"]

LOGLIK_MEASURES = ("mean_loglik", "outside_loglik", "identifier_loglik")

EFFECT_COLUMNS = ["arm", "measure", "n_tasks", "mean_original_seen", "mean_original_unseen",
                  "mean_renamed_seen", "mean_renamed_unseen", "exposure_original", "exposure_original_low",
                  "exposure_original_high", "exposure_renamed", "did", "did_low", "did_high", "unseen_cost",
                  "unseen_cost_low", "unseen_cost_high", "exposure_original_A", "exposure_original_B",
                  "seen_higher_tasks"]


def seen_unseen_cells(loglik: pd.DataFrame, split: pd.DataFrame, measure: str = "mean_loglik") -> pd.DataFrame:
    """The four cells of each test task per arm.

    ``loglik``: rows of :func:`alias.exposure.loglik.reference_loglik` with the extra
    columns ``arm`` and ``half`` (the half the adapter was trained on; rows without an arm,
    such as the base model's, are ignored). ``split``: ``task_id``, ``half``.

    Returns one row per (arm, task) that has all four values: ``arm``, ``task_id``, ``half``
    (the task's half), ``original_seen``, ``original_unseen``, ``renamed_seen``,
    ``renamed_unseen``. Raises ``ValueError`` on an unknown measure or missing columns.
    """
    if measure not in LOGLIK_MEASURES:
        raise ValueError(f"measure must be one of {LOGLIK_MEASURES}, got {measure!r}")
    need = {"task_id", "condition", "arm", "half", measure}
    if not need <= set(loglik.columns):
        raise ValueError(f"loglik lacks columns {sorted(need - set(loglik.columns))}")
    task_half = dict(zip(split["task_id"], split["half"]))
    d = loglik[loglik["arm"].notna() & loglik["task_id"].isin(task_half)]
    val = {(r.arm, r.task_id, r.condition, r.half): getattr(r, measure) for r in d.itertuples()}
    rows = []
    for arm in sorted(d["arm"].unique()):
        for tid in sorted(task_half):
            h = task_half[tid]
            cells = {}
            for cond, key in (("original", "original"), ("random", "renamed")):
                cells[f"{key}_seen"] = val.get((arm, tid, cond, h))
                cells[f"{key}_unseen"] = val.get((arm, tid, cond, other_half(h)))
            if all(v is not None and np.isfinite(v) for v in cells.values()):
                rows.append({"arm": arm, "task_id": tid, "half": h, **cells})
    return pd.DataFrame(rows, columns=["arm", "task_id", "half", "original_seen", "original_unseen",
                                       "renamed_seen", "renamed_unseen"])


def loglik_effects(loglik: pd.DataFrame, split: pd.DataFrame, *, n_resamples: int = DEFAULT_RESAMPLES,
                   seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """Exposure effects on the reference likelihood per arm and measure (:data:`EFFECT_COLUMNS`).

    ``exposure_original`` = mean over tasks of (seen - unseen) with the original
    descriptions; ``exposure_original_A``/``_B`` the same over the tasks of each half;
    ``did`` = mean[(c - r)_seen - (c - r)_unseen]; ``unseen_cost`` = mean(c - r)_unseen;
    ``*_low``/``*_high`` the 95% bootstrap interval over tasks; ``seen_higher_tasks``
    the number of tasks whose seen model gives the higher value (original condition).
    Arms/measures with no complete task are left out.
    """
    rows = []
    for measure in LOGLIK_MEASURES:
        cells = seen_unseen_cells(loglik, split, measure)
        for arm, g in cells.groupby("arm", sort=True):
            e = exposure_effects(g.original_seen, g.original_unseen, g.renamed_seen, g.renamed_unseen,
                                 n_resamples=n_resamples, seed=seed, scale=1.0)
            diff = g.original_seen - g.original_unseen
            by_half = {h: float(diff[g.half == h].mean()) if (g.half == h).any() else np.nan for h in ("A", "B")}
            rows.append({
                "arm": arm, "measure": measure, "n_tasks": e.n_tasks,
                "mean_original_seen": e.mean_original_seen, "mean_original_unseen": e.mean_original_unseen,
                "mean_renamed_seen": e.mean_renamed_seen, "mean_renamed_unseen": e.mean_renamed_unseen,
                "exposure_original": e.exposure_original.estimate,
                "exposure_original_low": e.exposure_original.ci_low,
                "exposure_original_high": e.exposure_original.ci_high,
                "exposure_renamed": e.exposure_renamed.estimate,
                "did": e.did.estimate, "did_low": e.did.ci_low, "did_high": e.did.ci_high,
                "unseen_cost": e.unseen_cost.estimate, "unseen_cost_low": e.unseen_cost.ci_low,
                "unseen_cost_high": e.unseen_cost.ci_high,
                "exposure_original_A": by_half["A"], "exposure_original_B": by_half["B"],
                "seen_higher_tasks": int((diff > 0).sum()),
            })
    return pd.DataFrame(rows, columns=EFFECT_COLUMNS)
