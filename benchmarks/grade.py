"""Grading throughput on real model outputs: the naive procedure against ALIAS, side by side.

The outputs are TLA+-Bench's released generations (two models, one per task) graded by the
benchmark's own procedure (the ``tlabench`` grade: SANY, then TLC with the task's cfg, in a
folder holding every gold module):

(a) naive -- what the public graders do: for each output, in a fresh folder, one SANY
    process and then one TLC process, one output after another, plain ``java -cp``;
(b) ALIAS cold -- :func:`alias.grade.run.grade_samples` with the ``tlabench`` grade on a
    local pool of ``--workers`` processes, an empty tool-run cache, the JVMs started from a
    class-data-sharing archive, SANY and TLC in one long-lived JVM each per worker (TLC in
    a fresh class loader per run, its JVM with the short-run flags), TLC first where the
    task has a cfg, SANY's verdict read from TLC's report where TLC's own front end failed
    with a parse failure or SANY's semantic-error report (a SANY run where TLC crashed, timed
    out or printed anything else, or no cfg exists), TLC skipped after a parse failure,
    identical runs made once;
(c) ALIAS warm -- the same again with a new journal on the filled cache;
(d) ALIAS cold with the confinement off -- (b) with ``tla.confine: off`` (and so without the
    Community Modules' overrides): what the confinement costs (README "Confinement"), in
    the same run.

It checks that (a) and (b) give the same verdict on every output (SANY pass, TLC pass) and
prints outputs per minute and the ratios. Outputs whose TLC run hits the time limit in (a)
bound any wall time: they are graded and compared apart, and the ratios are computed on the
outputs that finish within the limit. ``--levers`` also times ALIAS cold with one lever
off at a time; ``--dask N`` grades on a Dask LocalCluster of N workers; ``--data DIR`` (the
stage folders of a TLA+-Bench pipeline run) adds the name and behavior grades of the same
outputs against their references (behavior per output vs name per output).

    python benchmarks/grade.py                                   # the full release (about 25 min)
    python benchmarks/grade.py --ids tests/fixtures/tlabench_ids.json --tlc-timeout 60
    python benchmarks/grade.py --levers --dask 2 --data pipelines/tlabench/data --json out.json
    python benchmarks/grade.py --paper-only --data pipelines/tlabench/data --regimes default,cfgaware \\
        --sample 24 --seed 33                                    # the speed figures' 85 outputs
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from alias.api import load_test_set  # noqa: E402
from alias.config import load_config  # noqa: E402
from alias.corpus.tlabench import staging_pool  # noqa: E402
from alias.generate.tlabench import generation_records  # noqa: E402
from alias.grade.cache import ToolRunner  # noqa: E402
from alias.grade.registry import TlabenchGrade  # noqa: E402
from alias.grade.run import grade_samples  # noqa: E402
from alias.grade.tlabench import CompatGrader, generated_module  # noqa: E402
from alias.tla.executor import DaskExecutor, LocalExecutor  # noqa: E402
from alias.tla.tool_server import server_classes  # noqa: E402
from alias.tla.tools import (ToolConfig, cds_archive, confined, confinement, default_jvm_cache,  # noqa: E402
                             find_jar)
from benchmarks.verify import busy_cpu_s  # noqa: E402

PIPELINE = REPO / "pipelines" / "tlabench"


def load_setting(ids: str = "") -> tuple[Path, tuple[str, ...], Path, list[str], str]:
    """The TLA+-Bench pipeline's release folder, library folders, jar, models and Community
    Modules jar (its ``params.yaml``, paths resolved from its folder); ``ids`` a JSON list
    of spec ids."""
    cfg = load_config([REPO / "params.yaml", PIPELINE / "params.yaml"])
    release = (PIPELINE / cfg.corpus.path).resolve()
    library = tuple(str((PIPELINE / d).resolve()) for d in cfg.corpus.library)
    jar = find_jar(str((PIPELINE / cfg.tla.jar).resolve()) if cfg.tla.jar else None)
    models = list(cfg.generate.replay["tlabench"].models)
    overrides = str((PIPELINE / cfg.tla.overrides_jar).resolve()) if cfg.tla.overrides_jar else ""
    return release, library, jar, models, overrides


def drawn_ids(release: Path, n: int, seed: int) -> list[str]:
    """``n`` spec ids of the release's ``eval100.jsonl``, drawn with ``random.Random(seed)``
    from their sorted string forms (``--sample 24 --seed 33`` is the sample of the
    measurements' speed figures: 85 outputs of both regimes in the test set)."""
    ids = sorted({str(json.loads(line)["spec_id"]) for line in
                  (release / "eval100.jsonl").read_text().splitlines() if line.strip()})
    return random.Random(seed).sample(ids, n)


def outputs(release: Path, models: list[str], ids: str = "", regimes: tuple[str, ...] = ("default",),
            keep: set[str] | None = None) -> list[dict]:
    """One sample row per released generation of each regime (of the spec ids in the JSON
    list ``ids``, or in ``keep``); the model column names the regime where there are several."""
    keep = set(json.loads(Path(ids).read_text())) if ids else keep
    rows = []
    for regime in regimes:
        records, _missing = generation_records(release / "outputs", regime, models)
        rows += [{"task_id": r["task_id"], "condition": "original", "sample_idx": 0, "text": r["text"],
                  "model": r["model"] if len(regimes) == 1 else f"{r['model']}@{regime}"}
                 for r in records if keep is None or r["task_id"] in keep]
    return rows


# ----------------------------------------------------------------------------- (a) naive
def _java(argv: list[str], cwd: Path, timeout_s: float) -> tuple[int | None, str, float]:
    t0 = time.perf_counter()
    try:
        p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout_s,
                           stdin=subprocess.DEVNULL)
        return p.returncode, p.stdout + p.stderr, time.perf_counter() - t0
    except subprocess.TimeoutExpired:
        return None, "", time.perf_counter() - t0


def naive_grade(sample: dict, pool: tuple[dict, dict], jar: Path, library: tuple[str, ...],
                sany_timeout_s: float, tlc_timeout_s: float) -> dict:
    """The benchmark's procedure as the public graders run it: a fresh folder with every
    gold module and the output, one SANY process, then one TLC process with the cfg."""
    files, gold = pool
    gold_module, cfg_text, _ = gold[sample["task_id"]]
    gen = generated_module(sample["text"], gold_module)
    work = Path(tempfile.mkdtemp(prefix="naive-"))
    try:
        for name, text in files.items():
            if name != f"{gold_module}.tla":
                (work / name).write_text(text, encoding="utf-8")
        (work / f"{gen}.tla").write_text(sample["text"], encoding="utf-8")
        java = ["java", f"-DTLA-Library={os.pathsep.join(library)}", "-cp", str(jar)]
        rc, _out, sany_s = _java(java + ["tla2sany.SANY", f"{gen}.tla"], work, sany_timeout_s)
        tlc_rc, tlc_out, tlc_s, tlc_timeout = None, "", 0.0, False
        if cfg_text is not None:
            (work / f"{gen}.cfg").write_text(cfg_text, encoding="utf-8")
            tlc_rc, tlc_out, tlc_s = _java(java + ["tlc2.TLC", "-workers", "1", "-config", f"{gen}.cfg", gen],
                                           work, tlc_timeout_s)
            tlc_timeout = tlc_rc is None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    tlc_ok = tlc_rc == 0 and not any(ln.startswith("Error:") for ln in tlc_out.splitlines())
    return {"sany_pass": rc == 0, "tlc_pass": rc == 0 and tlc_ok, "sany_s": sany_s, "tlc_s": tlc_s,
            "tlc_timeout": tlc_timeout}


def run_naive(samples: list[dict], pool, jar, library, sany_timeout_s, tlc_timeout_s) -> dict[tuple, dict]:
    return {(s["task_id"], s["model"]): naive_grade(s, pool, jar, library, sany_timeout_s, tlc_timeout_s)
            for s in samples}


# ----------------------------------------------------------------------------- (b), (c) ALIAS
def run_alias(samples: list[dict], tools: ToolConfig, compat: CompatGrader, cache: Path, out: Path,
              executor) -> tuple[dict[tuple, dict], float, int]:
    """Grade with the ``tlabench`` grade; ``{(task, model): verdict}``, wall seconds and
    the tool runs made (not answered from the cache)."""
    t0 = time.perf_counter()
    v = grade_samples(samples, {}, ToolRunner(tools, cache), out, executor=executor,
                      grades=(TlabenchGrade(compat, compat.sany_timeout_s, compat.tlc_timeout_s),))
    wall = time.perf_counter() - t0
    verdicts = {}
    for r in v.itertuples():
        d = json.loads(r.detail) if isinstance(r.detail, str) else {}
        verdicts[(r.task_id, r.model)] = {"sany_pass": bool(d.get("sany_pass")), "tlc_pass": bool(r.passed),
                                          "reason": r.reason}
    return verdicts, wall, int(v.tool_runs.fillna(0).sum())


def differences(naive: dict, alias: dict) -> list[str]:
    """One line per output whose SANY or TLC verdict differs between the two runs."""
    out = []
    for k in sorted(naive):
        a, b = naive[k], alias.get(k)
        if b is None:
            out.append(f"{k}: graded by the naive procedure only")
        elif (a["sany_pass"], a["tlc_pass"]) != (b["sany_pass"], b["tlc_pass"]):
            out.append(f"{k}: naive sany={a['sany_pass']} tlc={a['tlc_pass']}; "
                       f"ALIAS sany={b['sany_pass']} tlc={b['tlc_pass']} ({b['reason']})")
    return out


def per_min(n: int, seconds: float) -> float:
    return 60.0 * n / seconds if seconds > 0 else float("inf")


def _key(s: dict) -> tuple:
    return (s["task_id"], s["model"])


def _timed_alias(label: str, samples, tools, compat, work: Path, executor, cache: Path | None = None) -> dict:
    cache = cache or work / f"cache-{label}"
    cpu0 = busy_cpu_s()
    with executor as ex:
        verdicts, wall, runs = run_alias(samples, tools, compat, cache, work / label, ex)
    return {"label": label, "verdicts": verdicts, "wall_s": wall, "tool_runs": runs,
            "per_min": per_min(len(samples), wall), "busy_cpu_s": busy_cpu_s() - cpu0}


def measure_levers(fast, tools, compat, work: Path, workers: int, naive: dict) -> list[dict]:
    """ALIAS cold with one lever off at a time, plus what the data say of the levers that
    need no second run (TLC skipped after a parse failure, identical runs made once)."""
    rows = [_timed_alias("lever: no class-data-sharing archive", fast, dataclasses.replace(tools, cds=False),
                         compat, work, LocalExecutor(workers)),
            _timed_alias("lever: no SANY server (a JVM per SANY run)", fast,
                         dataclasses.replace(tools, sany_server=False), compat, work, LocalExecutor(workers)),
            _timed_alias("lever: no TLC server (a JVM per TLC run)", fast,
                         dataclasses.replace(tools, tlc_server=False), compat, work, LocalExecutor(workers)),
            _timed_alias("lever: no short-run JVM flags in the TLC server", fast,
                         dataclasses.replace(tools, short_run_flags=False), compat, work, LocalExecutor(workers)),
            _timed_alias("lever: SANY then TLC (no TLC first)", fast, tools,
                         dataclasses.replace(compat, tlc_first=False), work, LocalExecutor(workers)),
            _timed_alias("lever: a SANY run where TLC's front end failed", fast, tools,
                         dataclasses.replace(compat, sany_from_tlc=False), work, LocalExecutor(workers)),
            _timed_alias("lever: one worker", fast, tools, compat, work, LocalExecutor(1))]
    graded = {_key(s) for s in fast}  # the levers grade the outputs within the limit only
    for r in rows:
        r["differences_vs_naive"] = len(differences({k: v for k, v in naive.items() if k in graded}, r["verdicts"]))
    skipped = [naive[_key(s)] for s in fast if not naive[_key(s)]["sany_pass"]]
    texts = [(s["task_id"], s["text"]) for s in fast]
    rows.append({"label": "lever: TLC skipped after a parse failure", "tlc_runs_saved": len(skipped),
                 "naive_tlc_s_saved": round(sum(v["tlc_s"] for v in skipped), 1)})
    rows.append({"label": "lever: identical outputs graded once", "duplicates": len(texts) - len(set(texts))})
    return rows


#: The paper grades timed against each other: (label, grades); ``behavior`` is the
#: refinement procedure, ``behavior_renaming`` the paper's (issue 33).
PAPER_GRADES = (("name", ("parse", "name")), ("behavior_renaming", ("behavior_renaming",)),
                ("behavior", ("behavior",)))


def measure_paper_grades(fast, data: Path, tools, work: Path, workers: int) -> dict:
    """The name grade (parse + name) and the behavior grade under both procedures (the
    paper's renaming, and refinement) of the same outputs against the references of a
    TLA+-Bench pipeline run (``data``: its stage folders), each with a cold cache; passes
    per grade and the seconds per output over the name grade's."""
    refs = load_test_set(data).references()
    graded = [s for s in fast if (s["task_id"], "original") in refs]
    out = {"outputs": len(graded)}
    seconds, accepted = {}, {}
    for label, grades in PAPER_GRADES:
        t0 = time.perf_counter()
        with LocalExecutor(workers) as ex:
            v = grade_samples(graded, refs, ToolRunner(tools, work / f"cache-{label}"), work / label,
                              grades=grades, executor=ex)
        out[f"{label}_s"] = time.perf_counter() - t0
        out[f"{label}_per_min"] = per_min(len(graded), out[f"{label}_s"])
        last = v[v.grade == grades[-1]]
        out[f"{label}_passed"] = int(last.passed.fillna(False).astype(bool).sum())
        seconds[label] = {(r.task_id, r.model): float(r.wall_s) for r in last.itertuples()}
        if label == "behavior":
            accepted = {(r.task_id, r.model): bool(r.passed) for r in last.itertuples()}
    out["behavior_over_name"] = out["behavior_s"] / out["name_s"]
    out["behavior_renaming_over_name"] = out["behavior_renaming_s"] / out["name_s"]
    out["by_verdict"] = by_verdict(seconds, accepted)
    return out


def by_verdict(seconds: dict[str, dict], accepted: dict) -> list[dict]:
    """Each grade's seconds per output summed over the outputs the refinement procedure
    accepts and over those it rejects (a sample's own wall time in its worker, so the
    sums exceed the wall time of a parallel run), with the ratio to the name grade's: an
    accepted output costs TLC's forward and reverse checks, each a run of the whole state
    space that evaluates both modules' steps, where a rejected one mostly stops earlier."""
    rows = []
    for verdict in (True, False):
        keys = [k for k, ok in accepted.items() if ok is verdict]
        row = {"accepted": verdict, "outputs": len(keys)}
        for label in seconds:
            row[f"{label}_s"] = sum(seconds[label].get(k, 0.0) for k in keys)
        for label in ("behavior_renaming", "behavior"):
            row[f"{label}_over_name"] = row[f"{label}_s"] / row["name_s"] if row["name_s"] else float("nan")
        rows.append(row)
    return rows


def run(args) -> dict:
    """Every measurement of the module docstring; the numbers as a dict."""
    release, library, jar, models, overrides = load_setting()
    pool = staging_pool(release)
    drawn = set(drawn_ids(release, args.sample, args.seed)) if args.sample else None
    released = outputs(release, models, args.ids, tuple(args.regimes.split(",")), keep=drawn)
    samples = [s for s in released if s["task_id"] in pool[1]]  # 577: no gold file to stage beside
    compat = CompatGrader(pool[0], pool[1], args.sany_timeout, args.tlc_timeout)
    tools = ToolConfig(jar=jar, library=library, timeout_s=args.tlc_timeout, memory_mb=args.memory_mb,
                       jvm_cache=str(Path(args.work) / "jvm") if args.work else default_jvm_cache(),
                       sany_server=True, tlc_server=True, overrides_jar=overrides)  # as tla.* in params.yaml
    t0 = time.perf_counter()
    cds_archive(tools)  # a machine's setup steps, made once (timed apart)
    server_classes(tools.java, jar, tools.jvm_cache)
    res: dict = {"outputs": len(samples), "without_gold": sorted(f"{s['task_id']}/{s['model']}" for s in released
                                                                  if s["task_id"] not in pool[1]), "jar": str(jar), "workers": args.workers, "cds_build_s": time.perf_counter() - t0}
    if args.paper_only:
        work = Path(tempfile.mkdtemp(prefix="alias-bench-grade-", dir=args.work or None))
        try:
            res["paper_grades"] = measure_paper_grades(samples, Path(args.data), tools, work, args.workers)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return res
    t0 = time.perf_counter()
    naive = run_naive(samples, pool, jar, library, args.sany_timeout, args.tlc_timeout)
    res["naive_total_s"] = time.perf_counter() - t0
    slow = {k for k, v in naive.items() if v["tlc_timeout"]}
    fast = [s for s in samples if _key(s) not in slow]
    res["timeouts"] = sorted(f"{t}/{m}" for t, m in slow)
    res["naive_s"] = sum(naive[_key(s)]["sany_s"] + naive[_key(s)]["tlc_s"] for s in fast)
    res["naive_per_min"] = per_min(len(fast), res["naive_s"])
    work = Path(tempfile.mkdtemp(prefix="alias-bench-grade-", dir=args.work or None))
    try:
        cold = _timed_alias("cold", fast, tools, compat, work, LocalExecutor(args.workers), work / "cache")
        warm = _timed_alias("warm", fast, tools, compat, work, LocalExecutor(args.workers), work / "cache")
        rest = _timed_alias("timeouts", [s for s in samples if _key(s) in slow], tools, compat, work,
                            LocalExecutor(args.workers), work / "cache")
        res["differences"] = differences(naive, cold["verdicts"] | rest["verdicts"])
        plain = _timed_alias("cold, confinement off", fast, dataclasses.replace(tools, confine="off"), compat, work,
                             LocalExecutor(args.workers))
        plain["differences_vs_naive"] = len(differences({k: v for k, v in naive.items() if k not in slow},
                                                        plain["verdicts"]))
        res["confined"] = confinement(tools.java).detail if confined(tools) else "no"
        res["runs"] = [cold, warm, rest, plain]
        if args.dask:
            d = _timed_alias(f"dask LocalCluster of {args.dask}", fast, tools, compat, work,
                             DaskExecutor(local_workers=args.dask))
            d["differences_vs_local"] = differences(cold["verdicts"], d["verdicts"])
            res["runs"].append(d)
        if args.levers:
            res["runs"] += measure_levers(fast, tools, compat, work, args.workers, naive)
        if args.data:
            res["paper_grades"] = measure_paper_grades(fast, Path(args.data), tools, work, args.workers)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res["naive_verdicts"] = {f"{t}/{m}": v for (t, m), v in naive.items()}
    return res


def report(res: dict) -> str:
    """The measurements as text, ratios to the naive procedure side by side."""
    fast = res["outputs"] - len(res["timeouts"])
    lines = [f"{res['outputs']} outputs ({fast} finish within the TLC limit; apart: {', '.join(res['timeouts']) or 'none'}; "
             f"not graded, no gold file: {', '.join(res.get('without_gold', [])) or 'none'}); "
             f"{res['workers']} workers; class-data-sharing archive and tool servers built in {res['cds_build_s']:.1f} s; "
             f"ALIAS runs confined: {res.get('confined', '?')} (but '... confinement off')",
             f"{'':46s} {'outputs/min':>12s} {'wall s':>9s} {'tool runs':>10s} {'x naive':>8s} {'busy CPU s':>11s}",
             f"{'(a) naive: SANY then TLC, one process each':46s} {res['naive_per_min']:12.1f} {res['naive_s']:9.1f} "
             f"{'':>10s} {1.0:8.2f}"]
    for r in res["runs"]:
        if "per_min" in r:
            diffs = r.get("differences_vs_naive")
            lines.append(f"{r['label']:46s} {r['per_min']:12.1f} {r['wall_s']:9.1f} {r['tool_runs']:10d} "
                         f"{r['per_min'] / res['naive_per_min']:8.2f} {r.get('busy_cpu_s', 0.0):11.1f}"
                         + (f"   {diffs} verdicts differ from naive" if diffs is not None else ""))
        else:
            lines.append(f"{r['label']:46s} " + ", ".join(f"{k} {v}" for k, v in r.items() if k != "label"))
    lines.append(f"verdict differences, naive vs ALIAS: {len(res['differences'])}")
    lines += [f"  {d}" for d in res["differences"]]
    for r in res["runs"]:
        if "differences_vs_local" in r:
            lines.append(f"verdict differences, {r['label']} vs local: {len(r['differences_vs_local'])}")
    if "paper_grades" in res:
        lines += paper_lines(res["paper_grades"])
    return "\n".join(lines)


def paper_lines(p: dict) -> list[str]:
    """The paper grades' lines: outputs per minute, passes, seconds per output over the name grade."""
    lines = [f"paper grades on {p['outputs']} outputs (cold caches):",
             f"  {'grade':36s} {'outputs/min':>12s} {'wall s':>9s} {'passed':>7s} {'x name s/output':>16s}"]
    for label, _grades in PAPER_GRADES:
        ratio = p[f"{label}_s"] / p["name_s"]
        shown = {"behavior": "behavior, refinement procedure", "behavior_renaming": "behavior, renaming procedure"}
        lines.append(f"  {shown.get(label, label):36s} {p[f'{label}_per_min']:12.1f} {p[f'{label}_s']:9.1f} "
                     f"{p[f'{label}_passed']:7d} {ratio:16.2f}")
    if p.get("by_verdict"):
        lines.append("  by the refinement procedure's verdict (seconds summed over each output's own wall time):")
        lines.append(f"  {'outputs':24s} {'n':>4s} {'name s':>8s} {'renaming s':>11s} {'refinement s':>13s} "
                     f"{'renaming x':>11s} {'refinement x':>13s}")
        for r in p["by_verdict"]:
            lines.append(f"  {'accepted' if r['accepted'] else 'rejected':24s} {r['outputs']:4d} {r['name_s']:8.1f} "
                         f"{r['behavior_renaming_s']:11.1f} {r['behavior_s']:13.1f} "
                         f"{r['behavior_renaming_over_name']:11.2f} {r['behavior_over_name']:13.2f}")
    return lines


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ids", default="", help="JSON list of spec ids (default: all)")
    ap.add_argument("--sample", type=int, default=0, help="draw this many spec ids instead (with --seed)")
    ap.add_argument("--seed", type=int, default=33, help="seed of --sample")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--sany-timeout", type=float, default=60)
    ap.add_argument("--tlc-timeout", type=float, default=300)
    ap.add_argument("--memory-mb", type=int, default=2048)
    ap.add_argument("--levers", action="store_true", help="time ALIAS with one lever off at a time")
    ap.add_argument("--dask", type=int, default=0, help="also grade on a Dask LocalCluster of N workers")
    ap.add_argument("--data", default="", help="stage folders of a TLA+-Bench pipeline run (name/behavior)")
    ap.add_argument("--regimes", default="default", help="generation regimes, comma-separated (default,cfgaware)")
    ap.add_argument("--paper-only", action="store_true",
                    help="only the name and behavior grades (both procedures) of --data, no tlabench runs")
    ap.add_argument("--work", default="", help="folder for temporary files (default: the system's)")
    ap.add_argument("--json", default="", help="also write the numbers to this JSON file")
    args = ap.parse_args(argv)
    if args.paper_only and not args.data:
        ap.error("--paper-only needs --data")
    res = run(args)
    print(report(res) if "runs" in res else "\n".join(paper_lines(res["paper_grades"])))
    if args.json:
        slim = res | {"runs": [{k: v for k, v in r.items() if k != "verdicts"} for r in res.get("runs", [])]}
        Path(args.json).write_text(json.dumps(slim, indent=2, default=str) + "\n")
    return res


if __name__ == "__main__":
    main()
