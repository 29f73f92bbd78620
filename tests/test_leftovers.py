"""Nothing left behind (alias/tla/folders.py, alias/tla/confine.py): a stage killed (SIGKILL)
mid-run leaves no SANY/TLC process and, confined, no run folder at all (the run folders live
in the confinements' tmpfs, which the kernel frees with them); unconfined, the folders its
killed processes held are abandoned ones, which the next ALIAS process removes
(:func:`alias.tla.folders.sweep`) while a folder a living process holds stays. The whole
test session runs with a temporary directory of its own and ends by checking that no
``alias-tla-*`` folder is left in it (tests/conftest.py)."""
from __future__ import annotations

import dataclasses
import fcntl
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from alias.tla import folders
from alias.tla.folders import HostFolder
from conftest import REPO, embedded_config

pytestmark = pytest.mark.tlc


def _jvms(marker: str, tools: bool = False) -> list[str]:
    """The processes whose command line names ``marker`` (the stage's private JVM cache);
    with ``tools``, only SANY/TLC and the tool servers (not the one-off builds)."""
    pattern = f"{marker}.*(aliastools|tlc2.TLC|tla2sany)" if tools else marker
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A folder where the embedded corpus is ingested and renamed (verify's inputs)."""
    wd = tmp_path_factory.mktemp("killed")
    from alias.stages import ingest, rename

    c = embedded_config()
    c = dataclasses.replace(c, paths=c.paths.under(wd))
    ingest.run(c, c.paths)
    rename.run(c, c.paths)
    return wd


@pytest.mark.parametrize("confine", ["auto", "off"])
def test_a_killed_stage_leaves_no_process_and_no_run_folder(workdir, tmp_path, monkeypatch, confine):
    tmp, cache = tmp_path / "tmp", tmp_path / "cache"
    tmp.mkdir()
    extra = tmp_path / "params.yaml"
    extra.write_text(yaml.safe_dump({"corpus": {"path": str(REPO / "alias/corpus/embedded"),
                                                "descriptions": str(REPO / "alias/corpus/embedded/descriptions.json")},
                                     "tla": {"confine": confine, "timeout_s": 120, "memory_mb": 256, "parallel": 2},
                                     "paths": {k: str(workdir / v) for k, v in
                                               yaml.safe_load((REPO / "params.yaml").read_text())["paths"].items()
                                               if k != "sql"}}))
    env = {**os.environ, "TMPDIR": str(tmp), "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(REPO)}
    stage = subprocess.Popen([sys.executable, "-m", "alias", "verify", "--params", str(REPO / "params.yaml"),
                              "--params", str(extra)], cwd=workdir, env=env, start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and stage.poll() is None and not (
            _jvms(str(cache), tools=True) and (confine == "auto" or list(tmp.glob("alias-tla-*")))):
        time.sleep(0.2)
    time.sleep(1)  # tool runs under way
    assert stage.poll() is None, "the stage ended before it could be killed"
    os.killpg(stage.pid, signal.SIGKILL)
    stage.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and _group_alive(stage.pid):  # its pool workers too
        time.sleep(0.1)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and _jvms(str(cache)):
        time.sleep(0.2)
    assert _jvms(str(cache)) == [], "a SANY/TLC process outlived the killed stage"
    left = sorted(p.name for p in tmp.glob("alias-tla-*"))
    if confine == "auto":
        assert left == []
        return
    assert left, "the killed stage's processes held run folders"
    monkeypatch.setattr(folders, "_YOUNG_S", 0)
    monkeypatch.setattr(folders, "_SWEPT", set())
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    living = HostFolder({}, prefix="alias-tla-living")  # this process's first run folder: it sweeps first
    assert [p.name for p in tmp.iterdir()] == [Path(living.path).name]
    monkeypatch.setattr(folders, "_SWEPT", set())
    assert folders.sweep(str(tmp)) == []  # a folder a living process holds stays
    living.remove()


def test_sweep_keeps_young_and_locked_folders_and_removes_abandoned_ones(tmp_path, monkeypatch):
    root = tmp_path / "tmp"
    root.mkdir()
    dead = root / "alias-tla-dead"
    dead.mkdir()
    (dead / ".alias-lock").write_text("")
    old = time.time() - 3600
    os.utime(dead, (old, old))
    young = root / "alias-tla-young"
    young.mkdir()
    (young / ".alias-lock").write_text("")
    held = root / "alias-tla-held"
    held.mkdir()
    fd = os.open(held / ".alias-lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.utime(held, (old, old))
    legacy = root / "alias-tla-legacy"  # no lock file: an older ALIAS's, swept after a day
    legacy.mkdir()
    os.utime(legacy, (old, old))
    other = root / "not-ours"
    other.mkdir()
    os.utime(other, (old, old))
    monkeypatch.setattr(folders, "_SWEPT", set())
    assert folders.sweep(str(root)) == [str(dead)]
    assert sorted(p.name for p in root.iterdir()) == ["alias-tla-held", "alias-tla-legacy", "alias-tla-young",
                                                      "not-ours"]
    os.close(fd)
