"""The test set of a built ALIAS store as Inspect samples (one task per condition).

Each sample is one test-set task in one condition: ``input`` is the prompt the generate
stages send (:func:`alias.generate.samples.condition_prompts`: Appendix A ``frontier`` for
API models, Appendix E ``finetuned`` for the fine-tuned local models; one user message,
no system message, as the batch and local backends send it), ``target`` the reference
system module of that condition, ``id`` the task id, and ``metadata`` what the scorers
need to find the reference again (task id, condition, system module, the store and the
settings files, absolute).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from inspect_ai.dataset import MemoryDataset, Sample

from alias.api import load_test_set, locate_store
from alias.config import CONDITIONS, Config, load_config
from alias.corpus.testset import has_description
from alias.errors import AliasError
from alias.generate.samples import condition_prompts

__all__ = ["Settings", "settings", "test_set_dataset", "CONDITION_OF_TASK"]

#: The Inspect task name of each study condition (the store calls the CIR condition ``random``).
CONDITION_OF_TASK = {"original": "original", "renamed": "random", "meaningful": "meaningful"}


@dataclass(frozen=True)
class Settings:
    """Where a task's samples come from: ``store`` (a DuckDB store, snapshot or data folder,
    absolute) and ``params`` (the settings files, absolute, merged in order)."""

    store: Path
    params: tuple[Path, ...]

    def config(self) -> Config:
        return load_config(list(self.params))

    def as_metadata(self) -> dict[str, str]:
        return {"store": str(self.store), "params": json.dumps([str(p) for p in self.params])}

    @classmethod
    def from_metadata(cls, md: dict) -> "Settings":
        return cls(Path(md["store"]), tuple(Path(p) for p in json.loads(md["params"])))


def settings(store: str = "", params: str = "params.yaml") -> Settings:
    """The :class:`Settings` of task parameters: ``params`` comma-separated settings files
    (a pipeline folder: ``../../params.yaml,params.yaml``); ``store`` empty: the store of
    ``paths.store`` (its snapshot rebuilt where needed). Raises :class:`AliasError` for a
    missing file or store."""
    files = tuple(Path(p.strip()).resolve() for p in params.split(",") if p.strip())
    missing = [str(p) for p in files if not p.is_file()]
    if missing or not files:
        raise AliasError(f"no settings file {', '.join(missing) or params!r}: pass -T params=PATH[,PATH]")
    config = load_config(list(files))
    where = Path(store) if store else (config.paths.store if config.paths.store.is_file() else config.paths.snapshot)
    if (where / "ingest" / "tasks.parquet").is_file():  # a data folder of stage outputs
        return Settings(where.resolve(), files)
    return Settings(locate_store(where).resolve(), files)


def test_set_dataset(where: Settings, condition: str, prompt: str = "frontier",
                     task_ids: Sequence[str] = ()) -> MemoryDataset:
    """The samples of one condition (``original`` | ``random`` | ``meaningful``, the store's
    names) of the store's test set, sorted by task id: every task with a description and a
    reference in that condition (``meaningful``: the tasks whose meaningful copy verified),
    or only ``task_ids``. Raises :class:`AliasError` for an unknown condition or task id."""
    if condition not in CONDITIONS:
        raise AliasError(f"condition must be one of {', '.join(CONDITIONS)}, got {condition!r}")
    testset = load_test_set(where.store)
    table = testset.conditions_table()
    table = table[table.description.map(has_description)]
    unknown = sorted(set(task_ids) - set(table.task_id))
    if unknown:
        raise AliasError(f"task ids not in the test set of {where.store}: {', '.join(unknown)}")
    if task_ids:
        table = table[table.task_id.isin(set(task_ids))]
    refs = testset.references()
    samples = [Sample(input=text, target=refs[(task_id, cond)].system_text, id=task_id,
                      metadata={"task_id": task_id, "condition": cond,
                                "system_module": refs[(task_id, cond)].system_module, "prompt_kind": prompt}
                      | where.as_metadata())
               for task_id, cond, text in condition_prompts(table, [condition], prompt) if (task_id, cond) in refs]
    return MemoryDataset(samples, name=f"alias_cir_{condition}", location=str(where.store))
