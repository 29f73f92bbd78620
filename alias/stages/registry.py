"""The stage registry: every ``dvc.yaml`` stage by name, each a module of
:mod:`alias.stages` with ``NAME``, ``run(config, paths[, key])`` and, for the stages that
run once per model key (``generate_local@KEY`` ...), ``KEYED``: the ``params.yaml``
section whose keys they take. The command line builds one command per entry from
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
    """What the command line shows of a stage: its name, the module docstring and
    ``KEYED`` (``None`` for a stage that runs once)."""

    name: str
    doc: str
    keyed: str | None


def describe(name: str) -> StageInfo:
    """The :class:`StageInfo` of stage ``name``, read from its source without importing it.
    Raises ``KeyError`` for a name not in :data:`NAMES`."""
    if name not in NAMES:
        raise KeyError(f"no stage {name!r} (have: {', '.join(NAMES)})")
    tree = ast.parse(Path(__file__).with_name(f"{name}.py").read_text(encoding="utf-8"))
    keyed = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "KEYED" for t in node.targets):
            keyed = ast.literal_eval(node.value)
    return StageInfo(name, ast.get_docstring(tree) or name, keyed)


def load(name: str) -> ModuleType:
    """The module of stage ``name`` (imported on first use)."""
    describe(name)  # the KeyError for an unknown name
    return importlib.import_module(f"alias.stages.{name}")


def __getattr__(attr: str) -> dict[str, ModuleType]:
    """``STAGES``: stage name -> module, in pipeline order (imports every stage)."""
    if attr == "STAGES":
        return {n: load(n) for n in NAMES}
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
