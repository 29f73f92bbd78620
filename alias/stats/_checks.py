"""Input checks shared by the :mod:`alias.stats` functions (all raise ``ValueError``)."""
from __future__ import annotations

import numbers

import numpy as np

#: Multiplier that turns a difference of two fractions into percentage points.
PERCENT_POINTS = 100.0


def as_vector(x, name: str, *, min_len: int = 1) -> np.ndarray:
    """``x`` as a finite 1-D float array of length >= ``min_len``; ValueError otherwise."""
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{name}: cannot convert to a float array ({e})") from None
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name}: empty input")
    if arr.size < min_len:
        raise ValueError(f"{name}: needs at least {min_len} values, got {arr.size}")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"{name}: {int(bad.sum())} NaN or infinite value(s), first at position "
                         f"{int(np.flatnonzero(bad)[0])}")
    return arr


def same_length(**arrays: np.ndarray) -> int:
    """The common length of ``arrays``; ValueError when they differ."""
    lens = {k: len(v) for k, v in arrays.items()}
    if len(set(lens.values())) != 1:
        raise ValueError("mismatched lengths: " + ", ".join(f"{k}={n}" for k, n in lens.items()))
    return next(iter(lens.values()))


def check_fractions(arr: np.ndarray, name: str, *, low: float = 0.0, high: float = 1.0) -> None:
    """ValueError unless every value lies in [low, high] (rates are fractions, not percent)."""
    if arr.min() < low or arr.max() > high:
        raise ValueError(f"{name}: values must be fractions in [{low:g}, {high:g}] "
                         f"(got min {arr.min():g}, max {arr.max():g}); pass scale=1.0 for "
                         "quantities that are not pass rates, such as log-likelihoods")


def check_scale(scale: float) -> float:
    if not isinstance(scale, numbers.Real) or not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"scale must be a positive finite number, got {scale!r}")
    return float(scale)


def check_count(n, name: str) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"{name} must be a positive integer, got {n!r}")
    return int(n)


def check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def check_level(level, name: str) -> float:
    if not isinstance(level, numbers.Real) or not 0.0 < level < 1.0:
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {level!r}")
    return float(level)
