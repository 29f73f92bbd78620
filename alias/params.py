"""Load ``params.yaml`` (the DVC parameters file) with defaults for every key."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

DEFAULTS: dict[str, Any] = {
    "corpus": {
        "path": "alias/corpus/embedded",
        "descriptions": "alias/corpus/embedded/descriptions.json",
        "library": [],
        "max_expected_runtime_s": 60,
    },
    "tla": {
        "jar": "",
        "java": "java",
        "timeout_s": 300,
        "memory_mb": 2048,
        "workers": 1,
        "parallel": 2,
    },
    "rename": {"seed": 20261129},
    "grade": {"max_maps": 60, "parallel": 2, "timeout_s": 300},
    "controls": {"seed": 20261129, "max_mutants_tried_per_task": 8, "max_mutants_kept_per_task": 3,
                 "mutant_timeout_s": 60,
                 "tasks": []},
    "meaningful": {"proposer": {"backend": "lexicon", "model": "alias-lexicon-v1", "max_tokens": 8192,
                                "model_dir": "", "path": ""},
                   "view": "original", "poll_interval_s": 60, "batch_timeout_s": 0, "tasks": []},
    "tiny_model": {"seed": 0, "train_steps": 60},
    "generate": {"n_samples": 5, "conditions": ["original", "random"], "models": {}},
    "report": {"out": "reports", "n_resamples": 10000, "seed": 20260926, "exposure": []},
}


def _merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in (over or {}).items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = v
    return out


def load_params(path: str | Path = "params.yaml") -> dict[str, Any]:
    """Return the parameters in ``path`` merged over :data:`DEFAULTS`.

    A missing file gives the defaults. Raises ``ValueError`` if the file is not a mapping.
    """
    p = Path(path)
    if not p.exists():
        return copy.deepcopy(DEFAULTS)
    data = yaml.safe_load(p.read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{p}: expected a YAML mapping at top level")
    return _merge(DEFAULTS, data)
