"""TLC on untrusted TLA+ text: :func:`run_tlc` -> :class:`TlcResult`, and
:func:`run_tlc_dump_dot` -> :class:`DotDump` (the same run, plus the state graph TLC writes
with ``-dump dot``). Each run gets a run folder of its own (its ``-metadir`` and
``java.io.tmpdir`` inside), a wall-clock limit, the JVM heap limit, TLC's fingerprint index
and seed fixed, only allow-listed flags, and -- where :mod:`alias.tla.confine` says -- the
kernel's confinement and the Community Modules' Java overrides (:mod:`alias.tla.overrides`);
through this process's TLC server where ``tla.tlc_server`` asks."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from . import confine
from .folders import Folder
from .jar import capabilities, check_classpath, version_or_unknown
from .jvm import CFG_NAME, jvm_args, readable
from .overrides import overrides_jar, with_overrides
from .runkey import FP_INDEX, run_key, tlc_kind
from .runner import check_files, execute
from .servers import tlc_in_server
from .tlc_output import TlcOutcome, parse_tlc_output
from .toolconfig import ToolConfig, ToolError

__all__ = ["TlcResult", "DotDump", "run_tlc", "run_tlc_dump_dot", "tlc_args", "error_lines", "DOT_CAP"]

_TLC_FLAGS = {"-deadlock", "-terse", "-nowarning", "-cleanup", "-continue", "-dfid",
              "-depth", "-seed", "-simulate", "-fp", "-coverage", "-checkpoint"}
#: Largest DOT file :func:`run_tlc_dump_dot` reads by default (bytes).
DOT_CAP = 512 * 1024 * 1024
_DOT_NAME = "alias-graph.dot"  # a hyphen: never collides with a validated file name
#: TLC flags that do not explore the full reachable state graph (refused with ``dump_dot``).
_NO_GRAPH_FLAGS = frozenset({"-simulate", "-dfid"})


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


def _read_dot(folder: Folder, max_bytes: int) -> tuple[str | None, int | None]:
    """(text, size) of the run's DOT file: (None, None) when there is none, text None
    when it has more than ``max_bytes`` bytes."""
    size = folder.size(_DOT_NAME)
    if size is None or size > max_bytes:
        return None, size
    return folder.read_text(_DOT_NAME), size


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
    check_files(files, main)
    check_classpath(config.jar)
    flags = _tlc_flags(extra_flags, dump_dot)
    version = version_or_unknown(config)
    key = run_key(tlc_kind(dump_dot), files, main, cfg_text, version, flags, config)
    args_for = tlc_args(main, flags, config, dump_dot)
    collect = (lambda folder: _read_dot(folder, max_dot_bytes)) if dump_dot else None
    run_files = {**files, CFG_NAME: cfg_text}
    found = tlc_in_server(run_files, args_for, config, collect)
    if found is None:
        cm = overrides_jar(config)
        confined = confine.active(config)
        found = execute(lambda tmp: with_overrides(jvm_args(config, tmp), cm) + ["tlc2.TLC", *args_for(tmp)],
                        run_files, config.timeout_s, confine_as=config if confined else None,
                        readable=readable(config, cm) if confined else (), collect=collect)
    r, (dot, dot_bytes) = found[0], (found[1] or (None, None))
    o = (TlcOutcome(kind="crash", error_message=r.output) if r.start_error
         else parse_tlc_output(r.output, r.exit_code, r.timed_out))
    res = TlcResult(kind=o.kind, exit_code=r.exit_code, wall_s=r.wall_s, output=r.output,
                    run_key=key, distinct_states=o.distinct_states,
                    states_generated=o.states_generated, depth=o.depth,
                    error_message=o.error_message, timed_out=r.timed_out,
                    tool_version=version, flags=flags, front_end_passed=o.front_end_passed,
                    error_lines=error_lines(r.output))
    return DotDump(res, dot, dot_bytes)


def tlc_args(main: str, flags: tuple[str, ...], config: ToolConfig, dump_dot: bool):
    """What follows ``tlc2.TLC`` for a run folder ``tmp``: ``-workers N -cleanup -nowarning
    [-noGenerateSpecTE] -fp 0 -seed S -metadir TMP/states -config alias-run.cfg [-dump dot
    TMP/alias-graph.dot] [flags] MAIN`` (``-fp``/``-seed`` unless ``flags`` has its own;
    ``-noGenerateSpecTE`` where the jar knows it: no trace-explorer files on a violation)."""
    no_te = ["-noGenerateSpecTE"] if capabilities(config).no_generate_spec_te else []
    fixed = ([] if "-fp" in flags else ["-fp", str(FP_INDEX)]) + \
        ([] if "-seed" in flags else ["-seed", str(int(config.seed))])

    def args_for(tmp: str) -> list[str]:
        dump = ["-dump", "dot", f"{tmp}/{_DOT_NAME}"] if dump_dot else []
        return ["-workers", str(int(config.workers)), "-cleanup", "-nowarning", *no_te, *fixed,
                "-metadir", f"{tmp}/states", "-config", CFG_NAME, *dump, *flags, main]
    return args_for
