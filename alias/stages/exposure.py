"""Experiment 2: split, LoRA adapters, fine-tuned samples, reference log-likelihoods
(paths.exposure, paths.exposure_models)."""

from __future__ import annotations

import shutil
import time
from typing import Any

import pandas as pd

from alias.config import Config, Paths
from alias.corpus.testset import TestSet
from alias.exposure import experiment as ex
from alias.exposure.effects import loglik_effects
from alias.generate.samples import samples_frame
from alias.progress import progress_bar
from alias.stages.common import write_timings
from alias.store.db import write_parquet, write_table
from alias.store.models import ExposureAdapter, ExposureArm, ExposureSplit, LogLik, TrainingStep

NAME = "exposure"


def run(config: Config, paths: Paths) -> dict[str, Any]:
    """Run Experiment 2 (:mod:`alias.exposure.experiment`) with ``exposure`` settings;
    writes split, training sets, training log, adapters, arms, samples (graded by the
    ``grade`` stage), log-likelihoods and their effects. Returns counts, per-adapter steps
    and throughput, the likelihood effects and the wall time of each part (seconds)."""
    p, out, t = config.exposure, paths.exposure, {"start": time.monotonic()}
    testset = TestSet.load(paths)
    test_ids, items = ex.test_items(testset)
    split, sets = ex.training_sets(testset, test_ids, p)
    base, name = ex.base_model(p, paths.exposure_models)
    if out.exists():
        shutil.rmtree(out)
    write_table(split, ExposureSplit, out / "split.parquet")
    write_parquet(pd.DataFrame([{"adapter": f"{name}-{arm}-{h}", "arm": arm, "half": h, "position": i,
                                 "task_id": e["task_id"], "source": e["source"], "format": e["format"]}
                                for (arm, h), exs in sets.items() for i, e in enumerate(exs)]),
                  out / "training_sets.parquet")
    with progress_bar("exposure: LoRA", total=sum(map(len, sets.values())) * p.lora.epochs) as bar:
        adapters, log = ex.train_adapters(base, name, sets, p, paths.exposure_models, progress=bar.advance)
    write_table(log, TrainingStep, out / "training_log.parquet")
    write_table(adapters, ExposureAdapter, out / "adapters.parquet")
    write_table([{"family": name, "arm": ex.REPORT_ARM[a["arm"]], "half": a["half"], "model": a["model"]}
                 for a in adapters], ExposureArm, out / "exposure_arms.parquet")
    t["train"] = time.monotonic()
    samples = samples_frame(ex.sample_adapters(base, adapters, items, p), testset.system_modules())
    write_parquet(samples, out / "samples.parquet")
    t["generate"] = time.monotonic()
    with progress_bar("exposure: loglik", total=len(items) * (len(adapters) + 1)) as bar:
        loglik = ex.score_logliks(base, name, adapters, items, dict(zip(split.task_id, split.half)),
                                  p.loglik.max_length, p.device or None, progress=bar.advance)
    loglik = write_table(loglik, LogLik, out / "loglik.parquet")
    effects = loglik_effects(loglik, split, n_resamples=config.report.n_resamples, seed=config.report.seed)
    write_parquet(effects, out / "loglik_effects.parquet")
    t["loglik"] = time.monotonic()
    summary = _summary(testset, test_ids, split, items, adapters, samples, effects, t)
    write_timings(paths.work, NAME, summary["adapters"] + [summary["wall_s"]])
    return summary


def _summary(testset, test_ids, split, items, adapters, samples, effects, t) -> dict[str, Any]:
    keep = ("arm", "measure", "n_tasks", "exposure_original", "exposure_original_A", "exposure_original_B",
            "did", "unseen_cost", "seen_higher_tasks")
    return {"test_set": len(test_ids), "no_description": testset.described_ids()[1],
            "half_A": int((split.half == "A").sum()), "half_B": int((split.half == "B").sum()),
            "scored_items": len(items),
            "adapters": [{k: a[k] for k in ("adapter", "examples", "steps", "tokens_per_s", "wall_s")} for a in adapters],
            "samples": len(samples), "hit_token_limit": int(samples["hit_token_limit"].fillna(False).sum()),
            "loglik_effects": [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items() if k in keep}
                               for r in effects.to_dict("records")],
            "wall_s": {"train_s": round(t["train"] - t["start"], 2), "generate_s": round(t["generate"] - t["train"], 2),
                       "loglik_s": round(t["loglik"] - t["generate"], 2), "total_s": round(t["loglik"] - t["start"], 2)}}
