"""Classify the plain-text console output of TLC (2.15 / Jan 2020 and 1.8.x).

Only TLC's human-readable messages are read (not the ``-tool`` format).  The
main entry point is :func:`parse_tlc_output`, which returns a :class:`TlcOutcome`.

Result kinds (``TlcOutcome.kind``), checked in this order:

``'timeout'``             the caller killed TLC at its time limit (``timed_out``).
``'crash'``               the JVM / TLC failed for a reason outside the spec:
                          ``OutOfMemoryError``, JVM start failure, fatal JVM error,
                          bad command line, unknown output.
``'parse_error'``         SANY could not parse a module or find an imported module.
``'semantic_error'``      SANY's semantic analysis reported ``*** Errors:``.
``'invariant_violated'``  ``Invariant X is violated``.
``'property_violated'``   ``Temporal properties were violated`` / ``Property X is
                          violated`` / ``Action property X is violated``.
``'deadlock'``            ``Deadlock reached``.
``'assumption_violated'`` an ``ASSUME`` is false (exit 10).  Added because it is
                          neither a config error nor a model-checking violation.
``'config_error'``        the cfg does not fit the spec or does not parse
                          (missing INIT/NEXT/SPECIFICATION, undefined invariant,
                          unassigned constant, non-state-predicate invariant, ...).
``'eval_error'``          TLC failed while evaluating the spec (e.g. ``1 + "a"``,
                          a failed ``Assert``, exit codes 14/75/76/77).  Added
                          because such a failure is a property of the spec, not of
                          the tool, and must not be confused with ``'crash'``.
``'success'``             ``Model checking completed. No error has been found.``
"""
from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["KINDS", "TlcOutcome", "parse_tlc_output"]

KINDS = frozenset({
    "success", "invariant_violated", "property_violated", "deadlock", "parse_error",
    "semantic_error", "config_error", "timeout", "crash", "assumption_violated",
    "eval_error",
})


@dataclass
class TlcOutcome:
    """What one TLC run reported.

    ``kind``: one of :data:`KINDS`.  ``distinct_states`` / ``states_generated``:
    the last counts TLC printed (``int``, ``None`` if never printed).
    ``depth``: ``The depth of the complete state graph search is N`` (``None``
    if not printed, e.g. after a liveness violation on TLC 2.15).
    ``error_message``: the first error block, at most 4000 characters, ``None``
    on success.  ``front_end_passed``: TLC's own SANY pass ended without a parse or
    semantic error (it printed ``Semantic processing of module`` and the run then got past
    the parser: any kind but ``parse_error``, ``semantic_error``, ``crash`` and
    ``timeout``), so a separate SANY run on the same files exits 0.
    """

    kind: str
    distinct_states: int | None = None
    states_generated: int | None = None
    depth: int | None = None
    error_message: str | None = None
    front_end_passed: bool = False


_STATS = re.compile(
    r"([\d,]+) states? generated(?: \([^)]*\))?, ([\d,]+) distinct states? found")
_DEPTH = re.compile(r"The depth of the complete state graph search is ([\d,]+)")
_M = re.MULTILINE

_CRASH = [
    r"java\.lang\.OutOfMemoryError", r"Java ran out of memory", r"java\.lang\.StackOverflowError",
    r"There is insufficient memory for the Java Runtime",
    r"Error occurred during initialization of VM", r"Could not reserve enough space",
    r"A fatal error has been detected by the Java Runtime",
    r"Could not find or load main class", r"Error: Unable to access jarfile",
    r"unrecognized option", r"Invalid maximum heap size",
    r"^Error: Could not create the Java Virtual Machine",
    r"TLC writes its files to a directory whose name is generated",
]
_PARSE = [
    r"\*\*\*Parse Error\*\*\*", r"Lexical error", r"Could not parse module",
    r"Cannot find source file for module", r"^File does not exist: .*\.tla",
]
#: "Semantic errors:" alone is no error: TLC 2.15 prints it over a list of warnings only
_SEMANTIC = [r"^\*\*\* Errors: [1-9]"]
_FRONT_END = re.compile(r"^Semantic processing of module ", re.MULTILINE)
_INVARIANT = r"^Error: Invariant (\S+) is violated"
_PROPERTY = (r"^Error: Temporal properties were violated|^Error: (?:Action )?[Pp]roperty "
             r"\S+ is violated|^Error: The following (?:action )?property is violated")
_DEADLOCK = r"^Error: Deadlock reached"
_ASSUME = r"^Error: Assumption .* is false"
_CONFIG = [
    r"The configuration file did not specify", r"specified in the configuration file",
    r"is not defined in the specification", r"is not assigned a value by the configuration",
    r"error in the configuration file", r"ConfigFileException",
    r"is not a state predicate", r"is not an action",
    r"was not found", r"is not defined", r"^Error: The (?:constant|operator|symbol) ",
    r"The (?:specification|invariant|property|constraint) \S+ .*configuration file",
]
_EVAL = [
    r"^Error: TLC threw an unexpected exception", r"error occurred when TLC was evaluating",
    r"^Error: Attempted to", r"The first argument of Assert evaluated to FALSE",
    r"^Error: Evaluating ", r"^Error: TLC encountered",
]
#: an action that leaves a variable unassigned: an error of the spec, though its message
#: reads like a cfg error ("... is not defined")
_EVAL_NOT_CONFIG = [r"^Error: (?:Successor s|S)tate is not completely specified"]
_SUCCESS = r"Model checking completed\. No error has been found\."
# TLC's process exit codes (tlc2.output.EC.ExitStatus in 1.8; the same values in 2.15)
_EXIT_KIND = {
    0: "success", 10: "assumption_violated", 11: "deadlock", 12: "invariant_violated",
    13: "property_violated", 14: "eval_error", 75: "eval_error", 76: "eval_error",
    77: "eval_error", 150: "parse_error", 151: "config_error", 153: "crash", 255: "crash",
}


def _any(patterns, text: str) -> re.Match | None:
    for p in patterns:
        m = re.search(p, text, _M)
        if m:
            return m
    return None


#: lines after an error that TLC prints on finishing (counts, wall time, date): not part of it
_SUMMARY = re.compile(r"\n(?:Finished in |Finished checking temporal properties|Progress\(|\d[\d,]* states generated"
                      r"|The depth of the complete state graph|Checking temporal properties for the)")


def _block(text: str, start: int, limit: int = 4000) -> str:
    """Text from ``start`` up to the counter-example, two blank lines or the summary TLC
    prints on finishing (so no wall time or date is part of an error message)."""
    rest = text[start:]
    stops = [rest.find(s) for s in ("\nError: The behavior up to this point",
                                    "\nError: The following behavior", "\n\n\n",
                                    "\nState 1:")]
    summary = _SUMMARY.search(rest)
    stops = [s for s in stops if s > 0] + ([summary.start()] if summary else [])
    end = min(stops) if stops else len(rest)
    return rest[:min(end, limit)].strip()


def _to_int(s: str) -> int:
    return int(s.replace(",", ""))


def parse_tlc_output(text: str, exit_code: int | None, timed_out: bool) -> TlcOutcome:
    """Classify TLC's console ``text`` (stdout and stderr merged).

    ``exit_code``: the process exit status (``None`` if it never ran or was
    killed); ``timed_out``: true when the caller killed TLC at its time limit.
    Never raises; unknown output with a non-zero exit is ``'crash'``.
    """
    if timed_out:  # how far TLC got depends on the machine's speed: no counts
        return TlcOutcome(kind="timeout", error_message="time limit reached; process group killed")
    out = TlcOutcome(kind="crash")
    stats = _STATS.findall(text)
    if stats:
        out.states_generated = _to_int(stats[-1][0])
        out.distinct_states = _to_int(stats[-1][1])
    depth = _DEPTH.findall(text)
    if depth:
        out.depth = _to_int(depth[-1])
    out.kind, out.error_message = _classify(text, exit_code)
    out.front_end_passed = (out.kind not in ("parse_error", "semantic_error", "crash")
                            and _FRONT_END.search(text) is not None)
    return out


def _first_error(text: str) -> str | None:
    m = re.search(r"^Error: ", text, _M)
    return _block(text, m.start()) if m else (text.strip()[-4000:] or None)


def _classify(text: str, exit_code: int | None) -> tuple[str, str | None]:
    """``(kind, error_message)`` of a run that was not killed (:func:`parse_tlc_output`)."""
    m = _any(_CRASH, text)
    if m:
        return "crash", _block(text, text.rfind("\n", 0, m.start()) + 1)
    m = _any(_PARSE, text)
    if m:
        start = text.rfind("\n", 0, m.start()) + 1
        return "parse_error", text[start:start + 4000].strip()
    m = _any(_SEMANTIC, text)
    if m:
        start = text.rfind("Semantic errors:", 0, m.start())
        start = m.start() if start < 0 else start
        return "semantic_error", text[start:start + 4000].split("\nError: Parsing")[0].strip()
    for kind, pat in (("invariant_violated", _INVARIANT), ("property_violated", _PROPERTY),
                      ("deadlock", _DEADLOCK), ("assumption_violated", _ASSUME)):
        m = re.search(pat, text, _M)
        if m:
            return kind, _block(text, m.start())
    if re.search(_SUCCESS, text) and exit_code in (0, None):
        return "success", None
    m_err = re.search(r"^Error: ", text, _M)
    err_text = text[m_err.start():m_err.start() + 4000] if m_err else ""
    if not _any(_EVAL_NOT_CONFIG, err_text) and (
            exit_code == 151 or _any(_CONFIG, err_text) and not _any(_EVAL[:2], err_text)):
        return "config_error", _first_error(text)
    if exit_code in (14, 75, 76, 77) or _any(_EVAL, text) or _any(_EVAL_NOT_CONFIG, err_text):
        # 2.15 reports cfg parse failures as an "unexpected exception" too
        cfg = re.search(r"ConfigFileException|error in the configuration file", text)
        return ("config_error" if cfg else "eval_error"), _first_error(text)
    kind = _EXIT_KIND.get(exit_code, "crash") if exit_code not in (0, None) else "crash"
    kind = "crash" if kind == "success" else kind
    return kind, _first_error(text) or f"TLC exited with code {exit_code} and no recognised message"


# --------------------------------------------------------------------- stable logs
_UNSTABLE = [
    (re.compile(r"/\S*?alias-tla-[A-Za-z0-9_]+"), "<run>"),                       # the run's temp folder
    (re.compile(r"<run>/jtmp/tlc-\d+/"), "<run>/jtmp/<tlc>/"),                  # v1.8.0's standard modules
    (re.compile(r"<run>/(states|jtmp)/\d+/"), r"<run>/\1/<n>/"),                  # ... and its copies of modules
    (re.compile(r"jar:file:\S+?\.jar!"), "jar:file:<jar>!"),                       # ... read from the jar
    (re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}"), "<time>"),              # dates and clock times
    (re.compile(r"with fp -?\d+ and seed -?\d+"), "with fp <fp> and seed <seed>"),
    (re.compile(r"on \d+ cores? with \d+MB heap and \d+MB offheap memory( \[pid: \d+\])?( \([^)]*\))?"),
     "on <machine>"),
    (re.compile(r"\(\s*[\d,]+ s/min\)"), "(<rate> s/min)"),
    (re.compile(r"\(\s*[\d,]+ ds/min\)"), "(<rate> ds/min)"),
    (re.compile(r"\b(Finished(?: checking temporal properties)? in) (?:\d+h )?(?:\d+min )?\S+"), r"\1 <wall>"),
    (re.compile(r"(based on the actual fingerprints:\s+val = )\S+"), r"\1<val>"),
    (re.compile(r"\b\d+ms\b"), "<ms>"),
    # what TLC prints on a timer (progress with rates, liveness checks of the state space so
    # far): how many such lines a run has depends on the machine's speed
    (re.compile(r"^Progress\(\d+\) at [^\n]*\(<rate> s/min\)[^\n]*\n", re.M), ""),
    (re.compile(r"^Checking (?:\d+ branches of )?temporal properties for the current state space[^\n]*\n"
                r"(?:Finished checking temporal properties in[^\n]*\n)?", re.M), ""),
]


def stable_log(text: str) -> str:
    """A SANY/TLC log with what differs between runs of the same inputs on other machines
    replaced by placeholders (temp folder, dates, TLC's random fingerprint index and seed,
    cores/heap/pid/OS, throughput rates, wall times, the fingerprint-based collision
    estimate) and the lines TLC prints on a timer dropped (progress reports with rates,
    liveness checks of the state space found so far): same inputs and tool version -> same
    bytes. Results, errors, traces and
    state counts are kept as TLC wrote them."""
    for pattern, repl in _UNSTABLE:
        text = pattern.sub(repl, text)
    return text
