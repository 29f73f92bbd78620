"""Corpus directory -> candidates, tasks, modules, module roles (paths.ingest)."""

from __future__ import annotations

from typing import Any

from alias.config import Config, Paths
from alias.corpus.ingest import ingest
from alias.corpus.tlabench import ingest_tlabench
from alias.progress import progress_bar
from alias.store.db import write_table
from alias.store.models import Candidate, Module, ModuleRole, Task

NAME = "ingest"
TABLES = {"candidates": Candidate, "tasks": Task, "modules": Module, "module_roles": ModuleRole}


def run(config: Config, paths: Paths) -> dict[str, Any]:
    """Ingest ``config.corpus`` (the Examples or the TLA+-Bench layout) into
    ``paths.ingest/*.parquet``; returns the counts."""
    c = config.corpus
    with progress_bar("ingest") as bar:
        if c.kind == "tlabench":
            tables = ingest_tlabench(c.path, c.ids or None, c.library, progress=bar.advance)
        else:
            tables = ingest(c.path, c.descriptions or None, list(c.library), c.max_expected_runtime_s,
                            progress=bar.advance)
    for name, model in TABLES.items():
        write_table(tables[name], model, paths.ingest / f"{name}.parquet")
    cand, tasks = tables["candidates"], tables["tasks"]
    return {"candidates": len(cand), "tasks": len(tasks),
            "excluded": cand.loc[cand.status == "excluded", "reason"].value_counts().to_dict(),
            "description_sources": tasks["description_source"].value_counts().to_dict() if len(tasks) else {}}
