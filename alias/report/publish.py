"""Every report of the paper from the store: tables, figures, plot data and metrics.

:func:`write_all_reports` writes Tables K.1, C.1, J.1, J.2, 1, 2, F.1, O.1 and V.1,
Appendices L, M, N, P and U, the hidden-name counts, the TLA+-Bench comparison tables
(:mod:`alias.report.tlabench`), Figures S.1, T.1 and U.1 (PNG under
``out/figures/``, their data as CSV under ``out/plots/``) and the DVC metrics file
``out/metrics.json``. Tables with no samples yet say "no data", figures draw a "no data"
panel.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from alias.report.appendix_tables import write_appendix_reports
from alias.report.equivalence import write_equivalence_report
from alias.report.exposure import write_exposure_reports
from alias.report.figures import write_figures
from alias.report.similarity import write_similarity_report
from alias.report.stats_tables import write_stats_reports
from alias.report.tables import write_reports
from alias.report.tlabench import write_tlabench_reports

__all__ = ["write_all_reports"]


def write_all_reports(db: Path, out: Path, n_resamples: int, seed: int) -> dict[str, Any]:
    """Write every report of ``db`` under ``out`` with ``n_resamples`` bootstrap resamples
    (and permutations) seeded by ``seed``; returns the metrics plus ``report_files``.
    Raises :class:`alias.store.db.StoreError` when the store is missing."""
    boot = {"n_resamples": n_resamples, "seed": seed}
    metrics = write_reports(db, out)
    stats = write_stats_reports(db, out, **boot)
    sim = write_similarity_report(db, out, **boot)
    app = write_appendix_reports(db, out, **boot)
    expo = write_exposure_reports(db, out, **boot)
    bench = write_tlabench_reports(db, out, **boot)
    equiv = write_equivalence_report(db, out)
    figs = write_figures(out, table_u=stats["tables"]["U"], table1=stats["tables"]["1"], effects=expo["effects"])
    metrics.update(app["metrics"])
    metrics.update(bench["metrics"])
    metrics.update(equiv["metrics"])
    metrics["similarity_samples"] = int(len(sim["samples"]))
    for _, r in sim["table"].iterrows():
        if r["model"] is not None and r["decrease"] is not None and not pd.isna(r["decrease"]):
            metrics[f"{r['measure']}_decrease/{r['model']}"] = round(float(r["decrease"]), 4)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")
    files = [*stats["files"], *sim["files"], *app["files"], *expo["files"], *bench["files"], *equiv["files"], *figs["files"]]
    return metrics | {"report_files": sorted(files)}
