"""The meaningful-names condition over a test set (paper, Appendix R).

For every test-set task: build the naming prompt (:func:`naming_prompt`), get one proposal
from the proposer (:func:`alias.rename.proposers.propose`; one request per task, no
retry), parse and validate the map (:func:`parse_name_map`), apply it
(:func:`apply_meaningful_map`) and re-verify the copy with strict SANY and TLC against
the original's TLC outcome kind, distinct states and depth from the verify stage
(:func:`verify_meaningful`), as the random copy was verified.

:class:`MeaningfulRun` holds the rows of the four tables the ``meaningful`` stage writes
(:class:`~alias.store.models.MeaningfulProposal`, ``MeaningfulTask``,
``MeaningfulMapRow``, ``MeaningfulModule``). A task's ``reason`` is ``None`` when it
verified, else ``no_reply``, ``invalid_map``, ``rename_error``, ``apply_error``,
``verify_error`` (the check raised) or a :class:`MeaningfulVerification` reason such as
``sany_meaningful``, ``tlc_meaningful_<kind>``, ``state_mismatch``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from alias.corpus.testset import TestSet
from alias.rename.cir import RenameError
from alias.rename.corpus import text_similarity
from alias.rename.meaningful import (NAMING_PROMPT_VERSION, MeaningfulVerification, NameProblem, apply_meaningful_map,
                                     compose_map, meaningful_identifiers, naming_prompt, parse_name_map,
                                     verify_meaningful)
from alias.rename.proposers import NamingReply, NamingRequest, spec_names
from alias.tla.executor import Executor, LocalExecutor
from alias.tla.tools import ToolConfig

__all__ = ["MeaningfulRun", "naming_requests", "apply_replies", "verify_copies", "write_verified_files"]


def _int(v: Any) -> int | None:
    try:
        return None if v is None or pd.isna(v) else int(v)
    except (TypeError, ValueError):
        return None


def _problems_json(problems) -> str:
    return json.dumps([asdict(p) for p in problems], sort_keys=True)


@dataclass
class MeaningfulRun:
    """The state of one run: the rows of its tables and, per task, what the next step needs
    (``ctx``: the task row, author and library modules, identifiers, prompt, expected
    names; ``results``: the applied :class:`MeaningfulResult` per task)."""

    base: dict[str, Any]
    proposals: list[dict] = field(default_factory=list)
    tasks: dict[str, dict] = field(default_factory=dict)
    maps: list[dict] = field(default_factory=list)
    modules: list[dict] = field(default_factory=list)
    ctx: dict[str, dict] = field(default_factory=dict)
    results: dict[str, Any] = field(default_factory=dict)

    def status(self) -> dict[str, Any]:
        """The run's counts: tasks, replies, valid maps, applied, verified, reasons."""
        rows = list(self.tasks.values())
        reasons: dict[str, int] = {}
        for r in rows:
            if not r["verified"]:
                reasons[r["reason"]] = reasons.get(r["reason"], 0) + 1
        return {"tasks": len(rows), "replies": sum(1 for p in self.proposals if p.get("reply") is not None),
                "valid_maps": sum(1 for p in self.proposals if p["valid"]), "applied": len(self.results),
                "verified": sum(1 for r in rows if r["verified"]), "reasons": dict(sorted(reasons.items()))}


def _random_view(testset: TestSet, t: Any, libs: dict[str, str]) -> tuple[str, tuple, dict, set[str]]:
    """Prompt, listed names, context and names to avoid of a task shown as its CIR copy."""
    rt = testset.renamed_ok().loc[t.task_id]
    rmods = testset.renamed_modules[testset.renamed_modules.task_id == t.task_id]
    shown = {r.module: r.text for r in rmods.itertuples() if r.role != "library"}
    m = testset.rename_map[testset.rename_map.task_id == t.task_id]
    rows = [{"name": r.old, "new_name": r.new, "module": r.module, "kind": r.kind} for r in m.itertuples()]
    prompt = naming_prompt({"modules": shown, "cfg_text": rt.cfg_text, "model_module": rt.model_module}, rows,
                           view="random")
    listed = tuple({"name": r["new_name"], "kind": r["kind"], "module": r["module"]} for r in rows)
    ctx = {"random_map": {r["name"]: r["new_name"] for r in rows}, "expected": [r["new_name"] for r in rows],
           "originals": {r["name"] for r in rows} | {r["new_name"] for r in rows}}
    return prompt, listed, ctx, spec_names(list(shown.values()) + list(libs.values()))


def naming_requests(testset: TestSet, view: str, only: set[str], base: dict[str, Any]) -> tuple[MeaningfulRun, list]:
    """A :class:`MeaningfulRun` with a row per test-set task (restricted to ``only`` when
    given) and the :class:`NamingRequest` of every task whose identifiers could be listed
    (the others fail with ``rename_error``)."""
    run, requests = MeaningfulRun(base), []
    tasks = testset.test_tasks()
    for t in tasks[tasks.task_id.isin(only)].itertuples() if only else tasks.itertuples():
        author = testset.module_texts(t.task_id, library=False)
        libs = testset.module_texts(t.task_id, library=True)
        run.tasks[t.task_id] = {"task_id": t.task_id, "verified": False, "applied": False}
        try:
            ids = meaningful_identifiers(author, set(author), t.cfg_text, libs)
        except Exception as e:  # RenameError or a bug on odd input: this task only
            e = RenameError(f"{type(e).__name__}: {e}") if not isinstance(e, RenameError) else e
            run.tasks[t.task_id].update(reason="rename_error", detail=str(e))
            run.proposals.append(base | {"task_id": t.task_id, "prompt_version": NAMING_PROMPT_VERSION,
                                         "reply_status": "not_asked", "mapping": "{}", "valid": False,
                                         "problems": _problems_json([NameProblem("rename_error", None, str(e))])})
            continue
        c = {"task": t, "author": author, "libs": libs, "ids": ids}
        if view == "random":
            prompt, listed, extra, avoid = _random_view(testset, t, libs)
            c |= extra
        else:
            prompt = naming_prompt({"modules": author, "cfg_text": t.cfg_text, "model_module": t.model_module},
                                   ids, view="original")
            listed = tuple({"name": r["name"], "kind": r["kind"], "module": r["module"]} for r in ids)
            c |= {"expected": sorted({r["name"] for r in ids}), "originals": None}
            avoid = spec_names(list(author.values()) + list(libs.values()))
        run.ctx[t.task_id] = c | {"prompt": prompt}
        requests.append(NamingRequest(t.task_id, prompt, listed, frozenset(avoid)))
    return run, requests


def _apply_one(run: MeaningfulRun, req: NamingRequest, mapping: dict[str, str]) -> None:
    """Apply a valid map to one task; record the applied map and the renamed names."""
    c, row = run.ctx[req.task_id], run.tasks[req.task_id]
    t = c["task"]
    try:
        res = apply_meaningful_map(c["author"], t.cfg_text, t.description or "", mapping, author=set(c["author"]),
                                   library_modules=c["libs"])
    except Exception as e:  # a bug on odd input: excludes this task only, recorded
        row.update(reason="apply_error", detail=f"{type(e).__name__}: {e}")
        return
    if not res.ok:
        row.update(reason="apply_error", detail=res.error)
        return
    run.results[req.task_id] = res
    kinds: dict[str, dict] = {}
    for r in c["ids"]:
        kinds.setdefault(r["name"], r)
    run.maps += [{"task_id": req.task_id, "old": old, "new": mapping[old], "module": res.module(kinds[old]["module"]),
                  "kind": kinds[old]["kind"]} for old in sorted(mapping)]
    wrapper = t.wrapper_module if isinstance(t.wrapper_module, str) and t.wrapper_module else None
    new_sys = res.module(t.system_module)
    row.update(applied=True, system_module=new_sys, model_module=res.module(t.model_module),
               wrapper_module=res.module(wrapper) if wrapper else None, cfg_text=res.cfg_text,
               description=res.description, n_renamed=len(mapping),
               text_similarity=text_similarity(c["author"][t.system_module], res.modules[new_sys]))


def apply_replies(run: MeaningfulRun, requests: list[NamingRequest], replies: list[NamingReply], view: str) -> None:
    """Parse, validate and apply every reply (proposal rows; failing tasks get
    ``no_reply``, ``invalid_map`` or ``apply_error``)."""
    for req, rep in zip(requests, replies):
        c, row = run.ctx[req.task_id], run.tasks[req.task_id]
        prop = run.base | {"task_id": req.task_id, "prompt_version": NAMING_PROMPT_VERSION,
                           "prompt_sha256": hashlib.sha256(req.prompt.encode()).hexdigest(),
                           "n_identifiers": len(c["expected"]), "reply_status": rep.status, "reply": rep.text,
                           "response_model": rep.response_model}
        run.proposals.append(prop)
        if rep.text is None:
            prop.update(mapping="{}", valid=False,
                        problems=_problems_json([NameProblem("no_reply", None, rep.error or rep.status)]))
            row.update(reason="no_reply", detail=rep.error or rep.status)
            continue
        reply_map, problems = parse_name_map(rep.text, c["expected"], original_names=c["originals"],
                                             taken=set(c["libs"]))
        prop.update(mapping=json.dumps(reply_map, sort_keys=True), problems=_problems_json(problems),
                    valid=not problems)
        if problems:
            row.update(reason="invalid_map", detail="; ".join(str(p) for p in problems[:10]))
            continue
        _apply_one(run, req, compose_map(c["random_map"], reply_map) if view == "random" else reply_map)


@dataclass(frozen=True)
class CopyCheck:
    """One applied meaningful copy to re-verify, self-contained for any worker: the
    original's files, its model module and cfg, the rename result and the original's TLC
    outcome."""

    task_id: str
    files: dict[str, str]
    model_module: str
    cfg_text: str
    result: Any
    original: dict


def check_copy_job(config: ToolConfig, job: CopyCheck) -> MeaningfulVerification:
    """:func:`verify_meaningful` in a worker; a check that raises is ``verify_error``."""
    try:
        return verify_meaningful(job.files, job.model_module, job.cfg_text, job.result, config,
                                 original=job.original)
    except Exception as e:  # keep every other task's result
        return MeaningfulVerification(False, "verify_error", f"{type(e).__name__}: {e}", job.original)


def verify_copies(run: MeaningfulRun, testset: TestSet, config: ToolConfig, executor: Executor | None = None,
                  progress: Callable[[], None] | None = None) -> None:
    """Re-verify every applied copy with SANY + TLC against the original's outcome, on
    ``executor`` (default: one local thread); the task rows get the verification's fields."""
    ts = testset.membership.set_index("task_id")
    jobs = []
    for tid in sorted(run.results):
        c, o = run.ctx[tid], ts.loc[tid]
        original = {"kind": o.original_kind, "distinct_states": _int(o.original_distinct_states),
                    "depth": _int(o.original_depth)}
        jobs.append(CopyCheck(tid, {f"{k}.tla": v for k, v in (c["author"] | c["libs"]).items()},
                              c["task"].model_module, c["task"].cfg_text, run.results[tid], original))
    for i, v in (executor or LocalExecutor(1)).run(check_copy_job, config, jobs):
        tid = jobs[i].task_id
        run.tasks[tid].update({k: val for k, val in v.to_row(tid).items() if k != "task_id"})
        if progress is not None:
            progress()


def write_verified_files(run: MeaningfulRun, testset: TestSet, files_dir: Path) -> None:
    """Write the renamed modules and cfg of every verified copy under
    ``files_dir/<task_id>/`` and add their ``meaningful_modules`` rows."""
    for tid in sorted(run.results):
        row, res = run.tasks[tid], run.results[tid]
        if not row["verified"]:
            continue
        tdir = files_dir / tid
        tdir.mkdir(parents=True, exist_ok=True)
        mods = testset.modules[testset.modules.task_id == tid]
        roles = dict(zip(mods.module, mods.role))
        original_of = {v: k for k, v in res.module_names.items()}
        for new, text in sorted(res.modules.items()):
            p = tdir / f"{new}.tla"
            p.write_text(text, encoding="utf-8")
            old = original_of.get(new, new)
            run.modules.append({"task_id": tid, "module": new, "original_module": old, "role": roles.get(old, "utility"),
                                "path": p.as_posix(), "text": text, "sha256": hashlib.sha256(text.encode()).hexdigest()})
        (tdir / f"{row['model_module']}.cfg").write_text(res.cfg_text or "", encoding="utf-8")
