"""The grades by name: one protocol, one registry (Methods "Name-based grade",
"Behavior-based grade"; the ``tlabench`` compatibility grade).

A grade is a class with a ``name`` and ``grade(work) -> fields``: the verdict fields it
gives one sample (``passed``, ``reason``, ``tlc_kind``, ``distinct_states``, ``mapping``,
``error_text`` ... the columns of :class:`~alias.store.models.Verdict`), from a
:class:`SampleWork` (the sample, its reference, the tool runner, what the grades of one
sample share). ``register_grade`` adds a class under its ``name``, as Inspect's
``@scorer`` does; the ``grade`` stage, the grader controls, ``alias-cir grade-file``,
``alias.grade_output`` and the Inspect scorers (:mod:`alias.inspect`) all look grades up
here, so a new grade is one class plus its registration::

    @register_grade
    class Lines:
        name = "lines"
        def grade(self, work):
            return {"passed": len(work.text.splitlines()) > 3}

The built-in grades, in the order their rows are written:

``parse``
    Strict SANY on the module extracted from the output (``sany_exit_ok``: exit 0 only).
``name``
    TLC with the task's cfg (Appendix H changes), from the same SANY/TLC runs as ``parse``.
``behavior``
    Forward and reverse refinement under variable/constant maps
    (:class:`~alias.grade.behavior.BehaviorGrader`).
``tlabench``
    TLA+-Bench's own procedure on the raw text (:class:`~alias.grade.tlabench.CompatGrader`):
    on a ``tlabench`` corpus beside the release's gold modules, elsewhere beside the task's
    reference modules of the sample's condition.

A grade instance must pickle (it travels to the Dask workers that grade); settings come
from :meth:`from_config` (default: the class without arguments). ``signature()`` returns
what else a verdict depends on (JSON-able; part of the journal signature,
:func:`alias.grade.run.signature`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterable, Protocol, runtime_checkable

from alias.config import Config
from alias.corpus.testset import Reference
from alias.errors import AliasError
from alias.grade.behavior import BehaviorGrader, OutputSide
from alias.grade.cache import ToolRunner
from alias.grade.name import NameVerdict, grade_name, set_module_name
from alias.grade.tlabench import CompatGrader
from alias.tla.extract import extract_module

__all__ = ["Grade", "SampleWork", "register_grade", "unregister_grade", "get_grade", "grade_names",
           "make_grades", "PAPER_GRADES"]

#: The paper's three grades (Methods), the default of ``grade.grades``.
PAPER_GRADES = ("parse", "name", "behavior")


@runtime_checkable
class Grade(Protocol):
    """One grade: ``name`` (its ``grade`` column value) and ``grade(work)`` (its verdict
    fields for one sample; an exception becomes a ``grader_error`` verdict)."""

    name: ClassVar[str]

    def grade(self, work: "SampleWork") -> dict[str, Any]: ...


_REGISTRY: dict[str, type] = {}


def register_grade(cls: type) -> type:
    """Register the grade class ``cls`` under ``cls.name`` (a decorator; replaces an earlier
    class of that name); returns ``cls``."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name.isidentifier():
        raise AliasError(f"a grade class needs a name that is an identifier, got {name!r}")
    _REGISTRY[name] = cls
    return cls


def unregister_grade(name: str) -> None:
    """Remove the grade ``name`` (tests that register a toy grade)."""
    _REGISTRY.pop(name, None)


def grade_names() -> tuple[str, ...]:
    """Every registered grade, in registration order (the built-ins first)."""
    return tuple(_REGISTRY)


def get_grade(name: str) -> type:
    """The class registered as ``name``; :class:`AliasError` naming the known grades."""
    if name not in _REGISTRY:
        raise AliasError(f"no grade {name!r} (registered: {', '.join(_REGISTRY)})")
    return _REGISTRY[name]


def make_grades(names: Iterable[str], config: Config | None = None) -> dict[str, Grade]:
    """One configured instance per name (``cls.from_config(config)`` where the class has it
    and ``config`` is given, else ``cls()``), in the order of :func:`grade_names`. Raises
    :class:`AliasError` for an empty list or an unknown name."""
    names = list(dict.fromkeys(names))
    if not names:
        raise AliasError(f"grades must name at least one of {', '.join(_REGISTRY)}")
    classes = {n: get_grade(n) for n in names}
    order = {n: i for i, n in enumerate(_REGISTRY)}
    return {n: (c.from_config(config) if config is not None and hasattr(c, "from_config") else c())
            for n, c in sorted(classes.items(), key=lambda kv: order[kv[0]])}


def grade_signature(grade: Any) -> Any:
    """What a grade's verdicts depend on beyond the sample and reference: its
    ``signature()`` when it has one, else ``None``."""
    sig = getattr(grade, "signature", None)
    return sig() if callable(sig) else None


# ------------------------------------------------------------------ what a sample's grades share
@dataclass
class SampleWork:
    """One sample being graded: ``sample`` (a ``samples`` row: key columns and ``text``),
    its reference ``ref`` (``None``: no reference in its condition), the tool ``runner``,
    ``max_maps`` (behavior), ``side`` (an output side graded by behavior instead of the
    extracted module: the grader controls) and ``graders`` (``task/condition ->
    BehaviorGrader``, shared across samples). :meth:`prepared` and :meth:`name_verdict`
    are computed once per sample, whichever grades ask."""

    sample: dict
    ref: Reference | None
    runner: ToolRunner
    max_maps: int = 60
    side: OutputSide | None = None
    graders: dict | None = None
    _memo: dict = field(default_factory=dict, repr=False)

    @property
    def text(self) -> str:
        return self.sample.get("text") or ""

    def _once(self, key: str, make: Callable[[], Any]) -> Any:
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def prepared(self) -> tuple[dict, str | None]:
        """``(fields, module text)``: the module extracted from the text and renamed to the
        reference's system module, with the fields every module-based verdict carries
        (``extraction``, ``truncated``); the text is ``None`` (and ``fields`` a failing
        verdict: ``no_reference``, ``extraction_failed: ...``) when there is none."""
        return self._once("prepared", self._prepare)

    def _prepare(self) -> tuple[dict, str | None]:
        if self.ref is None:
            return {"passed": False, "reason": "no_reference"}, None
        ext = extract_module(self.text, self.ref.system_module)
        common = {"extraction": json.dumps({"ok": ext.ok, "actions": ext.actions, "error": ext.error}),
                  "truncated": bool(ext.truncated)}
        if not ext.ok:
            return common | {"passed": False, "reason": f"extraction_failed: {ext.error}"}, None
        return common, set_module_name(ext.module_text, self.ref.system_module)

    def name_verdict(self) -> NameVerdict | dict:
        """The :class:`~alias.grade.name.NameVerdict` of the prepared module (SANY and TLC
        once for ``parse`` and ``name``), or the failing fields of a grader error."""
        return self._once("name", self._name)

    def _name(self) -> NameVerdict | dict:
        common, module_text = self.prepared()
        try:
            return grade_name(self.ref, module_text, self.runner)
        except Exception as e:  # keep going: one bad sample never stops the run
            return common | {"passed": False, "reason": f"grader_error: {type(e).__name__}: {e}"}


def _calls_fields(calls: list) -> dict:
    return {"tool_runs": sum(not c.cached for c in calls), "cached_runs": sum(c.cached for c in calls),
            "run_keys": json.dumps([c.run_key for c in calls])}


# ------------------------------------------------------------------ the built-in grades
@register_grade
class ParseGrade:
    """``parse``: strict SANY on the extracted module (exit 0 and no error text)."""

    name = "parse"

    def grade(self, work: SampleWork) -> dict:
        common, module_text = work.prepared()
        nv = work.name_verdict() if module_text is not None else common
        if isinstance(nv, dict):
            return nv
        return common | {"passed": nv.parsed, "reason": None if nv.parsed else nv.reason,
                         "sany_exit_ok": nv.sany_exit_ok, "error_text": None if nv.parsed else nv.error_text} \
            | _calls_fields([c for c in nv.calls if c.tool == "sany"])


@register_grade
class NameGrade:
    """``name``: TLC with the task's cfg under the reference's names (Appendix H changes)."""

    name = "name"

    def grade(self, work: SampleWork) -> dict:
        common, module_text = work.prepared()
        nv = work.name_verdict() if module_text is not None else common
        if isinstance(nv, dict):
            return nv
        return common | {"passed": nv.passed, "reason": nv.reason, "sany_exit_ok": nv.sany_exit_ok,
                         "tlc_kind": nv.tlc_kind, "detail": json.dumps({"cfg_changes": nv.cfg_changes}),
                         "distinct_states": nv.distinct_states, "error_text": nv.error_text} | _calls_fields(nv.calls)


@register_grade
@dataclass
class BehaviorGrade:
    """``behavior``: forward and reverse refinement, by
    :class:`~alias.grade.behavior.BehaviorGrader` (one per reference and procedure, shared
    through ``work.graders``); a grader error is a verdict. ``mappings``: the procedure
    (``grade.behavior.mappings``: ``renaming``, the paper's one-to-one maps, or
    ``refinement``, that and then refinement mappings); ``max_refinements``."""

    name: ClassVar[str] = "behavior"
    mappings: str = "refinement"
    max_refinements: int = 1000

    @classmethod
    def from_config(cls, config: Config) -> "BehaviorGrade":
        b = config.grade.behavior
        return cls(b.mappings, b.max_refinements)

    def signature(self) -> Any:
        return [self.mappings, self.max_refinements]

    def grade(self, work: SampleWork) -> dict:
        common, module_text = work.prepared()
        if module_text is None:
            return common
        ref = work.ref
        side = work.side or OutputSide({ref.system_module: module_text}, ref.system_module)
        try:
            bv = self._grader(work).grade(side)
        except Exception as e:
            return common | {"passed": False, "reason": f"grader_error: {type(e).__name__}: {e}"}
        return common | {"passed": bv.passed, "reason": bv.reason, "method": bv.method,
                         "mapping": json.dumps(bv.mapping) if bv.mapping else None, "maps_tried": bv.maps_tried,
                         "tlc_kind": f"forward={bv.forward} reverse={bv.reverse}",
                         "detail": json.dumps({"attempts": bv.attempts[-10:]}),
                         "distinct_states": bv.distinct_states,
                         "error_text": None if bv.passed else bv.error_text} | _calls_fields(bv.calls)

    def _grader(self, work: SampleWork) -> BehaviorGrader:
        key = (work.ref.task_id, work.ref.condition, self.mappings)
        grader = work.graders.get(key) if work.graders is not None else None
        if grader is None:
            grader = BehaviorGrader(work.ref, work.runner, max_maps=work.max_maps, mappings=self.mappings,
                                    max_refinements=self.max_refinements)
            if work.graders is not None:
                work.graders[key] = grader
        return grader


@register_grade
@dataclass
class TlabenchGrade:
    """``tlabench``: TLA+-Bench's procedure on the raw text (:mod:`alias.grade.tlabench`).
    ``compat``: the release's staging pool (a ``tlabench`` corpus); ``None``: each sample is
    staged beside its reference's modules (the other modules of the task, the cfg of its
    condition). Time limits ``grade.tlabench_sany_timeout_s``, ``grade.tlabench_tlc_timeout_s``."""

    name: ClassVar[str] = "tlabench"
    compat: CompatGrader | None = None
    sany_timeout_s: float = 60.0
    tlc_timeout_s: float = 300.0

    @classmethod
    def from_config(cls, config: Config) -> "TlabenchGrade":
        g = config.grade
        compat = (CompatGrader.from_release(str(config.corpus.path), g.tlabench_sany_timeout_s,
                                            g.tlabench_tlc_timeout_s) if config.corpus.kind == "tlabench" else None)
        return cls(compat, g.tlabench_sany_timeout_s, g.tlabench_tlc_timeout_s)

    def signature(self) -> Any:
        return (self.compat.pool_key if self.compat is not None
                else ["reference", self.sany_timeout_s, self.tlc_timeout_s])

    def _grader(self, ref: Reference | None) -> CompatGrader | None:
        if self.compat is not None or ref is None:
            return self.compat
        own = f"{ref.system_module}.tla"
        return CompatGrader({k: v for k, v in ref.files.items() if k != own},
                            {ref.task_id: (ref.system_module, ref.cfg_text or None, own)},
                            self.sany_timeout_s, self.tlc_timeout_s)

    def grade(self, work: SampleWork) -> dict:
        compat = self._grader(work.ref)
        if compat is None:
            return {"passed": False, "reason": "no_reference: the tlabench grade stages the task's modules"}
        child = work.runner.child()
        try:
            row = compat.grade(str(work.sample["task_id"]), work.text, child)
        except Exception as e:  # one bad sample never stops the run
            return {"passed": False, "reason": f"grader_error: {type(e).__name__}: {e}"}
        return row | _calls_fields(child.calls)


@register_grade
@dataclass
class BehaviorRenamingGrade(BehaviorGrade):
    """``behavior_renaming``: the behavior grade with the paper's procedure whatever
    ``grade.behavior.mappings`` says (one-to-one maps of variables and constants), for
    reports that show both procedures side by side (Table J.2, the TLA+-Bench tables)."""

    name: ClassVar[str] = "behavior_renaming"
    mappings: str = "renaming"

    @classmethod
    def from_config(cls, config: Config) -> "BehaviorRenamingGrade":
        return cls("renaming", config.grade.behavior.max_refinements)
