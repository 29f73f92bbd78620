"""Any folder tree of ``.tla`` and ``.cfg`` files as a corpus (``corpus.kind: folder``;
README "Your own specifications").

Every cfg with its module is a candidate model: the module of the same name beside it
(``MC.cfg`` beside ``MC.tla``, so a Toolbox model folder ``<Spec>.toolbox/<Model>/MC.*``
too), else the module beside it whose name is the longest prefix of the cfg's
(``MCNanoSmall.cfg`` -> ``MCNano.tla``), else the one module of its folder that no other
module there imports. A model's system module is found as for the Examples
(:func:`alias.corpus.ingest.system_module_of`: a wrapper without variables checks the
module it imports), and one model per system module becomes its task: the smallest by
:func:`model_size` (no manifest says which runs fastest), then the cfg named like its
module, then by path; the others are ``duplicate_model``.

Nothing is dropped silently: a module that no cfg checks is a candidate excluded as
``no_cfg`` (its detail names the modules that import it), a cfg without a module as
``cfg_without_module`` or ``ambiguous_cfg``, a file without a module as ``not_a_module``,
and a model whose closure lacks a module as ``missing_module`` (modules defined later in
the same file count as found: TLC reads them there). There is no manifest: the expected
result of a model is what TLC reports on the original in ``verify`` (its state counts,
depth and result kind; a model over ``tla.timeout_s`` is ``tlc_original_timeout``).

Descriptions, per task, from the first that exists: a sidecar file beside the cfg (then
beside the system module) named after the cfg, the model module or the system module
(``.md``, then ``.txt``); the JSON
file ``corpus.descriptions`` (an object mapping module name to text, or a TLA+-Bench
description file); the system module's comments.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from alias.corpus.ingest import (Corpus, CorpusModule, IngestError, choose_tasks, closure_check,
                                 description_from_comments, load_descriptions, role_rows, system_module_of,
                                 task_rows, _best_record, _slug, render_description)
from alias.corpus.tlabench import _module_names
from alias.tla.cfg import CfgError, parse_cfg, tokenize

__all__ = ["FolderCorpus", "ingest_folder", "cfg_model"]

#: Sidecar description files, in the order tried.
SIDECAR_SUFFIXES = (".md", ".txt")


class FolderCorpus(Corpus):
    """Every ``.tla`` file under ``root`` (a module's folder is its file's folder)."""

    def __init__(self, root: str | Path, library: list[str] | tuple[str, ...] = ()):
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise IngestError(f"corpus folder not found: {self.root}")
        self.library_dirs = [Path(d).resolve() for d in library]
        for d in self.library_dirs:
            if not d.is_dir():
                raise IngestError(f"library directory not found: {d}")
        self._library_cache = {}
        self.manifests, self.without_manifest, self.folder_meta = [], [], {}
        self.modules: dict[str, CorpusModule] = {}
        self.by_folder: dict[str, list[CorpusModule]] = {}
        for tla in sorted(self.root.rglob("*.tla")):
            self.add_module(tla, self.folder_of(tla), {})
        self.cfgs = sorted(str(p.relative_to(self.root)) for p in self.root.rglob("*.cfg"))
        if not self.modules and not self.cfgs:
            raise IngestError(f"{self.root}: no .tla or .cfg file")

    def folder_of(self, path: Path) -> str:
        """The folder of a file, relative to the root (the root's own name for the root)."""
        rel = path.parent.relative_to(self.root).as_posix()
        return self.root.name if rel == "." else rel

    def closure(self, top: CorpusModule):
        """:meth:`Corpus.closure`, a module defined in one of the closure's files (after its
        first module) counting as found."""
        mods, lib, missing = super().closure(top)
        defined = {n for m in mods for n in _module_names(m.text)}
        return mods, lib, [n for n in missing if n not in defined]


def cfg_model(corpus: FolderCorpus, cfg_rel: str) -> tuple[CorpusModule | None, str | None]:
    """The model module of a cfg (module docstring), or ``(None, reason detail)``."""
    cfg = corpus.root / cfg_rel
    here = [m for m in corpus.by_folder.get(corpus.folder_of(cfg), []) if m.path.parent == cfg.parent]
    same = [m for m in here if m.path.stem == cfg.stem]
    if same:
        return same[0], None
    prefixed = sorted((m for m in here if cfg.stem.startswith(m.path.stem)), key=lambda m: -len(m.path.stem))
    if prefixed:
        return prefixed[0], None
    imported = {i for m in here for i in m.info.imports}
    tops = [m for m in here if m.name not in imported]
    if len(tops) == 1:
        return tops[0], None
    return None, ("no module beside it" if not here else
                  "several candidate modules beside it: " + ", ".join(sorted(m.path.name for m in tops)))


def _row(corpus: FolderCorpus, cm: CorpusModule | None, cfg_rel: str) -> dict[str, Any]:
    """A ``candidates`` row (the Examples' columns; no manifest fields)."""
    sysm = system_module_of(cm, corpus) if cm is not None and cm.info.name else cm
    folder = corpus.folder_of(corpus.root / (cm.rel if cm is not None else cfg_rel))
    return {"folder": folder, "model_module": cm.name if cm else "", "model_module_path": cm.rel if cm else "",
            "cfg_path": cfg_rel, "system_module": sysm.name if sysm else "",
            "system_module_path": sysm.rel if sysm else "",
            "wrapper_module": cm.name if cm is not None and sysm is not cm else None, "mode": "exhaustive search",
            "manifest_result": None, "manifest_runtime_s": None, "expected_distinct_states": None,
            "expected_states_generated": None, "expected_depth": None,
            "task_id": _slug(folder, sysm.name if sysm else Path(cfg_rel).stem, Path(cfg_rel).stem or "no_cfg"),
            "status": "excluded", "reason": None, "detail": None}


def model_size(cfg_text: str) -> int:
    """A proxy of a model's size, to choose the smallest of several models of one system
    module without running them: the sum of the integers and the count of model values
    and strings in its ``CONSTANT ... = value`` entries (``N = 3``, ``Procs = {p1, p2}``);
    0 for a cfg the parser rejects."""
    try:
        constants = parse_cfg(cfg_text).constants
    except CfgError:
        return 0
    total = 0
    for c in constants:
        if c.op == "=":
            toks = [t for t in tokenize(c.value) if t.kind in ("number", "ident", "string")]
            total += sum(int(t.text) if t.kind == "number" else 1 for t in toks)
    return total


def _cfg_rows(corpus: FolderCorpus) -> list[dict]:
    """One candidate per cfg, with its exclusion reason (``None`` while eligible)."""
    rows = []
    for cfg_rel in corpus.cfgs:
        cm, why = cfg_model(corpus, cfg_rel)
        row = _row(corpus, cm, cfg_rel)
        if cm is None:
            row.update(reason="ambiguous_cfg" if why.startswith("several") else "cfg_without_module", detail=why)
        elif not cm.info.name:
            row.update(reason="not_a_module", detail=f"{cm.rel}: no ---- MODULE ---- header")
        else:
            cm.models.append({"path": cfg_rel})
            row["_size"] = model_size((corpus.root / cfg_rel).read_text(encoding="utf-8", errors="replace"))
            closure_check(row, cm, corpus)
        rows.append(row)
    return rows


def _module_rows(corpus: FolderCorpus, cand: list[dict]) -> list[dict]:
    """A candidate excluded as ``no_cfg`` (or ``not_a_module``) for every module that no
    cfg candidate checks, as model or system module."""
    used = {r["model_module_path"] for r in cand} | {r["system_module_path"] for r in cand}
    importers: dict[str, list[str]] = {}
    for m in corpus.modules.values():
        for imp in m.info.imports:
            am = corpus.resolve(imp, m)
            if am is not None and am is not m:
                importers.setdefault(am.rel, []).append(m.path.name)
    rows = []
    for rel, cm in sorted(corpus.modules.items()):
        if rel in used:
            continue
        row = _row(corpus, cm, "")
        if not cm.info.name:
            row.update(reason="not_a_module", detail=f"{rel}: no ---- MODULE ---- header")
        else:
            by = importers.get(rel)
            row.update(reason="no_cfg", detail=(f"imported by {', '.join(sorted(by))}" if by
                                                else "no cfg names this module"))
        rows.append(row)
    return rows


def _json_descriptions(path: str | Path | None) -> tuple[dict[str, str], dict[str, list[dict]]]:
    """``corpus.descriptions`` as ``(module -> text, module -> TLA+-Bench records)``: a JSON
    object of strings, or a TLA+-Bench description file."""
    if not path:
        return {}, {}
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8")) if p.is_file() else None
    except json.JSONDecodeError as e:
        raise IngestError(f"{p}: not valid JSON ({e})") from e
    if isinstance(data, dict):
        bad = [k for k, v in data.items() if not isinstance(v, str)]
        if bad:
            raise IngestError(f"{p}: the description of {bad[0]!r} is not a string")
        return data, {}
    return {}, load_descriptions(path)


def _sidecar(folders: tuple[Path, ...], stems: tuple[str, ...]) -> Path | None:
    """The first sidecar description file ``<folder>/<stem><suffix>`` that exists."""
    for folder in dict.fromkeys(folders):
        for stem in dict.fromkeys(stems):
            for suffix in SIDECAR_SUFFIXES:
                if (folder / f"{stem}{suffix}").is_file():
                    return folder / f"{stem}{suffix}"
    return None


def describer(corpus: FolderCorpus, descriptions: str | Path | None) -> Callable:
    """``describe(system module, candidate row) -> (text, source, fields JSON)`` (module
    docstring)."""
    plain, records = _json_descriptions(descriptions)

    def describe(sysm: CorpusModule, row: dict) -> tuple[str, str, str | None]:
        sidecar = _sidecar(((corpus.root / row["cfg_path"]).parent, sysm.path.parent),
                           (Path(row["cfg_path"]).stem, row["model_module"], sysm.name))
        if sidecar is not None:
            return sidecar.read_text(encoding="utf-8", errors="replace").strip(), "sidecar", None
        if sysm.name in plain:
            return plain[sysm.name].strip(), "json", None
        if records.get(sysm.name):
            fields = {k: v for k, v in _best_record(records[sysm.name], sysm).items() if k != "_index"}
            return render_description(fields), "tlabench", json.dumps(fields, sort_keys=True)
        text = description_from_comments(sysm.info)
        return text, "comments" if text else "none", None

    return describe


def ingest_folder(root: str | Path, descriptions: str | Path | None = None, library: tuple[str, ...] = (),
                  progress: Callable[[], None] | None = None) -> dict[str, pd.DataFrame]:
    """Ingest a folder of ``.tla``/``.cfg`` files; returns the tables ``candidates``,
    ``tasks``, ``modules``, ``module_roles`` of :func:`alias.corpus.ingest.ingest`.
    Raises :class:`IngestError` for a missing folder, library folder or description file."""
    corpus = FolderCorpus(root, library)
    describe = describer(corpus, descriptions)
    cand = _cfg_rows(corpus)
    choose_tasks(cand, key=lambda r: (r["_size"], Path(r["cfg_path"]).stem != r["model_module"], r["cfg_path"]))
    cand += _module_rows(corpus, cand)
    tasks, modules = [], []
    for r in cand:
        if r["status"] == "task":
            task, mods = task_rows(r, corpus, {}, describe)
            tasks.append(task)
            modules += mods
            if progress:
                progress()
    roles = role_rows(corpus, [r for r in cand if r["cfg_path"]])
    for r in cand:
        r.pop("_closure", None)
        r.pop("_size", None)
    return {"candidates": pd.DataFrame(cand).sort_values(["folder", "model_module_path", "cfg_path"]).reset_index(drop=True),
            "tasks": pd.DataFrame(tasks).sort_values("task_id").reset_index(drop=True) if tasks else pd.DataFrame(tasks),
            "modules": pd.DataFrame(modules), "module_roles": pd.DataFrame(roles).sort_values("path").reset_index(drop=True)}
