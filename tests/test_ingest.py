"""Corpus ingest on the embedded default corpus and on the real TLA+ Examples corpus."""
from __future__ import annotations

from pathlib import Path

import json

import pandas as pd
import pytest

from alias.corpus.ingest import EMBEDDED_CORPUS, IngestError, ingest, load_descriptions, render_description


@pytest.fixture(scope="module")
def embedded():
    return ingest(EMBEDDED_CORPUS, EMBEDDED_CORPUS / "descriptions.json", (), 60)


def test_embedded_tasks_and_exclusions(embedded):
    tasks = embedded["tasks"].set_index("task_id")
    assert len(tasks) == 6
    cand = embedded["candidates"]
    reasons = cand.set_index("cfg_path")["reason"].to_dict()
    assert reasons["specifications/TokenRing/MCTokenRingFail.cfg"] == "not_exhaustive_success"
    # one task per system module: the second TrafficLight model is a duplicate
    assert reasons["specifications/TrafficLight/TrafficLightLarge.cfg"] == "duplicate_model"
    assert cand.status.value_counts().to_dict() == {"task": 6, "excluded": 2}


def test_wrapper_and_utility_detection(embedded):
    tasks = embedded["tasks"].set_index("task_id")
    tr = tasks.loc["TokenRing.TokenRing.MCTokenRing"]
    assert (tr.system_module, tr.wrapper_module, tr.model_module) == ("TokenRing", "MCTokenRing", "MCTokenRing")
    assert list(tr.author_modules) == ["MCTokenRing", "TokenRing", "RingUtil"]
    mods = embedded["modules"]
    roles = mods[mods.task_id == "TokenRing.TokenRing.MCTokenRing"].set_index("module")["role"].to_dict()
    assert roles == {"MCTokenRing": "wrapper", "TokenRing": "system", "RingUtil": "utility"}
    corpus_roles = embedded["module_roles"].set_index("module")["role"].to_dict()
    assert corpus_roles["RingUtil"] == "utility"
    assert corpus_roles["TokenRing"] == "system"
    assert corpus_roles["MCTokenRing"] == "wrapper"
    assert pd.isna(tasks.loc["Clock.Clock.Clock"].wrapper_module)


def test_descriptions_source_and_rendering(embedded):
    tasks = embedded["tasks"].set_index("system_module")
    assert tasks.loc["BoundedBuffer"].description_source == "comments"
    assert "buffer" in tasks.loc["BoundedBuffer"].description.lower()
    assert "(*" not in tasks.loc["BoundedBuffer"].description
    clock = tasks.loc["Clock"]
    assert clock.description_source == "tlabench"
    assert clock.description.startswith("System overview: ")
    assert "Safety properties: " in clock.description
    assert tasks.loc["Peterson"].pluscal


def test_expected_state_counts_recorded(embedded):
    tasks = embedded["tasks"].set_index("system_module")
    assert tasks.loc["Clock"].expected_distinct_states == 48
    assert tasks.loc["Clock"].expected_depth == 48
    assert tasks.loc["Peterson"].expected_states_generated == 77


def test_render_description_order_and_lists():
    text = render_description({"actions": ["a", "b"], "system_overview": "S", "expected_output_files": ["X.tla"]})
    assert text == "System overview: S\n\nActions: - a\n- b"


def test_bad_inputs_raise_clear_errors(tmp_path):
    with pytest.raises(IngestError, match="specifications"):
        ingest(tmp_path)
    bad = tmp_path / "d.json"
    bad.write_text("{not json")
    with pytest.raises(IngestError, match="not valid JSON"):
        load_descriptions(bad)
    bad.write_text(json.dumps([{"nodescription": 1}]))
    with pytest.raises(IngestError, match="record 0"):
        load_descriptions(bad)


@pytest.mark.corpus
def test_real_corpus_ingest(corpus_root, deps_dirs):
    tb = corpus_root.parent / "tlabench"
    t = ingest(corpus_root, tb, deps_dirs, 60)
    tasks = t["tasks"].set_index("task_id")
    assert tasks.index.is_unique
    assert len(tasks) >= 100
    paxos = tasks.loc["Paxos.Paxos.MCPaxos"]
    assert (paxos.system_module, paxos.wrapper_module) == ("Paxos", "MCPaxos")
    assert (tasks.description_source.str.startswith("tlabench")).sum() >= 70
    cand = t["candidates"]
    assert cand.loc[cand.status == "excluded", "reason"].notna().all()
    assert set(cand.reason.dropna()) <= {"not_exhaustive_success", "too_slow", "duplicate_model",
                                         "missing_module", "missing_cfg"}
    # without the library dirs, modules from TLAPS/Community Modules are reported missing
    t2 = ingest(corpus_root, None, (), 60)
    miss = t2["candidates"].query("reason == 'missing_module'")
    assert len(miss) > len(cand.query("reason == 'missing_module'"))


def test_cli_stage_reports_bad_corpus_in_one_line(tmp_path):
    import yaml
    from click.testing import CliRunner

    from alias.cli import main

    raw = yaml.safe_load((Path(__file__).resolve().parents[1] / "params.yaml").read_text())
    params = tmp_path / "params.yaml"
    raw["corpus"].update(path=str(tmp_path / "nope"), descriptions="")
    params.write_text(yaml.safe_dump(raw))
    res = CliRunner().invoke(main, ["ingest", "--params", str(params)])
    assert res.exit_code == 1
    assert "IngestError" in res.output and "no specifications/ directory" in res.output
    assert "Traceback" not in res.output
    raw["corpus"].update(path=str(EMBEDDED_CORPUS), library=[str(tmp_path / "nolib")])
    params.write_text(yaml.safe_dump(raw))
    res = CliRunner().invoke(main, ["ingest", "--params", str(params)])
    assert res.exit_code == 1 and "library directory not found" in res.output
