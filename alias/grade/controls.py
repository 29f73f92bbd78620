"""Validation of the behavior-based grade (Appendix J): positive and negative controls.

For every test-set task with a cfg:

* **eligibility** -- the behavior-based grade needs TLC results that repeat across runs
  and system behavior to compare, so a task that draws random values (``RandomElement``,
  ``RandomSubset``, ``RandomSetOfSubsets``, ``RandomSubsetSet``) or whose system module is
  a test fixture (its name starts or ends with ``Test``/``Tests``) is not eligible.
* **positive controls** (must pass), graded against the original reference:
  ``control:self`` -- the reference itself; ``control:renamed`` -- the renamed reference
  with its renamed imported modules (the random-condition copy); ``control:oprenamed``
  -- a copy with its operators renamed to random names of the same width, counted only
  if it passes SANY and TLC with its cfg (operators the cfg overrides by name keep their
  names; with none left to rename the task has no such control).
* **negative controls** (must fail): mutants of the system module
  (:mod:`alias.grade.mutants`) kept only if TLC reports a different number of distinct
  reachable states than the reference (no invariants or properties checked, deadlock
  allowed), counted on the data variables (projections of TLC's state graph) for
  references with control-label variables; and hard negatives (issue 33,
  :mod:`alias.grade.hardneg`, kind ``hardneg``): mutants with the reference's count whose
  behaviors TLC shows to differ (:func:`hard_negative_controls`).

Every control is a row of the ``samples`` shape (model ``control:<kind>``, condition
``original``) graded by :func:`alias.grade.run.grade_samples`, so the controls also
exercise the resumable grading path.  Table J.1 is the view ``v_table_j1``.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import itertools
import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from alias.config import HardNegativesConfig
from alias.corpus.testset import Reference
from alias.grade import equivalence
from alias.grade.behavior import BehaviorGrader, OutputSide
from alias.grade.cache import ToolRunner
from alias.grade.hardneg import (RELABEL_CAP, Difference, behavior_difference, check_operators, generate_hard_negatives,
                                 re_encoding)
from alias.grade.mutants import generate_mutants
from alias.grade.run import CONTROL_GENERATORS, grade_samples, grader_code_version, tool_settings
from alias.rename.cir import rename_names, rename_task
from alias.store.db import write_table
from alias.store.models import ControlEligibility, ControlSample, Sample
from alias.tla.executor import Executor, LocalExecutor
from alias.tla.tools import ToolConfig
from alias.tla.cfg import CfgError, for_jar, parse_cfg, rename_cfg
from alias.tla.syntax import module_info
from alias.tla.tools import supports_check_deadlock

_RANDOM = re.compile(r"\bRandom(Element|Subset|SetOfSubsets|SubsetSet)\b")
_FIXTURE = re.compile(r"^Test|Tests?$")
OP_KINDS = ("operator", "function", "recursive", "local")


@dataclass
class Control:
    """One control sample before grading."""

    task_id: str
    kind: str            # self | renamed | oprenamed | mutant | hardneg
    sample_idx: int
    text: str
    side: OutputSide | None = None
    valid: bool = True
    detail: str | None = None
    mutant_kind: str | None = None
    mutant_id: str | None = None
    reference_states: int | None = None
    control_states: int | None = None
    equiv_class: str | None = None
    variant_id: str | None = None
    known_mapping: str | None = None


def eligibility(ref: Reference) -> tuple[bool, str | None]:
    """``(eligible, reason)`` for the behavior-based grade (Appendix J).

    Appendix J keeps a reference only if it has TLC results that repeat across runs (no
    ``Random*`` values) and system behavior to compare (no test fixture of the tools).  A
    constant-level specification, whose author modules declare no variable and which TLC
    checks only through its ASSUMEs, has no behavior either: reason ``no_variables``.
    """
    if not ref.cfg_text or not ref.cfg_text.strip():
        return False, "no_cfg"
    if _FIXTURE.search(ref.system_module):
        return False, "test_fixture"
    if not any(ref.info(m).variables for m in ref.author_modules if f"{m}.tla" in ref.files):
        return False, "no_variables (constant-level: TLC checks only ASSUMEs)"
    for m in ref.author_modules:
        hit = _RANDOM.search(ref.files[f"{m}.tla"])
        if hit:
            return False, f"random_values ({hit.group(0)} in {m})"
    return True, None


def _reach_cfg(ref: Reference, runner: ToolRunner, view: str | None) -> tuple[str, tuple[str, ...]]:
    c = copy.deepcopy(parse_cfg(ref.cfg_text))
    c.invariants, c.properties, c.alias, c.postcondition, c.possible = [], [], None, None, []
    c.check_deadlock = False
    if view:
        c.view = view
    modern = supports_check_deadlock(runner.config)
    return for_jar(c, modern, supports_alias=modern)


def reachable_states(ref: Reference, files: dict[str, str], runner: ToolRunner,
                     data_vars: list[str] | None, grader=None) -> tuple[int | None, str]:
    """Distinct reachable states of the model in ``files`` under the reference cfg (no
    invariants/properties, deadlock allowed).  With ``data_vars`` (a reference with
    control-label variables) TLC dumps the state graph and the count is of distinct
    projections onto the data variables -- a TLC VIEW would not do: TLC stops exploring
    a state whose view it has seen.  Returns (count or None, TLC kind)."""
    text, flags = _reach_cfg(ref, runner, None)
    if data_vars:
        g = reach_graph(ref, files, grader)
        if g is None:
            return None, "no_state_graph"
        return len({tuple(s.get(v) for v in data_vars) for s in g.nodes.values()}), "success"
    r = runner.tlc(files, ref.model_module, text, flags, purpose="control_reach")
    return (r.distinct_states if r.kind == "success" else None), r.kind


def reach_graph(ref: Reference, files: dict[str, str], grader: BehaviorGrader):
    """TLC's reachable state graph of the model in ``files`` under the reference cfg (as
    :func:`reachable_states` counts it), or None."""
    text, flags = _reach_cfg(ref, grader.runner, None)
    return grader._dump(files, ref.model_module, text, flags, "control_reach_graph")


def _library_visible_definitions(author: dict[str, str], libs: dict[str, str]) -> set[str]:
    """Definitions of the author modules that a library module imports by name, with
    their EXTENDS closure among the author modules.  A task folder may ship its own copy
    of a library module (ewd998's ``Functions``); the library's ``SequencesExt``
    EXTENDS it and uses ``Range`` by that name, so renaming ``Range`` breaks SANY."""
    todo: list[str] = []
    for text in libs.values():
        info = module_info(text)
        todo += [m for m in info.extends + info.instances if m in author]
    seen: set[str] = set()
    names: set[str] = set()
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        info = module_info(author[m])
        names |= set(info.definitions)
        todo += [e for e in info.extends if e in author]
    return names


def operator_renamed(ref: Reference, seed: int | str) -> tuple[dict[str, str], str, dict[str, str]] | None:
    """A copy of the reference's author modules with its operators renamed to random
    same-width names: ``(modules, cfg_text, mapping)``, or None with nothing to rename."""
    author = {m: ref.files[f"{m}.tla"] for m in ref.author_modules}
    libs = {k[:-4]: v for k, v in ref.files.items() if k[:-4] not in author}
    res = rename_task(author, set(author), ref.cfg_text, seed, f"oprename:{ref.task_id}", libs)
    cfg = parse_cfg(ref.cfg_text)
    # cfg-substituted names and the names a library module uses keep their names
    keep = {c.name for c in cfg.constants if c.op == "<-"} | _library_visible_definitions(author, libs)
    mapping = {i["name"]: i["new_name"] for i in res.identifiers
               if i["kind"] in OP_KINDS and i["name"] not in keep}
    if not mapping:
        return None
    mods = rename_names(author, mapping, author=set(author), library_modules=libs)
    return mods, rename_cfg(ref.cfg_text, mapping), mapping


def _oprenamed_control(ref: Reference, runner: ToolRunner, seed: int) -> Control:
    """The operator-renamed copy of a reference, checked by SANY and TLC (``valid`` false,
    with the reason, when it fails either or has no operator to rename)."""
    try:
        op = operator_renamed(ref, seed)
    except Exception as e:  # a renaming failure is recorded, not raised
        op, err = None, f"{type(e).__name__}: {e}"
    else:
        err = "no operator to rename"
    if op is None:
        return Control(ref.task_id, "oprenamed", 0, "", None, valid=False, detail=err)
    mods, cfg_text, mapping = op
    files = dict(ref.files) | {f"{m}.tla": t for m, t in mods.items()}
    s = runner.sany(files, ref.model_module, purpose="control_oprenamed_sany")
    valid, detail = s.ok_strict, None
    if not valid:
        detail = f"sany_{s.kind}"
    else:
        try:
            modern = supports_check_deadlock(runner.config)
            text, flags = for_jar(parse_cfg(cfg_text), modern, supports_alias=modern)
            r = runner.tlc(files, ref.model_module, text, flags, purpose="control_oprenamed_tlc")
            valid = r.kind == "success"
            detail = None if valid else f"tlc_{r.kind}"
        except CfgError as e:
            valid, detail = False, f"cfg_error: {e}"
    side = OutputSide(dict(mods), ref.system_module, ref.wrapper_module)
    return Control(ref.task_id, "oprenamed", 0, mods[ref.system_module], side, valid=valid,
                   detail=detail or json.dumps({"renamed_operators": len(mapping)}))


def _reference_reach(ref: Reference, runner: ToolRunner) -> tuple[BehaviorGrader, list[str] | None, int | None, str]:
    """(grader, data variables or None, the reference's reachable (data) states or None,
    TLC kind) -- what every keep-check of a mutant compares against."""
    grader = BehaviorGrader(ref, runner)
    control_vars = grader.r_control
    data_vars = [v for v in grader.r_vars if v not in control_vars] if control_vars else None
    ref_states, ref_kind = reachable_states(ref, ref.files, runner, data_vars, grader)
    return grader, data_vars, ref_states, ref_kind


def _limited(ref: Reference, runner: ToolRunner, timeout_s: float) -> tuple[ToolRunner, BehaviorGrader]:
    """A runner (and grader) with a time limit of at most ``timeout_s``: a mutant can make
    the state space infinite (a counter without its bound); timing out, it is not kept."""
    conf = dataclasses.replace(runner.config, timeout_s=min(runner.config.timeout_s, timeout_s))
    mrunner = ToolRunner(conf, runner.cache_dir)
    return mrunner, BehaviorGrader(ref, mrunner)


def _mutant_controls(ref: Reference, runner: ToolRunner, *, seed: int, max_mutants_tried: int,
                     max_mutants_kept: int, mutant_timeout_s: float) -> list[Control]:
    """Up to ``max_mutants_kept`` mutants whose reachable (data) states differ from the
    reference's, of the first ``max_mutants_tried`` in seeded order."""
    grader, data_vars, ref_states, ref_kind = _reference_reach(ref, runner)
    if ref_states is None:
        return [Control(ref.task_id, "mutant", -1, "", valid=False, detail=f"reference reachability run: {ref_kind}")]
    cfg = parse_cfg(ref.cfg_text)
    try:
        muts = generate_mutants(ref.system_text, init=cfg.init or "Init", next=cfg.next or "Next",
                                spec=cfg.specification or "Spec", cfg=ref.cfg_text)
    except Exception as e:
        return [Control(ref.task_id, "mutant", -1, "", valid=False,
                        detail=f"mutant generation failed: {type(e).__name__}: {e}")]
    order = list(range(len(muts)))
    random.Random(f"{seed}:{ref.task_id}").shuffle(order)
    mrunner, mgrader = _limited(ref, runner, mutant_timeout_s)
    out: list[Control] = []
    kept = 0
    for n_tried, i in enumerate(order[:max_mutants_tried]):
        if kept >= max_mutants_kept:
            break
        m = muts[i]
        files = dict(ref.files) | {f"{ref.system_module}.tla": m.text}
        states, kind = reachable_states(ref, files, mrunner, data_vars, mgrader)
        keep = states is not None and states != ref_states
        out.append(Control(ref.task_id, "mutant", n_tried, m.text, None, valid=keep,
                           detail=f"{m.description}; TLC {kind}", mutant_kind=m.kind, mutant_id=m.mutant_id,
                           reference_states=ref_states, control_states=states))
        kept += keep
    return out


#: The control kind of the hard negatives (:mod:`alias.grade.hardneg`).
HARDNEG = "hardneg"


def hard_negative_controls(ref: Reference, runner: ToolRunner, *, seed: int, max_tried: int, max_kept: int,
                           timeout_s: float, operators: tuple[str, ...] | None = None,
                           reach_time_factor: float = 3.0, min_reach_timeout_s: float = 10.0,
                           relabel_cap: int = RELABEL_CAP) -> list[Control]:
    """Hard negatives of one task (issue 33): of the first ``max_tried`` candidates of
    :func:`alias.grade.hardneg.generate_hard_negatives` (``operators``: None or empty = all;
    seeded order), up to ``max_kept`` kept, each when TLC reports the reference's number of
    reachable (data) states, :func:`alias.grade.hardneg.behavior_difference` shows a
    behavior of one the other lacks and :func:`alias.grade.hardneg.re_encoding` finds its
    state graph is not the reference's re-encoded (``relabel_cap`` state pairs tried at most).
    A candidate's reachability run gets
    ``max(min_reach_timeout_s, reach_time_factor * the reference's seconds)`` (one that
    runs longer has another state space), the checks ``timeout_s``; a reference whose run
    times ``reach_time_factor`` exceeds ``timeout_s`` gets none (one row saying so).
    ``mutant_kind``: the operator; ``detail``: JSON with the description, the check that
    failed, the first lines of TLC's counterexample and (where it ran) the relabel check's
    finding.
    Raises :class:`~alias.errors.AliasError` for an unknown operator name."""
    grader, data_vars, ref_states, ref_kind = _reference_reach(ref, runner)
    if ref_states is None:
        return [Control(ref.task_id, HARDNEG, -1, "", valid=False, detail=f"reference reachability run: {ref_kind}")]
    gen = generate_hard_negatives(ref.system_text, ref.cfg_text, operators=operators, seed=f"{seed}:{ref.task_id}")
    try:
        cands = list(itertools.islice(gen, max_tried))
    except Exception as e:
        return [Control(ref.task_id, HARDNEG, -1, "", valid=False,
                        detail=f"hard-negative generation failed: {type(e).__name__}: {e}")]
    text, flags = _reach_cfg(ref, runner, None)
    ref_s = runner.tlc(ref.files, ref.model_module, text, flags, purpose="control_reach").wall_s
    if reach_time_factor * ref_s > timeout_s:
        return [Control(ref.task_id, HARDNEG, -1, "", valid=False,
                        detail=f"reference reachability run took {ref_s:.0f} s: {reach_time_factor:g} times that is "
                               f"over the hard negatives' limit of {timeout_s:g} s")]
    rrunner, rgrader = _limited(ref, runner, max(min_reach_timeout_s, reach_time_factor * ref_s))
    crunner, _ = _limited(ref, runner, timeout_s)
    graphs: dict[str, object] = {}
    out: list[Control] = []
    for n_tried, hn in enumerate(cands):
        if sum(c.valid for c in out) >= max_kept:
            break
        files = dict(ref.files) | {f"{ref.system_module}.tla": hn.text}
        states, kind = reachable_states(ref, files, rrunner, data_vars, rgrader)
        d = Difference(False, "state_count_differs")
        if states == ref_states:
            d = _keep_check(ref, files, hn.text, graphs, grader, rgrader, crunner, data_vars, relabel_cap)
        detail = {"description": hn.description, "reach": kind, "check": d.check, "counterexample": d.trace}
        if d.relabel:
            detail["relabel"] = d.relabel
        out.append(Control(ref.task_id, HARDNEG, n_tried, hn.text, None, valid=d.shown, detail=json.dumps(detail),
                           mutant_kind=hn.operator, mutant_id=hn.mutant_id, reference_states=ref_states,
                           control_states=states))
    return out


def _keep_check(ref: Reference, files: dict[str, str], text: str, graphs: dict, grader: BehaviorGrader,
                rgrader: BehaviorGrader, crunner: ToolRunner, data_vars, relabel_cap: int) -> Difference:
    """Points (b) and (c) of :mod:`alias.grade.hardneg`'s keep-check for a candidate with the
    reference's state count; ``graphs`` keeps the reference's state graph (TLC dumps it
    once, when first needed)."""
    def ref_graph():
        if "ref" not in graphs:
            graphs["ref"] = reach_graph(ref, ref.files, grader)
        return graphs["ref"]

    mg = reach_graph(ref, files, rgrader) if data_vars else None
    d = behavior_difference(ref, crunner, text, (data_vars, ref_graph(), mg) if data_vars else None)
    if not d.shown:
        return d
    return re_encoding(d, ref_graph(), mg if data_vars else reach_graph(ref, files, rgrader), relabel_cap)


@dataclass(frozen=True)
class EquivalenceSettings:
    """Which equivalence classes each task gets and how many variants of each are
    checked (``tried``) and kept (``kept``); params ``controls.equivalence``."""

    classes: tuple[str, ...] = ()
    kept: int = 1
    tried: int = 2


def equivalence_controls(ref: Reference, runner: ToolRunner, settings: EquivalenceSettings) -> list[Control]:
    """The equivalence controls of one eligible task (issue 33): for each class, the first
    ``settings.tried`` variants its generator makes, each checked by TLC against the
    reference under its known mapping (:func:`alias.grade.equivalence.confirm`); a variant
    is graded (``valid``) when confirmed, until ``settings.kept`` are. Kind
    ``equiv_<class>``; a class that makes nothing gives one row with ``sample_idx`` -1 and
    the generator's reasons."""
    if not settings.classes:
        return []
    grader = BehaviorGrader(ref, runner)
    cx = equivalence.context(ref, grader.reference_side())
    out: list[Control] = []
    for cls in settings.classes:
        made, skipped = equivalence.generate(cx, cls, settings.tried)
        kind = f"equiv_{cls}"
        if not made:
            why = "; ".join(dict.fromkeys(x.reason for x in skipped))[:2000] or "nothing generated"
            out.append(Control(ref.task_id, kind, -1, "", valid=False, detail=why, equiv_class=cls))
        kept = 0
        for i, v in enumerate(made):
            if kept >= settings.kept:
                break
            c = equivalence.confirm(grader, v)
            kept += c.kept
            detail = {"description": v.description, "confirmed": c.kept, "reason": c.reason}
            if not c.kept and c.verdict is not None:
                detail["error"] = (c.verdict.error_text or "")[:500]
            out.append(Control(ref.task_id, kind, i, v.text, v.side(ref), valid=c.kept, detail=json.dumps(detail),
                               equiv_class=cls, variant_id=v.variant_id, known_mapping=v.mapping_json()))
    return out


def build_controls(ref: Reference, renamed: Reference | None, runner: ToolRunner, *, seed: int,
                   max_mutants_tried: int, max_mutants_kept: int, mutant_timeout_s: float = 60,
                   hard_negatives: HardNegativesConfig | None = None,
                   equivalence_settings: EquivalenceSettings | None = None) -> list[Control]:
    """All controls of one eligible task: itself, its renamed copy, its operator-renamed
    copy, its mutants, (with ``hard_negatives``) its hard negatives and its equivalence
    controls (validity and keep-checks run TLC)."""
    out: list[Control] = [Control(ref.task_id, "self", 0, ref.system_text)]
    if renamed is not None:
        side = OutputSide({m: renamed.files[f"{m}.tla"] for m in renamed.author_modules},
                          renamed.system_module, renamed.wrapper_module)
        out.append(Control(ref.task_id, "renamed", 0, renamed.system_text, side))
    out.append(_oprenamed_control(ref, runner, seed))
    out += _mutant_controls(ref, runner, seed=seed, max_mutants_tried=max_mutants_tried,
                            max_mutants_kept=max_mutants_kept, mutant_timeout_s=mutant_timeout_s)
    if hard_negatives is not None and hard_negatives.max_tried_per_task:
        h = hard_negatives
        out += hard_negative_controls(ref, runner, seed=seed, max_tried=h.max_tried_per_task,
                                      max_kept=h.max_kept_per_task, timeout_s=h.timeout_s, operators=h.operators,
                                      reach_time_factor=h.reach_time_factor, min_reach_timeout_s=h.min_reach_timeout_s)
    return out + equivalence_controls(ref, runner, equivalence_settings or EquivalenceSettings())


@dataclass(frozen=True)
class BuildContext:
    """What every control-building job shares: the tool settings, the tool-run cache
    folder (``None`` where workers share no file system) and the mutant settings."""

    tools: ToolConfig
    cache_dir: Path | None
    seed: int
    max_mutants_tried: int
    max_mutants_kept: int
    mutant_timeout_s: float
    hard_negatives: HardNegativesConfig | None = None
    equivalence: EquivalenceSettings = EquivalenceSettings()


@dataclass(frozen=True)
class BuildJob:
    """One eligible task: its original reference and its renamed one (``None`` if none)."""

    ref: Reference
    renamed: Reference | None


def build_job(ctx: BuildContext, job: BuildJob) -> list[Control]:
    """:func:`build_controls` in a worker; a build that raises gives the task's self control
    and a ``build_error`` row.  A finished build is kept in the tool-run cache under
    :func:`build_key` (not a ``build_error``), so a restarted run builds only what it had not
    built: its TLC runs that timed out are not cached and would otherwise run again."""
    runner = ToolRunner(ctx.tools, ctx.cache_dir)
    try:
        key = build_key(ctx, job)
        hit = runner.load_extra(key)
        if hit is not None:
            return [_control_from_json(d) for d in hit["controls"]]
        out = build_controls(job.ref, job.renamed, runner, seed=ctx.seed,
                             max_mutants_tried=ctx.max_mutants_tried, max_mutants_kept=ctx.max_mutants_kept,
                             mutant_timeout_s=ctx.mutant_timeout_s, hard_negatives=ctx.hard_negatives,
                             equivalence_settings=ctx.equivalence)
    except Exception as e:
        return [Control(job.ref.task_id, "self", 0, job.ref.system_text),
                Control(job.ref.task_id, "build_error", 0, "", valid=False, detail=f"{type(e).__name__}: {e}")]
    runner.store_extra(key, {"controls": [dataclasses.asdict(c) for c in out]})
    return out


def _reference_json(ref: Reference | None) -> list | None:
    if ref is None:
        return None
    return [ref.task_id, ref.condition, ref.system_module, ref.model_module, ref.wrapper_module,
            list(ref.author_modules), ref.pluscal, ref.cfg_text,
            sorted((k, hashlib.sha256(v.encode()).hexdigest()) for k, v in ref.files.items())]


def _generator_code_version() -> str:
    """sha256 of the grader's code and of the control generators (:data:`CONTROL_GENERATORS`)."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(grader_code_version().encode())
    for rel in CONTROL_GENERATORS:
        p = root / rel
        for f in sorted(p.rglob("*.py")) if p.is_dir() else [p]:
            h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def build_key(ctx: BuildContext, job: BuildJob) -> str:
    """sha256 of everything one task's build depends on: the reference and its renamed copy
    (files, cfg, modules), the seed, the mutant, hard-negative and equivalence settings, the
    tool settings (:func:`alias.grade.run.tool_settings`) and the code of the grader and the
    control generators."""
    payload = {"build": 1, "ref": _reference_json(job.ref), "renamed": _reference_json(job.renamed),
               "seed": ctx.seed, "mutants": [ctx.max_mutants_tried, ctx.max_mutants_kept, ctx.mutant_timeout_s],
               "hard": None if ctx.hard_negatives is None else dataclasses.asdict(ctx.hard_negatives),
               "equivalence": dataclasses.asdict(ctx.equivalence), "tools": tool_settings(ctx.tools),
               "code": _generator_code_version()}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=list).encode()).hexdigest()


def _control_from_json(d: dict) -> Control:
    side = d.get("side")
    return Control(**{**d, "side": None if side is None else OutputSide(**side)})


def run_controls(refs: dict[tuple[str, str], Reference], runner: ToolRunner, out_dir: Path, *,
                 journal: Path | None = None, seed: int, max_mutants_tried: int, max_mutants_kept: int,
                 mutant_timeout_s: float, parallel: int = 1, max_maps: int = 60, tasks: list[str] | None = None,
                 progress=None, retry_timeouts: bool = False, executor: Executor | None = None,
                 grades: dict | None = None, hard_negatives: HardNegativesConfig | None = None,
                 equivalence_settings: EquivalenceSettings | None = None) -> dict:
    """Build and grade every control; write ``eligibility``, ``control_samples``,
    ``samples`` and ``verdicts`` Parquet files under ``out_dir``; return summary counts
    (Table J.1).  ``retry_timeouts``: see :func:`alias.grade.run.grade_samples`.

    Building and grading run on ``executor`` (default: a local pool of ``parallel``
    processes). Tasks are processed in chunks of ``8 * parallel`` (cheapest first, by the manifest
    runtime order of ``tasks``); the Parquet files are rewritten after every chunk, so a
    long run can be read while it goes and a killed one resumes from its journal and
    tool cache.  Only ``control:self`` gets the parse and name grades (the name grade
    must accept every reference with its own cfg); every control gets ``behavior`` (the
    configured procedure) and ``behavior_renaming`` (the paper's). ``grades``: configured
    grade instances (:func:`alias.grade.registry.make_grades`; default: the registry's
    default instances of :data:`CONTROL_GRADES`). ``hard_negatives``: settings of the hard
    negatives (:func:`hard_negative_controls`; None = none built). ``equivalence_settings``:
    the equivalence controls (none by default).
    """
    out_dir = Path(out_dir)
    if hard_negatives is not None:
        check_operators(hard_negatives.operators)
    task_ids = sorted({t for t, c in refs if c == "original"}) if tasks is None else list(tasks)
    elig_rows = []
    eligible: list[str] = []
    for t in task_ids:
        ok, why = eligibility(refs[(t, "original")])
        elig_rows.append({"task_id": t, "eligible": ok, "reason": why})
        if ok:
            eligible.append(t)

    ctx = BuildContext(runner.config, runner.cache_dir if executor is None or executor.shares_files else None,
                       seed, max_mutants_tried, max_mutants_kept, mutant_timeout_s, hard_negatives,
                       equivalence_settings or EquivalenceSettings())
    pool = executor or LocalExecutor(max(1, parallel))
    controls: list[Control] = []
    verdicts = pd.DataFrame()
    step = max(1, 8 * parallel)  # each chunk ends at its slowest build and slowest grading: few chunks
    try:
        for i in range(0, max(len(eligible), 1), step):
            jobs = [BuildJob(refs[(t, "original")], refs.get((t, "random"))) for t in eligible[i:i + step]]
            built = dict(pool.run(build_job, ctx, jobs))
            for j in range(len(jobs)):  # in task order, whatever order the workers finished in
                controls += built[j]
                if progress is not None:
                    progress("build")
            verdicts = _grade_and_write(controls, elig_rows, refs, runner, out_dir, journal, parallel, max_maps,
                                        progress, retry_timeouts, pool, grades)
    finally:
        if executor is None:
            pool.close()
    return summarize(elig_rows, pd.DataFrame(_control_rows(controls), columns=["task_id", "kind", "valid", "detail"]),
                     verdicts)


def _control_rows(controls: list[Control]) -> list[dict]:
    rows = [{"task_id": c.task_id, "kind": c.kind, "model": f"control:{c.kind}", "sample_idx": c.sample_idx,
             "valid": c.valid, "detail": c.detail, "mutant_kind": c.mutant_kind, "mutant_id": c.mutant_id,
             "reference_states": c.reference_states, "control_states": c.control_states,
             "equiv_class": c.equiv_class, "variant_id": c.variant_id, "known_mapping": c.known_mapping}
            for c in controls]
    return sorted(rows, key=lambda r: (r["task_id"], r["kind"], r["sample_idx"]))


def _grade_and_write(controls, elig_rows, refs, runner, out_dir: Path, journal: Path | None, parallel: int,
                     max_maps: int, progress, retry_timeouts: bool = False,
                     executor: Executor | None = None, grades: dict | None = None) -> pd.DataFrame:
    samples, sides = [], {}
    for c in controls:
        if not c.valid or c.kind == "build_error":
            continue
        s = {"task_id": c.task_id, "condition": "original", "model": f"control:{c.kind}",
             "sample_idx": c.sample_idx, "text": c.text}
        samples.append(s)
        if c.side is not None:
            sides[(c.task_id, "original", s["model"], c.sample_idx)] = c.side
    write_table(elig_rows, ControlEligibility, out_dir / "eligibility.parquet")
    write_table(_control_rows(controls), ControlSample, out_dir / "control_samples.parquet")
    write_table(sorted(samples, key=lambda r: (r["task_id"], r["model"], r["sample_idx"])), Sample,
                out_dir / "samples.parquet")
    return grade_samples(samples, refs, runner, out_dir, journal=journal, parallel=parallel, max_maps=max_maps,
                         outputs=sides, reference_for=lambda s: refs.get((s["task_id"], "original")),
                         grades_for=lambda s: GRADES_FOR.get(s["model"], BEHAVIOR_GRADES),
                         grades=grades if grades is not None else CONTROL_GRADES,
                         progress=(lambda: progress("grade")) if progress else None,
                         retry_timeouts=retry_timeouts, executor=executor)


#: The behavior grade under both procedures: the configured one and the paper's.
BEHAVIOR_GRADES = ("behavior", "behavior_renaming")
#: Every grade a control gets; the name grade only matters for the reference itself.
CONTROL_GRADES = ("parse", "name") + BEHAVIOR_GRADES
GRADES_FOR = {"control:self": CONTROL_GRADES}


def summarize(elig_rows: list[dict], cs_df: pd.DataFrame, verdicts: pd.DataFrame) -> dict:
    """Table J.1 counts from the control tables (the view ``v_table_j1`` computes the same)."""
    beh = verdicts[verdicts.grade == "behavior"]
    out = {"tasks": len(elig_rows), "eligible": int(sum(r["eligible"] for r in elig_rows))}
    for kind in ("self", "renamed", "oprenamed", "mutant"):
        b = beh[beh.model == f"control:{kind}"]
        out[kind] = {"n": int(len(b)), "passed": int(b.passed.fillna(False).astype(bool).sum())}
    mk = cs_df[(cs_df.kind == "mutant") & cs_df.valid.astype(bool)]
    out["mutant"]["tasks"] = int(mk.task_id.nunique())
    op = cs_df[cs_df.kind == "oprenamed"]
    out["oprenamed"]["invalid"] = op.loc[~op.valid.astype(bool), "detail"].fillna("").str.split(":").str[0] \
        .value_counts().to_dict()
    out[HARDNEG] = _summarize_hard_negatives(cs_df, verdicts)
    out["equivalence"] = _equivalence_summary(cs_df, verdicts)
    return out


def _summarize_hard_negatives(cs_df: pd.DataFrame, verdicts: pd.DataFrame) -> dict:
    """Kept hard negatives, their tasks, and how many each procedure accepted
    (``passed``: the configured ``behavior`` grade; ``passed_renaming``: the paper's)."""
    kept = cs_df[(cs_df.kind == HARDNEG) & cs_df.valid.astype(bool)]
    v = verdicts[verdicts.model == f"control:{HARDNEG}"] if len(verdicts) else verdicts
    out = {"n": len(kept), "tasks": int(kept.task_id.nunique())}
    for key, grade in (("passed", "behavior"), ("passed_renaming", "behavior_renaming")):
        g = v[v.grade == grade] if len(v) else v
        out[key] = int(g.passed.fillna(False).astype(bool).sum()) if len(g) else 0
    return out


def _equivalence_summary(cs_df: pd.DataFrame, verdicts: pd.DataFrame) -> dict:
    """Table J.2 counts: per class, kept variants and how many each behavior grade accepts."""
    out = {}
    kinds = sorted(k for k in cs_df.kind.unique() if str(k).startswith("equiv_"))
    for kind in kinds:
        kept = cs_df[(cs_df.kind == kind) & cs_df.valid.astype(bool)]
        row = {"kept": int(len(kept)), "tasks": int(kept.task_id.nunique())}
        for grade in BEHAVIOR_GRADES:
            g = verdicts[(verdicts.model == f"control:{kind}") & (verdicts.grade == grade)] if len(verdicts) else verdicts
            row[grade] = int(g.passed.fillna(False).astype(bool).sum()) if len(g) else 0
        out[kind[len("equiv_"):]] = row
    return out
