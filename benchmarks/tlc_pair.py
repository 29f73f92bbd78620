"""How much two TLC processes at once gain over one on this machine: the ceiling of the
verify ratio (``benchmarks/verify.py``), measured on real models.

For each task: the original copy's TLC run (``-workers 1``, the settings of
``pipelines/examples/params.yaml``) alone, with the busy CPU seconds of the whole machine
(``/proc/stat``) over that run, then two identical runs at once. Printed per task and JVM
flag variant: wall seconds alone, cores kept busy alone, wall seconds of the pair, and the
gain ``2 x alone / pair`` (2.00 = the second process costs nothing; one process that keeps
``c`` cores busy leaves at most ``cores / c``). Needs the TLA+ Examples pipeline's ingest and
rename outputs (``cd pipelines/examples && dvc pull``) and a quiet machine.

    python benchmarks/tlc_pair.py                                    # btree, FastPaxos, MCBakery
    python benchmarks/tlc_pair.py --tasks btree.btree.btree --variants "-" "-XX:ActiveProcessorCount=1"
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from alias.config import load_config  # noqa: E402
from alias.corpus.testset import TestSet  # noqa: E402
from alias.corpus.verify import Copy, _copies  # noqa: E402
from alias.stages.common import tool_config  # noqa: E402
from alias.tla import jvm, sany, servers, tlc, tools  # noqa: E402
from benchmarks.verify import busy_cpu_s  # noqa: E402

PIPELINE = REPO / "pipelines" / "examples"
TASKS = ["btree.btree.btree", "SimplifiedFastPaxos.FastPaxos.FastPaxos", "Bakery-Boulangerie.Bakery.MCBakery"]


def with_jvm_flags(flags: list[str]):
    """Make every later tool run start its JVM with ``flags`` added (a benchmark lever)."""
    base = jvm.jvm_args
    for module in (tlc, sany, servers):  # the modules that build a run's JVM command
        module.jvm_args = lambda config, tmp: (lambda a: a[:1] + flags + a[1:])(base(config, tmp))


def run_pair(copy: Copy, config: tools.ToolConfig) -> tuple[float, float, float, str]:
    """(wall alone s, cores busy alone, wall of two at once s, TLC's result kind)."""
    c0, t0 = busy_cpu_s(), time.perf_counter()
    alone = tools.run_tlc(copy.files, copy.main, copy.cfg_text, config)
    wall = time.perf_counter() - t0
    cores = (busy_cpu_s() - c0) / wall
    threads = [threading.Thread(target=tools.run_tlc, args=(copy.files, copy.main, copy.cfg_text, config))
               for _ in range(2)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return wall, cores, time.perf_counter() - t0, alone.kind


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="*", default=TASKS)
    ap.add_argument("--variants", nargs="*", default=["-"], help="extra JVM flags per variant ('-' = none)")
    args = ap.parse_args()
    os.chdir(PIPELINE)
    config = load_config([REPO / "params.yaml", PIPELINE / "params.yaml"], {})
    testset = TestSet.load(config.paths, verified=False)
    tc = tool_config(config)  # what the verify stage runs with (CDS, JVM properties, seed)
    print(f"{os.cpu_count()} cores; {tools.tool_version(tc)}")
    print(f"{'task':42s} {'JVM flags':32s} {'alone s':>8s} {'cores':>6s} {'pair s':>7s} {'gain':>5s}")
    for task_id in args.tasks:
        task = testset.tasks[testset.tasks.task_id == task_id].iloc[0]
        original, _ = _copies(testset, task)
        for variant in args.variants:
            with_jvm_flags([] if variant == "-" else variant.split())
            wall, cores, pair, kind = run_pair(original, tc)
            print(f"{task_id[:42]:42s} {variant[:32]:32s} {wall:8.1f} {cores:6.2f} {pair:7.1f} "
                  f"{2 * wall / pair:5.2f}  {kind}", flush=True)


if __name__ == "__main__":
    main()
