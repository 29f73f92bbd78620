"""Corpus directory -> candidates, tasks, modules, module roles (paths.ingest)."""

from __future__ import annotations

from typing import Any

from alias.config import Config, Paths
from alias.corpus.layouts import ingest_corpus
from alias.progress import progress_bar
from alias.store.db import write_table
from alias.store.models import Candidate, Module, ModuleRole, Task

NAME = "ingest"
TABLES = {"candidates": Candidate, "tasks": Task, "modules": Module, "module_roles": ModuleRole}


def run(config: Config, paths: Paths) -> dict[str, Any]:
    """Ingest ``config.corpus`` (by its layout ``corpus.kind``: examples, tlabench or
    folder) into ``paths.ingest/*.parquet``; returns the counts."""
    with progress_bar("ingest") as bar:
        tables = ingest_corpus(config.corpus, bar.advance)
    for name, model in TABLES.items():
        write_table(tables[name], model, paths.ingest / f"{name}.parquet")
    cand, tasks = tables["candidates"], tables["tasks"]
    return {"candidates": len(cand), "tasks": len(tasks),
            "excluded": cand.loc[cand.status == "excluded", "reason"].value_counts().to_dict(),
            "description_sources": tasks["description_source"].value_counts().to_dict() if len(tasks) else {}}
