"""The stage registry: every ``dvc.yaml`` stage by name, each a module of
:mod:`alias.stages` with ``NAME``, ``run(config, paths[, key])`` and, for the stages that
run once per key (``generate_local@KEY``, ``controls@PART`` ...), ``KEYED``: the
``params.yaml`` section whose keys (or list items) they take, and ``KEY_OPTION``: the
command's option that names the key (default ``model``). The command line builds one command per entry from
:func:`describe` (read from the module's source, so ``alias-cir --help`` imports no
stage) and imports a stage with :func:`load` only when it runs."""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

__all__ = ["NAMES", "StageInfo", "describe", "load"]  # and STAGES (module __getattr__)

#: Stage names in pipeline order; stage ``X`` is the module ``alias.stages.X``.
NAMES: tuple[str, ...] = (
    "check_params", "ingest", "rename", "verify", "identifiers", "controls", "meaningful", "tiny_model", "generate_local",
    "generate_provider", "generate_replay", "continuation", "exposure", "grade", "load", "report", "audit")


@dataclass(frozen=True)
class StageInfo:
    """What the command line shows of a stage: its name, the module docstring,
    ``KEYED`` (``None`` for a stage that runs once) and ``KEY_OPTION``."""

    name: str
    doc: str
    keyed: str | None
    key_option: str = "model"


def describe(name: str) -> StageInfo:
    """The :class:`StageInfo` of stage ``name``, read from its source without importing it.
    Raises ``KeyError`` for a name not in :data:`NAMES`."""
    if name not in NAMES:
        raise KeyError(f"no stage {name!r} (have: {', '.join(NAMES)})")
    tree = ast.parse(Path(__file__).with_name(f"{name}.py").read_text(encoding="utf-8"))
    found = {"KEYED": None, "KEY_OPTION": "model"}
    for node in tree.body:
        for target in getattr(node, "targets", []) if isinstance(node, ast.Assign) else []:
            if getattr(target, "id", None) in found:
                found[target.id] = ast.literal_eval(node.value)
    return StageInfo(name, ast.get_docstring(tree) or name, found["KEYED"], found["KEY_OPTION"])


def load(name: str) -> ModuleType:
    """The module of stage ``name`` (imported on first use)."""
    describe(name)  # the KeyError for an unknown name
    return importlib.import_module(f"alias.stages.{name}")


def __getattr__(attr: str) -> dict[str, ModuleType]:
    """``STAGES``: stage name -> module, in pipeline order (imports every stage)."""
    if attr == "STAGES":
        return {n: load(n) for n in NAMES}
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
