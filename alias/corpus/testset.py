"""The one loader of a test set: the tables of the ingest, rename, verify and meaningful
stages, read once, and what every later stage asks of them (Methods "Test set",
"Renaming"; Appendix R for the meaningful condition).

:class:`TestSet` holds the tables; :class:`Reference` is one task in one condition, ready
to grade or prompt against (its modules, cfg and module names). Stages build a
:class:`TestSet` with :meth:`TestSet.load` (Parquet folders of ``params.yaml`` ``paths``)
and the grading API with :meth:`TestSet.from_store` (the DuckDB store).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from alias.store.db import StoreError, read_parquet
from alias.tla.syntax import module_info

__all__ = ["Reference", "TestSet", "has_description"]

#: (table name in the store, folder key, file name): what :class:`TestSet` reads.
_TABLES = {
    "tasks": ("ingest", "tasks.parquet"), "modules": ("ingest", "modules.parquet"),
    "renamed_tasks": ("rename", "renamed_tasks.parquet"), "renamed_modules": ("rename", "renamed_modules.parquet"),
    "rename_map": ("rename", "rename_map.parquet"), "test_set": ("verify", "test_set.parquet"),
    "meaningful_tasks": ("meaningful", "meaningful_tasks.parquet"),
    "meaningful_modules": ("meaningful", "meaningful_modules.parquet"),
}


def has_description(description: object) -> bool:
    """Whether a task can be posed: its description is a non-blank string."""
    return isinstance(description, str) and bool(description.strip())


def _text(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


@dataclass
class Reference:
    """One task in one condition, ready to grade against.

    ``files``: every file the task needs, ``'<Module>.tla' -> text`` (author modules and
    the library modules ingest found).  ``system_module``: the module an output replaces;
    ``model_module``: the module TLC runs (the wrapper when there is one, else the system
    module); ``wrapper_module``: ``None`` without a wrapper.  ``cfg_text``: the task's cfg
    in this condition.  ``author_modules``: module names written by the task's authors.
    """

    task_id: str
    condition: str
    files: dict[str, str]
    system_module: str
    model_module: str
    cfg_text: str
    wrapper_module: str | None = None
    author_modules: tuple[str, ...] = ()
    pluscal: bool = False
    _info: dict = field(default_factory=dict, repr=False)

    @property
    def system_text(self) -> str:
        return self.files[f"{self.system_module}.tla"]

    def info(self, module: str):
        """:func:`alias.tla.syntax.module_info` of one of the files (memoized)."""
        if module not in self._info:
            self._info[module] = module_info(self.files[f"{module}.tla"])
        return self._info[module]

    @property
    def variables(self) -> list[str]:
        """Variables declared by the system module (the behavior grade maps these)."""
        return list(self.info(self.system_module).variables)

    @property
    def constants(self) -> list[str]:
        """Constants declared by the system module (the behavior grade maps these)."""
        return list(self.info(self.system_module).constants)

    @property
    def wrapper_definitions(self) -> set[str]:
        if not self.wrapper_module:
            return set()
        return set(self.info(self.wrapper_module).definitions)


@dataclass
class TestSet:
    """The stage tables of one test set (frames as the stages wrote them).

    ``membership`` (the verify stage's ``test_set``) is ``None`` before verification: then
    every ingested task counts. ``meaningful_tasks``/``meaningful_modules`` are ``None``
    when the meaningful stage has not run (or was not asked for).
    """

    __test__ = False  # not a pytest class

    tasks: pd.DataFrame
    modules: pd.DataFrame
    renamed_tasks: pd.DataFrame
    renamed_modules: pd.DataFrame
    rename_map: pd.DataFrame
    membership: pd.DataFrame | None = None
    meaningful_tasks: pd.DataFrame | None = None
    meaningful_modules: pd.DataFrame | None = None

    # ------------------------------------------------------------------ loading
    @classmethod
    def load(cls, paths: Any, *, verified: bool = True, meaningful: bool = False) -> "TestSet":
        """Read the Parquet tables under ``paths`` (any object with the folder attributes
        ``ingest``, ``rename``, ``verify``, ``meaningful`` of :class:`alias.config.Paths`).
        ``verified``: read the verify stage's membership; ``meaningful``: read the
        meaningful stage's tables when they exist. Raises :class:`StoreError` for a missing
        table."""
        def read(name: str) -> pd.DataFrame:
            key, file = _TABLES[name]
            return read_parquet(Path(getattr(paths, key)) / file)

        frames = {n: read(n) for n in ("tasks", "modules", "renamed_tasks", "renamed_modules", "rename_map")}
        membership = read("test_set") if verified else None
        mt = mm = None
        if meaningful and (Path(paths.meaningful) / _TABLES["meaningful_tasks"][1]).exists():
            mt, mm = read("meaningful_tasks"), read("meaningful_modules")
        return cls(**frames, membership=membership, meaningful_tasks=mt, meaningful_modules=mm)

    @classmethod
    def from_store(cls, db: str | Path) -> "TestSet":
        """The same tables from a DuckDB store (``data/alias.duckdb``); raises
        :class:`StoreError` when the store does not exist."""
        if not Path(db).is_file():
            raise StoreError(f"no store at {db}: run `dvc repro` (or `dvc pull`) first")
        con = duckdb.connect(str(db), read_only=True)
        try:
            frames = {n: con.execute(f"SELECT * FROM {n}").df() for n in _TABLES}
        finally:
            con.close()
        has_m = len(frames["meaningful_tasks"]) > 0
        return cls(frames["tasks"], frames["modules"], frames["renamed_tasks"], frames["renamed_modules"],
                   frames["rename_map"], frames["test_set"],
                   frames["meaningful_tasks"] if has_m else None, frames["meaningful_modules"] if has_m else None)

    # ------------------------------------------------------------------ questions
    def task_ids(self) -> list[str]:
        """The verified test-set task ids (every ingested task before verification), sorted."""
        if self.membership is None:
            return sorted(self.tasks.task_id)
        ts = self.membership
        return sorted(ts.loc[ts.in_test_set.astype(bool), "task_id"])

    def test_tasks(self) -> pd.DataFrame:
        """The ``tasks`` rows of :meth:`task_ids`, sorted by ``task_id``."""
        keep = set(self.task_ids())
        return self.tasks[self.tasks.task_id.isin(keep)].sort_values("task_id").reset_index(drop=True)

    def described_ids(self) -> tuple[list[str], list[str]]:
        """(test-set task ids with a description, those without), each sorted."""
        desc = self.tasks.set_index("task_id")["description"]
        ids = self.task_ids()
        with_d = [t for t in ids if has_description(desc.get(t))]
        return with_d, [t for t in ids if t not in set(with_d)]

    def module_texts(self, task_id: str, *, library: bool | None = None) -> dict[str, str]:
        """``module -> text`` of a task's ingested modules: all, only the library modules
        (``library=True``) or only the author modules (``library=False``)."""
        m = self.modules[self.modules.task_id == task_id]
        if library is not None:
            m = m[(m.role == "library") == library]
        return dict(zip(m.module, m.text))

    def renamed_ok(self) -> pd.DataFrame:
        """The ``renamed_tasks`` rows whose renaming succeeded, indexed by ``task_id``."""
        rt = self.renamed_tasks
        return rt[rt.status == "ok"].set_index("task_id")

    def conditions_table(self) -> pd.DataFrame:
        """One row per test-set task: ``task_id``, ``system_module`` / ``description``
        (original), ``random_system_module`` / ``random_description`` (CIR-renamed) and
        ``meaningful_system_module`` / ``meaningful_description`` (null unless the task's
        meaningful copy verified), sorted."""
        df = self.test_tasks()[["task_id", "system_module", "description"]]
        rt = self.renamed_ok().reset_index()[["task_id", "system_module", "description"]]
        df = df.merge(rt.rename(columns={"system_module": "random_system_module",
                                         "description": "random_description"}), on="task_id", how="left")
        if self.meaningful_tasks is not None:
            mt = self.meaningful_tasks
            mt = mt[mt.verified.astype(bool)][["task_id", "system_module", "description"]]
            df = df.merge(mt.rename(columns={"system_module": "meaningful_system_module",
                                             "description": "meaningful_description"}), on="task_id", how="left")
        else:
            df["meaningful_system_module"] = None
            df["meaningful_description"] = None
        return df.sort_values("task_id").reset_index(drop=True)

    def system_modules(self) -> dict[tuple[str, str], str]:
        """``(task_id, condition) -> system module name`` for every task and condition that
        has one: what output extraction expects a sample to define."""
        out = {(t, "original"): m for t, m in zip(self.tasks.task_id, self.tasks.system_module)}
        rt = self.renamed_tasks
        out |= {(t, "random"): m for t, m in zip(rt.task_id, rt.system_module) if isinstance(m, str)}
        if self.meaningful_tasks is not None:
            mt = self.meaningful_tasks[self.meaningful_tasks.verified.astype(bool)]
            out |= {(t, "meaningful"): m for t, m in zip(mt.task_id, mt.system_module) if isinstance(m, str)}
        return out

    def references(self, *, test_set_only: bool = True) -> dict[tuple[str, str], Reference]:
        """A :class:`Reference` per ``(task_id, condition)``: ``original`` for every task,
        ``random`` where renaming succeeded, ``meaningful`` where the meaningful copy
        verified; only test-set tasks unless ``test_set_only`` is false."""
        keep = set(self.task_ids()) if test_set_only else set(self.tasks.task_id)
        by_task = dict(tuple(self.modules.groupby("task_id")))
        renamed = dict(tuple(self.renamed_modules.groupby("task_id")))
        rt = self.renamed_ok()
        mt, mby = self._meaningful_frames()
        out: dict[tuple[str, str], Reference] = {}
        for t in self.tasks.itertuples():
            if t.task_id not in keep:
                continue
            mods = by_task.get(t.task_id, self.modules.iloc[0:0])
            libs = {f"{r.module}.tla": r.text for r in mods.itertuples() if r.role == "library"}
            own = {f"{r.module}.tla": r.text for r in mods.itertuples() if r.role != "library"}
            out[(t.task_id, "original")] = _reference(t.task_id, "original", own, libs, t, t.pluscal)
            if t.task_id in rt.index:
                rm = renamed.get(t.task_id)
                files = {f"{r.module}.tla": r.text for r in rm.itertuples()} if rm is not None else {}
                out[(t.task_id, "random")] = _reference(t.task_id, "random", files, libs, rt.loc[t.task_id], t.pluscal)
            if t.task_id in mt.index:
                mm = mby.get(t.task_id)
                files = {f"{r.module}.tla": r.text for r in mm.itertuples()} if mm is not None else {}
                out[(t.task_id, "meaningful")] = _reference(t.task_id, "meaningful", files, libs, mt.loc[t.task_id],
                                                            t.pluscal)
        return out

    def _meaningful_frames(self) -> tuple[pd.DataFrame, dict]:
        if self.meaningful_tasks is None:
            return pd.DataFrame(columns=["task_id"]).set_index("task_id"), {}
        mt = self.meaningful_tasks
        mt = mt[mt.verified.astype(bool)].set_index("task_id")
        return mt, dict(tuple(self.meaningful_modules.groupby("task_id")))


def _reference(task_id: str, condition: str, own: dict[str, str], libs: dict[str, str], row: Any,
               pluscal: Any) -> Reference:
    """A :class:`Reference` from a task-like row (``system_module``, ``model_module``,
    ``wrapper_module``, ``cfg_text``) and the condition's author files."""
    return Reference(task_id=task_id, condition=condition, files=own | libs, system_module=row.system_module,
                     model_module=row.model_module, cfg_text=row.cfg_text, wrapper_module=_text(row.wrapper_module),
                     author_modules=tuple(sorted(k[:-4] for k in own)), pluscal=bool(pluscal))
