"""Figures a reader can read: on data that are all zeros (the tiny model's outputs, which
never pass) Figures S.1 and T.1 must still show their bars and points, not a blank panel.
Measured on the PNG: the share of saturated (coloured) pixels of the figure."""
from __future__ import annotations

from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pandas as pd

from alias.report import figures as F

_EFFECTS = ("exposure_original", "exposure_renamed", "did", "unseen_cost")
_CELLS = ("original_seen", "original_unseen", "renamed_seen", "renamed_unseen")


def coloured_share(png: Path, top: float = 0.8) -> float:
    """Share of pixels whose channels differ by more than 0.25 (colour, not grey/white/black)
    in the ``top`` part of the image (the panels, above the legends)."""
    img = mpimg.imread(png)[..., :3]
    img = img[: int(img.shape[0] * top)]
    return float(((img.max(axis=2) - img.min(axis=2)) > 0.25).mean())


def panel_shares(png: Path, panels: int) -> list[float]:
    """:func:`coloured_share` of each of ``panels`` side-by-side panels."""
    img = mpimg.imread(png)[..., :3]
    img = img[: int(img.shape[0] * 0.8)]
    w = img.shape[1] // panels
    return [float(((p.max(axis=2) - p.min(axis=2)) > 0.25).mean()) for p in (img[:, i * w:(i + 1) * w] for i in range(panels))]


def _table_u(value: float) -> pd.DataFrame:
    rows = [{"model": m, "grade": "name", "scope": F.TEST_SET, "split": s, "tasks": 3, "original_pct": value,
             "random_pct": value} for m in ("tiny", "other") for s in ("hidden", "stated")]
    return pd.DataFrame(rows)


def _effects(value: float) -> pd.DataFrame:
    rows = []
    for arm in ("task-pair", "spec-only"):
        for kind, measure, label in (("grade", "behavior", "Correct, behavior"), ("loglik", "all", "Likelihood")):
            r = {"family": "tiny", "arm": arm, "kind": kind, "measure": measure, "label": label, "tasks": 6}
            r |= {f"mean_{c}": value for c in _CELLS}
            r |= {k: value for k in _EFFECTS} | {f"{k}_low": value for k in _EFFECTS} | {f"{k}_high": value for k in _EFFECTS}
            rows.append(r)
    return pd.DataFrame(rows)


def test_figures_of_zeros_are_not_blank(tmp_path):
    table1 = pd.DataFrame(columns=["model", "grade", "scope", "decrease", "ci_low", "ci_high"])
    F.write_figures(tmp_path, table_u=_table_u(0.0), table1=table1, effects=_effects(0.0))
    s1, t1 = coloured_share(tmp_path / "figures/figure_S1.png"), coloured_share(tmp_path / "figures/figure_T1.png")
    # every panel shows its data: the zero bars as lines at 0, the effects as points
    assert min(panel_shares(tmp_path / "figures/figure_S1.png", 2)) > 0.003
    assert min(panel_shares(tmp_path / "figures/figure_T1.png", 3)) > 0.002
    # the reference point: the same figures with values show much more colour, and a
    # figure without any data (a "no data" panel) shows none at all
    F.write_figures(tmp_path / "full", table_u=_table_u(60.0), table1=table1, effects=_effects(50.0))
    assert coloured_share(tmp_path / "full/figures/figure_S1.png") > 5 * s1
    assert coloured_share(tmp_path / "full/figures/figure_T1.png") > t1
    F.write_figures(tmp_path / "empty", table_u=_table_u(0.0).iloc[0:0], table1=table1, effects=_effects(0).iloc[0:0])
    assert coloured_share(tmp_path / "empty/figures/figure_S1.png") < 0.0005


def test_figure_t1_draws_the_likelihood_effects_without_the_unseen_cost(tmp_path):
    a, b, c = F.figure_t1_data(_effects(0.02))
    assert len(a) == 8 and len(b) == 8 and len(c) == 6           # no unseen cost for two texts' likelihoods
    assert set(c.effect) == {"exposure, original", "exposure, renamed", "DiD"}
    assert np.allclose(c.estimate, 0.02)
