"""The exposure split of Experiment 2 (paper, Methods, Experiment 2, "Fine-tuned models").

"We split the 111 tasks at random with seed 20260926 into halves, A (55 tasks) and
B (56 tasks)." Every test task is seen by the model trained on its half and unseen by the
model trained on the other half.

The rule, exactly (so others can rebuild the split):

1. the test-set task ids are de-duplicated and sorted (Python string order), so the split
   does not depend on the order they arrive in;
2. ``perm = numpy.random.default_rng(seed).permutation(n)`` orders them at random;
3. the first ``n // 2`` tasks in that order form half ``A`` and the remaining
   ``n - n // 2`` half ``B``; with an odd count the smaller half comes first, as in the
   paper (55 + 56 = 111).

Public API::

    SPLIT_SEED = 20260926
    split_halves(task_ids, seed=SPLIT_SEED) -> DataFrame[task_id, half]
    other_half(half) -> str
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

__all__ = ["SPLIT_SEED", "HALVES", "split_halves", "other_half"]

#: The split seed of the paper (Methods, Experiment 2).
SPLIT_SEED = 20260926

#: The two halves, in the order the paper names them.
HALVES = ("A", "B")


def other_half(half: str) -> str:
    """``"B"`` for ``"A"`` and ``"A"`` for ``"B"``; ``ValueError`` otherwise."""
    if half not in HALVES:
        raise ValueError(f"half must be one of {HALVES}, got {half!r}")
    return HALVES[1 - HALVES.index(half)]


def split_halves(task_ids: Iterable[str], seed: int = SPLIT_SEED) -> pd.DataFrame:
    """Split the test set into halves A and B (rule in the module docstring).

    Args:
        task_ids: the test-set task ids (any order; duplicates are an error).
        seed: the split seed (default :data:`SPLIT_SEED`, the paper's).

    Returns:
        DataFrame with columns ``task_id`` (str) and ``half`` (``"A"``/``"B"``), one row per
        task, sorted by ``task_id``; ``n // 2`` rows have half A and ``n - n // 2`` half B.
        The same ids and seed always give the same frame.

    Raises:
        ValueError: fewer than two tasks, an empty or non-string id, a duplicate id, or a
            seed that is not a non-negative integer.
    """
    ids = list(task_ids)
    for t in ids:
        if not isinstance(t, str) or not t:
            raise ValueError(f"task ids must be non-empty strings, got {t!r}")
    if len(set(ids)) != len(ids):
        dup = sorted({t for t in ids if ids.count(t) > 1})
        raise ValueError(f"duplicate task ids in the test set: {dup[:5]}")
    if len(ids) < 2:
        raise ValueError(f"the split needs at least two tasks, got {len(ids)}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    ordered = sorted(ids)
    perm = np.random.default_rng(int(seed)).permutation(len(ordered))
    n_a = len(ordered) // 2
    half = {ordered[i]: ("A" if rank < n_a else "B") for rank, i in enumerate(perm)}
    return pd.DataFrame({"task_id": ordered, "half": [half[t] for t in ordered]})
