"""Pipeline folders (``pipelines/<name>/``): a ``params.yaml`` with only what differs from
the repository's and a ``dvc.yaml`` written from the repository's ``dvc.yaml``
(README "The real corpus", "Your own specifications").

:func:`pipeline_yaml` is the one generator (``pipelines/make_pipeline.py`` and
``alias-cir init-pipeline`` call it): the listed stages, their code deps one level up
(``../../alias/...``), the data deps of the stages the folder has, each params key declared
in the file(s) that set it, and every command run with both params files
(``--params ../../params.yaml --params params.yaml``). :func:`init_pipeline` writes a
new folder for a folder of ``.tla``/``.cfg`` files (``corpus.kind: folder``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import yaml

from alias.errors import AliasError
from alias.report.adjudication import COLUMNS as ADJUDICATION_COLUMNS

__all__ = ["PRODUCES", "DEFAULT_STAGES", "REQUIRES", "pipeline_yaml", "stages_of", "init_pipeline", "params_yaml"]

#: The ``paths`` key of each stage's output folder.
PRODUCES = {"check_params": "checked", "ingest": "ingest", "rename": "rename", "verify": "verify",
            "identifiers": "identifiers", "controls": "controls", "meaningful": "meaningful",
            "tiny_model": "tiny_model", "generate_local": "samples", "generate_provider": "samples",
            "generate_replay": "samples", "continuation": "continuation", "exposure": "exposure", "grade": "grades",
            "load": "snapshot", "audit": "reports"}
#: The stages of a new pipeline folder: the test set, the store, the reports and the audit.
DEFAULT_STAGES = ("check_params", "ingest", "rename", "verify", "identifiers", "load", "report", "audit")
_FLAGS = " --params ../../params.yaml --params params.yaml"
#: What a stage cannot run without: each entry names stages of which the list must hold
#: one ("a|b" = either). The other inputs a stage reads are optional (``load`` builds the
#: store from whichever stage folders exist; ``grade`` reads ``meaningful`` when present).
REQUIRES = {"rename": ("ingest",), "verify": ("rename",), "identifiers": ("rename",), "controls": ("verify",),
            "meaningful": ("verify",), "generate_local": ("verify",), "generate_provider": ("verify",),
            "generate_replay": ("verify",), "continuation": ("verify",), "exposure": ("verify",),
            "grade": ("verify", "generate_local|generate_provider|generate_replay|exposure"), "load": ("ingest",),
            "report": ("load",), "audit": ("load",)}


def _has(tree: dict, dotted: str) -> bool:
    for part in dotted.split("."):
        if not isinstance(tree, dict) or part not in tree:
            return False
        tree = tree[part]
    return True


def _params(keys: list[str], profile: dict, base: dict) -> list:
    own = [k for k in keys if _has(profile, k.replace(".${key}", ""))]
    inherited = [k for k in keys if "${key}" not in k and _has(base, k)]
    return own + ([{"../../params.yaml": inherited}] if inherited else [])


def _stage(body: dict, have: set[str], profile: dict, base: dict) -> dict:
    out = dict(body)
    out["cmd"] = body["cmd"] + _FLAGS
    deps = []
    for d in body.get("deps", []):
        m = re.fullmatch(r"\$\{paths\.(\w+)\}(/.*)?", d)
        if m is None and not d.startswith("${item"):
            deps.append("../../" + d)
        elif m is None or m.group(1) in have:
            deps.append(d)
    out["deps"] = deps
    out["params"] = _params(body.get("params", []), profile, base)
    return out


def pipeline_yaml(repo: str | Path, name: str, keep: list[str] | tuple[str, ...]) -> str:
    """The text of ``<repo>/pipelines/<name>/dvc.yaml`` for the stages ``keep``, from the
    repository's ``dvc.yaml`` and the folder's ``params.yaml``. Raises :class:`AliasError`
    for a list missing a stage another needs (:data:`REQUIRES`), or a keyed stage whose
    keys (its ``foreach``, e.g. ``controls.parts``) the folder's ``params.yaml`` lacks
    (DVC reads them there)."""
    _check_inputs(tuple(keep))
    repo = Path(repo)
    root = yaml.safe_load((repo / "dvc.yaml").read_text())
    profile = yaml.safe_load((repo / "pipelines" / name / "params.yaml").read_text())
    base = yaml.safe_load((repo / "params.yaml").read_text())
    have = {PRODUCES[k] for k in keep if k in PRODUCES} | {"sql", "store", "reports", "adjudications"}
    stages = {}
    for st in keep:
        s = root["stages"][st]
        source = str(s.get("foreach", "")).removeprefix("${").removesuffix("}")
        if source and not _has(profile, source):
            raise AliasError(f"pipelines/{name}/params.yaml: {source} missing (dvc.yaml's stage {st} takes its "
                             "keys from this file)")
        body = _stage(s.get("do", s), have, profile, base)
        stages[st] = {"foreach": s["foreach"], "do": body} if "do" in s else body
    header = (f"# The {name} pipeline: `cd pipelines/{name} && dvc repro` (README). Written by\n"
              f"# `python pipelines/make_pipeline.py {name} {','.join(keep)}`\n"
              "# from the repository's dvc.yaml; do not edit by hand.\n")
    return header + yaml.safe_dump({"stages": stages}, sort_keys=False, width=120)


def stages_of(repo: str | Path, name: str) -> list[str]:
    """The stages a pipeline folder's ``dvc.yaml`` was written with (from its header)."""
    head = (Path(repo) / "pipelines" / name / "dvc.yaml").read_text().splitlines()[1]
    return head.split("make_pipeline.py ")[1].split()[1].rstrip("`").split(",")


def _relative(path: str | Path, folder: Path, repo: Path) -> str:
    """``path`` as written in the folder's params.yaml: relative to ``folder`` when it lies
    inside the repository ``repo`` (it moves with the clone), else absolute (a folder of
    one's own outside the clone stays where it is when the clone moves)."""
    p = Path(path).resolve()
    if not p.is_relative_to(Path(repo).resolve()):
        return str(p)
    return Path(os.path.relpath(p, folder.resolve())).as_posix()


def params_yaml(repo: Path, folder: Path, corpus: str | Path, library: tuple[str, ...] = (),
                descriptions: str | None = None, timeout_s: float | None = None) -> str:
    """The ``params.yaml`` of a new pipeline folder: ``paths`` (DVC reads ``${paths.X}`` from
    this file; ``sql`` and ``adjudications``, the folder's own readings, differ), ``corpus``,
    ``controls.parts`` (one part; DVC reads it from this file too) and, when given,
    ``tla.timeout_s``."""
    paths = dict(yaml.safe_load((repo / "params.yaml").read_text())["paths"])
    paths["sql"] = _relative(repo / paths["sql"], folder, repo)
    paths["adjudications"] = "adjudications.csv"
    data = {"paths": paths,
            "corpus": {"kind": "folder", "path": _relative(corpus, folder, repo),
                       "descriptions": _relative(descriptions, folder, repo) if descriptions else "",
                       "library": [_relative(d, folder, repo) for d in library]},
            "controls": {"parts": [1]}}
    if timeout_s is not None:
        data["tla"] = {"timeout_s": timeout_s}
    head = (f"# The {folder.name} pipeline (alias-cir init-pipeline): your own specifications, corpus.kind\n"
            "# folder. Only what differs from the repository's params.yaml, which the stages read first\n"
            "# (--params ../../params.yaml --params params.yaml); paths inside the repository relative to\n"
            "# this folder, paths outside it absolute. `paths` and `controls.parts` are here\n"
            "# because dvc.yaml reads ${paths.X} and ${controls.parts} from this file.\n")
    return head + yaml.safe_dump(data, sort_keys=False, width=120)


def _check_inputs(stages: tuple[str, ...]) -> None:
    """Raise :class:`AliasError` naming the first stage of ``stages`` whose required input
    (:data:`REQUIRES`) no stage of the list writes."""
    for st in stages:
        for need in REQUIRES.get(st, ()):
            if not set(need.split("|")) & set(stages):
                raise AliasError(f"stage {st} needs {need.replace('|', ' or ')} in --stages (a pipeline "
                                 f"folder's stages are the whole list: {', '.join(stages)})")


def init_pipeline(repo: str | Path, name: str, corpus: str | Path, *, library: tuple[str, ...] = (),
                  descriptions: str | None = None, timeout_s: float | None = None,
                  stages: tuple[str, ...] = DEFAULT_STAGES, force: bool = False) -> Path:
    """Write ``<repo>/pipelines/<name>/`` (``params.yaml``, ``dvc.yaml``, a header-only ``adjudications.csv``) for the folder of
    specifications ``corpus``; returns the folder. Raises :class:`AliasError` for a name
    that is not a plain folder name, a folder that exists (unless ``force``), a missing
    corpus, library or description file, a stage not in the repository's ``dvc.yaml``, a
    stage list missing a stage another needs (:data:`REQUIRES`), or a repository without
    ``dvc.yaml``."""
    repo = Path(repo).resolve()
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        raise AliasError(f"pipeline name {name!r}: letters, digits, '_', '.' and '-' only")
    if not (repo / "dvc.yaml").is_file() or not (repo / "params.yaml").is_file():
        raise AliasError(f"{repo}: no dvc.yaml and params.yaml (run from the repository root, or pass --root)")
    for what, p in [("corpus", corpus), *(("library", d) for d in library),
                    *([("descriptions", descriptions)] if descriptions else [])]:
        if not Path(p).exists():
            raise AliasError(f"{what} not found: {Path(p).resolve()}")
    known = yaml.safe_load((repo / "dvc.yaml").read_text())["stages"]
    unknown = [k for k in stages if k not in known]
    if unknown:
        raise AliasError(f"no stage {unknown[0]!r} in {repo / 'dvc.yaml'} (have: {', '.join(known)})")
    _check_inputs(stages)
    folder = repo / "pipelines" / name
    if folder.exists() and not force:
        raise AliasError(f"{folder} exists (pass --force to write it again)")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "params.yaml").write_text(params_yaml(repo, folder, corpus, library, descriptions, timeout_s))
    (folder / "dvc.yaml").write_text(pipeline_yaml(repo, name, list(stages)))
    readings = folder / "adjudications.csv"
    if not readings.exists():
        readings.write_text(",".join(ADJUDICATION_COLUMNS) + "\n")
    return folder
