"""The package's shape, checked from the source (``ast``), no import executed:

* every ``dvc.yaml`` stage runs ``python -m alias <stage>`` and has a module
  ``alias/stages/<name>.py``; the import closure of that module is covered by the stage's
  ``deps`` (so a code change reruns every stage whose output it can change);
* the grader's code-version hash (:data:`alias.grade.run.GRADER_SOURCES`) covers the import
  closure of :mod:`alias.grade.run` (so a change to any of it regrades);
* the domain packages import nothing from ``alias.stages`` or ``alias.cli``;
* there is no import cycle between modules.

The import closure of a module follows every ``import``/``from ... import`` of ``alias``
modules anywhere in it (top level and inside functions), and each module's parent
packages (Python runs their ``__init__`` first); imports inside a module-level
``__getattr__`` (PEP 562: ``alias.grade_output``, imported when first used) are not
followed, since importing the package does not run them.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
import yaml

from alias.grade.run import grader_source_files

REPO = Path(__file__).resolve().parents[1]
PKG = REPO / "alias"
DOMAIN = ("tla", "corpus", "rename", "grade", "generate", "exposure", "stats", "report", "store")


def module_file(name: str) -> Path | None:
    """The source file of module ``alias.x.y`` (None for a name that is not a module)."""
    rel = Path(*name.split("."))
    for cand in (REPO / rel.with_suffix(".py"), REPO / rel / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def _module_name(path: Path) -> str:
    rel = path.relative_to(REPO).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _lazy_nodes(tree: ast.Module) -> set[int]:
    """ids of the nodes inside a module-level ``__getattr__``."""
    out: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            out |= {id(n) for n in ast.walk(node)}
    return out


def imports_of(path: Path) -> set[str]:
    """The ``alias`` modules that ``path`` imports (``from alias.x import y`` counts
    ``alias.x.y`` when that is a module, else ``alias.x``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lazy = _lazy_nodes(tree)
    here = _module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in lazy:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "alias"}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            if base.split(".")[0] != "alias":
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.add(sub if module_file(sub) else base)
    return {m for m in out if module_file(m)}


def closure(module: str) -> set[str]:
    """The import closure of ``module`` with the parent packages of every module in it."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        parts = m.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += sorted(imports_of(module_file(m)))
    return seen


def _files(modules: set[str]) -> set[str]:
    return {module_file(m).relative_to(REPO).as_posix() for m in modules}


def _covered(path: str, deps: list[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in deps)


def _dvc_stages() -> dict[str, dict]:
    return yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]


def uncovered_stage_sources(stages: dict[str, dict]) -> dict[str, list[str]]:
    """Per stage, the files of its module's import closure that its deps do not cover."""
    out: dict[str, list[str]] = {}
    for name, stage in stages.items():
        body = stage.get("do", stage)
        missing = sorted(f for f in _files(closure(f"alias.stages.{name}")) if not _covered(f, body.get("deps", [])))
        if missing:
            out[name] = missing
    return out


def uncovered_grader_sources(files: list[Path]) -> list[str]:
    """Files of the grader's import closure missing from ``files`` (what the hash reads)."""
    have = {f.resolve().relative_to(REPO).as_posix() for f in files}
    return sorted(f for f in _files(closure("alias.grade.run")) if f not in have)


def test_every_stage_has_its_module_and_command():
    for name, stage in _dvc_stages().items():
        body = stage.get("do", stage)
        assert (PKG / "stages" / f"{name}.py").is_file(), name
        assert body["cmd"].startswith(f"python -m alias {name.replace('_', '-')}"), (name, body["cmd"])


def test_stage_deps_cover_the_import_closure_of_each_stage_module():
    assert uncovered_stage_sources(_dvc_stages()) == {}


def test_the_dependency_check_fails_when_a_dep_is_removed():
    stages = _dvc_stages()
    stages["verify"]["deps"] = [d for d in stages["verify"]["deps"] if d != "alias/tla"]
    assert "verify" in uncovered_stage_sources(stages)
    assert any(f.startswith("alias/tla/") for f in uncovered_stage_sources(stages)["verify"])


def test_grader_version_hash_covers_the_grader_import_closure():
    """Every file the grader can import is hashed; the control generators (CONTROL_GENERATORS)
    are not, so they must stay out of the grader's import closure."""
    files = grader_source_files()
    assert uncovered_grader_sources(files) == []
    rel = {f.relative_to(PKG).as_posix() for f in files}
    assert "grade/behavior.py" in rel and "grade/hardneg.py" not in rel and "grade/equivalence/base.py" not in rel
    # and it would notice a missing file
    assert uncovered_grader_sources([f for f in files if f.name != "names.py"]) == ["alias/rename/names.py"]


def test_domain_packages_import_neither_stages_nor_cli():
    bad = []
    for pkg in DOMAIN:
        for f in sorted((PKG / pkg).rglob("*.py")):
            for m in imports_of(f):
                if m.startswith(("alias.stages", "alias.cli")):
                    bad.append(f"{f.relative_to(REPO)} -> {m}")
    assert bad == []


def _cycles() -> list[list[str]]:
    graph = {_module_name(f): imports_of(f) for f in PKG.rglob("*.py")}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    assert _cycles() == []


def test_domain_packages_form_layers():
    """tla/store/stats at the bottom; a package imports only packages below it."""
    order = ["errors", "config", "store", "stats", "tla", "corpus", "generate", "rename", "grade", "exposure",
             "report"]
    rank = {p: i for i, p in enumerate(order)}
    bad = []
    for f in sorted(PKG.rglob("*.py")):
        src = _module_name(f).split(".")
        if len(src) < 2 or src[1] not in rank:
            continue
        for m in imports_of(f):
            dst = m.split(".")[1] if "." in m else None
            if dst in rank and rank[dst] > rank[src[1]]:
                bad.append(f"{'.'.join(src)} -> {m}")
    assert bad == []


@pytest.mark.parametrize("stage", sorted(_dvc_stages()))
def test_stage_modules_stay_short(stage):
    lines = (PKG / "stages" / f"{stage}.py").read_text().count("\n")
    assert lines <= 80, f"alias/stages/{stage}.py has {lines} lines"


def test_no_function_over_100_lines():
    long = []
    for f in PKG.rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 100:
                long.append(f"{f.relative_to(REPO)}:{node.lineno} {node.name}")
    assert long == []


# ------------------------------------------------------------------ params declared
def _chain(node: ast.AST) -> list[str] | None:
    """``config.a.b`` -> ["config", "a", "b"] (subscripts and calls end the chain)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id] + parts[::-1]
    return None


def _config_reads(path: Path, helpers: dict[str, set[str]]) -> set[str]:
    """Dotted params keys a stage module reads: attribute chains from ``config`` (and from
    names bound to such a chain, ``p = config.exposure``), plus what the ``stages.common``
    helpers it calls with ``config`` read."""
    tree = ast.parse(path.read_text())
    alias: dict[str, list[str]] = {"config": []}
    reads: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            pairs = (zip(node.targets[0].elts, node.value.elts) if isinstance(node.targets[0], ast.Tuple)
                     and isinstance(node.value, ast.Tuple) else [(node.targets[0], node.value)])
            for t, v in pairs:
                ch = _chain(v)
                if isinstance(t, ast.Name) and ch and ch[0] in alias:
                    alias[t.id] = alias[ch[0]] + ch[1:]
    for node in ast.walk(tree):
        ch = _chain(node) if isinstance(node, ast.Attribute) else None
        if ch and ch[0] in alias and not isinstance(getattr(node, "ctx", None), ast.Store):
            full = alias[ch[0]] + ch[1:]
            if full:
                reads.add(".".join(full[:2]))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in helpers:
            if any(isinstance(a, ast.Name) and a.id == "config" for a in node.args):
                reads |= helpers[node.func.id]
    return {r for r in reads if r and r.split(".")[0] not in UNDECLARED}


#: Sections no stage declares: where files go and where tool runs execute change no result.
UNDECLARED = ("paths", "executor")


def _helper_reads() -> dict[str, set[str]]:
    tree = ast.parse((PKG / "stages" / "common.py").read_text())
    out: dict[str, set[str]] = {}
    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        reads = set()
        for node in ast.walk(fn):
            ch = _chain(node) if isinstance(node, ast.Attribute) else None
            if ch and ch[0] == "config" and len(ch) > 1:
                reads.add(".".join(ch[1:3]))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in out:
                reads |= out[node.func.id]
        out[fn.name] = reads
    return out


def undeclared_params(stages: dict[str, dict]) -> dict[str, list[str]]:
    """Per stage, the params keys its module reads that its dvc.yaml ``params`` do not declare."""
    helpers = _helper_reads()
    out = {}
    for name, stage in stages.items():
        body = stage.get("do", stage)
        declared = [d.replace(".${key}", "") for d in body.get("params", [])]
        reads = _config_reads(PKG / "stages" / f"{name}.py", helpers)
        missing = sorted(r for r in reads if not any(r == d or r.startswith(d + ".") or d.startswith(r + ".")
                                                     for d in declared))
        if missing:
            out[name] = missing
    return out


def test_every_params_key_a_stage_reads_is_declared():
    assert undeclared_params(_dvc_stages()) == {}
    stages = _dvc_stages()
    stages["verify"]["params"] = [p for p in stages["verify"]["params"] if p != "tla"]
    assert "tla.parallel" in undeclared_params(stages)["verify"]


def test_pipeline_folders_are_written_from_the_root_dvc_yaml():
    """Each ``pipelines/<name>/dvc.yaml`` is what ``pipelines/make_pipeline.py`` writes from
    the root one (so its deps and params follow the root's, which the tests above check)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_pipeline", REPO / "pipelines" / "make_pipeline.py")
    mp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mp)
    folders = sorted(p.parent.name for p in (REPO / "pipelines").glob("*/dvc.yaml"))
    assert folders
    for name in folders:
        text = (REPO / "pipelines" / name / "dvc.yaml").read_text()
        assert text == mp.pipeline_yaml(name, mp.stages_of(name)), f"pipelines/{name}/dvc.yaml is out of date"
