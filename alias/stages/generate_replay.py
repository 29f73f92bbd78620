"""Samples of one released-outputs source of generate.replay (paths.samples/KEY): a
samples file, or a TLA+-Bench generations folder with the benchmark's own verdicts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alias.config import Config, Paths
from alias.corpus.testset import TestSet
from alias.generate.samples import inspect_rows, replay_rows, tlabench_rows, write_samples
from alias.store.db import write_table
from alias.store.models import ExternalVerdict

NAME = "generate_replay"
KEYED = "generate.replay"


def run(config: Config, paths: Paths, key: str) -> dict[str, Any]:
    """Import the released outputs of entry ``key``: a JSONL or Parquet file with
    ``task_id``, ``condition``, ``model``, ``sample_idx``, ``text`` (checked against the
    test set; rejected records go to ``replay_errors.txt`` with their line numbers), or,
    with ``layout: tlabench``, one sample per generation file plus the benchmark's
    verdicts (``external_verdicts.parquet``), or, with ``layout: inspect``, the samples of
    Inspect eval logs (``replay_errors.txt`` lists the rejected ones)."""
    entry = config.generate.replay[key]
    testset = TestSet.load(paths, meaningful=True)
    out = paths.samples / key
    described, no_description = testset.described_ids()
    status = {"model_key": key, "backend": "replay", "status": "ok", "reason": None,
              "conditions": list(config.generate.conditions), "n_samples": config.generate.n_samples,
              "tasks": len(described), "no_description": no_description}
    rows, info = LAYOUTS[entry.layout or "jsonl"](key, entry, testset, config, out)
    return write_samples(rows, testset.system_modules(), out, status | info)


def _jsonl(key: str, entry, testset: TestSet, config: Config, out: Path) -> tuple[list[dict], dict]:
    described, _ = testset.described_ids()
    return replay_rows(key, entry, set(described), config.generate.conditions, out / "replay_errors.txt")


def _tlabench(key: str, entry, testset: TestSet, config: Config, out: Path) -> tuple[list[dict], dict]:
    rows, info, verdicts = tlabench_rows(key, entry, set(testset.task_ids()))
    write_table(verdicts, ExternalVerdict, out / "external_verdicts.parquet")
    return rows, info


def _inspect(key: str, entry, testset: TestSet, config: Config, out: Path) -> tuple[list[dict], dict]:
    described, _ = testset.described_ids()
    return inspect_rows(key, entry, set(described), config.generate.conditions, out / "replay_errors.txt")


#: What each replay ``layout`` reads (config.REPLAY_LAYOUTS names them).
LAYOUTS = {"jsonl": _jsonl, "tlabench": _tlabench, "inspect": _inspect}
