"""Percentile bootstrap over tasks: mean paired differences, TOST equivalence, exposure/DiD.

Paper: Methods, Metrics ("We report the mean difference between two conditions with a 95%
confidence interval from 10,000 bootstrap resamples of tasks ... For the two renamings, we
test equivalence with two one-sided tests at a margin of 5 points. Equivalence holds when
the 90% bootstrap interval of the difference lies inside the margin") and Methods,
Experiment 2, Analysis (exposure effect, DiD, renaming cost on unseen tasks); Appendices F,
N, O, T (Experiment 2 tables), M, R, S, U (Experiment 1/3 differences).

Conventions used by every function here:

* Inputs are per-task values, aligned by position: position ``i`` of every array is task
  ``i``. Pass rates are fractions in [0, 1] (e.g. ``pass_rates(...)["rate"]``).
* Results are reported multiplied by ``scale``. The default ``scale=100`` turns a difference
  of fractions into **percentage points** (the paper's style), and then every rate input is
  checked to lie in [0, 1] so that percent inputs are not scaled twice. Use ``scale=1.0``
  for quantities that are not pass rates (mean token log-likelihoods); no range check then.
* Resampling: the unit is the task. With ``n`` tasks, ``B`` resamples and seed ``s`` the
  resampled task indices are ``np.random.default_rng(s).integers(0, n, size=(B, n))``
  (row ``b`` = resample ``b``; see :func:`bootstrap_indices`). Paired values of one task
  always travel together. Every call with the same seed reuses the same indices, so
  intervals of different quantities over the same tasks come from the same resamples.
* Intervals are percentile intervals: the ``(1-confidence)/2`` and ``(1+confidence)/2``
  quantiles of the ``B`` resampled means, with numpy's default linear interpolation.
* Errors: ``ValueError`` on empty input, NaN/inf, mismatched lengths, non-1-D input, rates
  outside [0, 1] with ``scale=100``, and invalid ``n_resamples``/``seed``/levels/margin.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy import stats as _sps

from ._checks import (PERCENT_POINTS, as_vector, check_count, check_fractions, check_level,
                      check_scale, check_seed, same_length)

#: Seed used when the caller gives none (all resampling in alias.stats is seeded).
DEFAULT_SEED = 20260926
#: Bootstrap resamples / permutations by default (paper: 10,000).
DEFAULT_RESAMPLES = 10_000


@dataclass(frozen=True)
class BootstrapEstimate:
    """A mean over tasks with its percentile bootstrap interval, in the units of ``scale``.

    ``estimate`` is the plain (not resampled) mean; ``ci_low``/``ci_high`` bound the
    ``confidence`` percentile interval from ``n_resamples`` resamples of ``n_tasks`` tasks.
    """

    estimate: float
    ci_low: float
    ci_high: float
    confidence: float
    n_tasks: int
    n_resamples: int
    seed: int
    scale: float


@dataclass(frozen=True)
class PairedDifference(BootstrapEstimate):
    """Mean of ``a - b`` over tasks (``estimate``), plus the two means it compares.

    ``mean_a`` and ``mean_b`` are the means of ``a`` and ``b`` times ``scale`` (percent for
    pass rates with the default scale), so ``estimate == mean_a - mean_b`` up to rounding.
    """

    mean_a: float = float("nan")
    mean_b: float = float("nan")


@dataclass(frozen=True)
class TostResult:
    """Two one-sided tests of equivalence of ``mean(a - b)`` to 0 within ``±margin``.

    ``equivalent`` is the paper's decision: the ``1 - 2*alpha`` (90%) percentile bootstrap
    interval ``[ci_low, ci_high]`` lies strictly inside ``(-margin, margin)``.

    Bootstrap p-values (``p_lower_boot``, ``p_upper_boot``): fraction of the resampled means
    at or below ``-margin`` (test of H0: mean <= -margin) and at or above ``+margin`` (test of
    H0: mean >= +margin); ``p_boot`` is their maximum, the TOST p-value. ``p_boot < alpha``
    agrees with ``equivalent`` except when a bound sits within one interpolation step of
    the margin.

    t-based p-values (``p_lower_t``, ``p_upper_t``, ``p_t``): the classical paired TOST,
    one-sample t-tests of the per-task differences with ``n_tasks - 1`` degrees of freedom
    against ``-margin`` (alternative greater) and ``+margin`` (alternative less). When all
    differences are equal (zero standard error) each p-value is 0 if the mean lies strictly
    beyond the null bound and 1 otherwise.
    """

    estimate: float
    ci_low: float
    ci_high: float
    margin: float
    alpha: float
    equivalent: bool
    p_lower_boot: float
    p_upper_boot: float
    p_boot: float
    p_lower_t: float
    p_upper_t: float
    p_t: float
    n_tasks: int
    n_resamples: int
    seed: int
    scale: float


@dataclass(frozen=True)
class ExposureEffects:
    """Experiment 2 effects (Methods, Experiment 2, Analysis; Table 2; Appendices F, N, O).

    All four are :class:`BootstrapEstimate` from the same task resamples, in ``scale`` units
    (percentage points for pass rates):

    * ``exposure_original`` = mean_s(c_seen - c_unseen), the exposure effect with the
      original descriptions;
    * ``exposure_renamed`` = mean_s(r_seen - r_unseen), the exposure effect after renaming;
    * ``did`` = mean_s[(c - r)_seen - (c - r)_unseen] = exposure_original - exposure_renamed
      (paper's sign: positive means renaming costs more on seen tasks, i.e. renaming removes
      part of the gain from exposure);
    * ``unseen_cost`` = mean_s(c_unseen - r_unseen), the renaming cost on unseen tasks, where
      memory plays no part;
    * ``seen_cost`` = mean_s(c_seen - r_seen) (so ``did = seen_cost - unseen_cost``).

    ``mean_original_seen`` ... ``mean_renamed_unseen`` are the four cell means times
    ``scale`` (percent for pass rates; the rows of Table F.1).
    """

    exposure_original: BootstrapEstimate
    exposure_renamed: BootstrapEstimate
    did: BootstrapEstimate
    unseen_cost: BootstrapEstimate
    seen_cost: BootstrapEstimate
    mean_original_seen: float
    mean_original_unseen: float
    mean_renamed_seen: float
    mean_renamed_unseen: float
    n_tasks: int


def bootstrap_indices(n_tasks: int, n_resamples: int = DEFAULT_RESAMPLES,
                      seed: int = DEFAULT_SEED) -> np.ndarray:
    """Resampled task indices, shape ``(n_resamples, n_tasks)``, int64 in ``[0, n_tasks)``.

    Equal to ``np.random.default_rng(seed).integers(0, n_tasks, size=(n_resamples, n_tasks))``;
    this is the documented stream that every bootstrap in this module uses.

    Raises:
        ValueError: ``n_tasks`` or ``n_resamples`` not a positive integer, bad ``seed``.
    """
    n = check_count(n_tasks, "n_tasks")
    b = check_count(n_resamples, "n_resamples")
    rng = np.random.default_rng(check_seed(seed))
    return rng.integers(0, n, size=(b, n))


def _resampled_means(columns: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Means of the resampled rows: ``columns`` (n, k), ``idx`` (B, n) -> (B, k).

    One quantity: a gather ``columns[idx]``. Several: resample counts (one bincount) and a
    matrix product, so k quantities cost one pass over the indices.
    """
    b, n = idx.shape
    if columns.shape[1] == 1:
        return columns[:, 0][idx].mean(axis=1)[:, None]
    counts = np.bincount((idx + (np.arange(b) * n)[:, None]).ravel(), minlength=b * n)
    return counts.reshape(b, n).astype(float) @ columns / n


def _interval(boot: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.percentile(boot, [100.0 * tail, 100.0 * (1.0 - tail)], axis=0)
    return lo, hi


def _estimates(columns: np.ndarray, *, n_resamples: int, seed: int, confidence: float,
               scale: float) -> list[BootstrapEstimate]:
    n = columns.shape[0]
    idx = bootstrap_indices(n, n_resamples, seed)
    boot = _resampled_means(columns, idx) * scale
    lo, hi = _interval(boot, confidence)
    est = columns.mean(axis=0) * scale
    return [BootstrapEstimate(float(est[j]), float(lo[j]), float(hi[j]), confidence, n,
                              n_resamples, seed, scale) for j in range(columns.shape[1])]


def _paired(a, b, scale, min_len=1) -> tuple[np.ndarray, np.ndarray]:
    a = as_vector(a, "a", min_len=min_len)
    b = as_vector(b, "b", min_len=min_len)
    same_length(a=a, b=b)
    if scale == PERCENT_POINTS:
        check_fractions(a, "a")
        check_fractions(b, "b")
    return a, b


def bootstrap_mean(values, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                   confidence: float = 0.95, scale: float = 1.0) -> BootstrapEstimate:
    """Mean of one per-task quantity with a percentile bootstrap interval over tasks.

    Paper: Methods, Metrics (bootstrap over tasks). Generic building block; for the paired
    differences of the paper use :func:`mean_difference`.

    Args:
        values: shape (n_tasks,), finite floats, any units (no range check).
        scale: multiplier applied to the estimate and the interval (default 1: as given).

    Returns:
        :class:`BootstrapEstimate`.

    Raises:
        ValueError: empty, non-1-D, NaN/inf input or invalid arguments.
    """
    v = as_vector(values, "values")
    scale = check_scale(scale)
    return _estimates(v[:, None], n_resamples=check_count(n_resamples, "n_resamples"),
                      seed=check_seed(seed), confidence=check_level(confidence, "confidence"),
                      scale=scale)[0]


def mean_difference(a, b, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                    confidence: float = 0.95, scale: float = PERCENT_POINTS) -> PairedDifference:
    """Mean paired difference ``mean_s(a_s - b_s)`` with a 95% percentile bootstrap interval.

    Paper: Methods, Metrics; e.g. Experiment 1 "a mean decrease per task of 10.1 points (95%
    CI 5.0 to 15.7)" with ``a`` = original rates and ``b`` = renamed rates per task.

    Args:
        a, b: shape (n_tasks,), per-task pass rates as fractions in [0, 1], aligned by task.
        n_resamples: bootstrap resamples of tasks (default 10,000).
        seed: seed of the resampling stream (see :func:`bootstrap_indices`).
        confidence: interval level (default 0.95).
        scale: 100 (default) reports percentage points; 1.0 for e.g. log-likelihoods.

    Returns:
        :class:`PairedDifference` (estimate, ci_low, ci_high in ``scale`` units; n_tasks ...).

    Raises:
        ValueError: empty, non-1-D, NaN/inf or mismatched inputs; with ``scale=100`` any rate
            outside [0, 1]; invalid ``n_resamples``, ``seed``, ``confidence`` or ``scale``.
    """
    scale = check_scale(scale)
    a, b = _paired(a, b, scale)
    est = _estimates((a - b)[:, None], n_resamples=check_count(n_resamples, "n_resamples"),
                     seed=check_seed(seed), confidence=check_level(confidence, "confidence"),
                     scale=scale)[0]
    return PairedDifference(est.estimate, est.ci_low, est.ci_high, est.confidence, est.n_tasks,
                            est.n_resamples, est.seed, est.scale,
                            mean_a=float(a.mean() * scale), mean_b=float(b.mean() * scale))


def tost_equivalence(a, b, *, margin: float = 5.0, alpha: float = 0.05,
                     n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                     scale: float = PERCENT_POINTS) -> TostResult:
    """Equivalence of two conditions by two one-sided tests (TOST) at ``±margin``.

    Paper: Methods, Metrics ("two one-sided tests at a margin of 5 points. Equivalence holds
    when the 90% bootstrap interval of the difference lies inside the margin"); Appendix R
    (random vs meaningful names), Appendix P and Experiment 3 (90% intervals).

    Args:
        a, b: shape (n_tasks,), per-task pass rates as fractions in [0, 1], aligned by task;
            the tested quantity is ``mean(a - b)``. ``n_tasks >= 2`` (t-test).
        margin: equivalence margin in ``scale`` units (default 5 percentage points), > 0.
        alpha: level of each one-sided test (default 0.05, i.e. a 90% interval).
        n_resamples, seed: as in :func:`mean_difference` (same stream, so the point estimate
            and resamples match a ``mean_difference`` call with the same seed).
        scale: 100 (default) for percentage points.

    Returns:
        :class:`TostResult`; see its docstring for the two kinds of p-values.

    Raises:
        ValueError: as :func:`mean_difference`, plus fewer than 2 tasks, ``margin <= 0`` or
            ``alpha`` outside (0, 0.5).
    """
    scale = check_scale(scale)
    a, b = _paired(a, b, scale, min_len=2)
    if isinstance(margin, bool) or not isinstance(margin, numbers.Real) or not np.isfinite(margin) \
            or margin <= 0:
        raise ValueError(f"margin must be a positive number, got {margin!r}")
    alpha = check_level(alpha, "alpha")
    if alpha >= 0.5:
        raise ValueError(f"alpha must be below 0.5, got {alpha!r}")
    n_resamples = check_count(n_resamples, "n_resamples")
    seed = check_seed(seed)
    d = (a - b) * scale
    n = d.size
    boot = _resampled_means(d[:, None], bootstrap_indices(n, n_resamples, seed))[:, 0]
    lo, hi = np.percentile(boot, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    est = float(d.mean())
    p_lo_b = float(np.mean(boot <= -margin))
    p_hi_b = float(np.mean(boot >= margin))
    se = float(d.std(ddof=1) / np.sqrt(n))
    if se > 0:
        p_lo_t = float(_sps.t.sf((est + margin) / se, n - 1))
        p_hi_t = float(_sps.t.cdf((est - margin) / se, n - 1))
    else:
        p_lo_t = 0.0 if est > -margin else 1.0
        p_hi_t = 0.0 if est < margin else 1.0
    return TostResult(estimate=est, ci_low=float(lo), ci_high=float(hi), margin=float(margin),
                      alpha=alpha, equivalent=bool(-margin < lo and hi < margin),
                      p_lower_boot=p_lo_b, p_upper_boot=p_hi_b, p_boot=max(p_lo_b, p_hi_b),
                      p_lower_t=p_lo_t, p_upper_t=p_hi_t, p_t=max(p_lo_t, p_hi_t),
                      n_tasks=n, n_resamples=n_resamples, seed=seed, scale=scale)


def exposure_effects(original_seen, original_unseen, renamed_seen, renamed_unseen, *,
                     n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                     confidence: float = 0.95, scale: float = PERCENT_POINTS) -> ExposureEffects:
    """Exposure effects, renaming costs and the difference in differences of Experiment 2.

    Paper: Methods, Experiment 2, Analysis::

        DiD = (1/n) sum_s [ (c_s - r_s)_seen - (c_s - r_s)_unseen ]

    with ``c_s``/``r_s`` the task's rates in the original/renamed condition, "seen" from the
    fine-tuned copy whose training half held task s and "unseen" from the other copy
    (Methods, Experiment 2, Fine-tuned models); results in Table 2, Appendices F, N, O, T.
    A positive DiD means renaming costs more on seen tasks. The bootstrap resamples tasks,
    keeping each task's four values together, and all five effects share the resamples.

    Args:
        original_seen, original_unseen, renamed_seen, renamed_unseen: shape (n_tasks,),
            aligned by task; pass rates as fractions in [0, 1] (or, with ``scale=1.0``, mean
            token log-likelihoods). See :func:`alias.stats.rates.seen_unseen_rates`.
        n_resamples, seed, confidence, scale: as in :func:`mean_difference`.

    Returns:
        :class:`ExposureEffects`.

    Raises:
        ValueError: empty, non-1-D, NaN/inf or mismatched inputs; with ``scale=100`` any rate
            outside [0, 1]; invalid ``n_resamples``, ``seed``, ``confidence`` or ``scale``.
    """
    scale = check_scale(scale)
    names = ("original_seen", "original_unseen", "renamed_seen", "renamed_unseen")
    cells = [as_vector(x, name) for x, name in zip((original_seen, original_unseen,
                                                     renamed_seen, renamed_unseen), names)]
    n = same_length(**dict(zip(names, cells)))
    if scale == PERCENT_POINTS:
        for x, name in zip(cells, names):
            check_fractions(x, name)
    cs, cu, rs, ru = cells
    columns = np.column_stack([cs - cu, rs - ru, (cs - rs) - (cu - ru), cu - ru, cs - rs])
    exp_o, exp_r, did, unseen, seen = _estimates(
        columns, n_resamples=check_count(n_resamples, "n_resamples"), seed=check_seed(seed),
        confidence=check_level(confidence, "confidence"), scale=scale)
    means = {f"mean_{name}": float(x.mean() * scale) for name, x in zip(names, cells)}
    return ExposureEffects(exposure_original=exp_o, exposure_renamed=exp_r, did=did,
                           unseen_cost=unseen, seen_cost=seen, n_tasks=n, **means)
