"""Training sets of the exposure experiment (paper, Methods, Experiment 2; Appendices E, O).

"Both training sets contain the 292 model-checked TLA+-Bench tasks outside the test set.
We fine-tune one copy ... on these 292 tasks and the 55 of half A, and a second copy on the
292 and the 56 of half B, and we shuffle each training set with a fixed seed."

Two arms:

``task_pair`` (Methods, Experiment 2)
    Every example is a declarative description and its reference specification, in the
    fine-tuning prompt of Appendix E: ``prompt = build_prompt("finetuned", description)``,
    joined to the specification with one ``"\\n"`` (the separator
    :func:`alias.generate.local.generate_local` appends at test time). The loss covers the
    specification tokens only (:func:`tokenize_example` puts label ``-100`` on the prompt).
``spec_only`` (Appendix O)
    The 292 shared tasks stay description-specification pairs ("the same ... 292 shared
    description-specification pairs"); each test task of the half enters "as the raw .tla
    file alone, with no description and no prompt": ``prompt = ""``, so every token of
    the file is a loss token.

The reference specification of a task is the text of its system module (the module an
output replaces; :class:`alias.grade.reference.Reference`), the "raw .tla file".

Order: :func:`build_training_set` sorts the examples by ``(source, task_id)`` and shuffles
them with ``numpy.random.default_rng(seed).permutation``; :func:`epoch_orders` gives each
epoch its own permutation of that list from one seeded generator, so every example (and so
every test task of the half) appears exactly once per epoch.

Public API::

    ARMS = ("task_pair", "spec_only")
    build_training_set(records, split, half, arm, seed=0) -> list[dict]
    epoch_orders(n_examples, epochs, seed=0) -> list[list[int]]
    tokenize_example(tokenizer, example, max_length=2048) -> dict

Records are plain dicts (``task_id``, ``description``, ``reference``), so tests and other
corpora need no Parquet tables.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from alias.exposure.split import HALVES
from alias.generate.prompts import build_prompt, has_description

__all__ = ["ARMS", "PROMPT_SEPARATOR", "build_training_set", "epoch_orders",
           "tokenize_example", "IGNORE_INDEX"]

#: The two exposure arms: task-pair (Experiment 2) and specification-only (Appendix O).
ARMS = ("task_pair", "spec_only")

#: Joins the Appendix E prompt to the specification (as in ``generate_local``).
PROMPT_SEPARATOR = "\n"

#: Label of a token that the loss ignores (PyTorch's cross-entropy ``ignore_index``).
IGNORE_INDEX = -100


def _check_records(records: Iterable[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    by_id: dict[str, Mapping[str, Any]] = {}
    for i, r in enumerate(records):
        tid = r.get("task_id")
        if not isinstance(tid, str) or not tid:
            raise ValueError(f"record {i}: task_id must be a non-empty string")
        if tid in by_id:
            raise ValueError(f"duplicate record for task {tid!r}")
        ref = r.get("reference")
        if not isinstance(ref, str) or not ref.strip():
            raise ValueError(f"record {tid!r}: reference must be a non-empty string")
        by_id[tid] = r
    return by_id


def build_training_set(records: Iterable[Mapping[str, Any]], split: pd.DataFrame, half: str,
                       arm: str, seed: int = 0) -> list[dict[str, Any]]:
    """The shuffled training set of the model trained on ``half`` in ``arm``.

    Args:
        records: every task with ``task_id``, ``description`` and ``reference`` (dicts or
            :func:`alias.exposure.experiment.task_records`). Tasks in ``split`` are the test set; every other record
            is a shared task outside the test set.
        split: :func:`alias.exposure.split.split_halves` output (``task_id``, ``half``).
        half: ``"A"`` or ``"B"``: the test tasks this model sees.
        arm: ``"task_pair"`` or ``"spec_only"`` (module docstring).
        seed: the shuffle seed.

    Returns:
        A list of examples (dicts): ``task_id``, ``source`` (``"shared"`` or ``"half"``),
        ``format`` (``"pair"`` or ``"spec_only"``), ``prompt`` (the Appendix E prompt plus
        ``"\\n"``, or ``""``), ``completion`` (the specification). Length = number of shared
        records with a description (one without has no pair to train on and is skipped,
        in both arms: the shared set is the same pairs) + size of ``half``.

    Raises:
        ValueError: unknown ``half``/``arm``, a split task without a record, a split task
            without a description in the task-pair arm, duplicate or malformed records.
    """
    if half not in HALVES:
        raise ValueError(f"half must be one of {HALVES}, got {half!r}")
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {ARMS}, got {arm!r}")
    if not {"task_id", "half"} <= set(split.columns):
        raise ValueError("split must have columns task_id and half")
    by_id = _check_records(records)
    test = set(split["task_id"])
    missing = sorted(test - set(by_id))
    if missing:
        raise ValueError(f"{len(missing)} test-set tasks have no record: {missing[:5]}")
    mine = set(split.loc[split["half"] == half, "task_id"])
    chosen = [("shared", t) for t in sorted(set(by_id) - test)] + [("half", t) for t in sorted(mine)]
    examples = []
    for source, tid in chosen:
        r = by_id[tid]
        if arm == "spec_only" and source == "half":
            examples.append({"task_id": tid, "source": source, "format": "spec_only", "prompt": "",
                             "completion": r["reference"]})
            continue
        desc = r.get("description")
        if not has_description(desc):
            if source == "shared":
                continue  # no pair to train on: a task outside the test set with no description
            raise ValueError(f"task {tid!r} has no description for a description-specification pair")
        examples.append({"task_id": tid, "source": source, "format": "pair",
                         "prompt": build_prompt("finetuned", desc) + PROMPT_SEPARATOR,
                         "completion": r["reference"]})
    perm = np.random.default_rng(int(seed)).permutation(len(examples))
    return [examples[i] for i in perm]


def epoch_orders(n_examples: int, epochs: int, seed: int = 0) -> list[list[int]]:
    """The example order of each epoch: ``epochs`` permutations of ``range(n_examples)``
    drawn in turn from ``numpy.random.default_rng(seed)``, so each example appears exactly
    once per epoch. Raises ``ValueError`` for a negative count or ``epochs < 1``."""
    if n_examples < 0 or epochs < 1:
        raise ValueError(f"need n_examples >= 0 and epochs >= 1, got {n_examples}, {epochs}")
    rng = np.random.default_rng(int(seed))
    return [rng.permutation(n_examples).tolist() for _ in range(epochs)]


def tokenize_example(tokenizer, example: Mapping[str, Any], max_length: int = 2048,
                     add_eos: bool = True) -> dict[str, Any]:
    """Token ids and labels of one example (batch size 1, no padding).

    The prompt is tokenized with the tokenizer's special tokens (BOS where it has one,
    as at generation time); the completion without them, followed by the EOS token when
    ``add_eos`` (it ends the specification and is a loss token). The sequence is cut to
    ``max_length`` tokens (Appendix E: 2,048). Labels are ``-100`` on every prompt token
    and equal to the input ids on the completion tokens.

    Returns ``{"input_ids": list[int], "labels": list[int], "n_prompt": int,
    "n_loss_tokens": int, "truncated": bool}``; ``n_loss_tokens`` counts labels that are
    not ``-100`` (the first of them is never predicted, see ``causal_lm_loss``).
    Raises ``ValueError`` for ``max_length < 2``.
    """
    if max_length < 2:
        raise ValueError("max_length must be >= 2")
    prompt = example.get("prompt") or ""
    p_ids = tokenizer(prompt, add_special_tokens=True)["input_ids"]
    c_ids = tokenizer(example["completion"], add_special_tokens=False)["input_ids"]
    if add_eos and tokenizer.eos_token_id is not None:
        c_ids = c_ids + [tokenizer.eos_token_id]
    ids = p_ids + c_ids
    labels = [IGNORE_INDEX] * len(p_ids) + list(c_ids)
    truncated = len(ids) > max_length
    ids, labels = ids[:max_length], labels[:max_length]
    return {"input_ids": ids, "labels": labels, "n_prompt": min(len(p_ids), len(ids)),
            "n_loss_tokens": sum(1 for x in labels if x != IGNORE_INDEX), "truncated": truncated}


def half_counts(examples: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Number of examples per ``source`` (``shared``/``half``), for summaries."""
    out: dict[str, int] = {}
    for e in examples:
        out[e["source"]] = out.get(e["source"], 0) + 1
    return out
