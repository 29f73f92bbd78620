"""Sign test, two-group permutation test and Spearman correlation with a permutation p-value.

Paper: Methods, Metrics (sign test over tasks whose rates differ; Experiment 1 "18 tasks
that now fail and two that now pass (sign test p=0.0004)"), Appendix L (file continuation:
permutation test of two mean decreases, Spearman correlation with a permutation p-value)
and Appendix M (known algorithm names: permutation test on the difference between two mean
decreases).

Randomized p-values use ``n_permutations`` uniformly random permutations from
``np.random.default_rng(seed)``: ``rng.permuted(np.tile(np.arange(n), (B, 1)), axis=1)``
(row b = permutation b). They are ``(1 + #{|T*| >= |T|}) / (1 + B)`` (the observed
labelling counts as one permutation, so p > 0; Phipson & Smyth 2010), two-sided, where a
relative tolerance of 1e-10 absorbs rounding in ``|T*| >= |T|``. Errors: ``ValueError`` on
empty input, NaN/inf, mismatched lengths and invalid arguments.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as _sps

from ._checks import (PERCENT_POINTS, as_vector, check_count, check_fractions, check_scale,
                      check_seed, same_length)
from .bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED

_REL_TOL = 1e-10


@dataclass(frozen=True)
class SignTestResult:
    """Two-sided exact sign test over tasks.

    ``n_a_higher``/``n_b_higher``: tasks with ``a > b`` / ``a < b``; ``n_ties``: tasks with
    equal values (dropped); ``n_tasks`` = all tasks. ``p_value`` = P(|K - m/2| >= |k - m/2|)
    for K ~ Binomial(m, 1/2), m = n_a_higher + n_b_higher, k = n_a_higher; 1.0 when m = 0.
    """

    n_a_higher: int
    n_b_higher: int
    n_ties: int
    n_tasks: int
    p_value: float


@dataclass(frozen=True)
class PermutationResult:
    """Difference of two group means with a two-sided permutation p-value.

    ``estimate = mean_group - mean_other``, all three in ``scale`` units (percentage points
    for rate differences with the default scale).
    """

    estimate: float
    mean_group: float
    mean_other: float
    n_group: int
    n_other: int
    p_value: float
    n_permutations: int
    seed: int
    scale: float


@dataclass(frozen=True)
class SpearmanResult:
    """Spearman rank correlation ``rho`` (average ranks for ties) and a two-sided permutation
    p-value for H0: x and y are independent."""

    rho: float
    p_value: float
    n: int
    n_permutations: int
    seed: int


def sign_test(a, b, *, atol: float = 1e-12) -> SignTestResult:
    """Two-sided sign test of paired per-task values over the tasks whose values differ.

    Paper: Methods, Metrics ("a two-sided sign test over the tasks whose pass rates
    differ"); Experiment 1 results; Appendix U (counts of tasks that now fail / now pass).

    The p-value is computed exactly with integer binomial coefficients (no scipy), i.e.
    ``min(1, 2 * sum_{i <= min(k, m-k)} C(m, i) / 2^m)``, which equals
    ``scipy.stats.binomtest(k, m, 0.5).pvalue``.

    Args:
        a, b: shape (n_tasks,), aligned by task (any units, typically pass rates).
        atol: values with ``|a - b| <= atol`` count as ties (rates like 3/5 computed two ways).

    Returns:
        :class:`SignTestResult`.

    Raises:
        ValueError: empty, non-1-D, NaN/inf or mismatched inputs, or negative ``atol``.
    """
    a = as_vector(a, "a")
    b = as_vector(b, "b")
    n = same_length(a=a, b=b)
    if not atol >= 0:
        raise ValueError(f"atol must be >= 0, got {atol!r}")
    d = a - b
    up = int(np.sum(d > atol))
    down = int(np.sum(d < -atol))
    m = up + down
    if m == 0:
        p = 1.0
    else:
        tail = sum(math.comb(m, i) for i in range(min(up, down) + 1))
        p = min(1.0, 2 * tail / 2 ** m)
    return SignTestResult(n_a_higher=up, n_b_higher=down, n_ties=n - m, n_tasks=n, p_value=p)


def _permutations(n: int, n_permutations: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.permuted(np.tile(np.arange(n), (n_permutations, 1)), axis=1)


def _two_sided_p(observed: float, permuted: np.ndarray) -> float:
    hits = np.abs(permuted) >= abs(observed) * (1.0 - _REL_TOL)
    return float((1 + int(hits.sum())) / (1 + permuted.size))


def permutation_test_groups(values, in_group, *, n_permutations: int = DEFAULT_RESAMPLES,
                            seed: int = DEFAULT_SEED,
                            scale: float = PERCENT_POINTS) -> PermutationResult:
    """Permutation test of the difference in mean per-task value between two task groups.

    Paper: Appendix M ("a permutation test on the difference between the two mean
    decreases", tasks with vs without a known algorithm name) and Appendix L (tasks with vs
    without a long continuation run); the same test applies to tasks with vs without hidden
    names. Statistic ``T = mean(values[in_group]) - mean(values[~in_group])``; group labels
    are permuted ``n_permutations`` times (the first ``n_group`` positions of each
    permutation form the group); two-sided p as in the module docstring.

    Args:
        values: shape (n_tasks,), e.g. per-task decrease ``original - renamed`` as fractions
            in [-1, 1] (checked with the default ``scale=100``, which reports points).
        in_group: shape (n_tasks,), booleans (or 0/1); both groups must be non-empty.
        n_permutations: default 10,000.
        seed: permutation seed.
        scale: 100 (default) reports percentage points; 1.0 for other units.

    Returns:
        :class:`PermutationResult`.

    Raises:
        ValueError: empty, non-1-D, NaN/inf or mismatched inputs, a non-boolean group mask,
            an empty group, values outside [-1, 1] with ``scale=100``, invalid arguments.
    """
    v = as_vector(values, "values")
    scale = check_scale(scale)
    if scale == PERCENT_POINTS:
        check_fractions(v, "values", low=-1.0, high=1.0)
    g = np.asarray(in_group)
    if g.ndim != 1 or g.size == 0:
        raise ValueError("in_group: expected a non-empty 1-D array")
    if g.dtype != bool:
        gf = np.asarray(g, dtype=float)
        if not np.isin(gf, (0.0, 1.0)).all():
            raise ValueError("in_group must hold booleans (or 0/1), no NaN")
        g = gf.astype(bool)
    n = same_length(values=v, in_group=g)
    n1 = int(g.sum())
    if n1 == 0 or n1 == n:
        raise ValueError(f"both groups need at least one task (group has {n1} of {n})")
    b = check_count(n_permutations, "n_permutations")
    seed = check_seed(seed)
    obs = v[g].mean() - v[~g].mean()
    total = v.sum()
    s1 = v[_permutations(n, b, seed)[:, :n1]].sum(axis=1)
    perm = s1 / n1 - (total - s1) / (n - n1)
    return PermutationResult(estimate=float(obs * scale), mean_group=float(v[g].mean() * scale),
                             mean_other=float(v[~g].mean() * scale), n_group=n1,
                             n_other=n - n1, p_value=_two_sided_p(obs, perm),
                             n_permutations=b, seed=seed, scale=scale)


def spearman_permutation(x, y, *, n_permutations: int = DEFAULT_RESAMPLES,
                         seed: int = DEFAULT_SEED) -> SpearmanResult:
    """Spearman correlation of two per-task quantities with a permutation p-value.

    Paper: Appendix L ("The run on the original minus the run on the renamed copy has a
    Spearman correlation of 0.07 with the decrease (permutation p=0.48)"). ``rho`` is the
    Pearson correlation of average ranks (equal to ``scipy.stats.spearmanr``); the null
    distribution keeps ``x`` fixed and pairs it with ``n_permutations`` random
    permutations of the ranks of ``y`` (ties keep their average ranks).

    Args:
        x, y: shape (n,), n >= 3, aligned by task, any units; neither may be constant.
        n_permutations: default 10,000.
        seed: permutation seed.

    Returns:
        :class:`SpearmanResult`.

    Raises:
        ValueError: empty, non-1-D, NaN/inf, mismatched or constant inputs, fewer than 3
            values, invalid arguments.
    """
    x = as_vector(x, "x", min_len=3)
    y = as_vector(y, "y", min_len=3)
    n = same_length(x=x, y=y)
    for name, arr in (("x", x), ("y", y)):
        if np.all(arr == arr[0]):
            raise ValueError(f"{name} is constant; Spearman's rho is undefined")
    b = check_count(n_permutations, "n_permutations")
    seed = check_seed(seed)
    rx = _sps.rankdata(x)
    ry = _sps.rankdata(y)
    rx -= rx.mean()
    ry -= ry.mean()
    denom = float(np.sqrt((rx @ rx) * (ry @ ry)))
    rho = float(rx @ ry / denom)
    perm = ry[_permutations(n, b, seed)] @ rx / denom
    return SpearmanResult(rho=rho, p_value=_two_sided_p(rho, perm), n=n, n_permutations=b,
                          seed=seed)
