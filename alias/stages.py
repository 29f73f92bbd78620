"""The DVC stages of the test-set pipeline: ingest -> rename -> verify -> identifiers ->
load -> report (paper, Methods "Renaming" ... "Hidden required names"; Appendices C, G, K).

Each stage reads the Parquet outputs of earlier stages and writes its own, never another
stage's. Every function returns a small summary dict (printed by the CLI).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import shutil
import statistics
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import pandas as pd

from alias.progress import progress_bar
from alias.store.db import read_parquet, write_parquet

DATA = Path("data")


# ----------------------------------------------------------------------------- ingest
def ingest_stage(params: dict, out: Path = DATA / "ingest") -> dict[str, Any]:
    """Ingest ``params.corpus`` into ``data/ingest/*.parquet``."""
    from alias.corpus.ingest import ingest

    c = params["corpus"]
    with progress_bar("ingest") as bar:
        tables = ingest(c["path"], c.get("descriptions") or None, c.get("library") or [],
                        c.get("max_expected_runtime_s"), progress=bar.advance)
    for name, df in tables.items():
        write_parquet(df, out / f"{name}.parquet")
    cand = tables["candidates"]
    tasks = tables["tasks"]
    return {"candidates": len(cand), "tasks": len(tasks),
            "excluded": cand.loc[cand.status == "excluded", "reason"].value_counts().to_dict(),
            "description_sources": tasks["description_source"].value_counts().to_dict() if len(tasks) else {}}


# ----------------------------------------------------------------------------- rename
def _similarity(a: str, b: str) -> float:
    """Word-by-word similarity of two texts by difflib (Appendix G)."""
    return difflib.SequenceMatcher(None, a.split(), b.split(), autojunk=False).ratio()


def rename_stage(params: dict, inp: Path = DATA / "ingest", out: Path = DATA / "rename") -> dict[str, Any]:
    """CIR-rename every task (seeded by ``params.rename.seed`` and the task id).

    Writes ``renamed_tasks``, ``renamed_modules`` and ``rename_map`` tables and the renamed
    files under ``data/rename/files/<task_id>/``. Identical params give identical bytes.
    """
    from alias.rename.cir import leftover_identifiers, rename_task
    from alias.rename.descriptions import rename_description
    from alias.tla.cfg import parse_cfg
    from alias.tla.syntax import STANDARD_MODULES

    tasks = read_parquet(inp / "tasks.parquet")
    modules = read_parquet(inp / "modules.parquet")
    seed = params["rename"]["seed"]
    files_dir = out / "files"
    if files_dir.exists():
        shutil.rmtree(files_dir)
    task_rows, mod_rows, map_rows = [], [], []
    with progress_bar("rename", total=len(tasks)) as bar:
        for t in tasks.itertuples():
            mods = modules[modules.task_id == t.task_id]
            author = {r.module: r.text for r in mods.itertuples() if r.role != "library"}
            library = {r.module: r.text for r in mods.itertuples() if r.role == "library"}
            roles = {r.module: r.role for r in mods.itertuples()}
            row: dict[str, Any] = {"task_id": t.task_id, "condition": "random", "status": "ok", "error": None,
                                   "system_module": None, "model_module": None, "wrapper_module": None,
                                   "cfg_text": None, "description": None, "n_renamed": 0, "n_leftover": 0,
                                   "text_similarity": None}
            try:
                res = rename_task(author, set(author), t.cfg_text, seed=seed, salt=t.task_id,
                                  library_modules=library)
            except Exception as e:  # RenameError or a bug on odd input: excludes this task only
                row.update(status="error", error=f"{type(e).__name__}: {e}")
                task_rows.append(row)
                bar.advance()
                continue
            leftovers = leftover_identifiers(res, set(res.mapping))
            names = res.module_names
            cfg_names: set[str] = set()
            for v in parse_cfg(t.cfg_text).names().values():
                cfg_names.update(v)
            module_names = set(STANDARD_MODULES) | set(names) | set(library)
            row.update(
                system_module=names[t.system_module], model_module=names[t.model_module],
                wrapper_module=names.get(t.wrapper_module) if isinstance(t.wrapper_module, str) else None,
                cfg_text=res.cfg_text,
                description=rename_description(t.description or "", res.mapping, cfg_names, module_names),
                n_renamed=len(res.mapping), n_leftover=len(leftovers),
                text_similarity=_similarity(author[t.system_module], res.modules[names[t.system_module]]),
            )
            if leftovers:
                row.update(status="error", error="leftover original identifiers: " +
                           ", ".join(f"{m}:{n}@{ln}" for m, n, ln in leftovers[:10]))
            tdir = files_dir / t.task_id
            tdir.mkdir(parents=True, exist_ok=True)
            original_of = {v: k for k, v in names.items()}
            for new, text in sorted(res.modules.items()):  # one file per renamed module file
                old = original_of.get(new, new)
                p = tdir / f"{new}.tla"
                p.write_text(text, encoding="utf-8")
                mod_rows.append({"task_id": t.task_id, "module": new, "original_module": old,
                                 "role": roles.get(old, "utility"), "path": str(p), "text": text,
                                 "sha256": hashlib.sha256(text.encode()).hexdigest()})
            (tdir / f"{names[t.model_module]}.cfg").write_text(res.cfg_text, encoding="utf-8")
            seen = set()
            for ident in res.identifiers:  # one row per name (the map is per task); a name
                #                            defined in several modules keeps its first row
                if ident["name"] in seen:
                    continue
                seen.add(ident["name"])
                map_rows.append({"task_id": t.task_id, "old": ident["name"], "new": ident["new_name"],
                                 "module": ident["module"], "kind": ident["kind"]})
            task_rows.append(row)
            bar.advance()
    write_parquet(pd.DataFrame(task_rows), out / "renamed_tasks.parquet")
    write_parquet(pd.DataFrame(mod_rows, columns=["task_id", "module", "original_module", "role", "path", "text", "sha256"]),
                  out / "renamed_modules.parquet")
    write_parquet(pd.DataFrame(map_rows, columns=["task_id", "old", "new", "module", "kind"]),
                  out / "rename_map.parquet")
    ok = [r for r in task_rows if r["status"] == "ok"]
    return {"tasks": len(task_rows), "renamed": len(ok), "errors": len(task_rows) - len(ok),
            "median_renamed": statistics.median([r["n_renamed"] for r in ok]) if ok else None}


# ----------------------------------------------------------------------------- verify
def tool_config(params: dict):
    """:class:`alias.tla.tools.ToolConfig` from ``params.tla`` and ``params.corpus``."""
    from alias.tla.tools import ToolConfig, find_jar

    t = params["tla"]
    return ToolConfig(java=t.get("java", "java"), jar=find_jar(t.get("jar") or None),
                      library=tuple(str(Path(p).resolve()) for p in params["corpus"].get("library") or []),
                      timeout_s=float(t["timeout_s"]), memory_mb=int(t["memory_mb"]), workers=int(t["workers"]))


def _check(files: dict[str, str], main: str, cfg_text: str, config, logs: Path) -> tuple[dict, dict]:
    """Strict SANY then TLC on one copy of a task; returns the two ``tlc_runs`` rows."""
    from alias.tla.cfg import CfgError, for_jar, parse_cfg
    from alias.tla.tools import run_sany, run_tlc, supports_check_deadlock

    sany = run_sany(files, main, config)
    srow = _run_row("sany", main, sany, config, logs)
    if not sany.ok_strict:
        return srow, {}
    try:
        modern = supports_check_deadlock(config)  # TLC >= 2.16 also knows ALIAS
        cfg_out, flags = for_jar(parse_cfg(cfg_text), modern, supports_alias=modern)
    except CfgError as e:
        return srow, {"tool": "tlc", "main_module": main, "kind": "config_error", "run_key": "",
                      "error_message": str(e), "wall_s": 0.0, "tool_version": "", "flags": "", "log_path": ""}
    tlc = run_tlc(files, main, cfg_out, config, extra_flags=flags)
    return srow, _run_row("tlc", main, tlc, config, logs, flags=flags)


def _run_row(tool: str, main: str, res, config, logs: Path, flags=()) -> dict:
    from alias.tla.tools import tool_version

    logs.mkdir(parents=True, exist_ok=True)
    log = logs / f"{res.run_key}.log"
    log.write_text(res.output or "", encoding="utf-8")
    return {
        "tool": tool, "main_module": main, "run_key": res.run_key, "kind": res.kind,
        "exit_code": res.exit_code, "ok_exit": getattr(res, "ok_exit", None),
        "ok_strict": getattr(res, "ok_strict", None),
        "distinct_states": getattr(res, "distinct_states", None),
        "states_generated": getattr(res, "states_generated", None),
        "depth": getattr(res, "depth", None), "wall_s": round(float(res.wall_s), 3),
        "tool_version": tool_version(config), "flags": " ".join(flags), "log_path": str(log),
        "error_message": (getattr(res, "error_message", None) or
                          ("; ".join(getattr(res, "errors", []) or []) or None)),
    }


def verify_task(task, files_orig: dict, renamed: dict | None, config, logs: Path) -> tuple[list[dict], dict]:
    """Verify one task: SANY (strict) + TLC on the original and the renamed copy.

    ``renamed`` is ``None`` when renaming failed, else ``{"files", "main", "cfg_text"}``.
    Returns the ``tlc_runs`` rows and the ``test_set`` row with a reason code when excluded.
    """
    runs: list[dict] = []
    ts: dict[str, Any] = {"task_id": task.task_id, "in_test_set": False, "reason": None, "detail": None,
                          "manifest_distinct_states": _int(task.expected_distinct_states)}
    s, t = _check(files_orig, task.model_module, task.cfg_text, config, logs)
    for r in (s, t):
        if r:
            runs.append(r | {"task_id": task.task_id, "condition": "original"})
    if t:
        ts.update(original_kind=t["kind"], original_distinct_states=t.get("distinct_states"),
                  original_states_generated=t.get("states_generated"), original_depth=t.get("depth"))
        md = ts["manifest_distinct_states"]
        if md is not None and t.get("kind") == "success" and t.get("distinct_states") is not None:
            ts["manifest_match"] = bool(md == t["distinct_states"])
    if not s.get("ok_strict"):
        ts.update(reason=_sany_reason("original", s), detail=s.get("error_message"))
        return runs, ts
    if t.get("kind") != "success":
        ts.update(reason=f"tlc_original_{t.get('kind')}", detail=t.get("error_message"))
        return runs, ts
    if renamed is None:
        ts.update(reason="rename_error", detail=None)
        return runs, ts
    s2, t2 = _check(renamed["files"], renamed["main"], renamed["cfg_text"], config, logs)
    for r in (s2, t2):
        if r:
            runs.append(r | {"task_id": task.task_id, "condition": "random"})
    if t2:
        ts.update(renamed_kind=t2["kind"], renamed_distinct_states=t2.get("distinct_states"),
                  renamed_depth=t2.get("depth"))
    if not s2.get("ok_strict"):
        ts.update(reason=_sany_reason("renamed", s2), detail=s2.get("error_message"))
    elif t2.get("kind") != "success":
        ts.update(reason=f"tlc_renamed_{t2.get('kind')}", detail=t2.get("error_message"))
    elif (t2.get("distinct_states"), t2.get("depth")) != (t.get("distinct_states"), t.get("depth")):
        ts.update(reason="state_mismatch",
                  detail=f"original {t.get('distinct_states')}/{t.get('depth')} vs renamed "
                         f"{t2.get('distinct_states')}/{t2.get('depth')} (distinct/depth)")
    else:
        ts["in_test_set"] = True
    return runs, ts


def _sany_reason(condition: str, row: dict) -> str:
    """``sany_<condition>`` for a module SANY rejects; ``..._timeout``/``..._crash`` when
    SANY did not finish, so a tool failure is never read as a parse failure."""
    kind = row.get("kind")
    return f"sany_{condition}_{kind}" if kind in ("timeout", "crash") else f"sany_{condition}"


def _int(v):
    try:
        return None if v is None or pd.isna(v) else int(v)
    except (TypeError, ValueError):
        return None


def verify_stage(params: dict, ingest_dir: Path = DATA / "ingest", rename_dir: Path = DATA / "rename",
                 out: Path = DATA / "verify") -> dict[str, Any]:
    """Run :func:`verify_task` over all tasks with ``params.tla.parallel`` concurrent
    tool processes; writes ``tlc_runs``, ``test_set`` and the logs under ``data/verify``.

    A task whose check raises is excluded with reason ``verify_error``; no other row is lost.
    """
    tasks = read_parquet(ingest_dir / "tasks.parquet")
    modules = read_parquet(ingest_dir / "modules.parquet")
    rtasks = read_parquet(rename_dir / "renamed_tasks.parquet").set_index("task_id")
    rmods = read_parquet(rename_dir / "renamed_modules.parquet")
    libs = modules[modules.role == "library"]
    config = tool_config(params)
    from alias.tla.tools import check_java

    check_java(config)  # a missing Java is a setup error, not 105 failed tasks
    logs = out / "logs"
    if logs.exists():
        shutil.rmtree(logs)
    runs: list[dict] = []
    rows: list[dict] = []

    def job(task):
        lib_files = {f"{r.module}.tla": r.text for r in libs[libs.task_id == task.task_id].itertuples()}
        orig = {f"{r.module}.tla": r.text for r in modules[(modules.task_id == task.task_id) & (modules.role != "library")].itertuples()}
        renamed = None
        if task.task_id in rtasks.index and rtasks.loc[task.task_id, "status"] == "ok":
            rt = rtasks.loc[task.task_id]
            rf = {f"{r.module}.tla": r.text for r in rmods[rmods.task_id == task.task_id].itertuples()}
            renamed = {"files": rf | lib_files, "main": rt.model_module, "cfg_text": rt.cfg_text}
        try:
            return verify_task(task, orig | lib_files, renamed, config, logs)
        except Exception as e:  # keep every other task's rows
            return [], {"task_id": task.task_id, "in_test_set": False, "reason": "verify_error",
                        "detail": f"{type(e).__name__}: {e}"}

    parallel = max(1, int(params["tla"].get("parallel", 1)))
    with progress_bar("verify", total=len(tasks)) as bar, ThreadPoolExecutor(parallel) as pool:
        futs = [pool.submit(job, t) for t in tasks.itertuples()]
        for f in as_completed(futs):
            r, ts = f.result()
            runs += r
            if ts.get("reason") == "rename_error" and ts["task_id"] in rtasks.index:
                ts["detail"] = rtasks.loc[ts["task_id"], "error"]
            rows.append(ts)
            bar.advance()
    cols = ["task_id", "condition", "tool", "run_key", "main_module", "kind", "exit_code", "ok_exit", "ok_strict",
            "distinct_states", "states_generated", "depth", "wall_s", "tool_version", "flags", "log_path",
            "error_message"]
    runs_df = pd.DataFrame(runs, columns=cols).sort_values(["task_id", "condition", "tool"]).reset_index(drop=True)
    for c in ("exit_code", "distinct_states", "states_generated", "depth"):
        runs_df[c] = runs_df[c].astype("Int64")
    ts_cols = ["task_id", "in_test_set", "reason", "detail", "original_kind", "original_distinct_states",
               "original_states_generated", "original_depth", "renamed_kind", "renamed_distinct_states",
               "renamed_depth", "manifest_distinct_states", "manifest_match", "manifest_note"]
    ts_df = pd.DataFrame(rows, columns=ts_cols).sort_values("task_id").reset_index(drop=True)
    for c in ("original_distinct_states", "original_states_generated", "original_depth", "renamed_distinct_states",
              "renamed_depth", "manifest_distinct_states"):
        ts_df[c] = ts_df[c].astype("Int64")
    ts_df["manifest_match"] = ts_df["manifest_match"].astype("boolean")
    ts_df["manifest_note"] = ts_df.apply(_manifest_note, axis=1)
    write_parquet(runs_df, out / "tlc_runs.parquet")
    write_parquet(ts_df, out / "test_set.parquet")
    return {"tasks": len(ts_df), "test_set": int(ts_df.in_test_set.sum()),
            "excluded": ts_df.loc[~ts_df.in_test_set, "reason"].value_counts().to_dict(),
            "manifest_mismatch": int((ts_df.manifest_match == False).sum())}  # noqa: E712


def _manifest_note(row) -> str | None:
    """Why a task has no manifest comparison, or how its count differs (None when equal)."""
    if pd.isna(row.manifest_distinct_states):
        return "manifest gives no distinctStates"
    if pd.isna(row.manifest_match) or bool(row.manifest_match):
        return None  # equal, or the original did not succeed (its reason says why)
    return (f"TLC here found {row.original_distinct_states} distinct states, the manifest "
            f"{row.manifest_distinct_states}")


# ------------------------------------------------------------------------ identifiers
def identifiers_stage(params: dict, ingest_dir: Path = DATA / "ingest", rename_dir: Path = DATA / "rename",
                      out: Path = DATA / "identifiers") -> dict[str, Any]:
    """Categorize every renamed identifier (Appendix C) and list each task's required
    names with whether its description mentions them (hidden = never mentioned)."""
    from alias.rename.kinds import category, mentions, required_names, split_identifier

    tasks = read_parquet(ingest_dir / "tasks.parquet")
    modules = read_parquet(ingest_dir / "modules.parquet")
    rtasks = read_parquet(rename_dir / "renamed_tasks.parquet").set_index("task_id")
    rmap = read_parquet(rename_dir / "rename_map.parquet")
    ident_rows = [
        {"task_id": r.task_id, "old": r.old, "new": r.new, "module": r.module, "kind": r.kind,
         "category": category(r.old), "parts": json.dumps(split_identifier(r.old))}
        for r in rmap.itertuples()
    ]
    req_rows = []
    with progress_bar("identifiers", total=len(tasks)) as bar:
        for t in tasks.itertuples():
            mods = modules[modules.task_id == t.task_id].set_index("module")
            wrapper = mods.loc[t.wrapper_module, "text"] if isinstance(t.wrapper_module, str) else None
            try:
                req = required_names(t.cfg_text, mods.loc[t.system_module, "text"], wrapper)
            except Exception as e:  # a cfg the parser rejects: no required names, recorded
                req = []
                print(f"warning: {t.task_id}: required names not computed ({e})")
            m = rmap[rmap.task_id == t.task_id].set_index("old")["new"].to_dict()
            rdesc = rtasks.loc[t.task_id, "description"] if t.task_id in rtasks.index else None
            for name, kind in req:
                mentioned = mentions(t.description, name)
                new = m.get(name)
                req_rows.append({
                    "task_id": t.task_id, "name": name, "cfg_kind": kind, "new_name": new,
                    "category": category(name), "mentioned": mentioned,
                    "mentioned_renamed": (mentions(rdesc, new) if (new and isinstance(rdesc, str)) else None),
                    "hidden": not mentioned,
                })
            bar.advance()
    icols = ["task_id", "old", "new", "module", "kind", "category", "parts"]
    rcols = ["task_id", "name", "cfg_kind", "new_name", "category", "mentioned", "mentioned_renamed", "hidden"]
    idf = pd.DataFrame(ident_rows, columns=icols)
    rdf = pd.DataFrame(req_rows, columns=rcols)
    rdf["mentioned_renamed"] = rdf["mentioned_renamed"].astype("boolean")
    write_parquet(idf, out / "identifiers.parquet")
    write_parquet(rdf, out / "required_names.parquet")
    return {"identifiers": len(idf), "required_names": len(rdf), "hidden": int(rdf.hidden.sum()),
            "categories": idf.category.value_counts().to_dict()}


# --------------------------------------------------------------------------- controls
def grade_tool_config(params: dict):
    """The tool config for grading: ``tla`` settings with ``grade.timeout_s``."""
    import dataclasses

    return dataclasses.replace(tool_config(params), timeout_s=float(params["grade"]["timeout_s"]))


def controls_stage(params: dict, ingest_dir: Path = DATA / "ingest", rename_dir: Path = DATA / "rename",
                   verify_dir: Path = DATA / "verify", out: Path = DATA / "controls") -> dict[str, Any]:
    """Grader validation (Appendix J): build the positive and negative controls of every
    eligible test-set task and grade them; writes ``data/controls`` (eligibility, control
    samples, samples, verdicts, the grading journal and the tool-run cache)."""
    from alias.grade.cache import ToolRunner
    from alias.grade.controls import run_controls
    from alias.grade.reference import load_references
    from alias.tla.tools import check_java

    config = grade_tool_config(params)
    check_java(config)
    refs = load_references(ingest_dir, rename_dir, verify_dir)
    c = params["controls"]
    tasks = list(c.get("tasks") or []) or None
    runner = ToolRunner(config, out / "cache")
    with progress_bar("controls", total=None) as bar:
        summary = run_controls(refs, runner, out, seed=int(c["seed"]),
                               max_mutants_tried=int(c["max_mutants_tried_per_task"]),
                               max_mutants_kept=int(c["max_mutants_kept_per_task"]),
                               parallel=int(params["grade"]["parallel"]), max_maps=int(params["grade"]["max_maps"]),
                               tasks=tasks, progress=lambda _what: bar.advance(),
                               mutant_timeout_s=float(c["mutant_timeout_s"]))
    return summary


# ------------------------------------------------------------------------- meaningful
def meaningful_stage(params: dict, ingest_dir: Path = DATA / "ingest", rename_dir: Path = DATA / "rename",
                     verify_dir: Path = DATA / "verify", out: Path = DATA / "meaningful") -> dict[str, Any]:
    """The meaningful-names condition (Appendix R): one proposed map per test-set task
    (``params.meaningful.proposer``), applied and re-verified with SANY + TLC; writes
    ``data/meaningful`` (see :mod:`alias.rename.meaningful_stage`)."""
    from alias.rename.meaningful_stage import meaningful_stage as run

    return run(params, ingest_dir, rename_dir, verify_dir, out)


# ------------------------------------------------------------------------------- load
def load_stage(params: dict, db: Path = DATA / "alias.duckdb") -> dict[str, Any]:
    """Build ``data/alias.duckdb`` from the stage tables and the views in ``sql/``; the
    ``exposure_arms`` table comes from ``params.report.exposure`` (Experiment 2 models)."""
    from alias.report.exposure import exposure_arm_rows
    from alias.store.db import build_store

    return build_store(db, ".", "sql", tables={"exposure_arms": exposure_arm_rows(params)})


# ----------------------------------------------------------------------------- report
def report_stage(params: dict, db: Path = DATA / "alias.duckdb") -> dict[str, Any]:
    """Write Tables K.1, C.1, J.1, 1, 2, F.1, O.1 and V.1, Appendices L, M, N, P and U,
    the hidden-name counts, Figures S.1, T.1 and U.1 (PNG under ``reports/figures/``, their
    data as CSV under ``reports/plots/``) and the DVC metrics file ``reports/metrics.json``
    (tables with no samples yet say "no data", figures draw a "no data" panel)."""
    from alias.report.appendix_tables import write_appendix_reports
    from alias.report.exposure import write_exposure_reports
    from alias.report.figures import write_figures
    from alias.report.similarity import write_similarity_report
    from alias.report.stats_tables import write_stats_reports
    from alias.report.tables import write_reports
    from alias.stats import DEFAULT_RESAMPLES, DEFAULT_SEED

    rp = params.get("report", {})
    out = Path(rp.get("out", "reports"))
    boot = {"n_resamples": int(rp.get("n_resamples", DEFAULT_RESAMPLES)), "seed": int(rp.get("seed", DEFAULT_SEED))}
    metrics = write_reports(db, out)
    stats = write_stats_reports(db, out, **boot)
    sim = write_similarity_report(db, out, **boot)
    app = write_appendix_reports(db, out, **boot)
    expo = write_exposure_reports(db, out, **boot)
    figs = write_figures(out, table_u=stats["tables"]["U"], table1=stats["tables"]["1"], effects=expo["effects"])
    metrics.update(app["metrics"])
    metrics["similarity_samples"] = int(len(sim["samples"]))
    for _, r in sim["table"].iterrows():
        if r["model"] is not None and r["decrease"] is not None and not pd.isna(r["decrease"]):
            metrics[f"{r['measure']}_decrease/{r['model']}"] = round(float(r["decrease"]), 4)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")
    files = [*stats["files"], *sim["files"], *app["files"], *expo["files"], *figs["files"]]
    return metrics | {"report_files": sorted(files)}
