"""Parquet I/O and the DuckDB store (``paths.store``, ``data/alias.duckdb``).

Each store table's schema is written once, as a SQLModel class in
:mod:`alias.store.models`. :func:`write_table` writes a stage's rows of such a table as
Parquet with exactly the class's columns and types (same rows -> same bytes);
:func:`write_parquet` writes a frame that is not a store table; :func:`build_store`
creates the tables in DuckDB, loads the Parquet files and creates the views in ``sql/``;
:func:`query` runs SQL against the store.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from sqlalchemy.dialects import postgresql
from sqlalchemy.schema import CreateTable

from alias.errors import AliasError
from alias.store.models import TABLE_SOURCES

#: pandas dtypes of a column by Python type, (NOT NULL, nullable).
_DTYPES = {int: ("int64", "Int64"), bool: ("bool", "boolean"), float: ("float64", "float64")}


class StoreError(AliasError):
    """A missing input table, a schema mismatch, or a failing view."""


def _jsonify(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    for col in df.columns:
        if df[col].dtype == object and df[col].map(lambda v: isinstance(v, (list, tuple, dict))).any():
            df[col] = df[col].map(lambda v: json.dumps(list(v) if isinstance(v, tuple) else v, sort_keys=True))
    return df


def write_parquet(df: pd.DataFrame, path: str | Path) -> Path:
    """Write ``df`` to ``path`` (parents created); list/dict cells become JSON text.

    Deterministic: no pandas index, fixed compression, so equal frames give equal bytes.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(_jsonify(df), preserve_index=False)
    table = table.replace_schema_metadata(None)
    pq.write_table(table, p, compression="zstd", write_statistics=False)
    return p


def columns(model: type) -> list[str]:
    """The column names of a store table's SQLModel class, in order."""
    return [c.name for c in model.__table__.columns]


def table_frame(rows: pd.DataFrame | list[dict], model: type) -> pd.DataFrame:
    """``rows`` (a frame or a list of dicts) as a frame with exactly the columns of the
    SQLModel class ``model``, in its order and typed by it (nullable integers and booleans
    as pandas' ``Int64``/``boolean``); columns the rows lack are filled with NULL.

    Raises :class:`StoreError` when rows lack a NOT NULL column or hold a NULL in one."""
    df = rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    table = model.__table__
    for c in table.columns:
        if c.name not in df.columns:
            if not c.nullable and len(df):
                raise StoreError(f"table {table.name}: rows lack the column {c.name!r}")
            df[c.name] = None
    df = df[[c.name for c in table.columns]]
    for c in table.columns:
        kind = _DTYPES.get(c.type.python_type)
        if kind is None:
            df[c.name] = df[c.name].astype(object).where(df[c.name].notna(), None)
            continue
        if not c.nullable and df[c.name].isna().any():
            raise StoreError(f"table {table.name}: column {c.name!r} holds a NULL")
        df[c.name] = df[c.name].astype(kind[1] if c.nullable else kind[0])
    return df.reset_index(drop=True)


def write_table(rows: pd.DataFrame | list[dict], model: type, path: str | Path) -> pd.DataFrame:
    """Write the rows of store table ``model`` (:func:`table_frame`) to ``path`` and return
    the typed frame."""
    df = table_frame(rows, model)
    write_parquet(df, path)
    return df


def read_parquet(path: str | Path) -> pd.DataFrame:
    """Read a stage table; raises :class:`StoreError` if it does not exist."""
    p = Path(path)
    if not p.exists():
        raise StoreError(f"missing table {p}: run the stage that writes it (dvc repro)")
    return pd.read_parquet(p)


def ddl(table_name: str) -> str:
    """``CREATE TABLE`` statement for a store table, from its SQLModel definition."""
    model, _ = TABLE_SOURCES[table_name]
    return str(CreateTable(model.__table__).compile(dialect=postgresql.dialect())).strip()


def _sources(folders: Mapping[str, Path], sources: tuple[tuple[str, str], ...],
             only: Mapping[str, Iterable[str]] | None = None) -> list[Path]:
    """The existing Parquet files of a table: ``(folder key, name or glob pattern)`` pairs,
    in order (a pattern's matches sorted); where ``only`` names a folder key, a pattern
    matches only below the subfolders it lists (the sample folders of the model entries)."""
    out: list[Path] = []
    for key, one in sources:
        root = Path(folders[key])
        if any(ch in one for ch in "*?["):
            keep = None if only is None or key not in only else set(only[key])
            out += sorted(p for p in root.glob(one) if keep is None or p.relative_to(root).parts[0] in keep)
        elif (root / one).exists():
            out.append(root / one)
    return out


def _load_table(con, name: str, model: type, folders: Mapping[str, Path], rel, extra: pd.DataFrame | None,
                only: Mapping[str, Iterable[str]] | None = None) -> int:
    """Create table ``name`` and fill it from its Parquet sources (:func:`_sources`) and the
    ``extra`` rows."""
    con.execute(ddl(name))
    columns = list(model.__table__.columns)
    cols = [c.name for c in columns]
    col_sql = ", ".join(f'"{c}"' for c in cols)
    for src in _sources(folders, rel, only):
        have = set(pq.read_schema(src).names)
        missing = [c.name for c in columns if c.name not in have and not c.nullable]
        if missing:
            raise StoreError(f"{src}: missing columns {missing} for table {name}")
        select = ", ".join(f'"{c}"' if c in have else f'NULL AS "{c}"' for c in cols)
        try:
            con.execute(f"INSERT INTO {name} ({col_sql}) SELECT {select} FROM read_parquet(?)", [str(src)])
        except duckdb.ConstraintException as e:
            raise StoreError(f"{src}: a row's key is already in table {name} (from an earlier "
                             f"source, or twice in this file): {e}") from e
    if extra is not None:
        missing = [c for c in cols if c not in extra.columns]
        if missing:
            raise StoreError(f"rows given for table {name}: missing columns {missing}")
        con.register("_alias_rows", extra[cols])
        try:
            con.execute(f"INSERT INTO {name} ({col_sql}) SELECT {col_sql} FROM _alias_rows")
        except duckdb.ConstraintException as e:
            raise StoreError(f"rows given for table {name} (parameters): a key is already in the "
                             f"table (from its Parquet source) or given twice: {e}") from e
        con.unregister("_alias_rows")
    return con.execute(f"SELECT count(*) FROM {name}").fetchone()[0]


def _create_views(con, texts: list[tuple[str, str]]) -> None:
    for where, text in texts:
        try:
            con.execute(text)
        except duckdb.Error as e:
            raise StoreError(f"{where}: {e}") from e


def build_store(db_path: str | Path, folders: Mapping[str, Path], sql_dir: str | Path = "sql",
                tables: Mapping[str, pd.DataFrame] | None = None,
                only: Mapping[str, Iterable[str]] | None = None) -> dict[str, int]:
    """(Re)create the DuckDB store at ``db_path`` from the stage Parquet tables and the
    ``*.sql`` view files in ``sql_dir`` (applied in name order). ``folders``: the stage
    folders by ``paths`` key (``{"ingest": Path("data/ingest"), ...}``, see
    :data:`alias.store.models.TABLE_SOURCES`).

    Returns rows per table. A table may be filled from several Parquet files (e.g. the
    samples of the controls and of each generate stage, by a glob pattern); one whose
    files are all absent is created empty. A file without a nullable column of its
    table (the controls' samples lack the generation columns) fills it with NULL.
    ``tables`` adds rows that come from elsewhere than Parquet (e.g. ``exposure_arms``
    from the parameters), keyed by table name, after the Parquet rows. ``only``: per folder
    key, the subfolders a glob pattern may match (``{"samples": model keys}``: a folder left
    by an entry since removed from ``params.yaml`` is not loaded); default every one.
    Raises :class:`StoreError` when a Parquet file or a ``tables`` frame lacks a
    non-nullable column of its table or repeats a primary key already loaded, ``tables``
    names an unknown table, or a view fails to create.
    """
    unknown = sorted(set(tables or {}) - set(TABLE_SOURCES))
    if unknown:
        raise StoreError(f"rows given for unknown table(s) {unknown}")
    db_path = Path(db_path)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = db_path.with_suffix(".tmp.duckdb")
    tmp.unlink(missing_ok=True)
    con = duckdb.connect(str(tmp))
    try:
        counts = {name: _load_table(con, name, model, folders, rel, (tables or {}).get(name), only)
                  for name, (model, rel) in TABLE_SOURCES.items()}
        _create_views(con, [(str(v), v.read_text()) for v in sorted(Path(sql_dir).glob("*.sql"))])
    finally:
        con.close()
    tmp.replace(db_path)
    return counts


def export_store(db_path: str | Path, out: str | Path, sql_dir: str | Path = "sql") -> dict[str, int]:
    """Write the store's snapshot to the folder ``out``: every table as Parquet (rows in
    primary-key order), the views (``views.sql``, the ``sql_dir`` files in name order) and
    ``manifest.json`` (rows per table). Same store contents -> same bytes, unlike the
    DuckDB file itself (its header holds a random database id); this folder is what DVC
    tracks and releases, :func:`restore_store` turns it back into a store."""
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    con = duckdb.connect(str(db_path), read_only=True)
    counts = {}
    try:
        for name, (model, _rel) in TABLE_SOURCES.items():
            keys = ", ".join(f'"{c.name}"' for c in model.__table__.primary_key.columns)
            table = con.sql(f"SELECT * FROM {name} ORDER BY {keys}").to_arrow_table()
            pq.write_table(table.replace_schema_metadata(None), out / f"{name}.parquet", compression="zstd",
                           write_statistics=False)
            counts[name] = table.num_rows
    finally:
        con.close()
    views = "".join(f"-- {v.name}\n{v.read_text()}\n" for v in sorted(Path(sql_dir).glob("*.sql")))
    (out / "views.sql").write_text(views, encoding="utf-8")
    (out / "manifest.json").write_text(json.dumps({"tables": counts}, indent=2, sort_keys=True) + "\n")
    return counts


def restore_store(snapshot: str | Path, db_path: str | Path) -> dict[str, int]:
    """Build the DuckDB store ``db_path`` from a snapshot folder of :func:`export_store`
    (e.g. one that ``dvc pull`` fetched); returns rows per table. Raises
    :class:`StoreError` when the folder is not a snapshot."""
    snap = Path(snapshot)
    if not (snap / "manifest.json").is_file():
        raise StoreError(f"no store snapshot at {snap}: run `dvc repro` or `dvc pull` first")
    db_path = Path(db_path)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = db_path.with_suffix(".tmp.duckdb")
    tmp.unlink(missing_ok=True)
    con = duckdb.connect(str(tmp))
    try:
        counts = {name: _load_table(con, name, model, {"snapshot": snap}, (("snapshot", f"{name}.parquet"),), None)
                  for name, (model, _rel) in TABLE_SOURCES.items()}
        _create_views(con, [(str(snap / "views.sql"), (snap / "views.sql").read_text())])
    finally:
        con.close()
    tmp.replace(db_path)
    return counts


def ensure_store(db_path: str | Path, snapshot: str | Path | None) -> Path:
    """``db_path``, restored from ``snapshot`` first when it is missing or older than the
    snapshot's manifest (a fresh ``dvc pull``). Raises :class:`StoreError` when neither exists."""
    db = Path(db_path)
    manifest = Path(snapshot) / "manifest.json" if snapshot is not None else None
    if manifest is not None and manifest.is_file() and (not db.exists() or db.stat().st_mtime < manifest.stat().st_mtime):
        restore_store(snapshot, db)
    if not db.exists():
        raise StoreError(f"no store at {db}: run `dvc repro` (or `dvc pull`, then `alias-cir query`) first")
    return db


def query(sql: str, db_path: str | Path, snapshot: str | Path | None = None) -> pd.DataFrame:
    """Run ``sql`` read-only against the store and return a DataFrame (``None`` for a
    statement without a result set); the store is restored from ``snapshot`` first when
    needed (:func:`ensure_store`). Raises :class:`StoreError` if there is no store and
    ``duckdb.Error`` for invalid SQL."""
    p = ensure_store(db_path, snapshot)
    con = duckdb.connect(str(p), read_only=True)
    try:
        cur = con.execute(sql)
        return cur.df() if cur.description else None
    finally:
        con.close()
