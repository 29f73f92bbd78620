"""Identifier kinds (Appendix C) and hidden required names (paths.identifiers)."""

from __future__ import annotations

import sys
from typing import Any

from alias.config import Config, Paths
from alias.corpus.testset import TestSet
from alias.progress import progress_bar
from alias.rename.kinds import identifier_rows, required_name_rows
from alias.store.db import write_table
from alias.store.models import Identifier, RequiredName

NAME = "identifiers"


def run(config: Config, paths: Paths) -> dict[str, Any]:
    """Categorize every renamed identifier and list each task's required names with
    whether its description mentions them (hidden = never mentioned)."""
    ts = TestSet.load(paths, verified=False)
    renamed = ts.renamed_tasks.set_index("task_id")["description"].to_dict()
    rows: list[dict] = []
    with progress_bar("identifiers", total=len(ts.tasks)) as bar:
        for t in ts.tasks.itertuples():
            texts = ts.module_texts(t.task_id)
            wrapper = texts.get(t.wrapper_module) if isinstance(t.wrapper_module, str) else None
            m = ts.rename_map[ts.rename_map.task_id == t.task_id]
            try:
                rows += required_name_rows(t, texts[t.system_module], wrapper, dict(zip(m.old, m.new)),
                                           renamed.get(t.task_id))
            except Exception as e:  # a cfg the parser rejects: no required names, recorded
                print(f"warning: {t.task_id}: required names not computed ({e})", file=sys.stderr)
            bar.advance()
    idf = write_table(identifier_rows(ts.rename_map), Identifier, paths.identifiers / "identifiers.parquet")
    rdf = write_table(rows, RequiredName, paths.identifiers / "required_names.parquet")
    return {"identifiers": len(idf), "required_names": len(rdf), "hidden": int(rdf.hidden.sum()),
            "categories": idf.category.value_counts().to_dict()}
