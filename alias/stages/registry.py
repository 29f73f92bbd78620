"""The stage registry: every ``dvc.yaml`` stage by name, each a module of
:mod:`alias.stages` with ``NAME``, ``run(config, paths[, key])`` and, for the stages that
run once per model key (``generate_local@KEY`` ...), ``KEYED``: the ``params.yaml``
section whose keys they take. The command line builds one command per entry."""

from __future__ import annotations

from types import ModuleType

from alias.stages import (continuation, controls, exposure, generate_local, generate_provider, generate_replay, grade,
                          identifiers, ingest, load, meaningful, rename, report, tiny_model, verify)

__all__ = ["STAGES"]

#: Stage name -> module, in pipeline order.
STAGES: dict[str, ModuleType] = {m.NAME: m for m in (
    ingest, rename, verify, identifiers, controls, meaningful, tiny_model, generate_local, generate_provider,
    generate_replay, continuation, exposure, grade, load, report)}
