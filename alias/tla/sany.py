"""SANY on untrusted TLA+ text: :func:`run_sany` -> :class:`SanyResult` (strict parse and
semantic check, in a run folder of its own, confined where :mod:`alias.tla.confine` says,
through this process's SANY server where ``tla.sany_server`` asks), SANY's exit codes per
jar (:func:`sany_exit_codes`) and SANY's verdict read from TLC's own front end
(:func:`sany_from_tlc`)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import confine
from .jar import check_classpath, version_or_unknown
from .jvm import jvm_args, readable
from .runkey import run_key, sany_run_key
from .runner import Run, check_files, execute
from .servers import sany_in_server
from .toolconfig import ToolConfig, jar_key, write_atomic

if TYPE_CHECKING:
    from .tlc import TlcResult

__all__ = ["SanyResult", "run_sany", "sany_exit_codes", "sany_from_tlc"]

_SANY_EXIT_CODES: dict[tuple[str, str], dict[str, int | None]] = {}


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
    Raises :class:`~alias.tla.toolconfig.ToolError` for unsafe names, a missing main file,
    a ``CommunityModules*.jar`` next to the jar, or ``confine: on`` where the kernel
    refuses; a tool that cannot start, times out or crashes gives ``ok_exit == False`` and
    the reason in ``errors``, never an exception.
    """
    check_files(files, main)
    check_classpath(config.jar)
    version = version_or_unknown(config)
    key = run_key("sany", files, main, None, version, (), config)
    r = sany_in_server(files, main, config)
    if r is None:
        confined = confine.active(config)
        r, _ = execute(lambda tmp: jvm_args(config, tmp) + ["tla2sany.SANY", f"{main}.tla"], files, config.timeout_s,
                       confine_as=config if confined else None, readable=readable(config) if confined else ())
    return _sany_result(r, key, version, config.timeout_s)


def _sany_result(r: Run, key: str, version: str, timeout_s: float) -> SanyResult:
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
    key = jar_key(config)
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
    run = Run(code, 0.0, report, False)
    out = _sany_result(run, sany_run_key(files, main, config), version_or_unknown(config), config.timeout_s)
    return out if out.kind == kind else None


