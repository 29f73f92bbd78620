"""The process runner: one SANY or TLC process in a run folder of its own, with a
wall-clock limit after which its whole process group is killed (``SIGKILL``), confined
(:mod:`alias.tla.confine`) or, where the configuration or the kernel says so, as a plain
process in a temporary folder (:class:`~alias.tla.folders.HostFolder`). File and module
names are validated before anything runs; they are never used as paths outside the run
folder.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable

from .confine import BOX_TMP, Sandbox, SandboxError, die_with_parent
from .folders import PREFIX, Folder, HostFolder, read_capped
from .toolconfig import ToolConfig, ToolError

__all__ = ["Run", "check_files", "execute", "OUTPUT_NAME"]

_FILE_NAME = re.compile(r"[A-Za-z0-9_]+\.(tla|cfg)")
_MODULE_NAME = re.compile(r"[A-Za-z0-9_]+")
#: The file a run's output goes to (a hyphen: never a validated file name).
OUTPUT_NAME = "alias-output.txt"


@dataclass
class Run:
    """One tool run: ``exit_code`` (``None`` when killed or not started), ``wall_s``,
    ``output`` (capped, :data:`~alias.tla.folders.OUTPUT_CAP`), ``timed_out`` and
    ``start_error`` (why it could not start)."""

    exit_code: int | None
    wall_s: float
    output: str
    timed_out: bool
    start_error: str | None = None


def check_files(files: dict[str, str], main: str, extra: tuple[str, ...] = ()) -> None:
    """Raise :class:`~alias.tla.toolconfig.ToolError` unless every name of ``files`` matches
    ``[A-Za-z0-9_]+.(tla|cfg)`` (or is one of ALIAS's own ``extra`` names), ``main`` is a
    module name and ``main.tla`` is among them."""
    for name in files:
        if not isinstance(name, str) or not (_FILE_NAME.fullmatch(name) or name in extra):
            raise ToolError(f"unsafe or unsupported file name {name!r} "
                            "(must match [A-Za-z0-9_]+.(tla|cfg))")
    if not _MODULE_NAME.fullmatch(main or ""):
        raise ToolError(f"unsafe main module name {main!r}")
    if f"{main}.tla" not in files:
        raise ToolError(f"main module file {main}.tla not in files")


def execute(command: Callable[[str], list[str]], files: dict[str, str], timeout_s: float, *,
            confine_as: ToolConfig | None = None, readable: tuple[str, ...] = (),
            collect: Callable[[Folder], Any] | None = None) -> tuple[Run, Any]:
    """Run ``command(folder)`` (a JVM command line for the run folder's path as the tool
    sees it) in a fresh run folder holding ``files``, for at most ``timeout_s`` seconds;
    ``collect(folder)`` reads what else the run left (e.g. a state graph) before the
    folder goes. With ``confine_as`` (a :class:`ToolConfig` whose runs are confined) the
    run is confined, ``readable`` the files and folders it may read besides the JDK.
    Returns ``(Run, what collect returned or None)``; a tool that cannot start is a
    :class:`Run` with ``start_error``, never an exception."""
    if confine_as is not None:
        return _execute_confined(command, files, timeout_s, confine_as, readable, collect)
    folder = HostFolder(files)
    try:
        argv = command(folder.path)
        with open(os.path.join(folder.path, OUTPUT_NAME), "wb") as out:
            run = _wait(lambda: subprocess.Popen(
                argv, cwd=folder.path, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True, preexec_fn=die_with_parent), timeout_s)
        if run.start_error is None:
            run.output = folder.read_capped(OUTPUT_NAME)
        extra = collect(folder) if collect else None
    finally:
        folder.remove()
    return run, extra


def _execute_confined(command, files, timeout_s, config, readable, collect) -> tuple[Run, Any]:
    """:func:`execute` inside a :class:`~alias.tla.confine.Sandbox`: the output goes to an
    unnamed temporary file (bounded by the confinement's file-size limit), the run folder
    lives in the confinement's tmpfs."""
    name = f"{PREFIX}{secrets.token_hex(8)}"
    argv = command(f"{BOX_TMP}/{name}")
    box = None
    with tempfile.TemporaryFile() as out:
        def start() -> subprocess.Popen:
            nonlocal box
            box = Sandbox(argv, config, readable, name=name, stdout=out, stderr=subprocess.STDOUT)
            os.mkdir("jtmp", 0o755, dir_fd=box.folder.fd)
            for file, text in files.items():
                box.folder.write(file, text)
            box.release()
            return box.proc
        try:
            run = _wait(start, timeout_s)
            if run.start_error is None:
                run.output = read_capped(out)
            extra = collect(box.folder) if collect and box is not None else None
        finally:
            if box is not None:
                box.close()
                box.folder.remove()
    return run, extra


def _wait(start: Callable[[], subprocess.Popen], timeout_s: float) -> Run:
    """Start a process (``start``), wait at most ``timeout_s`` seconds from before its
    start, then SIGKILL its process group (its session's: the group id is its pid)."""
    t0 = time.monotonic()
    timed_out = False
    try:
        proc = start()
    except (OSError, SandboxError) as e:  # a confinement that could not be set up too
        return Run(None, time.monotonic() - t0, f"cannot start the tool: {e}", False, start_error=str(e))
    try:
        proc.wait(timeout=max(0.0, timeout_s - (time.monotonic() - t0)))
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
    return Run(None if timed_out else proc.returncode, time.monotonic() - t0, "", timed_out)
