"""CIR-rename every task with same-length seeded names (paths.rename)."""

from __future__ import annotations

import statistics
from typing import Any

from alias.config import Config, Paths
from alias.progress import progress_bar
from alias.rename.corpus import rename_corpus
from alias.store.db import read_parquet, write_table
from alias.store.models import LeftoverName, RenamedModule, RenamedTask, RenameMapRow

NAME = "rename"


def run(config: Config, paths: Paths) -> dict[str, Any]:
    """Rename every ingested task (seed ``rename.seed``): the ``renamed_tasks``,
    ``renamed_modules``, ``rename_map`` and ``leftover_names`` tables and the files under
    ``files/<task_id>/``."""
    tasks = read_parquet(paths.ingest / "tasks.parquet")
    modules = read_parquet(paths.ingest / "modules.parquet")
    with progress_bar("rename", total=len(tasks)) as bar:
        out = rename_corpus(tasks, modules, seed=config.rename.seed, files_dir=paths.rename / "files",
                            progress=bar.advance)
    write_table(out.tasks, RenamedTask, paths.rename / "renamed_tasks.parquet")
    write_table(out.modules, RenamedModule, paths.rename / "renamed_modules.parquet")
    write_table(out.rename_map, RenameMapRow, paths.rename / "rename_map.parquet")
    write_table(out.leftovers, LeftoverName, paths.rename / "leftover_names.parquet")
    ok = [r for r in out.tasks if r["status"] == "ok"]
    return {"tasks": len(out.tasks), "renamed": len(ok), "errors": len(out.tasks) - len(ok),
            "median_renamed": statistics.median([r["n_renamed"] for r in ok]) if ok else None,
            "leftover": sum(r["n_leftover"] for r in out.tasks), "kept_english": sum(r["n_kept_english"] for r in out.tasks)}
