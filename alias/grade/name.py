"""The name-based grade (Methods "Name-based grade", Appendix H).

The output is staged as the task's system module beside the reference's wrapper and
imported modules.  *Parse*: strict SANY on the output module (exit 0 and no error text;
the exit-code-only verdict is kept too).  *Correct*: TLC on the model module with the
condition's cfg passes; a run over the time limit (``grade.timeout_s``, 300 s) fails.

The cfg is adjusted as Appendix H says: INIT, NEXT and SPECIFICATION point at the
output's ``Init``, ``Next`` and ``Spec`` when the output defines them and not the name
the cfg gives (the renamed cfg's ``INIT Octv``); an entry the output defines itself
(``SPECIFICATION LSpec`` of a reference that also has a ``Spec``), or that names an
operator of the wrapper module, is left alone; an invariant or property entry keeps its name, and if neither the output
nor the wrapper defines that name and the output defines exactly one operator other than
``Init``, ``Next`` and ``Spec``, the entry names that operator.  Constants keep their
names.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

from alias.corpus.testset import Reference
from alias.grade.behavior import visible_closure
from alias.grade.cache import Call, ToolRunner
from alias.grade.specshape import definition_arities
from alias.tla.cfg import CfgError, for_jar, parse_cfg, write_cfg
from alias.tla.syntax import module_info
from alias.tla.tools import supports_check_deadlock

_HEADER = re.compile(r"^(\s*-{4,}\s*MODULE\s+)([A-Za-z0-9_]+)(\s*-{4,})", re.M)
_TARGETS = {"init": "Init", "next": "Next", "specification": "Spec"}


@dataclass
class NameVerdict:
    """Result of :func:`grade_name`.

    ``parsed``: strict SANY verdict on the output module; ``sany_exit_ok``: SANY exited
    0 (the weaker verdict some benchmarks use); ``passed``: parsed and TLC succeeded;
    ``tlc_kind``: TLC's result kind (``None`` when TLC did not run); ``reason``: why it
    failed (``None`` on a pass); ``cfg_text``: the cfg TLC ran with; ``cfg_changes``:
    the Appendix H redirections applied, e.g. ``['INIT Octv->Init']``;
    ``distinct_states``: TLC's distinct states; ``error_text``: SANY's errors, the cfg error
    or TLC's error message when the grade failed; ``calls``: every tool call (cached or not).
    """

    parsed: bool
    sany_exit_ok: bool
    passed: bool
    tlc_kind: str | None = None
    reason: str | None = None
    cfg_text: str | None = None
    cfg_changes: list[str] = field(default_factory=list)
    distinct_states: int | None = None
    error_text: str | None = None
    calls: list[Call] = field(default_factory=list)


def set_module_name(text: str, name: str) -> str:
    """Rewrite the first ``---- MODULE X ----`` header of ``text`` to ``name``."""
    return _HEADER.sub(lambda m: m.group(1) + name + m.group(3), text, count=1)


def stage_output(ref: Reference, module_text: str) -> dict[str, str]:
    """The reference's files with the system module replaced by the output (its header
    renamed to the system module's name)."""
    files = dict(ref.files)
    files[f"{ref.system_module}.tla"] = set_module_name(module_text, ref.system_module)
    return files


def name_grade_cfg(ref: Reference, output_definitions: set[str],
                   imported: set[str] = frozenset()) -> tuple[str, list[str]]:
    """The cfg text for the name-based grade of an output defining
    ``output_definitions`` (its own top-level definitions) and seeing ``imported`` (the
    definitions of the modules it EXTENDS or INSTANCEs without a name), and the list of
    changes made (Appendix H).

    Raises :class:`~alias.tla.cfg.CfgError` if the reference cfg does not parse.
    """
    cfg = copy.deepcopy(parse_cfg(ref.cfg_text))
    changes: list[str] = []
    wrapper_defs = ref.wrapper_definitions
    for fld, target in _TARGETS.items():
        cur = getattr(cfg, fld)
        if cur is None or cur == target or cur in wrapper_defs or cur in output_definitions | imported:
            continue  # the output defines what the cfg names: nothing to redirect
        if target in output_definitions:
            setattr(cfg, fld, target)
            changes.append(f"{fld.upper()} {cur}->{target}")
    others = sorted(output_definitions - set(_TARGETS.values()))
    visible = output_definitions | wrapper_defs | imported
    for fld in ("invariants", "properties"):
        entries = getattr(cfg, fld)
        for i, name in enumerate(entries):
            if name not in visible and len(others) == 1:
                entries[i] = others[0]
                changes.append(f"{fld.upper()} {name}->{others[0]}")
    return write_cfg(cfg), changes


def grade_name(ref: Reference, module_text: str, runner: ToolRunner) -> NameVerdict:
    """Grade one extracted output module by name (Appendix H).

    ``module_text``: one TLA+ module (see :func:`alias.tla.extract.extract_module`);
    its header name is replaced by the task's system module name.  Never raises for a
    bad output: every failure is a verdict with a ``reason`` (``sany_parse_error``,
    ``sany_semantic_error``, ``sany_timeout``, ``cfg_error``, ``tlc_<kind>``...).
    """
    runner = runner.child()
    files = stage_output(ref, module_text)
    sany = runner.sany(files, ref.system_module, purpose="name_parse")
    v = NameVerdict(parsed=bool(sany.ok_strict), sany_exit_ok=bool(sany.ok_exit), passed=False)
    if not sany.ok_strict:
        v.reason = f"sany_{sany.kind}" if sany.kind != "ok" else "sany_error_text"
        v.error_text = "; ".join(sany.errors) or None
        v.calls = runner.calls
        return v
    info = module_info(files[f"{ref.system_module}.tla"])
    imported: set[str] = set()
    for text in visible_closure(ref.system_module, files)[1:]:
        imported |= set(definition_arities(text))
    try:
        cfg_text, v.cfg_changes = name_grade_cfg(ref, set(info.definitions), imported)
        modern = supports_check_deadlock(runner.config)
        cfg_run, flags = for_jar(parse_cfg(cfg_text), modern, supports_alias=modern)
    except CfgError as e:
        v.reason = f"cfg_error: {e}"
        v.error_text = str(e)
        v.calls = runner.calls
        return v
    v.cfg_text = cfg_run
    tlc = runner.tlc(files, ref.model_module, cfg_run, flags, purpose="name_tlc")
    v.tlc_kind = tlc.kind
    v.distinct_states = tlc.distinct_states
    v.passed = tlc.kind == "success"
    v.reason = None if v.passed else f"tlc_{tlc.kind}"
    v.error_text = None if v.passed else (tlc.error_message or tlc.kind)
    v.calls = runner.calls
    return v
