"""TLA+-Bench's release as a corpus and its generations as replayed outputs, on a fixture
of three of its tasks (891, 1399, 1510: ids in tests/fixtures/tlabench_ids.json) read in
place from ../shared: ingest, rename, verify, identifiers, the replay with the
benchmark's verdicts, all four grades (the `tlabench` grade reproducing the benchmark's
procedure), load and the comparison reports."""
from __future__ import annotations

import dataclasses
import itertools
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from alias.config import load_config
from alias.corpus.tlabench import ingest_tlabench
from alias.grade.tlabench import generated_module
from alias.stages import generate_replay, grade, identifiers, ingest, load, rename, report, verify
from alias.store.db import query

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
RELEASE = SHARED / "corpus" / "tlabench-release"
JAR = SHARED / "tools" / "tla2tools-1.8.0" / "tla2tools.jar"
IDS = REPO / "tests" / "fixtures" / "tlabench_ids.json"
LIBRARY = [SHARED / "corpus/deps/community-modules", SHARED / "corpus/deps/tlaps-library"]

pytestmark = [pytest.mark.corpus, pytest.mark.tlc,
              pytest.mark.skipif(not (RELEASE.is_dir() and JAR.is_file()), reason="needs ../shared (release, 1.8.0 jar)")]


def test_generated_module_is_read_as_the_benchmark_reads_it():
    assert generated_module("```tla\n---- MODULE Foo ----\nx == 1\n====\n```", "Gold") == "Foo"
    assert generated_module("--- MODULE Bar ---", "Gold") == "Bar"            # three dashes suffice
    assert generated_module("MODULE Baz\nVARIABLE x", "Gold") == "Gold"       # a bare MODULE line: the gold name


def test_ingest_keeps_every_record_and_says_why_one_is_excluded():
    t = ingest_tlabench(RELEASE, library=tuple(map(str, LIBRARY)))
    c = t["candidates"].set_index("task_id")
    assert len(c) == 100 and (c.status == "task").sum() == 94
    assert c.loc["577", "reason"] == "missing_reference" and c.loc["1142", "reason"] == "missing_cfg"
    assert c.loc["596", "reason"] == "missing_module" and c.loc["596", "detail"] == "DistributedTransaction"
    tasks = t["tasks"].set_index("task_id")
    assert tasks.loc["866", "author_modules"] == ["FastPaxos", "Paxos"]      # another gold file, by module name
    assert "Functions" in tasks.loc["1522", "library_modules"]
    assert tasks.description_source.eq("tlabench_desc_declarative_gpt").all()


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The pipeline of pipelines/tlabench on the three fixture tasks, their released
    outputs and verdicts of both regimes (copied into the run folder: the fixture's subset)."""
    wd = tmp_path_factory.mktemp("tlabench")
    ids = json.loads(IDS.read_text())
    outputs = wd / "outputs"
    for regime, model in itertools.product(("default", "cfgaware"), ("claude-opus-4-5", "gemini-2-5-pro")):
        (outputs / "generations" / regime / model).mkdir(parents=True)
        for i in ids:
            src = RELEASE / "outputs/generations" / regime / model / f"{i}.tla"
            if src.exists():
                shutil.copy(src, outputs / "generations" / regime / model / src.name)
        lines = (RELEASE / "outputs/verdicts" / regime / f"{model}.jsonl").read_text().splitlines()
        (outputs / "verdicts" / regime).mkdir(parents=True, exist_ok=True)
        (outputs / "verdicts" / regime / f"{model}.jsonl").write_text(
            "".join(ln + "\n" for ln in lines if json.loads(ln)["spec_id"] in ids))
    c = load_config([REPO / "params.yaml", REPO / "pipelines/tlabench/params.yaml"], {
        "corpus.path": str(RELEASE), "corpus.ids": str(IDS), "corpus.library": list(map(str, LIBRARY)),
        "tla.jar": str(JAR), "tla.memory_mb": 1024, "generate.replay.tlabench.path": str(outputs),
        "generate.replay.tlabench_cfgaware.path": str(outputs)})
    c = dataclasses.replace(c, paths=dataclasses.replace(c.paths.under(wd), sql=REPO / "sql"))
    summary = {m.NAME: m.run(c, c.paths) for m in (ingest, rename, verify, identifiers)}
    summary["replay"] = generate_replay.run(c, c.paths, "tlabench")
    summary["replay_cfgaware"] = generate_replay.run(c, c.paths, "tlabench_cfgaware")
    summary |= {m.NAME: m.run(c, c.paths) for m in (grade, load, report)}
    return wd, c, summary


def test_the_fixture_tasks_are_verified_and_every_output_is_graded(run):
    wd, c, s = run
    assert s["verify"]["test_set"] == 3
    assert s["replay"]["samples"] == 5 and s["replay"]["lacking"] == {"claude-opus-4-5": ["1510"], "gemini-2-5-pro": []}
    assert s["replay_cfgaware"]["samples"] == 5
    assert s["replay_cfgaware"]["lacking"] == {"claude-opus-4-5": ["1399"], "gemini-2-5-pro": []}
    v = pd.read_parquet(c.paths.grades / "verdicts.parquet")
    assert len(v) == 10 * 4 and set(v.grade) == {"parse", "name", "behavior", "tlabench"}
    assert sorted(set(v.model)) == [f"{k}/{m}" for k in ("tlabench", "tlabench_cfgaware")
                                    for m in ("claude-opus-4-5", "gemini-2-5-pro")]
    ext = pd.read_parquet(c.paths.samples / "tlabench/external_verdicts.parquet")
    assert len(ext) == 6 and set(ext.source) == {"tla-bench"} and set(ext.regime) == {"default"}
    assert set(ext.sample_model) == {"tlabench/claude-opus-4-5", "tlabench/gemini-2-5-pro"}


def test_the_tlabench_grade_agrees_with_the_benchmark(run):
    wd, c, _ = run
    agg = query("SELECT * FROM v_tlabench_agreement ORDER BY model", c.paths.store).set_index("model")
    assert list(agg.index) == ["tlabench/claude-opus-4-5", "tlabench/gemini-2-5-pro",
                               "tlabench_cfgaware/claude-opus-4-5", "tlabench_cfgaware/gemini-2-5-pro"]
    assert agg.compared.tolist() == [2, 3, 2, 3] and (agg.sany_agree == agg.compared).all()
    assert (agg.tlc_agree == agg.compared).all()
    assert agg.missing_from_release.tolist() == [1, 0, 1, 0]
    out = query("SELECT * FROM v_tlabench_outputs WHERE model = 'tlabench/gemini-2-5-pro' AND task_id = '1510'",
                c.paths.store)
    assert bool(out.our_sany.iloc[0]) and not bool(out.our_tlc.iloc[0])   # EXTENDS Functions: the library resolves
    assert (out.regime.iloc[0], out.release_model.iloc[0]) == ("default", "gemini-2-5-pro")
    text = (c.paths.reports / "table_tlabench_agreement.md").read_text()
    assert "| tlabench/claude-opus-4-5 | 2 | 2/2 (100.0%) | 2/2 (100.0%) | 1 |" in text and "1510" in text
    rates = (c.paths.reports / "table_tlabench_pass_rates.md").read_text()
    assert "tlabench_cfgaware/gemini-2-5-pro" in rates and "tlabench/gemini-2-5-pro" in rates
    for name in ("table_tlabench_name_vs_tlc.md", "table_tlabench_name_vs_behavior.md", "table_tlabench_pass_rates.md"):
        assert "no data" not in (c.paths.reports / name).read_text().split("\n\n", 2)[2][:200], name
