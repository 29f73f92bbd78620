"""Seconds per statistic of alias.stats on synthetic data, and vectorized vs plain-Python bootstrap.

Usage (from the repository root):

    python benchmarks/stats.py                       # 111 tasks, 10,000 resamples
    python benchmarks/stats.py --tasks 90 --repeat 5 --loop-resamples 2000

Synthetic data: per-task pass rates out of 5 samples (fractions) for two conditions and, for
the exposure statistics, four cells (seen/unseen x original/renamed). Each statistic runs
``--repeat`` times; the best time is printed. The plain-Python bootstrap (``random`` module,
lists, one resample at a time) runs ``--loop-resamples`` resamples and its time is
extrapolated linearly to ``--resamples``; the output says so.
"""
from __future__ import annotations

import argparse
import math
import random
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from alias import stats as S  # noqa: E402


def _best(fn, repeat: int) -> tuple[float, object]:
    best, out = math.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def python_bootstrap(a: list[float], b: list[float], n_resamples: int, seed: int,
                     confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean of a - b in points with a percentile bootstrap interval, in plain Python."""
    rng = random.Random(seed)
    n = len(a)
    d = [x - y for x, y in zip(a, b)]
    means = []
    for _ in range(n_resamples):
        total = 0.0
        for _ in range(n):
            total += d[rng.randrange(n)]
        means.append(100.0 * total / n)
    means.sort()

    def pct(q: float) -> float:
        h = (len(means) - 1) * q
        lo = math.floor(h)
        hi = min(lo + 1, len(means) - 1)
        return means[lo] + (h - lo) * (means[hi] - means[lo])

    tail = (1 - confidence) / 2
    return 100.0 * sum(d) / n, pct(tail), pct(1 - tail)


def python_loop_same_stream(a: np.ndarray, b: np.ndarray, n_resamples: int, seed: int) -> tuple[float, float]:
    """Python loop over the documented numpy index stream (one row per resample)."""
    rng = np.random.default_rng(seed)
    d = ((a - b) * 100).tolist()
    n = len(d)
    means = sorted(sum(d[i] for i in rng.integers(0, n, size=n).tolist()) / n for _ in range(n_resamples))
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=111)
    ap.add_argument("--resamples", type=int, default=S.DEFAULT_RESAMPLES)
    ap.add_argument("--loop-resamples", type=int, default=1000,
                    help="resamples for the plain-Python bootstrap (time extrapolated)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=S.DEFAULT_SEED)
    args = ap.parse_args()
    n, B, seed = args.tasks, args.resamples, args.seed

    rng = np.random.default_rng(0)
    p = rng.beta(0.5, 1.0, n)
    orig, ren = rng.binomial(5, p) / 5, rng.binomial(5, 0.7 * p) / 5
    cells = [rng.binomial(5, q * p) / 5 for q in (1.0, 0.8, 0.7, 0.6)]
    verdicts = pd.DataFrame({
        "task_id": np.repeat([f"t{i:03d}" for i in range(n)], 10),
        "condition": np.tile(np.repeat(["original", "random"], 5), n),
        "passed": rng.random(n * 10) < np.repeat(p, 10),
    })
    hidden = rng.random(n) < 78 / 111
    runs = rng.integers(0, 200, n).astype(float)

    print(f"alias.stats benchmark: {n} tasks, {B:,} resamples/permutations, best of {args.repeat}, "
          f"numpy {np.__version__}")
    cases = [
        ("pass_rates (DataFrame, %d rows)" % len(verdicts), lambda: S.pass_rates(verdicts)),
        ("pass_at_k (k=2, %d tasks)" % n, lambda: S.pass_at_k(5, np.round(orig * 5), 2)),
        ("sign_test", lambda: S.sign_test(orig, ren)),
        ("mean_difference (95% bootstrap)", lambda: S.mean_difference(orig, ren, n_resamples=B, seed=seed)),
        ("tost_equivalence (90% bootstrap + t)", lambda: S.tost_equivalence(orig, ren, n_resamples=B, seed=seed)),
        ("exposure_effects (5 effects, DiD)", lambda: S.exposure_effects(*cells, n_resamples=B, seed=seed)),
        ("permutation_test_groups", lambda: S.permutation_test_groups(orig - ren, hidden, n_permutations=B, seed=seed)),
        ("spearman_permutation", lambda: S.spearman_permutation(runs, orig - ren, n_permutations=B, seed=seed)),
    ]
    width = max(len(name) for name, _ in cases)
    vec_md = None
    for name, fn in cases:
        secs, out = _best(fn, args.repeat)
        if name.startswith("mean_difference"):
            vec_md = (secs, out)
        print(f"  {name:<{width}}  {secs:10.6f} s")

    secs_vec, md = vec_md
    m = args.loop_resamples
    secs_loop, (est, lo, hi) = _best(lambda: python_bootstrap(orig.tolist(), ren.tolist(), m, seed), 1)
    extrapolated = secs_loop * B / m
    print(f"plain-Python bootstrap (random module, lists): {m:,} resamples took {secs_loop:.4f} s; "
          f"extrapolated linearly to {B:,} resamples: {extrapolated:.3f} s")
    print(f"  its estimate and 95% CI ({m:,} resamples, its own RNG): {est:.2f} [{lo:.2f}, {hi:.2f}] points; "
          f"vectorized ({B:,}): {md.estimate:.2f} [{md.ci_low:.2f}, {md.ci_high:.2f}] points")
    print(f"ratio plain-Python / vectorized mean_difference: {extrapolated / secs_vec:.0f}x")
    lo2, hi2 = python_loop_same_stream(orig, ren, B, seed)
    print(f"check: Python loop over the same numpy index stream ({B:,} resamples) gives "
          f"[{lo2:.6f}, {hi2:.6f}]; vectorized [{md.ci_low:.6f}, {md.ci_high:.6f}]; "
          f"max abs difference {max(abs(lo2 - md.ci_low), abs(hi2 - md.ci_high)):.2e}")


if __name__ == "__main__":
    main()
