"""The exposure stage's outputs in the store: ``load`` fills ``split``, ``loglik``,
``exposure_arms``, ``training_log``, ``exposure_adapters`` and the fine-tuned ``samples``
from ``data/exposure/`` (shaped as the ``exposure`` stage writes
them), and ``v_loglik_paired`` / ``v_exposure_paired`` give the rows a pandas computation
gives. Synthetic numbers, no model: seconds."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from alias.exposure.experiment import REPORT_ARM
from alias.exposure.loglik import LOGLIK_COLUMNS
from alias.exposure.lora import TRAINING_LOG_COLUMNS
from alias.generate.samples import load_samples
from alias.stages import load
from alias.store.db import StoreError, query, write_parquet
from conftest import embedded_config


def _load(exposure: list | None = None) -> dict:
    """The load stage with ``report.exposure`` entries, in the working directory."""
    c = embedded_config({"report.exposure": exposure or []})
    return load.run(c, c.paths)

SQL = Path(__file__).resolve().parents[1] / "sql"
TEST = ["T1", "T2", "T3", "T4", "T5"]
OUTSIDE = "T6"                        # scored, but not in the test set: in no view
HALF = {"T1": "A", "T2": "A", "T3": "B", "T4": "B", "T5": "B"}
FAMILY = "tiny"
ADAPTERS = [(arm, h) for arm in ("task_pair", "spec_only") for h in ("A", "B")]
GRADES = ("parse", "name", "behavior")


def _model(arm: str, half: str) -> str:
    return f"{FAMILY}+{arm}-{half}"


def exposure_outputs(root: Path, seed: int = 0) -> dict[str, pd.DataFrame]:
    """A ``data/exposure`` directory under ``root`` as the exposure stage writes it, plus
    the test set and the verdicts of the fine-tuned samples (as ``grade`` writes them)."""
    rng = np.random.default_rng(seed)
    out = root / "data" / "exposure"
    t = {}
    t["split"] = pd.DataFrame({"task_id": TEST, "half": [HALF[x] for x in TEST]})
    t["adapters"] = pd.DataFrame([{"adapter": f"{FAMILY}-{a}-{h}", "arm": a, "half": h, "model": _model(a, h),
                                   "path": f"models/exposure/{FAMILY}-{a}-{h}", "base_model": "models/exposure/tiny-base",
                                   "examples": 3, "skipped": "[]", "steps": 9, "warmup_steps": 0,
                                   "tokens_per_s": 1000.0, "wall_s": 2.0, "device": "cpu", "dtype": "float32",
                                   "target_modules": "[]", "params": "{}"} for a, h in ADAPTERS])
    t["exposure_arms"] = pd.DataFrame([{"family": FAMILY, "arm": REPORT_ARM[a], "half": h, "model": _model(a, h)}
                                       for a, h in ADAPTERS])
    t["training_log"] = pd.DataFrame([{"adapter": f"{FAMILY}-{a}-{h}", "step": s, "epoch": 1 + (s - 1) // 3,
                                       "task_id": TEST[s % 5], "loss": 3.0 - 0.1 * s, "lr": 0.002, "tokens": 100,
                                       "loss_tokens": 60, "grad_norm": 1.5}
                                      for a, h in ADAPTERS for s in range(1, 10)], columns=TRAINING_LOG_COLUMNS)
    ll = []
    scorers = [(FAMILY, None, None)] + [(_model(a, h), a, h) for a, h in ADAPTERS]
    for m, a, h in scorers:
        for task in TEST + [OUTSIDE]:
            for cond in ("original", "random"):
                seen = None if h is None else HALF.get(task) == h
                v = -2.0 - (0.8 if cond == "random" else 0.0) + (0.3 if seen else 0.0) + rng.normal(0, 0.05)
                ll.append({"task_id": task, "condition": cond, "model": m, "n_tokens": 200, "mean_loglik": v,
                           "outside_loglik": v + 0.2, "n_outside": 170, "identifier_loglik": v - 1.0,
                           "n_identifier": 30, "n_reference_tokens": 200, "truncated": False,
                           "arm": a, "half": h, "seen": seen})
    t["loglik"] = pd.DataFrame(ll, columns=LOGLIK_COLUMNS + ["arm", "half", "seen"])
    t["loglik"]["seen"] = t["loglik"]["seen"].astype("boolean")
    samples, verdicts = [], []
    for a, h in ADAPTERS:
        for task in TEST + [OUTSIDE]:
            for cond in ("original", "random"):
                for k in range(5):
                    key = {"task_id": task, "condition": cond, "model": _model(a, h), "sample_idx": k}
                    samples.append(key | {"text": "---- MODULE M ----", "model_key": "exposure", "backend": "local",
                                          "prompt_kind": "finetuned", "settings": json.dumps({"seed": 0}),
                                          "output_tokens": 40, "stop_reason": "closing_line",
                                          "hit_token_limit": False, "has_closing_line": True, "truncated": False,
                                          "arm": a, "half": h})
                    p = 0.2 + (0.4 if HALF.get(task) == h else 0.0) - (0.1 if cond == "random" else 0.0)
                    for g in GRADES:
                        verdicts.append(key | {"grade": g, "passed": bool(rng.random() < p)})
    t["samples"] = pd.DataFrame(samples)
    for name in ("split", "adapters", "exposure_arms", "training_log", "loglik", "samples"):
        write_parquet(t[name], out / f"{name}.parquet")
    t["verdicts"] = pd.DataFrame(verdicts)
    write_parquet(t["verdicts"], root / "data" / "grades" / "verdicts.parquet")
    write_parquet(pd.DataFrame({"task_id": TEST + [OUTSIDE], "in_test_set": [True] * 5 + [False]}),
                  root / "data" / "verify" / "test_set.parquet")
    return t


@pytest.fixture()
def loaded(tmp_path, monkeypatch):
    t = exposure_outputs(tmp_path)
    (tmp_path / "sql").symlink_to(SQL)
    monkeypatch.chdir(tmp_path)
    counts = _load()
    return tmp_path / "data" / "alias.duckdb", t, counts


def test_load_fills_the_exposure_tables_from_the_stage_outputs(loaded):
    db, t, counts = loaded
    assert counts["split"] == 5 and counts["exposure_arms"] == 4 and counts["exposure_adapters"] == 4
    assert counts["training_log"] == 36 and counts["loglik"] == 5 * 6 * 2 and counts["samples"] == 4 * 6 * 2 * 5
    arms = query("SELECT family, arm, half, model FROM exposure_arms ORDER BY arm, half", db)
    assert list(map(tuple, arms.values)) == [("tiny", "spec-only", "A", "tiny+spec_only-A"),
                                             ("tiny", "spec-only", "B", "tiny+spec_only-B"),
                                             ("tiny", "task-pair", "A", "tiny+task_pair-A"),
                                             ("tiny", "task-pair", "B", "tiny+task_pair-B")]
    ll = query("SELECT * FROM loglik ORDER BY model, task_id, condition", db)
    want = t["loglik"].sort_values(["model", "task_id", "condition"]).reset_index(drop=True)
    np.testing.assert_allclose(ll.mean_loglik, want.mean_loglik)
    assert ll.arm.isna().sum() == 12 and (ll.seen.astype("boolean").fillna(False) == want.seen.fillna(False)).all()
    split = query("SELECT * FROM split ORDER BY task_id", db)
    assert dict(zip(split.task_id, split.half)) == HALF
    s = query("SELECT model_key, backend, truncated, count(*) AS n FROM samples GROUP BY ALL", db)
    assert list(map(tuple, s.values)) == [("exposure", "local", False, 240)]
    step = query("SELECT loss FROM training_log WHERE adapter = 'tiny-task_pair-A' AND step = 4", db)
    assert step.loss.iloc[0] == pytest.approx(2.6)


def _paired(cells: pd.DataFrame, value: str) -> pd.DataFrame:
    """Per (arm, task): the four cells, from (model, task_id, condition, value) rows."""
    arms = {_model(a, h): (REPORT_ARM[a], h) for a, h in ADAPTERS}
    c = cells[cells.model.isin(arms) & cells.task_id.isin(TEST)].copy()
    c["arm"] = [arms[m][0] for m in c.model]
    c["exposure"] = np.where([arms[m][1] == HALF[x] for m, x in zip(c.model, c.task_id)], "seen", "unseen")
    c["cell"] = c.condition.map({"original": "original", "random": "renamed"}) + "_" + c.exposure
    w = c.pivot_table(index=["arm", "task_id"], columns="cell", values=value, aggfunc="max").reset_index()
    return w[["arm", "task_id", "original_seen", "original_unseen", "renamed_seen", "renamed_unseen"]]


def test_loglik_paired_matches_pandas(loaded):
    db, t, _ = loaded
    for measure, col in (("all", "mean_loglik"), ("outside", "outside_loglik"), ("identifiers", "identifier_loglik")):
        got = query(f"SELECT arm, task_id, original_seen, original_unseen, renamed_seen, renamed_unseen "
                    f"FROM v_loglik_paired WHERE family = 'tiny' AND measure = '{measure}' ORDER BY arm, task_id", db)
        want = _paired(t["loglik"], col).sort_values(["arm", "task_id"]).reset_index(drop=True)
        assert len(got) == 2 * 5
        pd.testing.assert_frame_equal(got, want, check_dtype=False, check_names=False)
    # the seen model of a task gives it the higher likelihood here (by construction)
    d = query("SELECT original_seen - original_unseen AS d FROM v_loglik_paired WHERE measure = 'all'", db)
    assert (d.d > 0.1).all()


def test_exposure_paired_matches_pandas(loaded):
    db, t, _ = loaded
    v = t["verdicts"].copy()
    v["passed"] = v.passed.astype(float)
    rates = v.groupby(["model", "task_id", "condition", "grade"], as_index=False).passed.mean()
    for g in GRADES:
        got = query(f"SELECT arm, task_id, original_seen, original_unseen, renamed_seen, renamed_unseen "
                    f"FROM v_exposure_paired WHERE family = 'tiny' AND grade = '{g}' ORDER BY arm, task_id", db)
        want = _paired(rates[rates.grade == g], "passed").sort_values(["arm", "task_id"]).reset_index(drop=True)
        assert len(got) == 10
        pd.testing.assert_frame_equal(got, want, check_dtype=False, check_names=False)
    # no fine-tuned output is truncated: every task is in the Appendix N subset
    assert query("SELECT bool_and(no_truncation) AS ok FROM v_exposure_truncation", db).ok.iloc[0]


def test_a_parameter_arm_that_repeats_the_stage_arm_is_an_error(tmp_path, monkeypatch):
    exposure_outputs(tmp_path)
    (tmp_path / "sql").symlink_to(SQL)
    monkeypatch.chdir(tmp_path)
    same = {"family": "tiny", "arm": "task-pair", "half_A": "x-A", "half_B": "x-B"}
    with pytest.raises(StoreError, match="exposure_arms"):
        _load([same])
    assert not (tmp_path / "data" / "alias.duckdb").exists()
    # another family from the parameters is added beside the stage's arms
    other = same | {"family": "Qwen2.5-Coder-14B"}
    counts = _load([other])
    assert counts["exposure_arms"] == 6


def test_grade_reads_the_exposure_samples_beside_the_generate_stages(tmp_path):
    """``alias grade`` passes data/exposure/samples.parquet as ``extra``: its samples are graded
    with those of the generate stages, and a sample key in both is an error naming both files."""
    t = exposure_outputs(tmp_path)
    expo = tmp_path / "data" / "exposure" / "samples.parquet"
    gen = t["samples"].head(3).assign(model="tiny", model_key="tiny")
    write_parquet(gen, tmp_path / "samples" / "tiny" / "samples.parquet")
    both = load_samples(tmp_path / "samples", ["tiny"], [expo])
    assert len(both) == 3 + 240 and (both.model == "tiny").sum() == 3
    assert set(both.model) - {"tiny"} == {_model(a, h) for a, h in ADAPTERS}
    assert len(load_samples(tmp_path / "samples", ["tiny"])) == 3
    write_parquet(t["samples"].head(2), tmp_path / "samples" / "tiny" / "samples.parquet")
    with pytest.raises(ValueError, match="is in both"):
        load_samples(tmp_path / "samples", ["tiny"], [expo])
