"""Every table, figure (PNG + plot data) and the metrics file under paths.reports."""

from __future__ import annotations

from typing import Any

from alias.config import Config, Paths
from alias.report.publish import write_all_reports
from alias.store.db import ensure_store

NAME = "report"


def run(config: Config, paths: Paths) -> dict[str, Any]:
    """Write every report of the store (restored from ``paths.snapshot`` where missing;
    bootstrap settings ``report``)."""
    db = ensure_store(paths.store, paths.snapshot)
    return write_all_reports(db, paths.reports, config.report.n_resamples, config.report.seed)
