"""Build the DuckDB store (paths.store) from the stage tables, the sql/ views and the
settings, and its snapshot (paths.snapshot)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

from alias.config import Config, Paths
from alias.report.adjudication import adjudication_rows
from alias.report.exposure import exposure_arm_rows
from alias.store.db import build_store, export_store
from alias.store.settings import settings_rows

NAME = "load"


def run(config: Config, paths: Paths) -> dict[str, Any]:
    """Load every stage table into ``paths.store`` and create the views; the
    ``exposure_arms`` table also gets the rows of ``report.exposure``, ``adjudications`` the
    readings of ``paths.adjudications`` (a CSV), ``store_settings`` the settings it is built with (every section: ``grade-file`` reads them). The snapshot
    (``paths.snapshot``: every table as Parquet plus the views, byte-stable) is the DVC
    output; the DuckDB file is rebuilt from it where missing. Only the sample folders of the
    model entries of ``generate`` and the part folders of ``controls.parts`` are read (a
    folder an entry removed from ``params.yaml`` left behind is not). Returns rows per table."""
    folders = {f.name: getattr(paths, f.name) for f in dataclasses.fields(paths)}
    rows = {"exposure_arms": exposure_arm_rows(config.report.exposure),
            "store_settings": settings_rows(config, paths.snapshot, paths.store),
            "adjudications": adjudication_rows(paths.adjudications)}
    only = {"samples": list(config.generate.models), "controls": [str(p) for p in config.controls.parts]}
    warn_stray(paths.controls, only["controls"])
    build_store(paths.store, folders, paths.sql, tables=rows, only=only)
    return export_store(paths.store, paths.snapshot, paths.sql)


def warn_stray(folder: Path, parts: list[str]) -> list[str]:
    """Name, in one line on stderr, what ``folder`` (``paths.controls``) holds besides the
    part folders ``parts``: the single folder's tables of an ALIAS before the parts, or the
    parts of a larger split. They are not loaded, but DVC hashes them as ``load``'s input
    (``load`` then looks changed in another checkout). Returns the stray names."""
    stray = sorted(p.name for p in folder.iterdir() if p.name not in parts) if folder.is_dir() else []
    if stray:
        print(f"alias: {folder} holds {', '.join(stray[:4])}{' ...' if len(stray) > 4 else ''} besides the parts of "
              "controls.parts: not loaded; remove them (DVC counts them in load's input)", file=sys.stderr)
    return stray
