"""Build the DuckDB store (paths.store) from the stage tables and the sql/ views."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from alias.config import Config, Paths
from alias.report.exposure import exposure_arm_rows
from alias.store.db import build_store

NAME = "load"
#: The view files, applied in name order.
SQL_DIR = Path("sql")


def run(config: Config, paths: Paths) -> dict[str, Any]:
    """Load every stage table into ``paths.store`` and create the views; the
    ``exposure_arms`` table also gets the rows of ``report.exposure``. Returns rows per table."""
    folders = {f.name: getattr(paths, f.name) for f in dataclasses.fields(paths)}
    return build_store(paths.store, folders, SQL_DIR, tables={"exposure_arms": exposure_arm_rows(config.report.exposure)})
