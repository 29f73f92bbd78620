"""Experiment 2 end to end (Methods "Fine-tuned models", "Randomized exposure",
"Log-likelihood"; Appendices E, F, N, O, T): split -> LoRA adapters (two per arm) ->
local samples -> reference log-likelihoods.

The pieces, each a function the ``exposure`` stage calls in turn:

* :func:`test_items` -- the test-set tasks with a description and, per task with a cfg,
  the scoring items of each condition (``original``; ``random`` where renaming worked);
* :func:`training_sets` -- the seeded split and the shuffled training set of each arm and
  half (:func:`alias.exposure.trainsets.build_training_set`);
* :func:`train_adapters` -- one LoRA adapter per arm and half (:func:`train_lora`);
* :func:`sample_adapters` -- ``samples`` per task, condition and adapter through the
  ``local`` model backend (Appendix E prompt);
* :func:`score_logliks` -- the mean token log-likelihood of each reference under the base
  model and every adapter.

Names: samples and log-likelihoods of an adapter are ``<model_name>+<arm>-<half>``
(``tiny+task_pair-A``), the base model's are ``<model_name>``; the adapter folders are
``<model_name>-<arm>-<half>``. Generation and scoring cover the test-set tasks with a cfg
("We test both models on the 110 tasks with a configuration in both conditions").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from alias.config import ExposureConfig, ModelEntry
from alias.corpus.testset import TestSet
from alias.exposure.loglik import aligned_identifier_spans, reference_loglik
from alias.exposure.lora import train_lora
from alias.exposure.split import HALVES, split_halves
from alias.exposure.trainsets import build_training_set
from alias.generate.local import load_model
from alias.generate.prompts import PROMPT_VERSION, build_prompt
from alias.generate.registry import Options, get_backend
from alias.generate.samples import completion_rows
from alias.generate.tiny import build_tiny_model, embedded_texts
from alias.generate.types import SampleRequest

__all__ = ["REPORT_ARM", "test_items", "task_records", "training_sets", "base_model", "train_adapters",
           "sample_adapters", "score_logliks"]

#: Arm names of this package (``task_pair``) -> the report's spelling (``task-pair``).
REPORT_ARM = {"task_pair": "task-pair", "spec_only": "spec-only"}


def task_records(testset: TestSet) -> list[dict[str, Any]]:
    """One record per ingested task: ``task_id``, ``description`` (original) and
    ``reference`` (the system module's text), sorted by ``task_id``. Raises
    ``ValueError`` when a task's system module is not among its modules."""
    out = []
    for t in testset.tasks.sort_values("task_id").itertuples():
        texts = testset.module_texts(t.task_id)
        if t.system_module not in texts:
            raise ValueError(f"{t.task_id}: system module {t.system_module!r} not among its modules")
        out.append({"task_id": t.task_id, "description": t.description if isinstance(t.description, str) else "",
                    "reference": texts[t.system_module]})
    return out


def test_items(testset: TestSet) -> tuple[list[str], list[dict]]:
    """``(test_ids, items)``: the test-set task ids with a description (sorted) and one
    scoring item per such task with a cfg and condition: ``task_id``, ``condition``,
    ``description``, ``reference`` (system module text of that condition),
    ``identifiers`` (the renamed names as spelled there) and, for tasks with both
    conditions, ``spans`` (the renamed occurrences, the same in both references). Raises
    ``ValueError`` when no test-set task has a description."""
    test_ids = testset.described_ids()[0]
    if not test_ids:
        raise ValueError("the verified test set has no task with a description")
    tasks = testset.tasks.set_index("task_id")
    rt = testset.renamed_ok()
    rtext = {(r.task_id, r.module): r.text for r in testset.renamed_modules.itertuples()}
    items = []
    for tid in test_ids:
        t = tasks.loc[tid]
        if not isinstance(t.cfg_text, str) or not t.cfg_text.strip():
            continue
        m = testset.rename_map[testset.rename_map.task_id == tid]
        orig = {"task_id": tid, "condition": "original", "description": t.description,
                "reference": testset.module_texts(tid)[t.system_module], "identifiers": sorted(m["old"])}
        items.append(orig)
        if tid in rt.index:
            ren = {"task_id": tid, "condition": "random", "description": rt.loc[tid, "description"],
                   "reference": rtext[(tid, rt.loc[tid, "system_module"])], "identifiers": sorted(m["new"])}
            orig["spans"] = ren["spans"] = aligned_identifier_spans(orig["reference"], ren["reference"],
                                                                   dict(zip(m["old"], m["new"])))
            items.append(ren)
    return test_ids, items


def training_sets(testset: TestSet, test_ids: list[str], p: ExposureConfig) -> tuple[pd.DataFrame, dict]:
    """The split of ``test_ids`` into halves and ``{(arm, half): examples}``."""
    split = split_halves(test_ids, seed=p.split_seed)
    records = task_records(testset)
    sets = {(arm, h): build_training_set(records, split, h, arm, seed=p.shuffle_seed) for arm in p.arms for h in HALVES}
    return split, sets


def base_model(p: ExposureConfig, models_out: Path) -> tuple[Path, str]:
    """The base model folder and the family name: ``model_dir``, or the tiny Llama built
    from the embedded corpus into ``models_out/tiny-base``. Raises ``FileNotFoundError``
    for a ``model_dir`` that is not a local folder (nothing is downloaded)."""
    if p.model_dir != "tiny":
        d = Path(p.model_dir).expanduser()
        if not d.is_dir():
            raise FileNotFoundError(f"exposure.model_dir {p.model_dir!r} is not a local directory")
        return d, p.model_name or d.name
    d = build_tiny_model(embedded_texts(), models_out / "tiny-base", seed=p.tiny.seed, train_steps=p.tiny.train_steps)
    return d, p.model_name or "tiny"


def train_adapters(base: Path, name: str, sets: dict, p: ExposureConfig, models_out: Path,
                   progress: Callable[[], None] | None = None) -> tuple[list[dict], pd.DataFrame]:
    """One adapter per (arm, half) under ``models_out``: the ``exposure_adapters`` rows and
    the ``training_log`` (one row per step). Paths in the rows are as given (relative
    under ``dvc repro``), wall times are left to the stage's summary."""
    adapters, logs = [], []
    for (arm, h), ex in sets.items():
        adapter = f"{name}-{arm}-{h}"
        run = train_lora(base, ex, models_out / adapter, p.lora, name=adapter, device=p.device or None,
                         progress=progress)
        logs.append(run.log)
        adapters.append({"adapter": adapter, "arm": arm, "half": h, "model": f"{name}+{arm}-{h}",
                         "path": (models_out / adapter).as_posix(), "base_model": Path(base).as_posix(),
                         "examples": len(ex), "skipped": json.dumps(run.skipped), "steps": run.n_steps,
                         "warmup_steps": run.warmup_steps, "device": run.device, "dtype": run.dtype,
                         "target_modules": json.dumps(run.target_modules),
                         "params": json.dumps(run.params, sort_keys=True),
                         "tokens_per_s": round(run.tokens_per_s, 2), "wall_s": round(run.wall_s, 2)})
    return adapters, pd.concat(logs, ignore_index=True) if logs else pd.DataFrame()


def sample_adapters(base: Path, adapters: list[dict], items: list[dict], p: ExposureConfig) -> list[dict]:
    """``samples`` rows of every adapter: ``p.generate.samples`` per item, through the
    ``local`` backend with the Appendix E prompt (the model loaded once per adapter)."""
    g = p.generate
    rows: list[dict] = []
    for a in adapters:
        entry = ModelEntry(backend="local", model_dir=Path(base).as_posix(), adapter_dir=a["path"],
                           temperature=g.temperature, top_p=g.top_p, max_new_tokens=g.max_new_tokens,
                           stop_at_closing_line=True, batch_size=g.batch_size, seed=g.seed, device=p.device or None)
        reqs = [SampleRequest(task_id=it["task_id"], condition=it["condition"], model=a["model"], sample_idx=k,
                              prompt=build_prompt("finetuned", it["description"]), prompt_version=PROMPT_VERSION)
                for it in items for k in range(g.samples)]
        if not reqs:
            continue
        mt = load_model(base, adapter_dir=a["path"], device=p.device or None)
        done = get_backend("local").complete(entry, reqs, Options(model_and_tokenizer=mt))
        rows += [r | {"source": f"fine-tuned local model ({Path(base).name} + LoRA adapter {a['adapter']})"}
                 for r in completion_rows(done, "exposure", "local", "finetuned")[0]]
        del mt
    return rows


def score_logliks(base: Path, name: str, adapters: list[dict], items: list[dict], half_of: dict[str, str],
                  max_length: int, device: str | None, progress: Callable[[], None] | None = None) -> pd.DataFrame:
    """The ``loglik`` rows of the base model and of every adapter (``arm``/``half`` null
    for the base model; ``seen``: the adapter trained on the task's half)."""
    parts = []
    scorers = [(name, None, None, None)] + [(a["model"], a["path"], a["arm"], a["half"]) for a in adapters]
    for mname, adir, arm, h in scorers:
        model, tok = load_model(base, adapter_dir=adir, device=device)
        df = reference_loglik(model, tok, items, mname, max_length=max_length, progress=progress)
        df["arm"], df["half"] = arm, h
        df["seen"] = [None if h is None else bool(half_of.get(t) == h) for t in df.task_id]
        parts.append(df)
        del model
    return pd.concat(parts, ignore_index=True)
