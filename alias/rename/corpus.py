"""CIR over a whole ingested corpus (Methods "Renaming"; Appendix G): every task renamed
with same-length seeded names, in its modules, its cfg and its description, comments
included (:func:`with_comments_renamed`).

:func:`rename_corpus` turns the ingest tables into the rows of the ``renamed_tasks``,
``renamed_modules`` and ``rename_map`` tables (:mod:`alias.store.models`) and writes the
renamed files, one folder per task. Identical inputs and seed give identical bytes.
"""

from __future__ import annotations

import difflib
import hashlib
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from alias.rename.cir import RenameResult, leftover_identifiers, rename_task
from alias.rename.comments import count_kept_english, leftover_rows, rename_cfg_comments, rename_module_comments
from alias.rename.descriptions import rename_description
from alias.tla.cfg import parse_cfg
from alias.tla.syntax import STANDARD_MODULES

__all__ = ["RenamedCorpus", "rename_corpus", "text_similarity", "with_comments_renamed"]


def text_similarity(a: str, b: str) -> float:
    """Word-by-word similarity of two texts by difflib, in [0, 1] (Appendix G)."""
    return difflib.SequenceMatcher(None, a.split(), b.split(), autojunk=False).ratio()


@dataclass
class RenamedCorpus:
    """Rows of the four rename tables (lists of dicts, in task order)."""

    tasks: list[dict] = field(default_factory=list)
    modules: list[dict] = field(default_factory=list)
    rename_map: list[dict] = field(default_factory=list)
    leftovers: list[dict] = field(default_factory=list)


def with_comments_renamed(res: RenameResult) -> RenameResult:
    """``res`` with its renamed names renamed in the comments of its modules and cfg too
    (:mod:`alias.rename.comments`: a renamed copy carries no original name)."""
    res.modules = {m: rename_module_comments(text, res.mapping) for m, text in res.modules.items()}
    res.cfg_text = rename_cfg_comments(res.cfg_text, res.mapping)
    return res


def _task_row(task_id: str) -> dict[str, Any]:
    return {"task_id": task_id, "condition": "random", "status": "ok", "error": None, "system_module": None,
            "model_module": None, "wrapper_module": None, "cfg_text": None, "description": None,
            "n_renamed": 0, "n_leftover": 0, "n_kept_english": 0, "text_similarity": None}


def _fill_row(row: dict, t: Any, res: RenameResult, author: dict[str, str], library: dict[str, str]) -> list[dict]:
    """The renamed module names, cfg, description and counts of a renamed task; returns its
    ``leftover_names`` rows (:func:`alias.rename.comments.leftover_rows`)."""
    names = res.module_names
    cfg_names: set[str] = set()
    for v in parse_cfg(t.cfg_text).names().values():
        cfg_names.update(v)
    module_names = set(STANDARD_MODULES) | set(names) | set(library)
    description = rename_description(t.description or "", res.mapping, cfg_names, module_names)
    rows = leftover_rows(t.task_id, res.mapping, res.modules, res.cfg_text, description,
                         leftover_identifiers(res, set(res.mapping)), cfg_names=cfg_names, module_names=module_names)
    leftovers = [r for r in rows if r["kept"] is None]
    row.update(
        system_module=names[t.system_module], model_module=names[t.model_module],
        wrapper_module=names.get(t.wrapper_module) if isinstance(t.wrapper_module, str) else None,
        cfg_text=res.cfg_text, description=description, n_renamed=len(res.mapping),
        n_leftover=sum(r["n"] for r in leftovers), n_kept_english=count_kept_english(rows),
        text_similarity=text_similarity(author[t.system_module], res.modules[names[t.system_module]]))
    if leftovers:
        row.update(status="error", error="leftover original identifiers: " +
                   ", ".join(f"{r['file']}:{r['name']}@{r['first_line']}" for r in leftovers[:10]))
    return rows


def _write_files(out: RenamedCorpus, t: Any, res: RenameResult, roles: dict[str, str], tdir: Path) -> None:
    """One file per renamed module file and the renamed cfg; their ``renamed_modules`` rows."""
    tdir.mkdir(parents=True, exist_ok=True)
    names = res.module_names
    original_of = {v: k for k, v in names.items()}
    for new, text in sorted(res.modules.items()):
        old = original_of.get(new, new)
        p = tdir / f"{new}.tla"
        p.write_text(text, encoding="utf-8")
        out.modules.append({"task_id": t.task_id, "module": new, "original_module": old,
                            "role": roles.get(old, "utility"), "path": p.as_posix(), "text": text,
                            "sha256": hashlib.sha256(text.encode()).hexdigest()})
    (tdir / f"{names[t.model_module]}.cfg").write_text(res.cfg_text, encoding="utf-8")


def _map_rows(task_id: str, res: RenameResult) -> list[dict]:
    """One row per renamed name (the map is per task); a name defined in several modules
    keeps its first row."""
    rows, seen = [], set()
    for ident in res.identifiers:
        if ident["name"] in seen:
            continue
        seen.add(ident["name"])
        rows.append({"task_id": task_id, "old": ident["name"], "new": ident["new_name"],
                     "module": ident["module"], "kind": ident["kind"]})
    return rows


def rename_corpus(tasks: pd.DataFrame, modules: pd.DataFrame, seed: int, files_dir: Path,
                  progress: Callable[[], None] | None = None) -> RenamedCorpus:
    """CIR-rename every task of the ingest tables (seeded by ``seed`` and the task id).

    The renamed files go to ``files_dir/<task_id>/`` (the folder is emptied first). A task
    whose renaming raises, or leaves an original identifier behind, gets ``status`` error
    with the reason; no other task is affected.
    """
    if files_dir.exists():
        shutil.rmtree(files_dir)
    out = RenamedCorpus()
    for t in tasks.itertuples():
        mods = modules[modules.task_id == t.task_id]
        author = {r.module: r.text for r in mods.itertuples() if r.role != "library"}
        library = {r.module: r.text for r in mods.itertuples() if r.role == "library"}
        row = _task_row(t.task_id)
        try:
            res = with_comments_renamed(rename_task(author, set(author), t.cfg_text, seed=seed, salt=t.task_id,
                                                    library_modules=library))
        except Exception as e:  # RenameError or a bug on odd input: excludes this task only
            row.update(status="error", error=f"{type(e).__name__}: {e}")
        else:
            out.leftovers += _fill_row(row, t, res, author, library)
            _write_files(out, t, res, dict(zip(mods.module, mods.role)), files_dir / t.task_id)
            out.rename_map += _map_rows(t.task_id, res)
        out.tasks.append(row)
        if progress is not None:
            progress()
    return out
