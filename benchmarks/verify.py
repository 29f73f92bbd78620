"""Wall time of the verify stage with 1 and with 2 parallel TLC processes, and their ratio.

Usage (from the repository root, after setup):

    python benchmarks/verify.py                       # the real corpus in ../shared
    python benchmarks/verify.py --limit 30            # its first 30 tasks only
    python benchmarks/verify.py --corpus alias/corpus/embedded --descriptions ""

Ingest and rename run once in a temporary directory; verify then runs twice on the same
tasks, with ``tla.parallel`` = 1 and = 2 (``tla.workers`` = 1 each time).
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import dataclasses  # noqa: E402

from alias.config import load_config  # noqa: E402
from alias.stages import ingest, rename, verify  # noqa: E402
from alias.store.db import read_parquet, write_parquet  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    shared = REPO.parent / "shared" / "corpus"
    ap.add_argument("--corpus", default=str(shared / "tlaplus-examples"))
    ap.add_argument("--descriptions", default=str(shared / "tlabench" / "TLA_Description.json"))
    ap.add_argument("--library", nargs="*", default=[str(shared / "deps" / "community-modules"),
                                                     str(shared / "deps" / "tlaps-library")])
    ap.add_argument("--max-runtime", type=float, default=30, help="manifest runtime cap (s)")
    ap.add_argument("--timeout", type=float, default=300, help="TLC time limit per run (s)")
    ap.add_argument("--limit", type=int, default=0, help="verify only the first N tasks (0 = all)")
    args = ap.parse_args()

    config = load_config(REPO / "params.yaml", {
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
        times = {}
        for parallel in (1, 2):
            c = dataclasses.replace(config, tla=dataclasses.replace(config.tla, parallel=parallel))
            t0 = time.perf_counter()
            summary = verify.run(c, dataclasses.replace(c.paths, verify=Path(f"data/verify_p{parallel}")))
            times[parallel] = time.perf_counter() - t0
            print(f"parallel={parallel}: {times[parallel]:8.1f} s wall, "
                  f"{summary['tasks']} tasks, {summary['test_set']} in the test set", flush=True)
        print(f"ratio (1 process / 2 processes): {times[1] / times[2]:.2f}x")
    finally:
        os.chdir(old)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
