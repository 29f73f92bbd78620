"""The benchmark builder's audit of the built corpus (reports/audit.md, audit_tasks.csv,
audit_summary.csv): verification, hidden names, what descriptions must add, behavior-grade
coverage and leftover original names, per task and in one line per corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alias.config import Config, Paths
from alias.report.audit import write_audit

NAME = "audit"


def run(config: Config, paths: Paths) -> dict[str, Any]:
    """Audit the store snapshot ``paths.snapshot`` (views of ``paths.sql``) into
    ``paths.reports``; the summary line names the corpus by ``corpus.kind`` and folder."""
    label = f"{config.corpus.kind} {Path(config.corpus.path).resolve().name}"
    return write_audit(paths.snapshot, paths.sql, paths.reports, label)
