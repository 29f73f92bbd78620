"""Samples of one local model of generate.local (paths.samples/KEY)."""

from __future__ import annotations

from typing import Any

from alias.config import Config, Paths
from alias.corpus.testset import TestSet
from alias.generate.samples import sample_completions, write_samples
from alias.progress import progress_bar

NAME = "generate_local"
KEYED = "generate.local"


def run(config: Config, paths: Paths, key: str) -> dict[str, Any]:
    """Sample local model ``key`` (Appendix E prompt; temperature, top-p, token limit and
    stop at the module's closing line from its entry) on every test-set task, condition
    and sample index; writes ``samples.parquet`` and ``status.json``."""
    entry = config.generate.local[key]
    testset = TestSet.load(paths, meaningful=True)
    with progress_bar(f"generate {key}", total=None):
        rows, info = sample_completions(testset, entry, key, config.generate.conditions,
                                        config.generate.n_samples, ledger=None)
    status = {"model_key": key, "backend": entry.backend, "status": "ok", "reason": None,
              "conditions": list(config.generate.conditions), "n_samples": config.generate.n_samples} | info
    return write_samples(rows, testset.system_modules(), paths.samples / key, status)
