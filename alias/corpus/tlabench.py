"""Ingest of TLA+-Bench's released evaluation set (the layout of its release:
``eval100.jsonl``, ``specs/gold/<id>_<Name>.tla`` and ``.cfg``, ``specs/deps/``) into the
same four tables as :func:`alias.corpus.ingest.ingest` (``candidates``, ``tasks``,
``modules``, ``module_roles``), so that rename, verify, identifiers, controls and grading
run on it unchanged: a renamed TLA+-Bench.

One task per evaluation record: ``task_id`` = ``spec_id``; the system module is the gold
file's first module (a gold file may hold several modules one after another or nested:
they stay one file, as SANY 1.8 reads them); the cfg is the gold ``.cfg``; the
description is ``desc_declarative_gpt`` (what the benchmark's models were given in its
default regime). The modules a gold spec imports resolve, in order, to the modules of its
own file, the other gold files (the benchmark stages every gold module beside an output),
``specs/deps``, the library folders (TLAPS, Community Modules) and the modules of the
TLA+ tools. A record without a gold file (``missing_reference``), without a cfg
(``missing_cfg``) or importing a module found nowhere (``missing_module``) is an excluded
candidate with its reason, never dropped.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from alias.corpus.ingest import JAR_MODULES, IngestError
from alias.tla.syntax import imported_modules, node_text, parse

__all__ = ["ingest_tlabench", "read_records", "DESCRIPTION_FIELD", "FOLDER"]

#: The description the benchmark's models were given (default regime).
DESCRIPTION_FIELD = "desc_declarative_gpt"
#: The ``folder`` of every TLA+-Bench task (the tables' corpus folder column).
FOLDER = "tlabench"
#: Record fields kept (JSON) in ``tasks.description_fields``.
_KEPT = ("tier", "category", "complexity", "source_repo", "source_path", "spec_sha256")


@dataclass
class _File:
    """One ``.tla`` file of the release or a library: its first module's name, every
    module name it defines, its text and its path (relative to its root)."""

    name: str
    defines: list[str]
    text: str
    rel: str
    kind: str                      # gold | deps | library
    imports: list[str] = field(default_factory=list)


def _module_names(text: str) -> list[str]:
    """Every module a file defines (sequential and nested), in source order."""
    src = text.encode("utf-8")
    out, stack = [], [parse(text).root_node]
    while stack:
        n = stack.pop()
        if n.type == "module":
            name = n.child_by_field_name("name") or next((c for c in n.named_children if c.type == "identifier"), None)
            if name is not None:
                out.append(node_text(name, src))
        stack.extend(reversed(n.children))
    return out


def _read(path: Path, rel: str, kind: str) -> _File | None:
    text = path.read_text(encoding="utf-8", errors="replace")
    names = _module_names(text)
    if not names:
        return None
    return _File(names[0], names, text, rel, kind, [m for m in imported_modules(text) if m not in names])


def read_records(root: Path, ids_file: str | Path | None = None) -> list[dict]:
    """The evaluation records of ``eval100.jsonl``, restricted to the ids of ``ids_file``
    (a JSON list, e.g. ``outputs/eval_100_ids.json`` or a subset) when given; sorted by
    ``spec_id``. Raises :class:`IngestError` on a missing or malformed file."""
    f = root / "eval100.jsonl"
    if not f.is_file():
        raise IngestError(f"{root}: no eval100.jsonl (not a TLA+-Bench release folder)")
    recs = []
    for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                recs.append(json.loads(line))
            except ValueError as e:
                raise IngestError(f"{f}:{i}: not JSON ({e})") from None
    if ids_file:
        try:
            wanted = {str(x) for x in json.loads(Path(ids_file).read_text(encoding="utf-8"))}
        except (OSError, ValueError) as e:
            raise IngestError(f"ids file {ids_file}: {e}") from None
        recs = [r for r in recs if str(r["spec_id"]) in wanted]
    return sorted(recs, key=lambda r: int(r["spec_id"]))


class _Pool:
    """Every module a gold spec may import, by name, in resolution order."""

    def __init__(self, root: Path, library: tuple[str, ...]):
        self.gold: dict[str, _File] = {}
        self.by_name: dict[str, _File] = {}
        for p in sorted((root / "specs" / "gold").glob("*.tla")):
            f = _read(p, f"specs/gold/{p.name}", "gold")
            if f is not None:
                self.gold[p.stem] = f
        for group in (list(self.gold.values()),
                      [_read(p, f"specs/deps/{p.name}", "deps") for p in sorted((root / "specs" / "deps").glob("*.tla"))],
                      [_read(p, f"{Path(d).name}/{p.name}", "library") for d in library
                       for p in sorted(Path(d).glob("*.tla"))]):
            for f in group:
                if f is not None:
                    for n in f.defines:
                        self.by_name.setdefault(n, f)

    def closure(self, top: _File) -> tuple[list[_File], list[str]]:
        """The files ``top`` needs, transitively (``top`` first), and the names found nowhere."""
        files, missing, todo = [top], [], list(top.imports)
        while todo:
            name = todo.pop(0)
            if name in JAR_MODULES or any(name in f.defines for f in files) or name in missing:
                continue
            f = self.by_name.get(name)
            if f is None:
                missing.append(name)
                continue
            files.append(f)
            todo += f.imports
        return files, missing


def _candidate(rec: dict, gold: _File | None, stem: str | None, root: Path) -> dict:
    sid = str(rec["spec_id"])
    name = gold.name if gold else (stem.split("_", 1)[1] if stem else "")
    rel = f"specs/gold/{stem}.tla" if stem else ""
    return {"model_module_path": rel or f"specs/gold/{sid}", "cfg_path": f"specs/gold/{stem}.cfg" if stem else "",
            "folder": FOLDER, "model_module": name, "system_module": name, "system_module_path": rel,
            "wrapper_module": None, "mode": "exhaustive search", "manifest_result": None, "manifest_runtime_s": None,
            "expected_distinct_states": None, "expected_states_generated": None, "expected_depth": None,
            "task_id": sid, "status": "excluded", "reason": None, "detail": None}


def _task_rows(rec: dict, gold: _File, files: list[_File], cfg_text: str) -> tuple[dict, list[dict]]:
    sid = str(rec["spec_id"])
    author = [f for f in files if f.kind != "library"]
    task = {"task_id": sid, "folder": FOLDER, "system_module": gold.name, "system_module_path": gold.rel,
            "wrapper_module": None, "model_module": gold.name, "cfg_path": gold.rel[:-4] + ".cfg", "cfg_text": cfg_text,
            "expected_distinct_states": None, "expected_states_generated": None, "expected_depth": None,
            "manifest_runtime_s": None, "pluscal": "--algorithm" in gold.text or "--fair algorithm" in gold.text,
            "author_modules": [f.name for f in author], "library_modules": [f.name for f in files if f.kind == "library"],
            "description": rec.get(DESCRIPTION_FIELD) or "", "description_source": "tlabench_" + DESCRIPTION_FIELD,
            "description_fields": json.dumps({k: rec.get(k) for k in _KEPT}, sort_keys=True)}
    modules = [{"task_id": sid, "module": f.name, "path": f.rel, "text": f.text,
                "role": "system" if f is gold else ("library" if f.kind == "library" else "utility"),
                "sha256": hashlib.sha256(f.text.encode()).hexdigest()} for f in files]
    return task, modules


def ingest_tlabench(root: str | Path, ids_file: str | Path | None = None, library: tuple[str, ...] = (),
                    progress: Callable[[], None] | None = None) -> dict[str, pd.DataFrame]:
    """Ingest a TLA+-Bench release folder; returns the tables ``candidates``, ``tasks``,
    ``modules``, ``module_roles`` (see the module docstring). Raises :class:`IngestError`
    for a folder that is not a release or a missing library folder."""
    root = Path(root)
    for d in library:
        if not Path(d).is_dir():
            raise IngestError(f"library directory not found: {d}")
    pool = _Pool(root, tuple(library))
    stems = {stem.split("_", 1)[0]: stem for stem in pool.gold}
    cands, tasks, modules = [], [], []
    for rec in read_records(root, ids_file):
        sid = str(rec["spec_id"])
        stem = stems.get(sid)
        gold = pool.gold.get(stem) if stem else None
        row = _candidate(rec, gold, stem, root)
        cands.append(row)
        cfg = root / row["cfg_path"] if stem else None
        if gold is None:
            row.update(reason="missing_reference", detail="the release has no gold specification (MISSING.md)")
            continue
        if cfg is None or not cfg.is_file():
            row.update(reason="missing_cfg", detail=row["cfg_path"])
            continue
        files, missing = pool.closure(gold)
        if missing:
            row.update(reason="missing_module", detail=",".join(missing))
            continue
        row["status"] = "task"
        task, mods = _task_rows(rec, gold, files, cfg.read_text(encoding="utf-8", errors="replace"))
        tasks.append(task)
        modules += mods
        if progress is not None:
            progress()
    return {"candidates": pd.DataFrame(cands), "tasks": pd.DataFrame(tasks), "modules": pd.DataFrame(modules),
            "module_roles": _roles(pool, tasks, modules)}


def _roles(pool: _Pool, tasks: list[dict], modules: list[dict]) -> pd.DataFrame:
    systems = {t["system_module_path"] for t in tasks}
    used = {m["path"] for m in modules if m["role"] == "utility"}
    rows = [{"folder": FOLDER, "module": f.name, "path": f.rel, "has_model": f.kind == "gold",
             "role": "system" if f.rel in systems else ("utility" if f.rel in used else "other"),
             "pluscal": "--algorithm" in f.text} for f in pool.gold.values()]
    return pd.DataFrame(rows).sort_values("path").reset_index(drop=True)


def staging_pool(root: str | Path) -> tuple[dict[str, str], dict[str, tuple[str, str | None, str]]]:
    """What the benchmark's grader stages beside an output: ``{"<Module>.tla": text}`` of
    every gold file (under its first module's name, in sorted file order: a later file of
    the same module name replaces an earlier one) and of ``specs/deps``; and per spec id
    ``(gold module, cfg text or None, gold file name)``."""
    root = Path(root)
    files: dict[str, str] = {}
    gold: dict[str, tuple[str, str | None, str]] = {}
    for p in sorted((root / "specs" / "gold").glob("*.tla")) + sorted((root / "specs" / "deps").glob("*.tla")):
        f = _read(p, p.name, "gold")
        if f is None:
            continue
        files[f"{f.name}.tla"] = f.text
        if p.parent.name == "gold":
            cfg = p.with_suffix(".cfg")
            gold[p.stem.split("_", 1)[0]] = (f.name, cfg.read_text(encoding="utf-8", errors="replace")
                                            if cfg.is_file() else None, p.name)
    return files, gold
