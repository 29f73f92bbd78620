"""The exposure stage (paper, Methods, Experiment 2; Appendices E, F, N, O, T): split ->
LoRA adapters (two per arm) -> local samples -> reference log-likelihoods.

Reads the ingest, rename and verify tables; writes under ``exposure.out`` (default
``data/exposure``):

``split.parquet``        task_id, half (:func:`alias.exposure.split.split_halves`)
``training_sets.parquet`` adapter, arm, half, position, task_id, source, format (shuffled order)
``training_log.parquet`` one row per optimizer step (:data:`alias.exposure.lora.TRAINING_LOG_COLUMNS`)
``adapters.parquet``     adapter, arm, half, model, path, examples, steps, warm-up, tokens/s, wall_s, ...
``samples.parquet``      five samples per task, condition and adapter (``generate_local``): the
                         columns of the ``generate`` stages' tables (:data:`alias.generate.stage.SAMPLE_COLUMNS`:
                         key, text, extraction, truncation, settings; ``model_key`` ``exposure``,
                         ``backend`` ``local``) plus ``arm`` and ``half``; the ``grade`` stage grades them
``loglik.parquet``       :data:`alias.exposure.loglik.LOGLIK_COLUMNS` + arm, half, seen, for the base
                         model (arm/half null) and every adapter
``loglik_effects.parquet`` :func:`alias.exposure.effects.loglik_effects` per arm and measure
``exposure_arms.parquet`` family (the base model's name), arm (``task-pair`` | ``spec-only``, the
                         report's spelling, :data:`alias.report.exposure.ARMS`), half, model: which
                         fine-tuned model trained on which half (the store's ``exposure_arms`` table)

and the adapters under ``exposure.models_out`` (default ``models/exposure``), one directory
``<model_name>-<arm>-<half>`` each. ``exposure.model_dir: tiny`` builds the tiny local
Llama of :mod:`alias.generate.tiny` from the embedded corpus texts into
``<models_out>/tiny-base`` first (the CPU default; no hub access anywhere).

Generation and scoring cover the test-set tasks with a TLC configuration ("We test both
models on the 110 tasks with a configuration in both conditions"); the ``random`` condition
exists for tasks whose renaming succeeded. The sample ``model`` column is
``<model_name>+<arm>-<half>``, the loglik ``model`` column the same or ``<model_name>`` for
the base model.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from alias.exposure.effects import loglik_effects
from alias.exposure.lora import TRAINING_LOG_COLUMNS, lora_params, train_lora
from alias.exposure.loglik import LOGLIK_COLUMNS, aligned_identifier_spans, reference_loglik
from alias.exposure.split import HALVES, SPLIT_SEED, split_halves
from alias.exposure.trainsets import ARMS, build_training_set, task_records

__all__ = ["DEFAULT_EXPOSURE_PARAMS", "REPORT_ARM", "exposure_params", "exposure_stage", "load_test_items",
           "tasks_without_description"]

DATA = Path("data")
#: Arm names of this package (``task_pair``) -> the report's spelling (``task-pair``).
REPORT_ARM = {"task_pair": "task-pair", "spec_only": "spec-only"}

#: The ``exposure:`` section's defaults (paper settings; ``tiny`` base model for the CPU).
DEFAULT_EXPOSURE_PARAMS: dict[str, Any] = {
    "model_dir": "tiny",
    "model_name": "",
    "split_seed": SPLIT_SEED,
    "shuffle_seed": 0,
    "arms": list(ARMS),
    "lora": {},
    "generate": {"samples": 5, "temperature": 0.7, "top_p": 0.95, "max_new_tokens": 1024,
                 "batch_size": 8, "seed": 0},
    "loglik": {"max_length": 2048},
    "tiny": {"train_steps": 60, "seed": 0},
    "device": "",
    "out": "data/exposure",
    "models_out": "models/exposure",
}


def exposure_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params["exposure"]`` over :data:`DEFAULT_EXPOSURE_PARAMS` (nested dicts merged);
    ``ValueError`` on an unknown arm, an unknown key or ``samples < 1``."""
    user = dict((params or {}).get("exposure") or {})
    unknown = sorted(set(user) - set(DEFAULT_EXPOSURE_PARAMS))
    if unknown:
        raise ValueError(f"unknown exposure settings {unknown}")
    p: dict[str, Any] = {}
    for k, v in DEFAULT_EXPOSURE_PARAMS.items():
        u = user.get(k, None)
        if isinstance(v, dict):
            p[k] = {**v, **(u or {})}
        else:
            p[k] = v if u is None else u
    bad = [a for a in p["arms"] if a not in ARMS]
    if bad or not p["arms"]:
        raise ValueError(f"exposure.arms must be a non-empty subset of {ARMS}, got {p['arms']}")
    if int(p["generate"]["samples"]) < 0:
        raise ValueError("exposure.generate.samples must be >= 0")
    lora_params(p["lora"])  # validates
    return p


def _test_ids_by_description(ingest_dir: Path, verify_dir: Path) -> tuple[list[str], list[str]]:
    """(verified test-set task ids with a description, those without), each sorted."""
    from alias.generate.prompts import has_description
    from alias.store.db import read_parquet

    ts = read_parquet(Path(verify_dir) / "test_set.parquet")
    desc = read_parquet(Path(ingest_dir) / "tasks.parquet").set_index("task_id")["description"]
    ids = sorted(ts.loc[ts["in_test_set"].astype(bool), "task_id"])
    with_d = [t for t in ids if has_description(desc.get(t))]
    return with_d, [t for t in ids if t not in set(with_d)]


def tasks_without_description(ingest_dir: Path, verify_dir: Path) -> list[str]:
    """Verified test-set task ids whose description is missing or blank (sorted): the
    exposure experiment leaves them out (see :func:`load_test_items`)."""
    return _test_ids_by_description(ingest_dir, verify_dir)[1]


def load_test_items(ingest_dir: Path, rename_dir: Path, verify_dir: Path) -> tuple[list[str], list[dict]]:
    """The test set and its scoring items.

    Returns ``(test_ids, items)``: ``test_ids`` the verified test-set task ids (sorted)
    that have a description (a task without one cannot be posed: not split, trained or
    scored; :func:`tasks_without_description` lists them);
    ``items`` one dict per test task with a TLC configuration and condition (``original``;
    ``random`` when renaming succeeded): ``task_id``, ``condition``, ``description``,
    ``reference`` (system module text of that condition), ``identifiers`` (renamed names as
    spelled in that reference) and, for tasks with both conditions, ``spans``: the character
    spans of the renamed occurrences, the same in both references
    (:func:`alias.exposure.loglik.aligned_identifier_spans`). Raises ``ValueError`` when the
    test set is empty or a renamed reference is not a same-length copy of its original.
    """
    from alias.store.db import read_parquet

    test_ids = _test_ids_by_description(ingest_dir, verify_dir)[0]
    tasks = read_parquet(ingest_dir / "tasks.parquet").set_index("task_id")
    if not test_ids:
        raise ValueError("the verified test set has no task with a description")
    modules = read_parquet(ingest_dir / "modules.parquet")
    rtasks = read_parquet(rename_dir / "renamed_tasks.parquet").set_index("task_id")
    rmods = read_parquet(rename_dir / "renamed_modules.parquet")
    rmap = read_parquet(rename_dir / "rename_map.parquet")
    mtext = {(r.task_id, r.module): r.text for r in modules.itertuples()}
    rtext = {(r.task_id, r.module): r.text for r in rmods.itertuples()}
    items = []
    for tid in test_ids:
        t = tasks.loc[tid]
        if not isinstance(t.cfg_text, str) or not t.cfg_text.strip():
            continue
        m = rmap[rmap.task_id == tid]
        orig = {"task_id": tid, "condition": "original", "description": t.description,
                "reference": mtext[(tid, t.system_module)], "identifiers": sorted(m["old"])}
        items.append(orig)
        if tid in rtasks.index and rtasks.loc[tid, "status"] == "ok":
            rt = rtasks.loc[tid]
            ren = {"task_id": tid, "condition": "random", "description": rt.description,
                   "reference": rtext[(tid, rt.system_module)], "identifiers": sorted(m["new"])}
            spans = aligned_identifier_spans(orig["reference"], ren["reference"], dict(zip(m["old"], m["new"])))
            orig["spans"] = ren["spans"] = spans
            items.append(ren)
    return test_ids, items


def system_modules(ingest_dir: Path, rename_dir: Path) -> dict[tuple[str, str], str]:
    """``(task_id, condition) -> system module name`` (``original`` from the ingest tables,
    ``random`` from the renamed tasks): what output extraction expects a sample to define."""
    from alias.store.db import read_parquet

    tasks = read_parquet(ingest_dir / "tasks.parquet")
    rt = read_parquet(rename_dir / "renamed_tasks.parquet")
    out = {(t, "original"): m for t, m in zip(tasks.task_id, tasks.system_module)}
    out |= {(t, "random"): m for t, m in zip(rt.task_id, rt.system_module) if isinstance(m, str)}
    return out


def _base_model(p: dict, models_out: Path) -> Path:
    if p["model_dir"] != "tiny":
        d = Path(p["model_dir"]).expanduser()
        if not d.is_dir():
            raise FileNotFoundError(f"exposure.model_dir {p['model_dir']!r} is not a local directory")
        return d
    from alias.generate.tiny import build_tiny_model, embedded_texts

    return build_tiny_model(embedded_texts(), models_out / "tiny-base", seed=int(p["tiny"]["seed"]),
                            train_steps=int(p["tiny"]["train_steps"]))


def exposure_stage(params: Mapping[str, Any], ingest_dir: Path = DATA / "ingest", rename_dir: Path = DATA / "rename",
                   verify_dir: Path = DATA / "verify") -> dict[str, Any]:
    """Run the exposure experiment end to end (module docstring) and return a summary dict:
    task counts, per-adapter steps/tokens per second, sample counts, the loglik exposure
    effects per arm (original condition, mean over tasks of each half and overall, DiD) and
    the wall time of each part in seconds.

    Raises ``ValueError``/``FileNotFoundError`` on bad settings, an empty test set or a
    missing model directory; nothing is written before the inputs are read and checked.
    """
    from alias.generate.local import generate_local, load_model
    from alias.generate.prompts import PROMPT_VERSION, build_prompt
    from alias.generate.stage import samples_frame
    from alias.progress import progress_bar
    from alias.store.db import write_parquet

    p = exposure_params(params)
    out = Path(p["out"])
    models_out = Path(p["models_out"])
    device = p["device"] or None
    test_ids, items = load_test_items(Path(ingest_dir), Path(rename_dir), Path(verify_dir))
    records = task_records(ingest_dir)
    times: dict[str, float] = {}
    t_all = time.monotonic()

    split = split_halves(test_ids, seed=int(p["split_seed"]))
    half_of = dict(zip(split.task_id, split.half))
    sets = {(arm, h): build_training_set(records, split, h, arm, seed=int(p["shuffle_seed"]))
            for arm in p["arms"] for h in HALVES}

    t0 = time.monotonic()
    base = _base_model(p, models_out)
    model_name = p["model_name"] or (base.name if p["model_dir"] != "tiny" else "tiny")
    times["base_model_s"] = round(time.monotonic() - t0, 2)

    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    write_parquet(split, out / "split.parquet")
    set_rows = [{"adapter": f"{model_name}-{arm}-{h}", "arm": arm, "half": h, "position": i,
                 "task_id": e["task_id"], "source": e["source"], "format": e["format"]}
                for (arm, h), ex in sets.items() for i, e in enumerate(ex)]
    write_parquet(pd.DataFrame(set_rows), out / "training_sets.parquet")

    # ---- training: two adapters per arm
    t0 = time.monotonic()
    logs, adapters = [], []
    lp = lora_params(p["lora"])
    total_steps = sum(len(ex) for ex in sets.values()) * int(lp["epochs"])
    with progress_bar("exposure: LoRA", total=total_steps) as bar:
        for (arm, h), ex in sets.items():
            name = f"{model_name}-{arm}-{h}"
            run = train_lora(base, ex, models_out / name, p["lora"], name=name, device=device, progress=bar.advance)
            logs.append(run.log)
            adapters.append({"adapter": name, "arm": arm, "half": h, "model": f"{model_name}+{arm}-{h}",
                             "path": str(run.adapter_dir), "base_model": str(base), "examples": len(ex),
                             "skipped": json.dumps(run.skipped), "steps": run.n_steps,
                             "warmup_steps": run.warmup_steps, "tokens_per_s": round(run.tokens_per_s, 2),
                             "wall_s": round(run.wall_s, 2), "device": run.device, "dtype": run.dtype,
                             "target_modules": json.dumps(run.target_modules),
                             "params": json.dumps(run.params, sort_keys=True)})
    log = pd.concat(logs, ignore_index=True) if logs else pd.DataFrame(columns=TRAINING_LOG_COLUMNS)
    write_parquet(log, out / "training_log.parquet")
    write_parquet(pd.DataFrame(adapters), out / "adapters.parquet")
    arms = pd.DataFrame([{"family": model_name, "arm": REPORT_ARM[a["arm"]], "half": a["half"], "model": a["model"]}
                         for a in adapters], columns=["family", "arm", "half", "model"])
    write_parquet(arms, out / "exposure_arms.parquet")
    times["train_s"] = round(time.monotonic() - t0, 2)

    # ---- generation: samples per task, condition and adapter
    t0 = time.monotonic()
    g = p["generate"]
    sample_rows = []
    n_req = len(items) * int(g["samples"]) * len(adapters)
    if n_req:
        for a in adapters:
            reqs = [{"task_id": it["task_id"], "condition": it["condition"], "model": a["model"], "sample_idx": k,
                     "prompt": build_prompt("finetuned", it["description"]), "prompt_version": PROMPT_VERSION}
                    for it in items for k in range(int(g["samples"]))]
            mt = load_model(base, adapter_dir=a["path"], device=device)
            res = generate_local(base, reqs, temperature=float(g["temperature"]), top_p=float(g["top_p"]),
                                 max_new_tokens=int(g["max_new_tokens"]), batch_size=int(g["batch_size"]),
                                 seed=int(g["seed"]), adapter_dir=a["path"], model_and_tokenizer=mt)
            sample_rows += [{"task_id": r.task_id, "condition": r.condition, "model": r.model,
                             "sample_idx": r.sample_idx, "text": r.text, "model_key": "exposure",
                             "backend": "local", "prompt_kind": "finetuned", "prompt_version": r.prompt_version,
                             "settings": r.settings | {"model_dir": str(base), "adapter_dir": r.adapter_dir},
                             "response_model": r.model_name, "input_tokens": r.input_tokens,
                             "output_tokens": r.output_tokens, "stop_reason": r.stop_reason,
                             "hit_token_limit": bool(r.hit_token_limit)} for r in res]
            del mt
    arm_half = {a["model"]: (a["arm"], a["half"]) for a in adapters}
    samples = samples_frame(sample_rows, system_modules(Path(ingest_dir), Path(rename_dir)))
    samples["arm"] = pd.Series([arm_half[m][0] for m in samples.model], dtype="string")
    samples["half"] = pd.Series([arm_half[m][1] for m in samples.model], dtype="string")
    write_parquet(samples, out / "samples.parquet")
    times["generate_s"] = round(time.monotonic() - t0, 2)

    # ---- log-likelihood of the references: base model and every adapter
    t0 = time.monotonic()
    ll_parts = []
    scorers = [(model_name, None, None, None)] + [(a["model"], a["path"], a["arm"], a["half"]) for a in adapters]
    max_len = int(p["loglik"]["max_length"])
    with progress_bar("exposure: loglik", total=len(items) * len(scorers)) as bar:
        for mname, adir, arm, h in scorers:
            model, tok = load_model(base, adapter_dir=adir, device=device)
            df = reference_loglik(model, tok, items, mname, max_length=max_len, progress=bar.advance)
            df["arm"] = arm
            df["half"] = h
            df["seen"] = [None if h is None else bool(half_of.get(t) == h) for t in df.task_id]
            ll_parts.append(df)
            del model
    loglik = pd.concat(ll_parts, ignore_index=True) if ll_parts else pd.DataFrame(columns=LOGLIK_COLUMNS)
    loglik["seen"] = loglik["seen"].astype("boolean")
    write_parquet(loglik, out / "loglik.parquet")
    effects = loglik_effects(loglik, split)
    write_parquet(effects, out / "loglik_effects.parquet")
    times["loglik_s"] = round(time.monotonic() - t0, 2)
    times["total_s"] = round(time.monotonic() - t_all, 2)

    summary: dict[str, Any] = {
        "test_set": len(test_ids),
        "no_description": tasks_without_description(Path(ingest_dir), Path(verify_dir)),
        "half_A": int((split.half == "A").sum()), "half_B": int((split.half == "B").sum()),
        "scored_items": len(items), "adapters": [{k: a[k] for k in ("adapter", "examples", "steps", "tokens_per_s",
                                                                   "wall_s")} for a in adapters],
        "samples": len(samples),
        "hit_token_limit": int(samples["hit_token_limit"].sum()) if len(samples) else 0,
        "loglik_effects": [
            {k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()
             if k in ("arm", "measure", "n_tasks", "exposure_original", "exposure_original_A", "exposure_original_B",
                      "did", "unseen_cost", "seen_higher_tasks")}
            for r in effects.to_dict("records")],
        "wall_s": times,
    }
    return summary
