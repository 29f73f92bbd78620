"""Text similarity of outputs to the reference (paper, Appendix V, Table V.1; Appendix S).

"BLEU-4 is the overlap of 1 to 4 token sequences between the output and the reference
(Papineni et al. 2002), and ROUGE-L is the longest common token subsequence of the two texts
(Lin 2004). Both are computed against the reference of the same condition without
comments."

Choices where the appendix is not explicit:

* **Texts**: the output is the sample's extracted module (``samples.extracted_module``), or
  the raw output when there is none; the reference is the condition's system module
  (original, or its renamed copy for ``random``) from ``v_similarity_inputs``.
* **Comments** are removed from both texts: TLA+ ``\\*`` line comments and nested
  ``(* ... *)`` block comments (:func:`alias.tla.lexer.strip_comments`). Tokens are TLA+
  lexical tokens (:func:`alias.tla.lexer.tokens`, also the unit of the Appendix L run
  test), which also drops separator lines (``----``, ``====``); a space inside a string
  literal is kept inside its token.
* **BLEU-4**: sacrebleu's sentence BLEU on the space-joined tokens with ``tokenize='none'``
  (so sacrebleu splits exactly at our tokens), up to 4-grams, sacrebleu's default ``exp``
  smoothing and brevity penalty; in percent (0-100).
* **ROUGE-L**: rouge-score's ``rougeL`` F-measure with the same tokens (no stemming, case
  kept), times 100.
* **Aggregation**: per task and condition the mean over samples, then the mean over tasks
  (the unit of analysis is the task). The decrease is ``original - random`` over tasks with
  both, in points, with a 95% percentile bootstrap interval over tasks
  (:func:`alias.stats.mean_difference` with ``scale=1``).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from alias.report.stats_tables import _models
from alias.report.tables import sources_markdown, to_markdown
from alias.stats import DEFAULT_RESAMPLES, DEFAULT_SEED, mean_difference
from alias.store.db import query
from alias.tla.lexer import strip_comments, tokens

__all__ = ["similarity_tokens", "bleu4", "rouge_l", "sample_similarity", "similarity_samples", "table_v1",
           "MEASURES"]

#: Column name -> label of the two measures.
MEASURES = {"bleu4": "BLEU-4", "rouge_l": "ROUGE-L"}
#: Conditions in table order.
CONDITIONS = ("original", "random", "meaningful")
_SPACE_IN_TOKEN = "\u2581"   # stands for a space inside a string literal token


def similarity_tokens(text: str | None) -> list[str]:
    """The TLA+ tokens BLEU-4 and ROUGE-L compare: :func:`alias.tla.lexer.strip_comments`,
    then :func:`alias.tla.lexer.tokens` of what is left (no whitespace, comments or
    separator lines; removing a comment can join the text on its two sides, as it always
    did here); a space inside a string literal token becomes U+2581 so a token never holds
    whitespace. ``None`` counts as the empty text; never raises."""
    return [t.replace(" ", _SPACE_IN_TOKEN) if t.startswith('"') else t
            for t in tokens(strip_comments(text))]


@lru_cache(maxsize=1)
def _bleu_metric():
    from sacrebleu.metrics import BLEU

    return BLEU(tokenize="none", effective_order=True)


def bleu4(output: str, reference: str) -> float:
    """Sentence BLEU-4 of ``output`` against ``reference`` (sacrebleu, ``tokenize='none'``
    on :func:`similarity_tokens`, ``effective_order=True`` as sacrebleu recommends for
    sentence BLEU), in percent [0, 100]; 0 when either has no token."""
    hyp, ref = similarity_tokens(output), similarity_tokens(reference)
    if not hyp or not ref:
        return 0.0
    return float(_bleu_metric().sentence_score(" ".join(hyp), [" ".join(ref)]).score)


class _TokenizerAdapter:
    """rouge-score tokenizer interface (``tokenize(text) -> list[str]``)."""

    @staticmethod
    def tokenize(text: str) -> list[str]:
        return similarity_tokens(text)


def rouge_l(output: str, reference: str) -> float:
    """ROUGE-L F-measure of ``output`` against ``reference`` (rouge-score, tokens of
    :func:`similarity_tokens`), in percent [0, 100]; 0 when either has no token."""
    if not similarity_tokens(output) or not similarity_tokens(reference):
        return 0.0
    return float(_rouge_scorer().score(reference, output)["rougeL"].fmeasure * 100.0)


@lru_cache(maxsize=1)
def _rouge_scorer():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], tokenizer=_TokenizerAdapter())


def sample_similarity(output: str, reference: str) -> dict[str, float]:
    """``{"bleu4": ..., "rouge_l": ...}`` of one output against its reference, in percent."""
    return {"bleu4": bleu4(output, reference), "rouge_l": rouge_l(output, reference)}


def similarity_samples(db: str | Path) -> pd.DataFrame:
    """One row per model sample of a test-set task with a reference (``v_similarity_inputs``):
    ``model, task_id, condition, sample_idx, extracted, behavior_covered, bleu4, rouge_l``
    (percent). Empty (with these columns) when there are no samples."""
    rows = query("SELECT model, task_id, condition, sample_idx, extracted, behavior_covered, "
                 "output_text, reference_text FROM v_similarity_inputs "
                 "ORDER BY model, task_id, condition, sample_idx", db)
    cols = ["model", "task_id", "condition", "sample_idx", "extracted", "behavior_covered", "bleu4", "rouge_l"]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    scores = [sample_similarity(o, r) for o, r in zip(rows["output_text"], rows["reference_text"])]
    rows["bleu4"] = [s["bleu4"] for s in scores]
    rows["rouge_l"] = [s["rouge_l"] for s in scores]
    return rows[cols]


def table_v1(samples: pd.DataFrame, models: list | None = None, *,
             n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """Table V.1 from :func:`similarity_samples`: one row per model and measure
    (``bleu4``, ``rouge_l``) with ``tasks`` and the mean over tasks of the per-task sample
    means for each condition (``original``, ``random``, ``meaningful``, percent; ``None``
    when the condition has no sample) and the ``decrease`` = original - random over the
    ``paired_tasks`` that have both, with its 95% bootstrap interval ``ci_low``/``ci_high``
    (points). ``models`` fixes the rows (default: the models in ``samples``, or one row of
    ``None`` when there are none, so the table still says "no data")."""
    models = models if models is not None else (sorted(samples["model"].unique()) or [None])
    per_task = (samples.groupby(["model", "task_id", "condition"])[list(MEASURES)].mean().reset_index()
                if len(samples) else pd.DataFrame(columns=["model", "task_id", "condition", *MEASURES]))
    rows: list[dict[str, Any]] = []
    for model in models:
        pm = per_task[per_task["model"] == model]
        for measure in MEASURES:
            row: dict[str, Any] = {"model": model, "measure": measure,
                                   "tasks": int(pm["task_id"].nunique()) if len(pm) else None}
            for cond in CONDITIONS:
                v = pm.loc[pm["condition"] == cond, measure]
                row[cond] = float(v.mean()) if len(v) else None
            wide = pm.pivot(index="task_id", columns="condition", values=measure) if len(pm) else pd.DataFrame()
            row.update(paired_tasks=None, decrease=None, ci_low=None, ci_high=None)
            if {"original", "random"} <= set(wide.columns):
                both = wide[["original", "random"]].dropna().sort_index()
                if len(both):
                    d = mean_difference(both["original"].to_numpy(float), both["random"].to_numpy(float),
                                        n_resamples=n_resamples, seed=seed, scale=1.0)
                    row.update(paired_tasks=int(len(both)), decrease=d.estimate, ci_low=d.ci_low,
                               ci_high=d.ci_high)
            rows.append(row)
    return pd.DataFrame(rows, columns=["model", "measure", "tasks", *CONDITIONS, "paired_tasks", "decrease",
                                       "ci_low", "ci_high"])


def format_table_v1(df: pd.DataFrame) -> pd.DataFrame:
    """Display strings of :func:`table_v1` (``None`` where there is no data)."""
    def num(v):
        if v is None or (isinstance(v, float) and np.isnan(v)):
            return None
        text = f"{float(v):.1f}"
        return "0.0" if text == "-0.0" else text

    out = []
    for _, r in df.iterrows():
        dec = num(r["decrease"])
        if dec is not None and num(r["ci_low"]) is not None:
            dec = f"{dec} [{num(r['ci_low'])}, {num(r['ci_high'])}]"
        out.append({"model": r["model"], "measure": MEASURES[r["measure"]],
                    "tasks": None if pd.isna(r["tasks"]) else str(int(r["tasks"])),
                    "original": num(r["original"]), "random": num(r["random"]),
                    "meaningful": num(r["meaningful"]),
                    "paired tasks": None if pd.isna(r["paired_tasks"]) else str(int(r["paired_tasks"])),
                    "decrease [95% CI]": dec})
    return pd.DataFrame(out)


def write_similarity_report(db: str | Path, out_dir: str | Path, *, n_resamples: int = DEFAULT_RESAMPLES,
                            seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Write ``table_V1.md`` (Table V.1) under ``out_dir``. Returns ``{"files": {...},
    "table": <table_v1 frame>, "samples": <scored samples>}``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    samples = similarity_samples(db)
    experiment_1 = _models(db)  # no controls, no fine-tuned models of Experiment 2
    models = [m for m in sorted(set(samples["model"])) if m in experiment_1] if len(samples) else experiment_1
    t = table_v1(samples, models, n_resamples=n_resamples, seed=seed)
    extracted = int(samples["extracted"].astype(bool).sum()) if len(samples) else 0
    p = out / "table_V1.md"
    p.write_text(
        "# Table V.1: text similarity to the reference of the same condition\n\n"
        "BLEU-4 (sacrebleu, sentence BLEU) and ROUGE-L F-measure (rouge-score) in percent, on TLA+ tokens with "
        "comments and separator lines removed from the output and the reference (the system module of the "
        "condition: original, or its renamed copy). Mean over samples per task, then over tasks; the decrease is "
        f"original - random over tasks with both, with a 95% bootstrap CI from {n_resamples} resamples of tasks "
        f"(seed {seed}). {len(samples)} samples scored, {extracted} of them from an extracted module (the others "
        "from the raw output). The meaningful condition has no data until its references are in the store.\n\n"
        + to_markdown(format_table_v1(t)) + "\n" + sources_markdown(db))
    return {"files": {p.name: str(p)}, "table": t, "samples": samples}
