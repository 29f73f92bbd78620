"""Per-task pass rates (pass@1), unbiased pass@k and the seen/unseen cells of Experiment 2.

Units: every rate here is a fraction in [0, 1]. Differences are turned into percentage
points only by the estimators in :mod:`alias.stats.bootstrap` (their ``scale`` argument).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction

import numpy as np
import pandas as pd


def pass_rates(verdicts: pd.DataFrame, *, task_col: str = "task_id", condition_col: str = "condition",
               passed_col: str = "passed", by: Sequence[str] = (),
               n_samples: int | None = None) -> pd.DataFrame:
    """Pass rate of every task under every condition: the pass@1 estimate of the paper.

    Paper: Methods, Metrics ("For each task and condition, the pass rate is the fraction of
    the five samples that pass, which estimates pass@1"); Experiment 2 uses the same rate per
    fine-tuned model (pass ``by=("model",)``).

    Args:
        verdicts: one row per graded sample, with columns ``task_col``, ``condition_col``,
            ``passed_col`` (bool, or 0/1 integers) and the columns named in ``by``.
        by: extra grouping columns placed before the task (e.g. ``("model",)``).
        n_samples: when given, every group must hold exactly this many samples.

    Returns:
        A DataFrame with one row per group (``*by``, task, condition), sorted by those keys,
        and columns ``n_samples`` (int), ``n_passed`` (int) and ``rate`` (float fraction in
        [0, 1], ``n_passed / n_samples``).

    Raises:
        ValueError: empty frame, a missing column, a missing/NaN value in any key or in
            ``passed_col``, a ``passed_col`` value other than True/False/0/1, or a group whose
            size differs from ``n_samples``.
    """
    keys = [*by, task_col, condition_col]
    if not isinstance(verdicts, pd.DataFrame):
        raise ValueError("verdicts must be a pandas DataFrame")
    missing = [c for c in [*keys, passed_col] if c not in verdicts.columns]
    if missing:
        raise ValueError(f"verdicts lacks column(s) {missing}")
    if verdicts.empty:
        raise ValueError("verdicts: empty input")
    for c in [*keys, passed_col]:
        if verdicts[c].isna().any():
            raise ValueError(f"verdicts[{c!r}] holds {int(verdicts[c].isna().sum())} missing/NaN value(s)")
    passed = verdicts[passed_col]
    if passed.dtype != bool:
        vals = pd.unique(passed)
        if not set(vals.tolist()) <= {0, 1}:
            raise ValueError(f"verdicts[{passed_col!r}] must be boolean (or 0/1), got values {sorted(map(repr, vals))[:5]}")
    frame = verdicts[keys].copy()
    frame["_passed"] = passed.astype(bool).astype(np.int64).to_numpy()
    out = (frame.groupby(keys, sort=True, observed=True)["_passed"]
           .agg(n_samples="size", n_passed="sum").reset_index())
    out["n_samples"] = out["n_samples"].astype(np.int64)
    out["n_passed"] = out["n_passed"].astype(np.int64)
    if n_samples is not None:
        wrong = out[out["n_samples"] != n_samples]
        if len(wrong):
            raise ValueError(f"{len(wrong)} group(s) do not hold {n_samples} samples, e.g. "
                             f"{wrong.iloc[0][keys].to_dict()} holds {int(wrong.iloc[0]['n_samples'])}")
    out["rate"] = out["n_passed"] / out["n_samples"]
    return out


def pass_at_k(n, c, k: int) -> np.ndarray:
    """Unbiased pass@k estimator of Chen et al. (2021): ``1 - C(n-c, k) / C(n, k)``.

    The paper reports only pass@1 (= ``c / n``, Methods, Metrics); this is for completeness.
    Computed exactly with integer binomials once per distinct (n, c) pair and rounded to the
    nearest float, so ``pass_at_k(n, c, 1) == c / n`` and the result is 1 when ``n - c < k``.

    Args:
        n: samples per task (int or int array, each >= k).
        c: passing samples per task (int or int array, 0 <= c <= n), broadcast with ``n``.
        k: the k of pass@k (positive int).

    Returns:
        Float array (0-d for scalar input) of fractions in [0, 1], broadcast shape of n, c.

    Raises:
        ValueError: empty input, NaN/non-integer values, c < 0, c > n, k < 1 or n < k.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    n_arr = np.asarray(n, dtype=float)
    c_arr = np.asarray(c, dtype=float)
    if n_arr.size == 0 or c_arr.size == 0:
        raise ValueError("pass_at_k: empty input")
    for name, arr in (("n", n_arr), ("c", c_arr)):
        if not np.isfinite(arr).all() or (arr != np.round(arr)).any():
            raise ValueError(f"pass_at_k: {name} must hold finite integers")
    try:
        n_arr, c_arr = np.broadcast_arrays(n_arr, c_arr)
    except ValueError:
        raise ValueError(f"pass_at_k: mismatched shapes n{np.shape(n)} and c{np.shape(c)}") from None
    if (c_arr < 0).any() or (c_arr > n_arr).any():
        raise ValueError("pass_at_k: need 0 <= c <= n")
    if (n_arr < k).any():
        raise ValueError(f"pass_at_k: every n must be >= k={k}")
    ni, ci = n_arr.astype(np.int64), c_arr.astype(np.int64)
    pairs, inverse = np.unique(np.stack([ni.ravel(), ci.ravel()], axis=1), axis=0, return_inverse=True)
    values = np.array([float(1 - Fraction(math.comb(int(nn) - int(cc), k), math.comb(int(nn), k)))
                       for nn, cc in pairs])
    return values[np.asarray(inverse).ravel()].reshape(n_arr.shape)


def seen_unseen_rates(rates: pd.DataFrame, trained_on: Mapping[str, str], *, model_col: str = "model",
                      task_col: str = "task_id", condition_col: str = "condition",
                      rate_col: str = "rate") -> pd.DataFrame:
    """Per-task rates of the model that saw each task and of the model that did not.

    Paper: Methods, Experiment 2 ("Fine-tuned models", "Randomized exposure"): copy A trains
    on half A, copy B on half B, so every task is *seen* by one copy and *unseen* by the other.

    Args:
        rates: long frame with one row per (model, task, condition), e.g. from
            ``pass_rates(verdicts, by=(model_col,))``; exactly two distinct models.
        trained_on: task id -> the model whose training set held that task.

    Returns:
        DataFrame indexed by task id (sorted), with a two-level column index
        ``(condition, "seen" | "unseen")`` holding the rates (fractions in [0, 1] for pass
        rates; whatever ``rate_col`` holds otherwise, e.g. mean log-likelihoods).

    Raises:
        ValueError: empty frame, missing columns, NaN rates, duplicate rows, not exactly two
            models, a task absent from ``trained_on``, a ``trained_on`` model that is not one
            of the two, or a task lacking a (model, condition) cell.
    """
    cols = [model_col, task_col, condition_col, rate_col]
    if not isinstance(rates, pd.DataFrame):
        raise ValueError("rates must be a pandas DataFrame")
    missing = [c for c in cols if c not in rates.columns]
    if missing:
        raise ValueError(f"rates lacks column(s) {missing}")
    if rates.empty:
        raise ValueError("rates: empty input")
    if rates[cols].isna().any().any():
        raise ValueError("rates holds missing/NaN values")
    if rates.duplicated([model_col, task_col, condition_col]).any():
        raise ValueError("rates holds duplicate (model, task, condition) rows")
    models = sorted(rates[model_col].unique().tolist())
    if len(models) != 2:
        raise ValueError(f"expected exactly two models, got {models}")
    tasks = sorted(rates[task_col].unique().tolist())
    absent = [t for t in tasks if t not in trained_on]
    if absent:
        raise ValueError(f"{len(absent)} task(s) missing from trained_on, e.g. {absent[0]!r}")
    foreign = sorted({trained_on[t] for t in tasks} - set(models))
    if foreign:
        raise ValueError(f"trained_on names model(s) {foreign} not in rates ({models})")
    wide = rates.pivot(index=task_col, columns=[condition_col, model_col], values=rate_col)
    conditions = sorted(rates[condition_col].unique().tolist())
    full = pd.MultiIndex.from_product([conditions, models])
    wide = wide.reindex(index=tasks, columns=full)
    if wide.isna().any().any():
        bad = wide[wide.isna().any(axis=1)].index[0]
        raise ValueError(f"task {bad!r} lacks a (condition, model) cell")
    seen_model = np.array([trained_on[t] for t in tasks])
    out = {}
    for cond in conditions:
        r0, r1 = wide[(cond, models[0])].to_numpy(), wide[(cond, models[1])].to_numpy()
        first_seen = seen_model == models[0]
        out[(cond, "seen")] = np.where(first_seen, r0, r1)
        out[(cond, "unseen")] = np.where(first_seen, r1, r0)
    res = pd.DataFrame(out, index=pd.Index(tasks, name=task_col))
    res.columns = pd.MultiIndex.from_tuples(res.columns, names=[condition_col, "exposure"])
    return res
