"""Byte-stable outputs: the same inputs give the same bytes in another checkout. Two
folders at different absolute paths each run ingest, rename, verify (real SANY/TLC: logs
normalized and gzipped), tiny_model, generate_local@tiny and load; every file of those
stages' DVC outputs must hash the same in both (timings and caches live under
``paths.work``, which no DVC output contains)."""
from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest

from alias.stages import generate_local, ingest, load, rename, tiny_model, verify
from conftest import embedded_config

pytestmark = pytest.mark.tlc
REPO = Path(__file__).resolve().parents[1]


def _digest(folder: Path) -> dict[str, str]:
    return {f.relative_to(folder).as_posix(): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(folder.rglob("*")) if f.is_file()}


def _run_all(root: Path, monkeypatch) -> dict[str, dict[str, str]]:
    root.mkdir(parents=True)
    monkeypatch.chdir(root)
    (root / "sql").symlink_to(REPO / "sql")
    c = embedded_config({"tla.timeout_s": 120, "tla.memory_mb": 512, "tla.parallel": 2,
                         "generate.local.tiny.max_new_tokens": 16, "generate.conditions": ["original"],
                         "generate.n_samples": 2, "tiny_model.train_steps": 10})
    c = dataclasses.replace(c, generate=dataclasses.replace(c.generate, providers={}, replay={}))
    for stage in (ingest, rename, verify, tiny_model):
        stage.run(c, c.paths)
    generate_local.run(c, c.paths, "tiny")
    load.run(c, c.paths)
    outs = {"ingest": c.paths.ingest, "rename": c.paths.rename, "verify": c.paths.verify,
            "tiny_model": c.paths.tiny_model, "samples": c.paths.samples, "snapshot": c.paths.snapshot}
    return {k: _digest(root / v) for k, v in outs.items()}


def test_two_checkouts_give_the_same_bytes(tmp_path, monkeypatch):
    a = _run_all(tmp_path / "first" / "checkout", monkeypatch)
    b = _run_all(tmp_path / "second-one", monkeypatch)
    assert a.keys() == b.keys()
    for stage in a:
        assert a[stage] and a[stage] == b[stage], stage
    assert any(k.endswith(".log.gz") for k in a["verify"])          # the logs are part of the output
    assert "manifest.json" in a["snapshot"] and "verdicts.parquet" in a["snapshot"]
