"""ALIAS inside Inspect (``alias.inspect``, ``alias_cir``): the test set as Inspect tasks,
the grades as scorers, offline with ``mockllm/model`` and with the tiny local model through
Inspect's Hugging Face provider; Inspect logs back into samples (replay layout ``inspect``)
with the grade stage's verdicts equal to the scorers'."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest
import yaml

inspect_ai = pytest.importorskip("inspect_ai")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

import alias_cir  # noqa: E402
from alias.generate.samples import condition_prompts  # noqa: E402
from alias.corpus.testset import TestSet  # noqa: E402
from alias.stages import generate_replay, grade  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CLOCK, LIGHT = "Clock.Clock.Clock", "TrafficLight.TrafficLight.TrafficLight"

pytestmark = pytest.mark.tlc


@pytest.fixture(scope="module")
def setup(embedded_stage_inputs, tmp_path_factory):
    """A data folder of the embedded test set, a settings file whose work folder is in tmp,
    and the references by (task, condition)."""
    wd, c = embedded_stage_inputs
    tmp = tmp_path_factory.mktemp("inspect")
    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    raw["paths"]["work"] = str(tmp / ".alias")
    raw["generate"]["n_samples"] = 1
    (tmp / "params.yaml").write_text(yaml.safe_dump(raw))
    refs = TestSet.load(c.paths, meaningful=True).references()
    return wd / "data", tmp / "params.yaml", refs, tmp


def test_a_condition_task_graded_by_alias_scorers(setup):
    data, params, refs, tmp = setup
    task = alias_cir.original(store=str(data), params=str(params), task_ids=f"{CLOCK},{LIGHT}", grades="parse,name")
    assert [s.id for s in task.dataset] == [CLOCK, LIGHT] and task.epochs == 1
    # the same prompt text as the generate stages (one source)
    table = TestSet.load(_paths(data), meaningful=True).conditions_table()
    want = {t: p for t, _c, p in condition_prompts(table, ["original"], "frontier")}
    assert [s.input for s in task.dataset] == [want[CLOCK], want[LIGHT]]
    replies = {want[CLOCK]: "Here it is:\n```tla\n" + refs[(CLOCK, "original")].system_text + "```\n",
               want[LIGHT]: refs[(LIGHT, "original")].system_text.replace("====", "").replace("Init ==", "Init ="),
               }

    def reply(messages, tools, tool_choice, config):
        out = ModelOutput.from_content("mockllm/model", replies[messages[-1].text])
        out.usage = ModelUsage(input_tokens=10, output_tokens=10, total_tokens=20)
        return out

    (log,) = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=reply), log_dir=str(tmp / "logs"),
                          display="none")
    assert log.status == "success"
    log = read_eval_log(log.location)
    scores = {s.id: s.scores for s in log.samples}
    assert (scores[CLOCK]["parse"].value, scores[CLOCK]["name"].value) == ("C", "C")
    assert scores[CLOCK]["name"].metadata["distinct_states"] == 48
    assert scores[CLOCK]["name"].metadata["tlc_kind"] == "success" and scores[CLOCK]["name"].metadata["cfg_changes"] == []
    assert scores[LIGHT]["parse"].value == "I" and scores[LIGHT]["parse"].metadata["error_text"]
    assert scores[LIGHT]["name"].metadata["reason"] == scores[LIGHT]["parse"].metadata["reason"]
    assert log.results.scores[0].name == "parse" and log.results.scores[0].metrics["accuracy"].value == 0.5
    # the journal answers a rerun (no tool run)
    journal = tmp / ".alias" / "inspect" / "name" / "journal.jsonl"
    assert len(journal.read_text().splitlines()) == 2


def _paths(data: Path):
    from types import SimpleNamespace

    return SimpleNamespace(**{k: data / k for k in ("ingest", "rename", "verify", "meaningful")})


def test_inspect_logs_replay_into_samples_graded_as_the_scorers_did(setup, tmp_path):
    """Replay layout ``inspect``: the log of the test above becomes samples; the grade stage's
    verdicts equal the scorers' on every sample."""
    data, params, refs, tmp = setup
    logs = sorted((tmp / "logs").glob("*.eval"))
    assert logs, "run after test_a_condition_task_graded_by_alias_scorers"
    from alias.config import load_config

    c = load_config(params, {"generate.replay": {"rt": {"backend": "replay", "layout": "inspect",
                                                          "path": str(tmp / "logs")}},
                             "generate.local": {}, "generate.providers": {}, "continuation.models": [],
                             "grade.grades": ["parse", "name"]})
    paths = dataclasses.replace(c.paths, ingest=data / "ingest", rename=data / "rename", verify=data / "verify",
                                meaningful=data / "meaningful", samples=tmp_path / "samples",
                                grades=tmp_path / "grades", work=tmp_path / "work")
    status = generate_replay.run(c, paths, "rt")
    assert status["samples"] == 2 and status["replay_errors"] == 0
    s = pd.read_parquet(paths.samples / "rt/samples.parquet")
    assert set(s.model) == {"rt/mockllm/model"} and set(s.task_id) == {CLOCK, LIGHT} and set(s.sample_idx) == {0}
    grade.run(c, paths)
    v = pd.read_parquet(paths.grades / "verdicts.parquet")
    log = read_eval_log(str(logs[0]))
    compared = 0
    for sample in log.samples:
        for g, score in sample.scores.items():
            row = v[(v.task_id == sample.id) & (v.grade == g)].iloc[0]
            assert bool(row.passed) == (score.value == "C") == score.metadata["passed"]
            assert (None if pd.isna(row.reason) else row.reason) == score.metadata["reason"]
            assert (None if pd.isna(row.distinct_states) else int(row.distinct_states)) == \
                score.metadata["distinct_states"]
            compared += 1
    assert compared == 4
    _export(c, paths, tmp_path, log)



def test_an_errored_sample_without_output_is_a_replay_error(setup, tmp_path):
    """A log whose sample errored before the model answered (Inspect's mockllm offline, with
    no tiktoken file, writes one: ``output.choices == []``) becomes a rejected record with the
    sample's error, not a crash."""
    from inspect_ai.log import EvalError, write_eval_log

    from alias.generate.inspect_logs import inspect_records

    _data, _params, _refs, tmp = setup
    logs = sorted((tmp / "logs").glob("*.eval"))
    assert logs, "run after test_a_condition_task_graded_by_alias_scorers"
    log = read_eval_log(str(logs[0]))
    log.samples[0].output = ModelOutput(model="mockllm/model", choices=[])
    log.samples[0].error = EvalError(message="ConnectionError: no network", traceback="", traceback_ansi="")
    write_eval_log(log, str(tmp_path / "errored.eval"))
    recs = inspect_records(tmp_path / "errored.eval")
    assert len(recs) == len(log.samples) == 2
    assert recs[0].error == "sample_error: ConnectionError: no network" and recs[0].text == ""
    assert recs[1].error is None and recs[1].text
    assert '"stop_reason": null' in recs[0].extra

def _export(c, paths, tmp_path, log):
    """``alias-cir export`` of a store holding these samples and verdicts: the dataset loads
    with the test set's rows per condition, the verdict log with the scorers' scores."""
    import datasets
    from click.testing import CliRunner

    from alias.cli import main
    from alias.store.db import build_store

    folders = {k: getattr(paths, k) for k in ("ingest", "rename", "verify", "samples", "grades")}
    folders |= {k: tmp_path / "none" for k in ("identifiers", "controls", "meaningful", "continuation", "exposure")}
    build_store(tmp_path / "alias.duckdb", folders, REPO / "sql")
    res = CliRunner().invoke(main, ["export", "--store", str(tmp_path / "alias.duckdb"), "--out", str(tmp_path / "x"),
                                    "--params", str(REPO / "params.yaml")])
    assert res.exit_code == 0, res.output
    d = datasets.load_dataset(str(tmp_path / "x" / "dataset"))
    assert {k: v.num_rows for k, v in d.items()} == {"original": 6, "random": 6}
    card = (tmp_path / "x" / "dataset" / "README.md").read_text()
    assert "MIT license" in card and "- original: 6" in card and "`hidden_names`" in card
    assert "\nlicense: mit\n" in card and "# ALIAS test set: `embedded` (corpus layout `examples`)" in card
    assert "**descriptions** (`descriptions.json`): the same as the corpus" in card
    (exported,) = sorted((tmp_path / "x" / "logs").glob("*.eval"))
    got = read_eval_log(str(exported))
    assert got.eval.model == "rt/mockllm/model" and len(got.samples) == 2
    theirs = {(s.id, g): sc.value for s in log.samples for g, sc in s.scores.items()}
    assert {(s.id, g): sc.value for s in got.samples for g, sc in s.scores.items()} == theirs


def test_the_tiny_local_model_through_inspects_hugging_face_provider(setup, tmp_path, monkeypatch):
    from alias.generate.tiny import build_tiny_model, embedded_texts

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the model is a local folder: no hub

    data, params, refs, tmp = setup
    model_dir = build_tiny_model(embedded_texts(), tmp_path / "tiny", train_steps=0)
    task = alias_cir.renamed(store=str(data), params=str(params), task_ids=CLOCK, prompt="finetuned", grades="parse")
    model = get_model("hf/tiny", model_path=str(model_dir), device="cpu",
                      chat_template="{{ messages[0].content }}{{ '\\n' }}")
    (log,) = inspect_eval(task, model=model, max_tokens=8, log_dir=str(tmp_path / "logs"), display="none")
    assert log.status == "success", log.error
    (sample,) = read_eval_log(log.location).samples
    assert sample.metadata["condition"] == "random" and sample.output.completion
    assert sample.scores["parse"].value == "I" and sample.scores["parse"].metadata["reason"].startswith("extraction_failed")


def test_a_bad_task_argument_is_one_line_not_a_traceback(setup, tmp_path):
    """``inspect eval alias_cir/test_set -T condition=nope`` (or a store that is not there)
    ends with Inspect's one-line prerequisite error naming what exists, not a traceback
    through Inspect's task loader (the newcomer saw 259 lines)."""
    import subprocess
    import sys

    data, params, _, _ = setup
    env = {**__import__("os").environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "1000"}  # rich wraps at the width
    for args, expected in ((["-T", f"store={data}", "-T", "condition=nope"], "alias_cir: condition must be one of original, random, "
                                                      "meaningful, got 'nope'"),
                           (["-T", f"store={tmp_path / 'none'}"], f"alias_cir: no store at {tmp_path / 'none'}")):
        r = subprocess.run([sys.executable, "-m", "inspect_ai", "eval", "alias_cir/test_set", "--model",
                            "mockllm/model", "--log-dir", str(tmp_path / "logs"), "-T", f"params={params}", *args],
                           capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
        lines = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.strip()]
        assert r.returncode == 1 and len(lines) == 1 and lines[0].startswith(expected), lines


def test_the_cards_licence_is_the_one_every_corpus_names_else_other():
    """The dataset card's ``license:``: the corpora's one licence as Hugging Face names it;
    two corpora under different licences (the TLA+ Examples, MIT, with TLA+-Bench's CC BY 4.0
    descriptions) give ``other``, as does a licence it does not know."""
    from alias.inspect.export import card_licence
    mit = "Licence: MIT (the TLA+ Examples' LICENSE)."
    cc = "The release is under CC BY 4.0; for evaluation, not for training."
    assert card_licence([mit, mit]) == "mit"
    assert card_licence([cc]) == "cc-by-4.0"
    assert card_licence([mit, cc]) == "other"
    assert card_licence(["unknown: /x names no licence (SOURCE.md, LICENSE.md)"]) == "other"
    assert card_licence(["BSD licence"]) == "other"  # BSD-2 or BSD-3: not guessed


def test_the_mock_model_scores_without_tiktokens_file(setup, monkeypatch, tmp_path):
    """``--model mockllm/model`` offline: where tiktoken cannot fetch its encoding (here made
    to fail as it does without network), the mock model estimates its token counts and every
    sample is scored by the ALIAS scorers instead of erroring (alias.inspect.offline)."""
    import requests
    from inspect_ai.model import _model

    from alias.inspect.offline import estimate_tokens

    def no_download(text):
        raise requests.exceptions.ConnectionError("no network: o200k_base.tiktoken")

    monkeypatch.setattr(_model, "count_text_tokens", no_download)
    data, params, _, _ = setup
    task = alias_cir.renamed(store=str(data), params=str(params), task_ids=CLOCK, grades="parse,name")
    (log,) = inspect_eval(task, model="mockllm/model", log_dir=str(tmp_path / "logs"), display="none")
    log = read_eval_log(log.location)
    assert log.status == "success" and len(log.samples) == 1 and log.samples[0].error is None
    assert {k: v.value for k, v in log.samples[0].scores.items()} == {"parse": "I", "name": "I"}
    assert log.samples[0].output.usage.input_tokens >= estimate_tokens(log.samples[0].input) > 1
