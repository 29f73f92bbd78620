"""Grading throughput on the grader's control samples, cold and from the tool-run cache.

Builds the controls (Appendix J) of the embedded corpus (or of the store's stage
outputs with --data), then grades every control sample twice per grade:

1. cold: a fresh tool-run cache, so every SANY/TLC run happens;
2. warm: a new grading journal on the same cache, so every verdict is recomputed but
   every tool run is answered from the cache (expected: zero TLC work).

Prints outputs graded per minute for each grade (name = parse + name from the same
runs; behavior), the TLC runs made, and the ratio warm/cold.

    python benchmarks/grade.py                # embedded corpus, built from its files
    python benchmarks/grade.py --data data    # the tasks of data/ingest, data/rename, data/verify
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))


def embedded_refs(seed: int = 7) -> dict:
    from test_grade import embedded_reference

    from alias.corpus.testset import Reference
    from alias.rename.cir import rename_task

    refs = {}
    for folder, model, system in (("Clock", "Clock", "Clock"), ("TokenRing", "MCTokenRing", "TokenRing"),
                                  ("TrafficLight", "TrafficLight", "TrafficLight"),
                                  ("Inventory", "Inventory", "Inventory"), ("Peterson", "Peterson", "Peterson"),
                                  ("BoundedBuffer", "BoundedBuffer", "BoundedBuffer")):
        ref = embedded_reference(folder, model, system)
        refs[(ref.task_id, "original")] = ref
        mods = {m: ref.files[f"{m}.tla"] for m in ref.author_modules}
        res = rename_task(mods, set(mods), ref.cfg_text, seed, ref.task_id)
        refs[(ref.task_id, "random")] = Reference(
            ref.task_id, "random", {f"{k}.tla": v for k, v in res.modules.items()},
            res.mapping.get(system, system), res.mapping.get(model, model), res.cfg_text,
            wrapper_module=res.mapping.get(model) if model != system else None,
            author_modules=tuple(sorted(res.modules)))
    return refs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="directory with ingest/, rename/, verify/ stage outputs")
    ap.add_argument("--parallel", type=int, default=1)
    args = ap.parse_args()

    from alias.grade.cache import ToolRunner
    from alias.grade.controls import build_controls, eligibility
    from alias.grade.run import grade_samples
    from alias.tla.tools import ToolConfig, find_jar

    if args.data:
        from alias.api import load_test_set

        refs = load_test_set(Path(args.data)).references()
    else:
        refs = embedded_refs()
    config = ToolConfig(jar=find_jar(None), timeout_s=300, memory_mb=1024)
    work = Path(tempfile.mkdtemp(prefix="alias-bench-grade-"))
    try:
        build_runner = ToolRunner(config, work / "build-cache")
        samples, sides = [], {}
        for (task, cond), ref in sorted(refs.items()):
            if cond != "original" or not eligibility(ref)[0]:
                continue
            for c in build_controls(ref, refs.get((task, "random")), build_runner, seed=1,
                                    max_mutants_tried=4, max_mutants_kept=2):
                if c.valid:
                    s = {"task_id": task, "condition": "original", "model": f"control:{c.kind}",
                         "sample_idx": c.sample_idx, "text": c.text}
                    samples.append(s)
                    if c.side is not None:
                        sides[(task, "original", s["model"], c.sample_idx)] = c.side
        print(f"{len(samples)} control samples from {len({s['task_id'] for s in samples})} tasks")
        ref_for = lambda s: refs.get((s["task_id"], "original"))  # noqa: E731
        for label, grades in (("name", ("parse", "name")), ("behavior", ("behavior",))):
            cache = work / f"cache-{label}"
            times = {}
            for phase in ("cold", "warm"):
                runner = ToolRunner(config, cache)
                t0 = time.perf_counter()
                v = grade_samples(samples, refs, runner, work / f"{label}-{phase}", parallel=args.parallel,
                                  outputs=sides, reference_for=ref_for, grades_for=lambda s, g=grades: g)
                dt = time.perf_counter() - t0
                times[phase] = dt
                one = v[v.grade == grades[-1]]
                print(f"  {label:8s} {phase}: {len(samples)} outputs in {dt:7.1f} s = "
                      f"{60 * len(samples) / dt:8.1f} outputs/min; tool runs {int(one.tool_runs.sum())}, "
                      f"from cache {int(one.cached_runs.sum())}, passed {int(one.passed.sum())}")
            print(f"  {label:8s} warm/cold time ratio: {times['warm'] / times['cold']:.4f} "
                  f"(speed-up {times['cold'] / times['warm']:.0f}x)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
