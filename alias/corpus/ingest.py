"""Corpus ingest: a TLA+ Examples-layout directory becomes tasks (paper, Methods "Renaming"
and Appendix K; ISSUE "Corpus ingest").

A *task* is a system module the model must write plus the model that checks it: the cfg
and, where the cfg belongs to a wrapper module that EXTENDS or INSTANCEs the system module
(the ``MC*.tla`` pattern), that wrapper. Only exhaustive-search models whose manifest
result is ``success`` become tasks; every other candidate keeps a reason code.

Outputs (all :class:`pandas.DataFrame`, one Parquet table each):

``candidates``   one row per (module, model) listed in a manifest, with ``status`` in
                 {``task``, ``excluded``} and ``reason``.
``tasks``        one row per task: ids, module names, cfg text, the manifest's expected
                 ``distinctStates``/``totalStates``/``stateDepth``, description + source.
``modules``      one row per (task, module) the task needs: role in {``system``,
                 ``wrapper``, ``utility``, ``library``}, corpus path and text.
``module_roles`` one row per corpus module: role in {``system``, ``wrapper``,
                 ``utility``, ``other``} as the paper labels system vs utility modules.

Unicode TLA+ symbols (``≜ ∧ ∈ ⟨ ⟩`` ...) in a module's code, which SANY of the 2020 jar
cannot lex, are converted to ASCII when the module is read (:func:`ascii_module`, the
converter of model outputs, :func:`alias.tla.extract.asciify`); the ``modules`` text, the
renamed files and the checks all see the ASCII text, and a task's ``candidates.detail``
names the converted modules. A module whose code keeps a non-ASCII character after the
conversion, or whose syntax tree the conversion changes, excludes its candidates with
reason ``unicode_symbols``.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from alias.errors import AliasError
from alias.tla.extract import asciify
from alias.tla.lexer import comment_string_spans
from alias.tla.syntax import ModuleInfo, imported_modules, module_info, parse

EMBEDDED_CORPUS = Path(__file__).resolve().parent / "embedded"

#: Modules the tla2tools jar itself provides: its ``StandardModules`` (the 1.8.0 jar's;
#: the 2020 jar of PyPI lacks ``TLCExt``, ``Json`` and the ``_*`` modules, so a task that
#: imports one fails SANY there and is excluded with that reason).
JAR_MODULES = frozenset(
    {"Naturals", "Integers", "Reals", "Sequences", "FiniteSets", "Bags", "TLC", "RealTime",
     "Randomization", "Toolbox", "TLCExt", "Json", "_TLCTrace", "_Possible", "_DotTrace", "_JsonTrace",
     "_TLAPlusCounterExample", "_TLCActionTrace", "_TLCTESpec", "_TLCTracePlain"}
)

DESCRIPTION_FIELDS = [
    ("system_overview", "System overview"),
    ("actors_and_components", "Actors and components"),
    ("state_variables", "State variables"),
    ("initial_state", "Initial state"),
    ("actions", "Actions"),
    ("safety_properties", "Safety properties"),
    ("liveness_properties", "Liveness properties"),
    ("model_bounds", "Model bounds"),
    ("additional_assumptions", "Additional assumptions"),
]


class IngestError(AliasError):
    """A corpus directory that is not in the TLA+ Examples layout."""


def _runtime_s(text: str | None) -> float | None:
    if not text or not isinstance(text, str) or text.count(":") != 2:
        return None
    try:
        h, m, s = (int(x) for x in text.split(":"))
    except ValueError:
        return None
    return float(h * 3600 + m * 60 + s)


def _mode(mode) -> str:
    if isinstance(mode, str):
        return mode
    if isinstance(mode, dict) and mode:
        return next(iter(mode))
    return str(mode)


def _code_non_ascii(text: str) -> list[str]:
    """The distinct non-ASCII characters of ``text`` outside comments and strings."""
    spans = comment_string_spans(text)
    out: list[str] = []
    i = 0
    for s, e in spans + [(len(text), len(text))]:
        out += [ch for ch in text[i:s] if ord(ch) > 127 and ch not in out]
        i = max(i, e)
    return out


def _tree_shape(text: str) -> str | None:
    """tree-sitter's tree of ``text`` as an S-expression (``None`` when it has errors);
    ``≡`` and ``<=>`` are the same operator."""
    root = parse(text).root_node
    return None if root.has_error else str(root).replace("(equiv)", "(iff)")


@dataclass
class AsciiModule:
    """A module text read for checking: ``text`` (ASCII in its code), ``symbols`` (Unicode
    symbols replaced; 0 = untouched) and ``error`` (why it cannot be made ASCII, else None)."""

    text: str
    symbols: int = 0
    error: str | None = None


def ascii_module(text: str, name: str = "module") -> AsciiModule:
    """``text`` with the Unicode TLA+ symbols of its code replaced by their ASCII forms.

    A module whose code (outside comments and strings) is ASCII is returned unchanged:
    SANY accepts any character in comments and strings. Otherwise the whole text goes
    through :func:`alias.tla.extract.asciify` (comments too, so an embedded PlusCal
    algorithm stays in step). The conversion fails, with ``error`` saying Unicode, when a
    non-ASCII character is left in the code (a symbol without an ASCII form) or when the
    converted text parses to another syntax tree than the original (junction alignment
    lost).
    """
    if not _code_non_ascii(text):
        return AsciiModule(text)
    new, n = asciify(text)
    left = _code_non_ascii(new)
    if left:
        chars = ", ".join(f"{ch!r} (U+{ord(ch):04X})" for ch in left[:8])
        return AsciiModule(text, 0, f"{name}: Unicode character without an ASCII form in its code: {chars}")
    before = _tree_shape(text)
    if before is not None and _tree_shape(new) != before:
        return AsciiModule(text, 0, f"{name}: converting its Unicode symbols to ASCII changes its syntax tree")
    return AsciiModule(new, n)


def render_description(fields: dict) -> str:
    """Render a TLA+-Bench structured description to plain text, field by field.

    Fields are emitted in TLA+-Bench order under their English headings; empty fields and
    ``expected_output_files`` are left out.
    """
    parts = []
    for key, title in DESCRIPTION_FIELDS:
        val = fields.get(key)
        if isinstance(val, list):
            val = "\n".join(f"- {v}" for v in val)
        if val:
            parts.append(f"{title}: {str(val).strip()}")
    return "\n\n".join(parts)


def _comment_body(comment: str) -> str:
    """Strip TLA+ comment delimiters and box decoration from one comment's text."""
    lines = []
    for line in comment.splitlines():
        line = line.strip()
        if line.startswith("\\*"):
            line = line[2:]
        while line.startswith("(*"):
            line = line[2:]
        while line.endswith("*)"):
            line = line[:-2]
        line = line.strip().strip("*").strip()
        if set(line) <= set("-=*(). "):
            line = ""
        lines.append(line)
    return "\n".join(lines).strip()


#: Lines the TLA+ Toolbox generates (``MC.tla`` headers, model annotations, the
#: modification history), dropped from comment-derived descriptions: they describe no
#: system, and an annotation such as ``@modelParameterConstants:0N`` glues the index to a
#: constant's name, which the renaming of descriptions cannot see.
_TOOLBOX_LINE = re.compile(
    r"@model[A-Za-z]*\b|@mc_\w*"
    r"|^(?:MV\s+)?CONSTANTS?\s+(?:definitions?|declarations?)\b"
    r"|^(?:SPECIFICATION|INIT|NEXT|INVARIANT|PROPERTY|CONSTRAINT|ACTION[_ -]?CONSTRAINT|VIEW|SYMMETRY|ALIAS"
    r"|POSTCONDITION)\s+definitions?\b"
    r"|^Constant\s+expression\s+(?:definition|ASSUME\s+statement)\b"
    r"|^Generated\s+on\s+[A-Z][a-z]{2}\s+[A-Z][a-z]{2}\s+\d"
    r"|^Modification\s+History\s*$|^(?:Created|Last\s+modified)\s+[A-Z][a-z]{2}\s+[A-Z][a-z]{2}\s+\d.*\sby\s")


def _drop_toolbox_lines(body: str) -> str:
    return "\n".join(line for line in body.splitlines() if not _TOOLBOX_LINE.search(line.strip())).strip()


def description_from_comments(info: ModuleInfo) -> str:
    """Description text from a module's own comments (paper's fallback), PlusCal and the
    Toolbox's generated lines (:data:`_TOOLBOX_LINE`) removed."""
    out = []
    for c in info.comments:
        if "--algorithm" in c or "--fair algorithm" in c or "BEGIN TRANSLATION" in c or "END TRANSLATION" in c:
            continue
        body = _drop_toolbox_lines(_comment_body(c))
        if body:
            out.append(body)
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def load_descriptions(path: str | Path | None) -> dict[str, list[dict]]:
    """Map module name (``Bakery``) -> TLA+-Bench description records naming it.

    ``path`` is a JSON file (array of ``{"description": {...}}``) or a directory holding
    ``TLA_Description.json``. Raises :class:`IngestError` on a malformed file.
    """
    if not path:
        return {}
    p = Path(path)
    if p.is_dir():
        p = p / "TLA_Description.json"
    if not p.exists():
        raise IngestError(f"description file not found: {p}")
    try:
        records = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise IngestError(f"{p}: not valid JSON ({e})") from e
    if not isinstance(records, list):
        raise IngestError(f"{p}: expected a JSON array of description records")
    out: dict[str, list[dict]] = {}
    for i, rec in enumerate(records):
        d = rec.get("description") if isinstance(rec, dict) else None
        if not isinstance(d, dict):
            raise IngestError(f"{p}: record {i} has no 'description' object")
        files = d.get("expected_output_files") or []
        if isinstance(files, str):
            files = [files]
        for f in files:
            m = re.match(r"\s*([A-Za-z0-9_]+)\.tla\b", str(f))
            if m:
                out.setdefault(m.group(1), []).append(d | {"_index": i})
    return out


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z]{2,}", text)}


def _best_record(recs: list[dict], module: "CorpusModule") -> dict:
    """Of several description records naming the same file, the one sharing the most words
    with the module's text (ties: the first in the file)."""
    if len(recs) == 1:
        return recs[0]
    mod_words = _words(module.text)
    scores = [len(_words(render_description(r)) & mod_words) for r in recs]
    return recs[scores.index(max(scores))]


@dataclass
class CorpusModule:
    name: str
    path: Path          # absolute
    rel: str            # relative to the corpus root
    folder: str         # specification folder (relative, e.g. specifications/Paxos)
    info: ModuleInfo
    text: str
    models: list[dict] = field(default_factory=list)
    ascii_symbols: int = 0          # Unicode symbols converted to ASCII (ascii_module)
    unicode_error: str | None = None  # why the module's Unicode cannot be made ASCII


def _slug(*parts: str) -> str:
    s = ".".join(parts)
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", s)


class Corpus:
    """An indexed corpus directory (``specifications/*/manifest.json``)."""

    def __init__(self, root: str | Path, library: list[str] | tuple[str, ...] = ()):
        self.root = Path(root).resolve()
        spec_dir = self.root / "specifications"
        if not spec_dir.is_dir():
            raise IngestError(f"{self.root}: no specifications/ directory (TLA+ Examples layout expected)")
        self.manifests = sorted(spec_dir.glob("*/manifest.json"))
        if not self.manifests:
            raise IngestError(f"{spec_dir}: no */manifest.json found")
        self.library_dirs = [Path(d).resolve() for d in library]
        self._library_cache: dict[str, AsciiModule] = {}
        for d in self.library_dirs:
            if not d.is_dir():
                raise IngestError(f"library directory not found: {d}")
        #: specification folders that have no manifest.json (their modules are not read)
        self.without_manifest = sorted(
            str(d.relative_to(self.root)) for d in spec_dir.iterdir()
            if d.is_dir() and not (d / "manifest.json").exists())
        self.modules: dict[str, CorpusModule] = {}  # by rel path
        self.by_folder: dict[str, list[CorpusModule]] = {}
        self.folder_meta: dict[str, dict] = {}
        for mf in self.manifests:
            folder = str(mf.parent.relative_to(self.root))
            try:
                meta = json.loads(mf.read_text(encoding="utf-8"))
            except json.JSONDecodeError as e:
                raise IngestError(f"{mf}: not valid JSON ({e})") from e
            self.folder_meta[folder] = meta
            listed = {m["path"]: m for m in meta.get("modules", [])}
            for tla in sorted(mf.parent.rglob("*.tla")):
                self.add_module(tla, folder, listed.get(str(tla.relative_to(self.root)), {}))

    def add_module(self, tla: Path, folder: str, entry: dict) -> CorpusModule:
        """Read the module file ``tla`` (:func:`ascii_module`) into :attr:`modules` and
        :attr:`by_folder`; ``entry``: its manifest entry (models, features) or ``{}``."""
        rel = str(tla.relative_to(self.root))
        asc = ascii_module(tla.read_text(encoding="utf-8", errors="replace"), tla.name)
        info = module_info(asc.text)
        cm = CorpusModule(name=info.name or tla.stem, path=tla, rel=rel, folder=folder, info=info, text=asc.text,
                          models=list(entry.get("models", [])), ascii_symbols=asc.symbols, unicode_error=asc.error)
        cm.features = list(entry.get("features", []))  # type: ignore[attr-defined]
        self.modules[rel] = cm
        self.by_folder.setdefault(folder, []).append(cm)
        return cm

    # -- module resolution -------------------------------------------------
    def resolve(self, name: str, near: CorpusModule) -> CorpusModule | None:
        """The author module called ``name`` as TLC would find it from ``near``."""
        same_dir = [m for m in self.by_folder[near.folder] if m.name == name and m.path.parent == near.path.parent]
        if same_dir:
            return same_dir[0]
        return None

    def library_path(self, name: str) -> Path | None:
        for d in self.library_dirs:
            p = d / f"{name}.tla"
            if p.exists():
                return p
        return None

    def library_module(self, name: str) -> AsciiModule:
        """The text of library module ``name`` (:func:`library_path`), read as an author
        module is (:func:`ascii_module`), memoized."""
        cache = self._library_cache
        if name not in cache:
            p = self.library_path(name)
            cache[name] = ascii_module(p.read_text(encoding="utf-8", errors="replace"), p.name)
        return cache[name]

    def closure(self, top: CorpusModule) -> tuple[list[CorpusModule], list[str], list[str]]:
        """Author modules reachable from ``top`` by EXTENDS/INSTANCE (``top`` first), the
        library modules they need (in ``library`` dirs, with the library modules those
        import, transitively), and names found nowhere.

        Module-level EXTENDS/INSTANCE decide ``missing``; an INSTANCE nested in a LET or a
        definition (``G == INSTANCE Graphs`` inside an operator) is followed too when it
        names an author or library module (a name found nowhere there may be a module
        nested in the same file, which TLC needs no file for)."""
        seen: list[CorpusModule] = []
        lib: list[str] = []
        missing: list[str] = []

        def add_library(name: str) -> None:
            todo = [name]
            while todo:
                n = todo.pop(0)
                if n in lib or n in JAR_MODULES or self.library_path(n) is None:
                    continue
                lib.append(n)
                todo += imported_modules(self.library_module(n).text)

        stack = [top]
        while stack:
            m = stack.pop(0)
            if m in seen:
                continue
            seen.append(m)
            top_level = m.info.imports
            nested = [n for n in imported_modules(m.text) if n not in top_level]
            for imp in top_level + nested:
                am = self.resolve(imp, m)
                if am is not None:
                    stack.append(am)
                elif imp in JAR_MODULES:
                    continue
                elif self.library_path(imp) is not None:
                    add_library(imp)
                elif imp not in missing and imp in top_level:
                    missing.append(imp)
        # a corpus module shadows a library module of the same name (TLC searches the
        # spec's directory before TLA-Library), e.g. a folder's own Folds.tla
        authored = {m.name for m in seen}
        lib = [n for n in lib if n not in authored]
        return seen, lib, missing


def _declares_variables(cm: CorpusModule, corpus: Corpus, _depth: int = 0) -> bool:
    if cm.info.variables:
        return True
    if _depth > 8:
        return False
    for imp in cm.info.imports:
        am = corpus.resolve(imp, cm)
        if am is not None and am is not cm and _declares_variables(am, corpus, _depth + 1):
            return True
    return False


def _toolbox_model(cm: CorpusModule) -> bool:
    """Whether ``cm`` is the ``MC.tla`` the TLA+ Toolbox generates in a model folder
    (``<Spec>.toolbox/<Model>/MC.tla``)."""
    return cm.path.name == "MC.tla" and cm.path.parent.parent.name.endswith(".toolbox")


def system_module_of(model_module: CorpusModule, corpus: Corpus) -> CorpusModule:
    """The system module a model's module checks: itself, unless it is a wrapper.

    A wrapper declares no VARIABLES of its own and EXTENDS or INSTANCEs an author module
    that does (directly or through its imports). Among several, the one whose name the
    wrapper's name contains wins (``MCPaxos`` -> ``Paxos``), then the first in source order.
    The Toolbox's ``<Spec>.toolbox/<Model>/MC.tla`` wraps its spec even when the spec is
    constant-level (declares no VARIABLE): the author module it imports (``<Spec>`` first).
    """
    if model_module.info.variables:
        return model_module
    targets = []
    for imp in model_module.info.imports:
        am = corpus.resolve(imp, model_module)
        if am is not None and am is not model_module and _declares_variables(am, corpus):
            targets.append(am)
    if not targets and _toolbox_model(model_module):
        # a Toolbox model of a constant-level spec (no VARIABLE anywhere): the spec, not
        # the generated MC, is the system module
        spec = model_module.path.parent.parent.name.removesuffix(".toolbox")
        targets = [am for am in (corpus.resolve(imp, model_module) for imp in model_module.info.imports)
                   if am is not None and am is not model_module]
        targets.sort(key=lambda t: t.name != spec)
    if not targets:
        return model_module
    named = [t for t in targets if t.name in model_module.name]
    named.sort(key=lambda t: -len(t.name))
    return (named or targets)[0]


def _candidate_row(cm: Any, model: dict, corpus: "Corpus", max_expected_runtime_s: float | None) -> dict:
    """The ``candidates`` row of one manifest model, with its exclusion reason (``None``
    while eligible) and, when eligible, the module closure under ``_closure``."""
    cfg_rel = model.get("path", "")
    sysm = system_module_of(cm, corpus)
    row = {
        "folder": cm.folder, "model_module": cm.name, "model_module_path": cm.rel, "cfg_path": cfg_rel,
        "system_module": sysm.name, "system_module_path": sysm.rel,
        "wrapper_module": cm.name if sysm is not cm else None, "mode": _mode(model.get("mode")),
        "manifest_result": model.get("result"), "manifest_runtime_s": _runtime_s(model.get("runtime")),
        "expected_distinct_states": model.get("distinctStates"), "expected_states_generated": model.get("totalStates"),
        "expected_depth": model.get("stateDepth"),
        "task_id": _slug(str(Path(cm.rel).parent).removeprefix("specifications/"), sysm.name, Path(cfg_rel).stem),
        "status": "excluded", "reason": None, "detail": None,
    }
    if row["mode"] != "exhaustive search" or row["manifest_result"] != "success":
        row.update(reason="not_exhaustive_success", detail=f"mode={row['mode']} result={row['manifest_result']}")
    elif not (corpus.root / cfg_rel).exists():
        row.update(reason="missing_cfg", detail=cfg_rel)
    elif max_expected_runtime_s is not None and (
            row["manifest_runtime_s"] is None or row["manifest_runtime_s"] > max_expected_runtime_s):
        row.update(reason="too_slow", detail=f"manifest runtime {model.get('runtime')} > {max_expected_runtime_s} s")
    else:
        closure_check(row, cm, corpus)
    return row


def closure_check(row: dict, cm: Any, corpus: "Corpus") -> None:
    """Record in a candidate ``row`` the module closure of its model module ``cm`` (under
    ``_closure``) and the reason it cannot be checked: ``missing_module`` (an import found
    nowhere) or ``unicode_symbols``; the modules whose Unicode was converted go to
    ``detail``."""
    mods, lib, missing = corpus.closure(cm)
    row["_closure"] = (mods, lib)
    unicode = [m.unicode_error for m in mods if m.unicode_error]
    unicode += [e for e in (corpus.library_module(n).error for n in lib) if e]
    converted = [f"{m.rel} ({m.ascii_symbols})" for m in mods if m.ascii_symbols]
    converted += [f"{n}.tla ({corpus.library_module(n).symbols})" for n in lib if corpus.library_module(n).symbols]
    if missing:
        row.update(reason="missing_module", detail=",".join(missing))
    elif unicode:
        row.update(reason="unicode_symbols", detail="; ".join(unicode))
    elif converted:
        row["detail"] = "Unicode symbols converted to ASCII: " + ", ".join(converted)


def _fastest(r: dict) -> tuple:
    return r["manifest_runtime_s"] or 0, Path(r["cfg_path"]).stem != r["model_module"], r["cfg_path"]


def choose_tasks(cand_rows: list[dict], key=_fastest) -> None:
    """One task per system module: the first eligible model by ``key`` (default: the
    fastest by the manifest, then the cfg named like its module); the other eligible
    models are excluded as ``duplicate_model``."""
    by_system: dict[str, list[dict]] = {}
    for r in cand_rows:
        if r["reason"] is None:
            by_system.setdefault(r["system_module_path"], []).append(r)
    for rows in by_system.values():
        rows.sort(key=key)
        rows[0]["status"] = "task"
        for r in rows[1:]:
            r["reason"] = "duplicate_model"
            r["detail"] = f"another model of {r['system_module']} was chosen: {rows[0]['cfg_path']}"


def _description(sysm: Any, desc: dict) -> tuple[str, str, str | None]:
    """``(text, source, fields JSON)`` of a system module: its TLA+-Bench description when
    the file has one, else the description rendered from its comments."""
    recs = desc.get(sysm.name, [])
    if not recs:
        text = description_from_comments(sysm.info)
        return text, "comments" if text else "none", None
    fields = {k: v for k, v in _best_record(recs, sysm).items() if k != "_index"}
    source = "tlabench" if len(recs) == 1 else "tlabench_best_of_%d" % len(recs)
    return render_description(fields), source, json.dumps(fields, sort_keys=True)


def task_rows(r: dict, corpus: "Corpus", desc: dict, describe=None) -> tuple[dict, list[dict]]:
    """The ``tasks`` row of a chosen candidate and the ``modules`` rows it needs;
    ``describe(system module, candidate row)`` gives ``(description, source, fields JSON)``
    (default: the TLA+-Bench file ``desc``, else the module's comments)."""
    mods, lib = r["_closure"]
    model_mod = mods[0]
    sysm = corpus.modules[r["system_module_path"]]
    text, source, fields_json = describe(sysm, r) if describe else _description(sysm, desc)
    task = {k: r[k] for k in ("task_id", "folder", "wrapper_module", "cfg_path", "expected_distinct_states",
                              "expected_states_generated", "expected_depth", "manifest_runtime_s")}
    task |= {"system_module": sysm.name, "system_module_path": sysm.rel, "model_module": model_mod.name,
             "cfg_text": (corpus.root / r["cfg_path"]).read_text(encoding="utf-8", errors="replace"),
             "pluscal": bool(sysm.info.has_pluscal or "pluscal" in getattr(sysm, "features", [])),
             "author_modules": [m.name for m in mods], "library_modules": list(lib), "description": text,
             "description_source": source, "description_fields": fields_json}
    # ascii_symbols: Unicode symbols converted to ASCII in the text (not yet a column of
    # the modules table; the task's candidates.detail names the converted modules)
    modules = [{"task_id": r["task_id"], "module": m.name, "path": m.rel, "text": m.text,
                "role": "system" if m is sysm else ("wrapper" if m is model_mod else "utility"),
                "sha256": hashlib.sha256(m.text.encode()).hexdigest(), "ascii_symbols": m.ascii_symbols}
               for m in mods]
    for name in lib:
        p = corpus.library_path(name)
        lm = corpus.library_module(name)
        # the library folder's name and the file: the same in every checkout
        modules.append({"task_id": r["task_id"], "module": name, "role": "library", "path": f"{p.parent.name}/{p.name}",
                        "text": lm.text, "sha256": hashlib.sha256(lm.text.encode()).hexdigest(),
                        "ascii_symbols": lm.symbols})
    return task, modules


def role_rows(corpus: "Corpus", cand_rows: list[dict]) -> list[dict]:
    """Corpus-wide system / wrapper / utility / other label of every module."""
    imported_by: dict[str, set[str]] = {}
    for cm in corpus.modules.values():
        for imp in cm.info.imports:
            am = corpus.resolve(imp, cm)
            if am is not None and am is not cm:
                imported_by.setdefault(am.rel, set()).add(cm.rel)
    systems = {r["system_module_path"] for r in cand_rows}
    wrappers = {r["model_module_path"] for r in cand_rows if r["wrapper_module"]}
    rows = []
    for cm in corpus.modules.values():
        if cm.rel in systems:
            role = "system"
        elif cm.rel in wrappers:
            role = "wrapper"
        elif not cm.models and cm.rel in imported_by:
            role = "utility"
        else:
            role = "other"
        rows.append({"folder": cm.folder, "module": cm.name, "path": cm.rel, "role": role,
                     "has_model": bool(cm.models), "pluscal": cm.info.has_pluscal})
    return rows


def ingest(
    root: str | Path,
    descriptions: str | Path | None = None,
    library: list[str] | tuple[str, ...] = (),
    max_expected_runtime_s: float | None = None,
    progress=None,
) -> dict[str, pd.DataFrame]:
    """Ingest a corpus; returns the tables ``candidates``, ``tasks``, ``modules``,
    ``module_roles`` (see the module docstring). Raises :class:`IngestError` on a
    directory or description file that is not in the expected layout."""
    corpus = Corpus(root, library)
    desc = load_descriptions(descriptions)
    cand_rows = [_candidate_row(cm, model, corpus, max_expected_runtime_s)
                 for cm in corpus.modules.values() for model in cm.models]
    choose_tasks(cand_rows)
    task_list, module_rows = [], []
    for r in cand_rows:
        if r["status"] == "task":
            task, mods = task_rows(r, corpus, desc)
            task_list.append(task)
            module_rows += mods
            if progress:
                progress()
    roles = role_rows(corpus, cand_rows)
    for r in cand_rows:
        r.pop("_closure", None)
    for name in corpus.without_manifest:
        print(f"warning: {name}: no manifest.json; its modules are not candidates", file=sys.stderr)
    if desc and not any(r["description_source"].startswith("tlabench") for r in task_list):
        print("warning: the description file matched no task; every description comes from module comments",
              file=sys.stderr)
    return {
        "candidates": pd.DataFrame(cand_rows).sort_values(["folder", "model_module_path", "cfg_path"]).reset_index(drop=True),
        "tasks": pd.DataFrame(task_list).sort_values("task_id").reset_index(drop=True) if task_list else pd.DataFrame(task_list),
        "modules": pd.DataFrame(module_rows),
        "module_roles": pd.DataFrame(roles).sort_values("path").reset_index(drop=True),
    }
