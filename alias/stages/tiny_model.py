"""Build the tiny local model of the embedded default (paths.tiny_model)."""

from __future__ import annotations

import shutil
from typing import Any

from alias.config import Config, Paths
from alias.generate.tiny import build_tiny_model, embedded_texts

NAME = "tiny_model"


def run(config: Config, paths: Paths) -> dict[str, Any]:
    """A 2-layer model and tokenizer trained on the embedded corpus (``tiny_model`` seed and
    train_steps; no hub): the offline ``local`` model of ``generate.local``. Same
    settings, same files."""
    out = paths.tiny_model
    if out.exists():
        shutil.rmtree(out)
    build_tiny_model(embedded_texts(), out, seed=config.tiny_model.seed, train_steps=config.tiny_model.train_steps)
    return {"model_dir": out.as_posix(), "files": sorted(p.name for p in out.iterdir())}
