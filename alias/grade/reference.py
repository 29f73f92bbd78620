"""The reference side of grading: a task's modules, cfg and declared names per condition.

Methods "Name-based grade" and "Behavior-based grade": each condition is graded against
its own reference, so the ``random`` condition uses the renamed specification, its
renamed imported modules and the renamed cfg.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from alias.store.db import read_parquet
from alias.tla.syntax import module_info


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


def load_references(ingest_dir: Path, rename_dir: Path, verify_dir: Path | None = None,
                    *, test_set_only: bool = True,
                    meaningful_dir: Path | None = None) -> dict[tuple[str, str], Reference]:
    """References for every task of the store's stage outputs, keyed by
    ``(task_id, condition)`` with conditions ``'original'`` and ``'random'``, and
    ``'meaningful'`` when ``meaningful_dir`` is given (the ``meaningful`` stage's
    ``data/meaningful``; Appendix R).

    ``verify_dir`` with ``test_set_only``: only tasks in the verified test set.  A task
    whose renaming failed has no ``'random'`` reference; only tasks whose meaningful
    copy verified (``meaningful_tasks.verified``) have a ``'meaningful'`` reference.
    """
    tasks = read_parquet(Path(ingest_dir) / "tasks.parquet")
    modules = read_parquet(Path(ingest_dir) / "modules.parquet")
    rtasks = read_parquet(Path(rename_dir) / "renamed_tasks.parquet").set_index("task_id")
    rmods = read_parquet(Path(rename_dir) / "renamed_modules.parquet")
    keep: set[str] | None = None
    if verify_dir is not None and test_set_only:
        ts = read_parquet(Path(verify_dir) / "test_set.parquet")
        keep = set(ts.loc[ts.in_test_set.astype(bool), "task_id"])
    by_task = {k: g for k, g in modules.groupby("task_id")}
    mtasks = pd.DataFrame(columns=["task_id", "verified"]).set_index("task_id")
    mby_task: dict = {}
    if meaningful_dir is not None:
        mtasks = read_parquet(Path(meaningful_dir) / "meaningful_tasks.parquet").set_index("task_id")
        mmods = read_parquet(Path(meaningful_dir) / "meaningful_modules.parquet")
        mby_task = {k: g for k, g in mmods.groupby("task_id")}
    rby_task = {k: g for k, g in rmods.groupby("task_id")}
    out: dict[tuple[str, str], Reference] = {}
    for t in tasks.itertuples():
        if keep is not None and t.task_id not in keep:
            continue
        mods = by_task.get(t.task_id, pd.DataFrame(columns=modules.columns))
        libs = {f"{r.module}.tla": r.text for r in mods.itertuples() if r.role == "library"}
        own = {f"{r.module}.tla": r.text for r in mods.itertuples() if r.role != "library"}
        wrapper = t.wrapper_module if isinstance(t.wrapper_module, str) and t.wrapper_module else None
        out[(t.task_id, "original")] = Reference(
            task_id=t.task_id, condition="original", files=own | libs, system_module=t.system_module,
            model_module=t.model_module, cfg_text=t.cfg_text, wrapper_module=wrapper,
            author_modules=tuple(sorted(k[:-4] for k in own)), pluscal=bool(t.pluscal))
        if t.task_id in rtasks.index and rtasks.loc[t.task_id, "status"] == "ok":
            rt = rtasks.loc[t.task_id]
            rm = rby_task.get(t.task_id)
            rfiles = {f"{r.module}.tla": r.text for r in rm.itertuples()} if rm is not None else {}
            rw = rt.wrapper_module if isinstance(rt.wrapper_module, str) and rt.wrapper_module else None
            out[(t.task_id, "random")] = Reference(
                task_id=t.task_id, condition="random", files=rfiles | libs,
                system_module=rt.system_module, model_module=rt.model_module, cfg_text=rt.cfg_text,
                wrapper_module=rw, author_modules=tuple(sorted(k[:-4] for k in rfiles)),
                pluscal=bool(t.pluscal))
        if t.task_id in mtasks.index and bool(mtasks.loc[t.task_id, "verified"]):
            mt = mtasks.loc[t.task_id]
            mm = mby_task.get(t.task_id)
            mfiles = {f"{r.module}.tla": r.text for r in mm.itertuples()} if mm is not None else {}
            mw = mt.wrapper_module if isinstance(mt.wrapper_module, str) and mt.wrapper_module else None
            out[(t.task_id, "meaningful")] = Reference(
                task_id=t.task_id, condition="meaningful", files=mfiles | libs,
                system_module=mt.system_module, model_module=mt.model_module, cfg_text=mt.cfg_text,
                wrapper_module=mw, author_modules=tuple(sorted(k[:-4] for k in mfiles)),
                pluscal=bool(t.pluscal))
    return out
