"""Samples of one provider model of generate.providers (paths.samples/KEY), through the
Anthropic Message Batches or OpenAI Batch API; nothing is sent unless the entry is enabled."""

from __future__ import annotations

import sys
from typing import Any

from alias.config import Config, Paths
from alias.corpus.testset import TestSet
from alias.generate.registry import ModelDisabled
from alias.generate.samples import sample_completions, write_samples
from alias.generate.types import MissingCredentials

NAME = "generate_provider"
KEYED = "generate.providers"


def run(config: Config, paths: Paths, key: str) -> dict[str, Any]:
    """Sample provider model ``key`` (Appendix A prompt) on every test-set task, condition
    and sample index. A disabled entry, or an enabled one without its API key, writes an
    empty table and a ``status.json`` saying why (``disabled`` / ``skipped``); the batch
    ledger (``paths.work/ledgers``) makes a killed run resume without paying twice."""
    entry = config.generate.providers[key]
    testset = TestSet.load(paths, meaningful=True)
    out = paths.samples / key
    status: dict[str, Any] = {"model_key": key, "backend": entry.backend, "status": "ok", "reason": None,
                              "conditions": list(config.generate.conditions), "n_samples": config.generate.n_samples}
    rows: list[dict] = []
    try:
        rows, info = sample_completions(testset, entry, key, config.generate.conditions, config.generate.n_samples,
                                        ledger=paths.work / "ledgers" / f"{NAME}-{key}.sqlite")
        status |= info
    except ModelDisabled as e:
        status.update(status="disabled", reason=str(e))
    except MissingCredentials as e:
        status.update(status="skipped", reason=f"skipped: {e.env_var} is not set")
    if status["status"] != "ok":
        print(f"generate {key}: {status['reason']}", file=sys.stderr)
    return write_samples(rows, testset.system_modules(), out, status)
