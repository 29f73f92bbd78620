"""The ``meaningful`` DVC stage: the third renaming condition (paper, Appendix R).

For every test-set task (``data/verify/test_set.parquet``, ``in_test_set``): build the
naming prompt (:func:`alias.rename.meaningful.naming_prompt`), get one proposal from the
proposer of ``params.meaningful.proposer`` (:mod:`alias.rename.proposers`; one request
per task, no retry), parse and validate the map (:func:`parse_name_map`), apply it
(:func:`apply_meaningful_map`) and re-verify the copy with strict SANY and TLC against
the original's TLC outcome kind, distinct states and depth from the verify stage
(:func:`verify_meaningful`), as the random copy was verified.

Writes ``data/meaningful/`` (the folder is a ``persist`` output, so the batch ledger
``ledger.sqlite`` survives reruns; every other file is rewritten):

``proposals.parquet``
    One row per task: ``task_id, proposer, model, response_model, view, prompt_version,
    prompt_sha256, n_identifiers, reply_status, reply, mapping`` (JSON, old -> new,
    keyed as the reply is: random names in the ``'random'`` view), ``problems`` (JSON
    list of ``{kind, name, detail}``, the :class:`NameProblem` kinds plus ``no_reply``
    when the proposer gave no text; ``[]`` for a usable map) and ``valid``.
``meaningful_tasks.parquet``
    One row per task: ``verified`` and ``reason`` (``None`` when verified; else
    ``no_reply``, ``invalid_map``, ``rename_error``, ``apply_error``, ``verify_error`` (the
    check raised) or a :class:`MeaningfulVerification` reason such as ``sany_meaningful``,
    ``tlc_meaningful_<kind>``, ``state_mismatch``), ``detail``, the renamed module names,
    cfg and description (for an applied map), counts and both TLC outcomes.
``meaningful_map.parquet``
    The applied maps, one row per renamed name: ``task_id, old, new, module, kind``
    (the shape of ``rename_map``).
``meaningful_modules.parquet`` and ``files/<task_id>/``
    The renamed author modules and cfg of the verified tasks (``renamed_modules`` shape).
``status.json``
    ``{"status": "ok" | "missing_credentials", "proposer", "model", "view", "message",
    counts}``.  Without the proposer's API key the stage prints one line, writes the
    four tables empty (with their columns) and this file, and succeeds.  A batch still
    running after ``meaningful.batch_timeout_s`` (0: wait) raises
    :class:`alias.generate.types.PollTimeout` (the stage fails; a rerun resumes from the
    ledger).

The default proposer, ``lexicon``, is an offline deterministic stand-in for the LLM
(see :mod:`alias.rename.proposers`); its numbers are not the paper's condition.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import shutil
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pandas as pd

from alias.progress import progress_bar
from alias.store.db import read_parquet, write_parquet

__all__ = ["meaningful_stage", "PROPOSAL_COLUMNS", "TASK_COLUMNS", "MAP_COLUMNS", "MODULE_COLUMNS",
           "LEDGER_NAME"]

PROPOSAL_COLUMNS = ["task_id", "proposer", "model", "response_model", "view", "prompt_version", "prompt_sha256",
                    "n_identifiers", "reply_status", "reply", "mapping", "problems", "valid"]
TASK_COLUMNS = ["task_id", "verified", "reason", "detail", "applied", "system_module", "model_module",
                "wrapper_module", "cfg_text", "description", "n_renamed", "text_similarity",
                "original_kind", "original_distinct_states", "original_depth", "meaningful_kind",
                "meaningful_distinct_states", "meaningful_depth"]
MAP_COLUMNS = ["task_id", "old", "new", "module", "kind"]
MODULE_COLUMNS = ["task_id", "module", "original_module", "role", "path", "text", "sha256"]
LEDGER_NAME = "ledger.sqlite"
_INT_COLUMNS = ("n_renamed", "original_distinct_states", "original_depth", "meaningful_distinct_states",
                "meaningful_depth")


def _int(v):
    try:
        return None if v is None or pd.isna(v) else int(v)
    except (TypeError, ValueError):
        return None


def _problems_json(problems) -> str:
    return json.dumps([asdict(p) for p in problems], sort_keys=True)


def _write_tables(out: Path, proposals: list[dict], tasks: list[dict], maps: list[dict], mods: list[dict]) -> None:
    p = pd.DataFrame(proposals, columns=PROPOSAL_COLUMNS).sort_values("task_id").reset_index(drop=True)
    p["n_identifiers"] = p["n_identifiers"].astype("Int64")
    p["valid"] = p["valid"].astype(bool)
    t = pd.DataFrame(tasks, columns=TASK_COLUMNS).sort_values("task_id").reset_index(drop=True)
    for c in _INT_COLUMNS:
        t[c] = t[c].astype("Int64")
    t["verified"] = t["verified"].astype(bool)
    t["applied"] = t["applied"].astype(bool)
    t["text_similarity"] = t["text_similarity"].astype("float64")
    write_parquet(p, out / "proposals.parquet")
    write_parquet(t, out / "meaningful_tasks.parquet")
    write_parquet(pd.DataFrame(maps, columns=MAP_COLUMNS), out / "meaningful_map.parquet")
    write_parquet(pd.DataFrame(mods, columns=MODULE_COLUMNS), out / "meaningful_modules.parquet")


def _status(out: Path, status: dict) -> None:
    (out / "status.json").write_text(json.dumps(status, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def meaningful_stage(params: dict, ingest_dir: Path = Path("data/ingest"), rename_dir: Path = Path("data/rename"),
                     verify_dir: Path = Path("data/verify"), out: Path = Path("data/meaningful"),
                     *, config=None) -> dict[str, Any]:
    """Run the meaningful-renaming condition over the test set (see the module docstring).

    ``params``: the DVC params (``meaningful``, ``tla``, ``corpus.library``).
    ``config``: a :class:`alias.tla.tools.ToolConfig` (default: from ``params``).
    Returns ``{'status', 'tasks', 'replies', 'valid_maps', 'applied', 'verified',
    'reasons'}`` (``reasons``: failure reason -> tasks).  Raises
    :class:`alias.rename.proposers.ProposerError` for a bad proposer spec and the batch
    errors of :func:`alias.generate.batches.run_batch` other than missing credentials.
    """
    from alias.generate.types import MissingCredentials
    from alias.rename.cir import RenameError
    from alias.rename.meaningful import (
        NAMING_PROMPT_VERSION, MeaningfulVerification, NameProblem, apply_meaningful_map, compose_map, meaningful_identifiers,
        naming_prompt, parse_name_map, verify_meaningful,
    )
    from alias.rename.proposers import NamingRequest, ProposerError, propose, proposer_spec, spec_names

    m = params.get("meaningful") or {}
    spec = proposer_spec(m.get("proposer"))
    view = m.get("view") or "original"
    if view not in ("original", "random"):
        raise ProposerError(f"meaningful.view must be 'original' or 'random', not {view!r}")
    only = set(m.get("tasks") or [])
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files_dir = out / "files"
    if files_dir.exists():
        shutil.rmtree(files_dir)

    tasks = read_parquet(Path(ingest_dir) / "tasks.parquet")
    modules = read_parquet(Path(ingest_dir) / "modules.parquet")
    ts = read_parquet(Path(verify_dir) / "test_set.parquet").set_index("task_id")
    keep = set(ts.index[ts.in_test_set.astype(bool)])
    tasks = tasks[tasks.task_id.isin(keep) & (tasks.task_id.isin(only) if only else True)]
    if view == "random":
        rtasks = read_parquet(Path(rename_dir) / "renamed_tasks.parquet").set_index("task_id")
        rmods = read_parquet(Path(rename_dir) / "renamed_modules.parquet")
        rmap = read_parquet(Path(rename_dir) / "rename_map.parquet")

    base = {"proposer": spec["backend"], "model": spec["model"], "view": view}
    proposals: list[dict] = []
    task_rows: dict[str, dict] = {}
    ctx: dict[str, dict] = {}
    requests: list[NamingRequest] = []
    for t in tasks.itertuples():
        mods = modules[modules.task_id == t.task_id]
        author = {r.module: r.text for r in mods.itertuples() if r.role != "library"}
        libs = {r.module: r.text for r in mods.itertuples() if r.role == "library"}
        row = {c: None for c in TASK_COLUMNS} | {"task_id": t.task_id, "verified": False, "applied": False}
        task_rows[t.task_id] = row
        try:
            ids = meaningful_identifiers(author, set(author), t.cfg_text, libs)
        except Exception as e:  # RenameError or a bug on odd input: this task only
            e = RenameError(f"{type(e).__name__}: {e}") if not isinstance(e, RenameError) else e
            row.update(reason="rename_error", detail=str(e))
            proposals.append(base | {"task_id": t.task_id, "prompt_version": NAMING_PROMPT_VERSION,
                                     "reply_status": "not_asked", "mapping": "{}", "valid": False,
                                     "problems": _problems_json([NameProblem("rename_error", None, str(e))])})
            continue
        c = {"task": t, "author": author, "libs": libs, "ids": ids}
        if view == "random":
            rt = rtasks.loc[t.task_id]
            shown = {r.module: r.text for r in rmods[rmods.task_id == t.task_id].itertuples() if r.role != "library"}
            rows = [{"name": r.old, "new_name": r.new, "module": r.module, "kind": r.kind}
                    for r in rmap[rmap.task_id == t.task_id].itertuples()]
            prompt = naming_prompt({"modules": shown, "cfg_text": rt.cfg_text, "model_module": rt.model_module},
                                   rows, view="random")
            listed = tuple({"name": r["new_name"], "kind": r["kind"], "module": r["module"]} for r in rows)
            c.update(random_map={r["name"]: r["new_name"] for r in rows}, expected=[r["new_name"] for r in rows],
                     originals={r["name"] for r in rows} | {r["new_name"] for r in rows})
            avoid = spec_names(list(shown.values()) + list(libs.values()))
        else:
            prompt = naming_prompt({"modules": author, "cfg_text": t.cfg_text, "model_module": t.model_module},
                                   ids, view="original")
            listed = tuple({"name": r["name"], "kind": r["kind"], "module": r["module"]} for r in ids)
            c.update(expected=sorted({r["name"] for r in ids}), originals=None)
            avoid = spec_names(list(author.values()) + list(libs.values()))
        c["prompt"] = prompt
        ctx[t.task_id] = c
        requests.append(NamingRequest(t.task_id, prompt, listed, frozenset(avoid)))

    try:
        replies = propose(requests, spec, ledger=out / LEDGER_NAME,
                          poll_interval_s=float(m.get("poll_interval_s", 60)),
                          timeout_s=(float(m["batch_timeout_s"]) if m.get("batch_timeout_s") else None))
    except MissingCredentials as e:
        msg = f"meaningful: skipped, {e}"
        print(msg)
        _write_tables(out, [], [], [], [])
        status = base | {"status": "missing_credentials", "message": msg, "tasks": 0, "replies": 0,
                         "valid_maps": 0, "applied": 0, "verified": 0, "reasons": {}}
        _status(out, status)
        return status

    results: dict[str, Any] = {}
    maps: list[dict] = []
    for req, rep in zip(requests, replies):
        c = ctx[req.task_id]
        t, row = c["task"], task_rows[req.task_id]
        prop = base | {"task_id": req.task_id, "prompt_version": NAMING_PROMPT_VERSION,
                       "prompt_sha256": hashlib.sha256(req.prompt.encode()).hexdigest(),
                       "n_identifiers": len(c["expected"]), "reply_status": rep.status, "reply": rep.text,
                       "response_model": rep.response_model}
        if rep.text is None:
            problems = [NameProblem("no_reply", None, rep.error or rep.status)]
            prop.update(mapping="{}", problems=_problems_json(problems), valid=False)
            row.update(reason="no_reply", detail=rep.error or rep.status)
            proposals.append(prop)
            continue
        reply_map, problems = parse_name_map(rep.text, c["expected"], original_names=c["originals"],
                                             taken=set(c["libs"]))
        prop.update(mapping=json.dumps(reply_map, sort_keys=True), problems=_problems_json(problems),
                    valid=not problems)
        proposals.append(prop)
        if problems:
            row.update(reason="invalid_map", detail="; ".join(str(p) for p in problems[:10]))
            continue
        mapping = compose_map(c["random_map"], reply_map) if view == "random" else reply_map
        try:
            res = apply_meaningful_map(c["author"], t.cfg_text, t.description or "", mapping,
                                       author=set(c["author"]), library_modules=c["libs"])
        except Exception as e:  # a bug on odd input: excludes this task only, recorded
            row.update(reason="apply_error", detail=f"{type(e).__name__}: {e}")
            continue
        if not res.ok:
            row.update(reason="apply_error", detail=res.error)
            continue
        results[req.task_id] = res
        kinds = {}
        for r in c["ids"]:
            kinds.setdefault(r["name"], r)
        for old in sorted(mapping):
            maps.append({"task_id": req.task_id, "old": old, "new": mapping[old],
                         "module": res.module(kinds[old]["module"]), "kind": kinds[old]["kind"]})
        wrapper = t.wrapper_module if isinstance(t.wrapper_module, str) and t.wrapper_module else None
        new_sys = res.module(t.system_module)
        row.update(applied=True, system_module=new_sys, model_module=res.module(t.model_module),
                   wrapper_module=res.module(wrapper) if wrapper else None, cfg_text=res.cfg_text,
                   description=res.description, n_renamed=len(mapping),
                   text_similarity=difflib.SequenceMatcher(None, c["author"][t.system_module].split(),
                                                           res.modules[new_sys].split(), autojunk=False).ratio())

    if config is None:
        from alias.stages import tool_config
        from alias.tla.tools import check_java

        config = tool_config(params)
        if results:
            check_java(config)

    def job(task_id: str):
        c, res = ctx[task_id], results[task_id]
        t = c["task"]
        o = ts.loc[task_id]
        original = {"kind": o.original_kind, "distinct_states": _int(o.original_distinct_states),
                    "depth": _int(o.original_depth)}
        files = {f"{k}.tla": v for k, v in (c["author"] | c["libs"]).items()}
        try:
            return task_id, verify_meaningful(files, t.model_module, t.cfg_text, res, config, original=original)
        except Exception as e:  # keep every other task's result
            return task_id, MeaningfulVerification(False, "verify_error", f"{type(e).__name__}: {e}", original)

    mod_rows: list[dict] = []
    parallel = max(1, int(params.get("tla", {}).get("parallel", 1)))
    with progress_bar("meaningful", total=len(results)) as bar, ThreadPoolExecutor(parallel) as pool:
        futs = [pool.submit(job, tid) for tid in sorted(results)]
        for f in as_completed(futs):
            tid, v = f.result()
            row = task_rows[tid]
            vr = v.to_row(tid)
            row.update({k: vr[k] for k in TASK_COLUMNS if k in vr and k not in ("task_id",)})
            bar.advance()
    for tid in sorted(results):
        row, res, c = task_rows[tid], results[tid], ctx[tid]
        if not row["verified"]:
            continue
        tdir = files_dir / tid
        tdir.mkdir(parents=True, exist_ok=True)
        roles = dict(modules.loc[modules.task_id == tid, ["module", "role"]].itertuples(index=False))
        original_of = {v: k for k, v in res.module_names.items()}
        for new, text in sorted(res.modules.items()):
            p = tdir / f"{new}.tla"
            p.write_text(text, encoding="utf-8")
            old = original_of.get(new, new)
            mod_rows.append({"task_id": tid, "module": new, "original_module": old,
                             "role": roles.get(old, "utility"), "path": str(p), "text": text,
                             "sha256": hashlib.sha256(text.encode()).hexdigest()})
        (tdir / f"{row['model_module']}.cfg").write_text(res.cfg_text or "", encoding="utf-8")

    rows = list(task_rows.values())
    _write_tables(out, proposals, rows, maps, mod_rows)
    reasons: dict[str, int] = {}
    for r in rows:
        if not r["verified"]:
            reasons[r["reason"]] = reasons.get(r["reason"], 0) + 1
    status = base | {"status": "ok", "message": None, "tasks": len(rows),
                     "replies": sum(1 for p in proposals if p.get("reply") is not None),
                     "valid_maps": sum(1 for p in proposals if p["valid"]), "applied": len(results),
                     "verified": sum(1 for r in rows if r["verified"]),
                     "reasons": dict(sorted(reasons.items()))}
    _status(out, status)
    return status

