"""Shared fixtures: the real corpus (skipped when absent) and a TLA+ tool config."""
from __future__ import annotations

from pathlib import Path

import pytest

_SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


@pytest.fixture(scope="session")
def corpus_root() -> Path:
    """``../shared/corpus/tlaplus-examples`` next to the repo; skips when absent."""
    root = _SHARED / "tlaplus-examples"
    if not root.is_dir():
        pytest.skip(f"corpus not found at {root}")
    return root


@pytest.fixture(scope="session")
def deps_dirs() -> tuple[str, ...]:
    """Library module dirs (Community Modules, TLAPS) that exist, as strings."""
    dirs = [_SHARED / "deps" / "community-modules", _SHARED / "deps" / "tlaps-library"]
    return tuple(str(d) for d in dirs if d.is_dir())


@pytest.fixture(scope="session")
def tool_config():
    """A ToolConfig for the default jar with a short time limit (60 s)."""
    from alias.tla.tools import ToolConfig, find_jar

    try:
        jar = find_jar(None)
    except FileNotFoundError as e:  # pragma: no cover - depends on the machine
        pytest.skip(str(e))
    return ToolConfig(jar=jar, timeout_s=60, memory_mb=512)


@pytest.fixture(scope="session")
def sany():
    """``sany(files, main, library=()) -> (ok_strict, output)`` through the project's own
    SANY runner (own temp dir and java.io.tmpdir per run); skips without Java/jar."""
    import shutil

    from alias.tla.tools import ToolConfig, find_jar, run_sany

    if shutil.which("java") is None:
        pytest.skip("no java")
    try:
        jar = find_jar(None)
    except FileNotFoundError as e:  # pragma: no cover
        pytest.skip(str(e))

    def run(files: dict[str, str], main: str, library: tuple[str, ...] = ()) -> tuple[bool, str]:
        res = run_sany({f"{k}.tla" if not k.endswith(".tla") else k: v for k, v in files.items()}, main,
                       ToolConfig(jar=jar, library=tuple(library), timeout_s=120, memory_mb=512))
        return res.ok_strict, res.output

    return run


@pytest.fixture(scope="session")
def embedded_stage_inputs(tmp_path_factory):
    """``(workdir, params)``: ``data/ingest`` and ``data/rename`` of the embedded corpus
    under ``workdir`` and a test set holding every task (as verify finds on the embedded
    corpus, see test_pipeline), without TLC. Shared by the generate/continuation tests."""
    import pandas as pd

    from alias import stages
    from alias.params import load_params
    from alias.store.db import read_parquet, write_parquet

    repo = Path(__file__).resolve().parents[1]
    wd = tmp_path_factory.mktemp("embedded-inputs")
    p = load_params(repo / "params.yaml")
    p["corpus"].update(path=str(repo / "alias/corpus/embedded"),
                       descriptions=str(repo / "alias/corpus/embedded/descriptions.json"), library=[])
    stages.ingest_stage(p, out=wd / "data/ingest")
    stages.rename_stage(p, inp=wd / "data/ingest", out=wd / "data/rename")
    tasks = read_parquet(wd / "data/ingest/tasks.parquet")
    write_parquet(pd.DataFrame({"task_id": tasks.task_id, "in_test_set": True}), wd / "data/verify/test_set.parquet")
    return wd, p
