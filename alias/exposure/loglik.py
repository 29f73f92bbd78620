"""Log-likelihood of the reference specification (paper, Methods, Experiment 2,
"Log-likelihood"; Appendices O and T).

"This is the mean token log-likelihood, the average log-probability that the model assigns
to each token of the reference ... We score the first 2,048 tokens of description and
reference together, the length limit used in training. ... we also report the mean over the
tokens that do not overlap a renamed identifier, which hold the keywords, operators and
structure." Appendix T adds the mean over the renamed identifiers' tokens alone.

The scored sequence is exactly a training sequence of the task-pair arm
(:func:`alias.exposure.trainsets.tokenize_example` without EOS): the Appendix E prompt with
the task's description of the condition, ``"\\n"``, then the reference of the same condition
(the renamed system module for ``random``), cut to ``max_length`` tokens. Only reference
tokens inside the window are scored; the first reference token is predicted from the last
prompt token.

Identifier spans: CIR gives every name a new name of the same length and rewrites only the
byte spans of the renamed identifier nodes (:mod:`alias.rename.cir`), so the original and
the renamed reference have the same length and the renamed occurrences sit at the same
offsets in both. :func:`aligned_identifier_spans` therefore takes every whole-word
occurrence of an ``old`` name in the original whose text in the renamed reference is its
``new`` name: exactly the occurrences CIR renamed, and the same spans in both conditions
(a bound variable, record field, label, comment or string that shares a renamed name's
text keeps its text, so it is not counted). The stage uses it for both conditions.
:func:`identifier_spans` is the fallback for texts without a same-length copy: every
occurrence of the given names as a whole TLA+ word (not touching a letter, digit or ``_``,
except that the subscript prefixes ``WF_``, ``SF_``, ``]_`` and ``>>_`` count as a boundary,
so ``vars`` in ``WF_vars`` and ``[][Next]_vars`` is found), outside comments and strings
(:func:`alias.tla.lexer.comment_string_spans`, the package's tree-sitter lexer: CIR leaves
those unchanged); it also counts bound variables and record fields that share a renamed
name.

:func:`token_mask` maps these character spans to tokens through the fast tokenizer's offset
mapping: a token whose character range overlaps a span counts as an identifier token (so a
byte-level token `` Foo`` that carries the leading space counts).

Public API::

    aligned_identifier_spans(original, renamed, mapping) -> list[(start, end)]
    identifier_spans(text, names) -> list[(start, end)]        # character offsets
    token_mask(offsets, spans) -> list[bool]
    score_reference(model, tokenizer, description, reference, names=(), max_length=2048, spans=None)
        -> dict (n_tokens, mean_loglik, outside_loglik, n_outside, identifier_loglik, ...)
    reference_loglik(model, tokenizer, items, model_name, max_length=2048) -> DataFrame
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from alias.exposure.trainsets import PROMPT_SEPARATOR
from alias.generate.prompts import build_prompt
from alias.store.db import columns
from alias.store.models import LogLik
from alias.tla.lexer import comment_string_spans

__all__ = ["LOGLIK_COLUMNS", "aligned_identifier_spans", "identifier_spans", "token_mask", "score_reference",
           "reference_loglik"]

#: Columns of the ``loglik`` rows returned by :func:`reference_loglik`: the ``loglik``
#: table's but the adapter's ``arm``, ``half`` and ``seen``, which the exposure stage adds.
LOGLIK_COLUMNS = [c for c in columns(LogLik) if c not in ("arm", "half", "seen")]


def identifier_spans(text: str, names: Iterable[str]) -> list[tuple[int, int]]:
    """Character spans ``[start, end)`` of every whole-word occurrence of any of ``names``
    in ``text``, outside comments and strings (module docstring), sorted and disjoint
    (longer names win where two would overlap). Empty ``names`` give ``[]``."""
    names = sorted({n for n in names if n}, key=lambda n: (-len(n), n))
    if not names:
        return []
    alts = "|".join(re.escape(n) for n in names)
    pat = re.compile(r"(?:(?<![A-Za-z0-9_])|(?<=\bWF_)|(?<=\bSF_)|(?<=\]_)|(?<=>>_))(?:" + alts
                     + r")(?![A-Za-z0-9_])")
    skip = comment_string_spans(text)
    out = []
    j = 0
    for m in pat.finditer(text):
        s, e = m.span()
        while j < len(skip) and skip[j][1] <= s:
            j += 1
        if j < len(skip) and skip[j][0] <= s < skip[j][1]:
            continue
        out.append((s, e))
    return out


def aligned_identifier_spans(original: str, renamed: str, mapping: Mapping[str, str]) -> list[tuple[int, int]]:
    """Character spans of the identifier occurrences that CIR renamed (module docstring).

    ``original``/``renamed``: a reference and its same-length renamed copy; ``mapping``:
    old -> new names of the task (``rename_map``). Returns the sorted, disjoint spans of
    the whole-word occurrences of old names in ``original`` (comments and strings
    excluded) at which ``renamed`` holds the new name; the spans are valid in both texts.

    Raises ``ValueError`` when the two texts differ in length or a new name differs in
    length from its old name (not a same-length renaming).
    """
    if len(original) != len(renamed):
        raise ValueError(f"texts differ in length ({len(original)} vs {len(renamed)}): not a same-length renaming")
    for old, new in mapping.items():
        if len(old) != len(new):
            raise ValueError(f"{old!r} -> {new!r} changes the length: not a same-length renaming")
    out = []
    for s, e in identifier_spans(original, mapping):
        if renamed[s:e] == mapping[original[s:e]]:
            out.append((s, e))
    return out


def token_mask(offsets: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int]]) -> list[bool]:
    """For each token's character range ``(a, b)``, whether it overlaps any span
    ``(s, e)`` (``a < e and s < b``). Empty ranges (special tokens) never overlap.
    ``spans`` must be sorted and disjoint (as :func:`identifier_spans` returns them)."""
    out = []
    j = 0
    for a, b in offsets:
        if b <= a:
            out.append(False)
            continue
        while j < len(spans) and spans[j][1] <= a:
            j += 1
        out.append(j < len(spans) and spans[j][0] < b)
    return out


def _mean(xs: list[float]) -> float:
    return float(sum(xs) / len(xs)) if xs else math.nan


def score_reference(model, tokenizer, description: str, reference: str, names: Iterable[str] = (), *,
                    max_length: int = 2048, spans: Sequence[tuple[int, int]] | None = None) -> dict[str, Any]:
    """Token log-likelihoods of ``reference`` given the Appendix E prompt of ``description``.

    The identifier tokens are those overlapping ``spans`` (character spans in
    ``reference``, e.g. from :func:`aligned_identifier_spans`) when given, else those
    overlapping :func:`identifier_spans` of ``names``.

    Returns a dict: ``n_tokens`` (scored reference tokens), ``mean_loglik`` (mean natural-log
    probability per scored token), ``outside_loglik``/``n_outside`` (tokens overlapping no
    identifier span), ``identifier_loglik``/``n_identifier`` (tokens overlapping one; NaN
    when none), ``n_reference_tokens`` (all reference tokens), ``truncated`` (the window cut
    the reference), ``token_logprobs`` and ``identifier_mask`` (lists, scored tokens only).

    When the prompt alone fills ``max_length``, nothing is scored: ``n_tokens`` 0 and NaN
    means (the row is kept, ``truncated`` true). Raises ``ValueError`` when the tokenizer
    gives no offset mapping (a slow tokenizer) or ``max_length < 2``.
    """
    import torch

    prompt = build_prompt("finetuned", description) + PROMPT_SEPARATOR
    p_ids = tokenizer(prompt, add_special_tokens=True)["input_ids"]
    enc = tokenizer(reference, add_special_tokens=False, return_offsets_mapping=True)
    if "offset_mapping" not in enc:
        raise ValueError("the tokenizer gives no offset mapping; a fast tokenizer is needed")
    r_ids, offsets = enc["input_ids"], enc["offset_mapping"]
    if not p_ids:
        raise ValueError("the prompt tokenized to nothing")
    if max_length < 2:
        raise ValueError("max_length must be >= 2")
    n = max(0, min(max_length - len(p_ids), len(r_ids)))
    if n == 0:  # the prompt fills the window: nothing of the reference is scored
        return {"n_tokens": 0, "mean_loglik": math.nan, "outside_loglik": math.nan, "n_outside": 0,
                "identifier_loglik": math.nan, "n_identifier": 0, "n_reference_tokens": len(r_ids),
                "truncated": len(r_ids) > 0, "token_logprobs": [], "identifier_mask": []}
    ids = torch.tensor([p_ids + r_ids[:n]], device=next(model.parameters()).device)
    with torch.inference_mode():
        logits = model(input_ids=ids).logits[0].float()
    logp = torch.log_softmax(logits[len(p_ids) - 1: len(p_ids) - 1 + n], dim=-1)
    tok_lp = logp.gather(-1, ids[0, len(p_ids): len(p_ids) + n][:, None])[:, 0].tolist()
    id_spans = sorted(spans) if spans is not None else identifier_spans(reference, names)
    mask = token_mask([tuple(o) for o in offsets[:n]], id_spans)
    ident = [lp for lp, m in zip(tok_lp, mask) if m]
    outside = [lp for lp, m in zip(tok_lp, mask) if not m]
    return {"n_tokens": n, "mean_loglik": _mean(tok_lp), "outside_loglik": _mean(outside),
            "n_outside": len(outside), "identifier_loglik": _mean(ident), "n_identifier": len(ident),
            "n_reference_tokens": len(r_ids), "truncated": n < len(r_ids),
            "token_logprobs": tok_lp, "identifier_mask": mask}


def reference_loglik(model, tokenizer, items: Iterable[Mapping[str, Any]], model_name: str, *,
                     max_length: int = 2048, progress=None) -> pd.DataFrame:
    """One ``loglik`` row per item (:data:`LOGLIK_COLUMNS`).

    ``items``: mappings with ``task_id``, ``condition``, ``description`` (of that condition),
    ``reference`` (of that condition) and either ``spans`` (identifier character spans in
    that reference) or ``identifiers`` (the renamed identifiers as they are spelled in that
    reference: ``old`` names for ``original``, ``new`` for ``random``).
    ``model_name`` fills the ``model`` column. See :func:`score_reference` for the values.
    """
    rows = []
    for it in items:
        s = score_reference(model, tokenizer, it["description"], it["reference"], it.get("identifiers") or (),
                            max_length=max_length, spans=it.get("spans"))
        rows.append({"task_id": it["task_id"], "condition": it["condition"], "model": model_name,
                     **{k: s[k] for k in LOGLIK_COLUMNS[3:]}})
        if progress is not None:
            progress()
    return pd.DataFrame(rows, columns=LOGLIK_COLUMNS)
