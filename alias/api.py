"""Grade one model output against a task of a built test set: the public grading API
(``alias.grade_output``) behind ``alias-cir grade-file``.

The output is graded as the ``grade`` stage grades samples, by any grade of the registry
:mod:`alias.grade.registry` (Methods "Name-based grade", "Behavior-based grade"; Appendix H
for the cfg changes of the name grade): the module is extracted from the raw text, renamed
to the task's system module of the condition, and checked by strict SANY (``parse``), by
TLC with the task's cfg (``name``) and by forward and reverse refinement under
variable/constant maps (``behavior``); ``tlabench`` runs TLA+-Bench's procedure on the raw
text.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterable

from alias.config import CONDITIONS, Config, ConfigError, load_config
from alias.corpus.testset import TestSet
from alias.errors import AliasError
from alias.grade.cache import ToolRunner
from alias.grade.registry import make_grades
from alias.grade.run import GRADES, grade_sample
from alias.stages.common import grade_tool_config
from alias.store.db import StoreError, ensure_store
from alias.store.settings import store_config
from alias.tla.tools import ToolConfig

__all__ = ["default_config", "grade_output", "load_test_set", "locate_store", "readable_verdict",
           "settings_for"]


def locate_store(path: str | Path) -> Path:
    """The DuckDB store that ``path`` names: a store file; a snapshot folder (``data/store``,
    rebuilt into the ``alias.duckdb`` beside it when that is missing or older); or a data
    folder holding ``alias.duckdb`` or the snapshot ``store/``. Raises
    :class:`~alias.store.db.StoreError` when ``path`` is none of these."""
    p = Path(path)
    if p.is_file():
        return p
    if (p / "manifest.json").is_file():
        return ensure_store(p.parent / "alias.duckdb", p)
    if (p / "alias.duckdb").is_file() or (p / "store" / "manifest.json").is_file():
        return ensure_store(p / "alias.duckdb", p / "store")
    if p.is_dir():
        raise StoreError(f"{p} holds no store: pass a DuckDB file, a snapshot folder (data/store) or a data "
                         "folder holding one (run `dvc repro` or `dvc pull` first)")
    raise StoreError(f"no store at {p}: run `dvc repro` (or `dvc pull`) first")


def load_test_set(store_or_data_dir: str | Path) -> TestSet:
    """The test set of a DuckDB store (anything :func:`locate_store` accepts) or of a
    folder holding the stage folders ``ingest/``, ``rename/``, ``verify/`` (and
    ``meaningful/``). Raises :class:`~alias.store.db.StoreError` when neither is there."""
    p = Path(store_or_data_dir)
    if p.is_dir() and (p / "ingest" / "tasks.parquet").is_file():
        folders = SimpleNamespace(**{k: p / k for k in ("ingest", "rename", "verify", "meaningful")})
        return TestSet.load(folders, meaningful=True)
    return TestSet.from_store(locate_store(p))


def settings_for(store_or_data_dir: str | Path) -> Config | None:
    """The settings recorded in the store of ``store_or_data_dir`` (anything
    :func:`locate_store` accepts; :func:`alias.store.settings.store_config`), ``None`` when
    it records none or is a folder of stage tables. Raises :class:`ConfigError` (one line,
    saying to rebuild the store) when the recorded settings no longer load, e.g. a store
    built before a setting was added."""
    p = Path(store_or_data_dir)
    if p.is_dir() and (p / "ingest" / "tasks.parquet").is_file() and not (p / "store").is_dir():
        return None
    try:
        return store_config(locate_store(p))
    except ConfigError as e:
        raise ConfigError(f"{p}: the settings this store records do not load here ({e}); the store was "
                          "built by another version of ALIAS: rebuild it with `alias-cir load` "
                          "(`dvc repro load`), or grade with --params") from None


def default_config() -> Config:
    """``params.yaml`` of the working directory; a one-line error when there is none."""
    if not Path("params.yaml").is_file():
        raise AliasError(f"no params.yaml in {Path.cwd()}: run from the repository root, or pass "
                         "config=load_config(PATH) (the command line: --params PATH)")
    return load_config("params.yaml")


def _tools(config: Config) -> ToolConfig:
    return grade_tool_config(config)


def readable_verdict(row: dict[str, Any]) -> dict[str, Any]:
    """A verdict row with its JSON columns decoded: ``mapping`` (dict), ``extraction``
    (dict) and ``cfg_changes`` (name) or ``attempts`` (behavior) from ``detail``."""
    out = {k: v for k, v in row.items() if k not in ("detail", "run_keys")}
    for k in ("mapping", "extraction"):
        out[k] = json.loads(row[k]) if isinstance(row.get(k), str) else row.get(k)
    detail = json.loads(row["detail"]) if isinstance(row.get("detail"), str) else {}
    out["cfg_changes"] = detail.get("cfg_changes")
    out["attempts"] = detail.get("attempts")
    out["run_keys"] = json.loads(row["run_keys"]) if isinstance(row.get("run_keys"), str) else []
    return out


def grade_output(text: str, task_id: str, condition: str = "original",
                 store_or_data_dir: str | Path = "data/alias.duckdb", grades: Iterable[str] = GRADES, *,
                 config: Config | None = None, cache_dir: str | Path | None = None,
                 max_maps: int | None = None) -> list[dict[str, Any]]:
    """Grade one raw model output ``text`` as a sample of ``task_id`` in ``condition``
    (``original`` | ``random`` | ``meaningful``).

    ``store_or_data_dir``: the built test set (a DuckDB store or a data folder, see
    :func:`load_test_set`). ``grades``: names of registered grades
    (:func:`alias.grade.registry.grade_names`: ``parse``, ``name``, ``behavior``,
    ``tlabench``, ...), each configured from ``config``.
    ``config``: the settings (TLA+ tools, library folders, time limits,
    ``grade.max_maps``; default: those the store was built with (:func:`settings_for`),
    else ``params.yaml`` of the working directory). ``cache_dir``: a tool-run cache folder
    (default none: every SANY/TLC run is fresh).

    Returns one dict per grade in ``grades`` order with the store's verdict columns
    (``passed``, ``reason``, ``tlc_kind``, ``distinct_states``, ``error_text``, ``method``,
    ``maps_tried``, ``wall_s`` in seconds ...), ``mapping`` (the behavior grade's
    variable/constant/label map), ``cfg_changes`` (the name grade's Appendix H changes),
    ``attempts`` (the maps the behavior grade tried) and ``extraction``.

    Raises :class:`~alias.errors.AliasError` for an unknown task, condition or grade (the
    message lists what exists), a missing store, or a missing Java/jar.
    """
    grades = tuple(grades)
    if condition not in CONDITIONS:
        raise AliasError(f"condition must be one of {', '.join(CONDITIONS)}, got {condition!r}")
    if config is None:
        config = settings_for(store_or_data_dir) or default_config()
    graders = make_grades(grades, config)
    refs = load_test_set(store_or_data_dir).references()
    ref = refs.get((task_id, condition))
    if ref is None:
        known = sorted({t for t, c in refs if c == condition})
        raise AliasError(f"no {condition} reference for task {task_id!r} in the store {Path(store_or_data_dir).resolve()} "
                         f"({len(known)} tasks have one, e.g. {', '.join(known[:5]) or 'none'})")
    runner = ToolRunner(_tools(config), Path(cache_dir) if cache_dir is not None else None)
    sample = {"task_id": task_id, "condition": condition, "model": "grade-file", "sample_idx": 0, "text": text}
    rows = grade_sample(sample, ref, runner, max_maps=max_maps or config.grade.max_maps, grades=graders)
    order = {g: i for i, g in enumerate(grades)}
    return [readable_verdict(r) for r in sorted(rows, key=lambda r: order[r["grade"]])]

