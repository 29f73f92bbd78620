"""The settings a store was built with (table ``store_settings``; README "Grading one
output"): written by the ``load`` stage, read back by ``grade-file`` and
:func:`alias.grade_output`, so that grading against a pipeline's store from any folder
uses that pipeline's library folders, jar and time limits."""

from __future__ import annotations

import json
import os
from pathlib import Path

import duckdb
import pandas as pd

from alias.config import Config, config_from_dict, config_to_dict, rebase

__all__ = ["settings_rows", "store_config"]


def settings_rows(config: Config, snapshot: Path, store: Path) -> pd.DataFrame:
    """The ``store_settings`` rows of ``config`` for a store built in the working
    directory with its snapshot at ``snapshot`` and its DuckDB file at ``store``
    (relative paths: the rows are the same in every checkout)."""
    here = Path.cwd()
    return pd.DataFrame([{"name": "params", "value": json.dumps(config_to_dict(config), sort_keys=True),
                          "base_from_snapshot": Path(os.path.relpath(here, here / snapshot)).as_posix(),
                          "base_from_store": Path(os.path.relpath(here, (here / store).parent)).as_posix()}])


def store_config(db: str | Path) -> Config | None:
    """The settings the DuckDB store ``db`` was built with, its relative paths taken from
    where it was built (:func:`alias.config.rebase`); ``None`` for a store that records
    none (built before the table existed)."""
    db = Path(db)
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        row = con.execute("SELECT value, base_from_store FROM store_settings WHERE name = 'params'").fetchone() \
            if "store_settings" in tables else None
    finally:
        con.close()
    if row is None:
        return None
    return rebase(config_from_dict(json.loads(row[0])), db.parent / row[1])
