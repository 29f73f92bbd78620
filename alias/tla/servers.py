"""SANY and TLC runs through this process's tool servers (:mod:`alias.tla.tool_server`;
``tla.sany_server``, ``tla.tlc_server``): which server a run goes to, its run folder (inside
the server's confinement when confined), and the :class:`~alias.tla.runner.Run` its reply
makes. ``None`` from a function here means "no server": the run goes to a process."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any, Callable

from . import confine, tool_server
from .folders import Folder
from .jvm import jvm_args, readable
from .overrides import overrides_jar, with_overrides
from .runner import OUTPUT_NAME, Run
from .toolconfig import ToolConfig

__all__ = ["sany_in_server", "tlc_in_server"]


def _server(kind: type, config: ToolConfig, wanted: bool) -> tuple | None:
    """This process's ``kind`` server for ``config``, its lock and the ``TLA-Library`` path
    to send, or ``None`` when ``wanted`` is false or none can be built. The server's JVM has
    the process run's options, its own folder and the jar's CDS archive; a TLC server also
    the short-run flags and the Community Modules jar where runs load it; a confined server
    is keyed by what it may read too."""
    if not wanted or not config.jvm_cache:
        return None
    classes = tool_server.server_classes(config.java, Path(config.jar), config.jvm_cache)
    if classes is None:
        return None
    jvm = jvm_args(dataclasses.replace(config, library=()), "{TMP}")
    extra: list[str] = []
    cm = None
    if kind is tool_server.TlcServer:
        if config.short_run_flags and tool_server.jvm_accepts(config.java, tool_server.SHORT_RUN_FLAGS):
            extra += tool_server.SHORT_RUN_FLAGS
        cm = overrides_jar(config)
        jvm = with_overrides(jvm, cm)
    jvm[jvm.index("-cp"):jvm.index("-cp")] = extra
    confined = confine.active(config)
    reads = readable(config, cm) if confined else ()
    key = (config.java, str(config.jar), config.memory_mb, config.cds, config.properties, tuple(extra), str(cm),
           confine.key(config), reads)
    server, lock = tool_server.server_for(kind, key, jvm, classes, config if confined else None, reads)
    return server, lock, os.pathsep.join(str(d) for d in config.library)


def sany_in_server(files: dict[str, str], main: str, config: ToolConfig) -> Run | None:
    """SANY on module ``main`` of ``files`` through this process's SANY server; ``None``
    when the config asks for none or none can be built (SANY then runs as a process)."""
    found = _server(tool_server.SanyServer, config, config.sany_server)
    if found is None:
        return None
    server, lock, library = found
    with lock:
        folder = server.folder(files)
        try:
            reply = server.parse(Path(f"{folder.path}/{main}.tla"), library, config.timeout_s)
        finally:
            server.drop(folder)
    start_error = None if reply.exit_code is not None or reply.timed_out else reply.error
    return Run(reply.exit_code, reply.wall_s, reply.output, reply.timed_out, start_error=start_error)


def tlc_in_server(files: dict[str, str], args_for: Callable[[str], list[str]], config: ToolConfig,
                  collect: Callable[[Folder], Any] | None = None) -> tuple[Run, Any] | None:
    """TLC with ``args_for(folder)`` (what follows ``tlc2.TLC`` for a run folder's path) on
    ``files`` through this process's TLC server (a fresh class loader per run);
    ``collect(folder)`` reads what else the run left before its folder goes. ``None`` when
    the config asks for none or none can be built (TLC then runs as a process)."""
    if any("\t" in a or "\n" in a for a in (*args_for("/x"), *config.library)):
        return None  # the server's request is one tab-separated line: a process takes these
    found = _server(tool_server.TlcServer, config, config.tlc_server)
    if found is None:
        return None
    server, lock, library = found
    with lock:
        folder = server.folder(files)
        try:
            reply = server.run(Path(folder.path), library, args_for(folder.path), config.timeout_s)
            output = folder.read_capped(OUTPUT_NAME)
            extra = collect(folder) if collect else None
        finally:
            server.drop(folder)
    if reply.error and not reply.timed_out:
        return Run(None, reply.wall_s, output + reply.error, False, start_error=reply.error), extra
    return Run(reply.exit_code, reply.wall_s, output, reply.timed_out), extra
