"""The JVM command of a SANY or TLC run: heap and Metaspace limits, the run folder's
``java.io.tmpdir`` and crash log, the class-data-sharing archive of the jar
(:func:`cds_archive`, built once per machine), the Java system properties and the library
path; and the files a confined JVM reads (:func:`readable`)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
from pathlib import Path

from alias.config import valid_property

from . import confine
from .runner import execute
from .toolconfig import ToolConfig, ToolError, jar_key, write_atomic

__all__ = ["jvm_args", "check_java", "java_line", "cds_archive", "readable", "PROBE_TLA", "CFG_NAME"]

#: A module whose model check succeeds at once (with ``CHECK_DEADLOCK FALSE`` on a jar that
#: knows it): the probe of :func:`cds_archive` and :func:`alias.tla.jar.capabilities`.
PROBE_TLA = """---- MODULE Probe ----
VARIABLE x
Init == x = 0
Next == FALSE /\\ x' = x
====
"""
#: The cfg file of a TLC run (a hyphen: can never collide with a validated name).
CFG_NAME = "alias-run.cfg"
_CDS_FAILED: set[str] = set()
_ARCHIVE = "alias-classes.jsa"  # a hyphen: never a validated file name
_JAVA_LINES: dict[str, str] = {}


def check_java(config: ToolConfig) -> str:
    """Start ``config.java -version`` once; return its first line.

    Raises :class:`ToolError` when Java cannot start at all, so that a stage stops with
    a setup error instead of recording every task as failing.
    """
    try:
        proc = subprocess.run([config.java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ToolError(f"cannot start Java ({config.java!r}): {e}") from e
    if proc.returncode != 0:
        raise ToolError(f"{config.java} -version exited {proc.returncode}: {proc.stderr.strip()[:300]}")
    return (proc.stderr or proc.stdout).strip().splitlines()[0] if (proc.stderr or proc.stdout).strip() else ""


def java_line(config: ToolConfig) -> str:
    """:func:`check_java`'s line, asked once per process and Java (``""`` when it fails)."""
    if config.java not in _JAVA_LINES:
        try:
            _JAVA_LINES[config.java] = check_java(config)
        except ToolError:
            _JAVA_LINES[config.java] = ""
    return _JAVA_LINES[config.java]


def jvm_args(config: ToolConfig, tmp: str) -> list[str]:
    """``java -Xmx{memory_mb}m -XX:MaxMetaspaceSize=256m -XX:+UseParallelGC -XX:-UsePerfData
    -Djava.io.tmpdir=TMP/jtmp -XX:ErrorFile=TMP/hs_err.log [CDS archive] [-Dk=v ...]
    [-DTLA-Library=d1:d2] -cp JAR`` for the run folder ``tmp`` (its path as the JVM sees
    it). An OS limit on the address space (``RLIMIT_AS``) is deliberately not set: the JVM
    reserves far more than it uses and fails to start under it. Raises :class:`ToolError`
    for an unsafe system property."""
    args = [config.java, f"-Xmx{int(config.memory_mb)}m", "-XX:MaxMetaspaceSize=256m",
            "-XX:+UseParallelGC", "-XX:-UsePerfData", f"-Djava.io.tmpdir={tmp}/jtmp",
            f"-XX:ErrorFile={tmp}/hs_err.log"]
    archive = cds_archive(config)
    if archive is not None:  # -Xlog:disable: a JVM that cannot map it says nothing into the output
        args += [f"-XX:SharedArchiveFile={archive}", "-Xshare:auto", "-Xlog:disable", "-Xlog:all=error:stderr"]
    for k, v in config.properties:
        if not valid_property(k, v):
            raise ToolError(f"unsafe Java system property {k!r}={v!r} (names [A-Za-z][A-Za-z0-9_.]*, "
                            "values [A-Za-z0-9_.,:-]*)")
        args.append(f"-D{k}={v}")
    if config.library:
        args.append("-DTLA-Library=" + os.pathsep.join(str(d) for d in config.library))
    return args + ["-cp", str(config.jar)]


def readable(config: ToolConfig, *extra) -> tuple[str, ...]:
    """What a confined JVM of ``config`` reads besides the JDK: the jar, the library
    folders, the CDS archive (when there is one) and ``extra`` (paths; ``None`` skipped)."""
    archive = cds_archive(config)
    paths = [config.jar, *config.library, archive, *extra]
    return tuple(str(p) for p in paths if p is not None and os.path.exists(p))


def cds_archive(config: ToolConfig) -> Path | None:
    """The class-data-sharing archive of ``config.jar`` for ``config.java`` under
    ``config.jvm_cache`` (built on first use by one TLC run of a small spec with
    ``-XX:ArchiveClassesAtExit``, confined like any run where runs are, so a killed build
    leaves nothing; written atomically, so concurrent builders do not clash); ``None``
    without ``cds`` or a ``jvm_cache``, or when the archive cannot be built (the runs then
    start without it)."""
    if not (config.cds and config.jvm_cache):
        return None
    name = hashlib.sha256(json.dumps([jar_key(config), config.java, java_line(config)]).encode()).hexdigest()[:20]
    path = Path(config.jvm_cache) / f"tla2tools-{name}.jsa"
    if path.exists() or name in _CDS_FAILED:
        return path if path.exists() else None
    base = dataclasses.replace(config, cds=False, disk_mb=max(int(config.disk_mb), 1024))

    def command(tmp: str) -> list[str]:  # our own probe module, confined like any run
        argv = jvm_args(base, tmp)
        return argv[:1] + [f"-XX:ArchiveClassesAtExit={tmp}/{_ARCHIVE}"] + argv[1:] + [
            "tlc2.TLC", "-workers", "1", "-cleanup", "-metadir", f"{tmp}/states", "-config", CFG_NAME, "Probe"]

    boxed = confine.active(config)
    r, data = execute(command, {"Probe.tla": PROBE_TLA, CFG_NAME: "INIT Init\nNEXT Next\n"}, 120,
                      confine_as=base if boxed else None, readable=(str(config.jar),) if boxed else (),
                      collect=lambda folder: folder.read_bytes(_ARCHIVE) if folder.size(_ARCHIVE) else None)
    if r.exit_code is None or not data:
        _CDS_FAILED.add(name)
        return None
    try:
        write_atomic(path, data)
    except OSError:
        _CDS_FAILED.add(name)
        return None
    return path
