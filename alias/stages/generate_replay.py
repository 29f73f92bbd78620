"""Samples of one released-outputs file of generate.replay (paths.samples/KEY)."""

from __future__ import annotations

from typing import Any

from alias.config import Config, Paths
from alias.corpus.testset import TestSet
from alias.generate.samples import replay_rows, write_samples

NAME = "generate_replay"
KEYED = "generate.replay"


def run(config: Config, paths: Paths, key: str) -> dict[str, Any]:
    """Import the released outputs of entry ``key`` (JSONL or Parquet with ``task_id``,
    ``condition``, ``model``, ``sample_idx``, ``text``), checked against the test set;
    rejected records go to ``replay_errors.txt`` with their line numbers."""
    entry = config.generate.replay[key]
    testset = TestSet.load(paths, meaningful=True)
    out = paths.samples / key
    described, no_description = testset.described_ids()
    rows, info = replay_rows(key, entry, set(described), config.generate.conditions, out / "replay_errors.txt")
    status = {"model_key": key, "backend": "replay", "status": "ok", "reason": None,
              "conditions": list(config.generate.conditions), "n_samples": config.generate.n_samples,
              "tasks": len(described), "no_description": no_description} | info
    return write_samples(rows, testset.system_modules(), out, status)
