"""Every table, figure (PNG + plot data) and the metrics file under paths.reports."""

from __future__ import annotations

from typing import Any

from alias.config import Config, Paths
from alias.report.publish import write_all_reports

NAME = "report"


def run(config: Config, paths: Paths) -> dict[str, Any]:
    """Write every report of the store ``paths.store`` (bootstrap settings ``report``)."""
    return write_all_reports(paths.store, paths.reports, config.report.n_resamples, config.report.seed)
