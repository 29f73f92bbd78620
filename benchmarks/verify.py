"""JVM start-up per SANY/TLC run on each jar, and the verify stage with 1 and 2 parallel
tool processes (longest expected run first), side by side.

Usage (from the repository root, after setup):

    python benchmarks/verify.py                       # the real corpus in ../shared
    python benchmarks/verify.py --limit 30            # its first 30 tasks only
    python benchmarks/verify.py --corpus alias/corpus/embedded --descriptions "" --library --profile ""
    python benchmarks/verify.py --startup-only        # the JVM start-up table alone

Start-up: the median wall time of ``--repeat`` SANY and TLC runs of a one-variable module
(so the run is nearly all JVM start and class loading), through ALIAS's sandboxed runner,
on v1.8.0 and on the 2.15 fallback jar, with and without the class-data-sharing archive.
Verify: ingest and rename run once in a temporary directory; verify then runs twice on the
same tasks (wall and busy CPU seconds of each, the machine's, and the ceiling the cores allow: the cores over
the cores one process keeps busy), with ``tla.parallel`` = 1 and = 2 (``tla.workers`` = 1 each time), with the
settings of ``pipelines/examples/params.yaml`` (``--profile``: ``corpus.max_expected_runtime_s``
300, ``tla.timeout_s`` 900, the Examples' JVM properties, TLC as a process).
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from alias.config import load_config  # noqa: E402
from alias.stages import ingest, rename, verify  # noqa: E402
from alias.store.db import read_parquet, write_parquet  # noqa: E402
from alias.tla.tools import ToolConfig, cds_archive, find_jar, run_sany, run_tlc, tool_version  # noqa: E402

SHARED = REPO.parent / "shared"
RECORD_JAR = SHARED / "tools" / "tla2tools-1.8.0" / "tla2tools.jar"
TINY = "---- MODULE Tiny ----\nVARIABLE x\nInit == x = 0\nNext == x' = 1 - x\n====\n"


def _fallback_jar() -> Path | None:
    try:
        os.environ.pop("ALIAS_TLA2TOOLS", None)
        return find_jar(None)
    except FileNotFoundError:
        return None


def startup(jar: Path, jvm_cache: str, repeat: int) -> tuple[float, float]:
    """Median wall seconds of a SANY run and of a TLC run of :data:`TINY` on ``jar``."""
    config = ToolConfig(jar=jar, timeout_s=120, memory_mb=2048, jvm_cache=jvm_cache)
    cds_archive(config)  # built before timing
    sany = [run_sany({"Tiny.tla": TINY}, "Tiny", config).wall_s for _ in range(repeat)]
    tlc = [run_tlc({"Tiny.tla": TINY}, "Tiny", "INIT Init\nNEXT Next\n", config).wall_s for _ in range(repeat)]
    return statistics.median(sany), statistics.median(tlc)


def startup_table(repeat: int) -> None:
    jars = [("v1.8.0", RECORD_JAR if RECORD_JAR.is_file() else None), ("2.15 (fallback)", _fallback_jar())]
    cds = tempfile.mkdtemp(prefix="alias-bench-cds-")
    try:
        print(f"JVM start-up per run (median of {repeat}; a one-variable module):")
        print(f"  {'jar':18s} {'archive':8s} {'SANY s':>7s} {'TLC s':>7s}")
        for label, jar in jars:
            if jar is None:
                print(f"  {label:18s} not found")
                continue
            for archive in ("no", "yes"):
                s, t = startup(jar, cds if archive == "yes" else "", repeat)
                print(f"  {label:18s} {archive:8s} {s:7.2f} {t:7.2f}   {tool_version(ToolConfig(jar=jar))}", flush=True)
    finally:
        shutil.rmtree(cds, ignore_errors=True)


def busy_cpu_s() -> float:
    """Busy CPU seconds of the whole machine so far (``/proc/stat``: every state but idle and
    iowait), so that the JVMs a pool or a tool server still holds are counted too; meant for
    a quiet machine. 0.0 where ``/proc/stat`` is missing."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0.0
    busy = sum(fields) - fields[3] - (fields[4] if len(fields) > 4 else 0)
    return busy / os.sysconf("SC_CLK_TCK")


def _ceiling(wall_s: float, cpu_s: float, processes: int = 2) -> float:
    """The most ``processes`` parallel runs can gain over one on this machine's cores when one
    run keeps ``cpu_s / wall_s`` cores busy."""
    return min(float(processes), (os.cpu_count() or 1) / max(cpu_s / wall_s, 1e-9))


def verify_ratio(args) -> None:
    files = [REPO / "params.yaml"] + ([REPO / args.profile] if args.profile else [])
    config = load_config(files, {
        "corpus.path": str(Path(args.corpus).resolve()), "corpus.descriptions": args.descriptions or "",
        "corpus.library": [str(Path(p).resolve()) for p in args.library if Path(p).is_dir()],
        "corpus.max_expected_runtime_s": args.max_runtime, "tla.timeout_s": args.timeout, "tla.workers": 1})
    work = Path(tempfile.mkdtemp(prefix="alias-bench-"))
    old = os.getcwd()
    os.chdir(work)
    try:
        ingest.run(config, config.paths)
        if args.limit:
            t = read_parquet(config.paths.ingest / "tasks.parquet").head(args.limit)
            write_parquet(t, config.paths.ingest / "tasks.parquet")
        rename.run(config, config.paths)
        times, cpu = {}, {}
        for parallel in (1, 2):
            c = dataclasses.replace(config, tla=dataclasses.replace(config.tla, parallel=parallel))
            c0, t0 = busy_cpu_s(), time.perf_counter()
            summary = verify.run(c, dataclasses.replace(c.paths, verify=Path(f"data/verify_p{parallel}")))
            times[parallel], cpu[parallel] = time.perf_counter() - t0, busy_cpu_s() - c0
            print(f"verify, parallel={parallel}: {times[parallel]:8.1f} s wall, {cpu[parallel]:8.1f} s CPU "
                  f"({cpu[parallel] / times[parallel]:.2f} cores busy), {summary['tasks']} tasks, "
                  f"{summary['test_set']} in the test set", flush=True)
        print(f"ratio (1 process / 2 processes): {times[1] / times[2]:.2f}x")
        print(f"ceiling on {os.cpu_count()} cores: {_ceiling(times[1], cpu[1]):.2f}x (the cores over the "
              "cores one process keeps busy: TLC's JIT, GC and disk threads use a second core part of the time)")
    finally:
        os.chdir(old)
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    corpus = SHARED / "corpus"
    ap.add_argument("--corpus", default=str(corpus / "tlaplus-examples"))
    ap.add_argument("--descriptions", default=str(corpus / "tlabench" / "TLA_Description.json"))
    ap.add_argument("--library", nargs="*", default=[str(corpus / "deps" / "community-modules"),
                                                     str(corpus / "deps" / "tlaps-library")])
    ap.add_argument("--max-runtime", type=float, default=300, help="manifest runtime cap (s)")
    ap.add_argument("--timeout", type=float, default=900, help="TLC time limit per run (s)")
    ap.add_argument("--profile", default="pipelines/examples/params.yaml",
                    help="a pipeline's params.yaml read after the repository's (the real corpus's "
                         "JVM properties, seed, TLC as a process); '' for none")
    ap.add_argument("--limit", type=int, default=0, help="verify only the first N tasks (0 = all)")
    ap.add_argument("--repeat", type=int, default=7, help="runs per start-up measurement")
    ap.add_argument("--startup-only", action="store_true")
    args = ap.parse_args()
    jar_env = os.environ.get("ALIAS_TLA2TOOLS")
    startup_table(args.repeat)
    if jar_env:
        os.environ["ALIAS_TLA2TOOLS"] = jar_env
    elif RECORD_JAR.is_file():
        os.environ["ALIAS_TLA2TOOLS"] = str(RECORD_JAR)
    if not args.startup_only:
        verify_ratio(args)


if __name__ == "__main__":
    main()
