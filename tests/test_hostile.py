"""Hostile model outputs (alias/tla/hostile.py) against the confinement, with the Community
Modules' overrides loaded: run a command, read a secret (absolute path, ``..``, CSV, text),
write outside, reach the network, fork, fill the disk, exhaust memory, recurse, outlive the
time limit, name the module as a path. Through TLC, ``alias-cir grade-file``, the grade
stage and a Dask worker, each is a failed verdict with a reason, nothing outside its run
changes (a marker file, secrets and a listing of the bait folder, a loopback listener, the
temporary directory) and the reference graded next passes. Unconfined with the overrides
(what ALIAS never does), the same outputs write the marker, read the secret and connect:
what the confinement prevents, so these tests can fail."""
from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from alias.tla.hostile import CASES, CLOCK_REFERENCE, Bait, output_text, run_suite
from alias.tla.tools import ToolConfig, confined
from conftest import RECORD_JAR, REPO, embedded_config

pytestmark = pytest.mark.tlc
SHARED = REPO.parent / "shared"
COMMUNITY = SHARED / "corpus" / "deps" / "community-modules"
CM_JAR = SHARED / "tools" / "community-modules" / "CommunityModules-deps.jar"
TASK = "Clock.Clock.Clock"
#: small limits: the disk case fills 8 MiB, the memory case 128 MiB of heap, the time-limit case
#: stops after 6 s
SETTINGS = {"tla": {"disk_mb": 8, "memory_mb": 128, "timeout_s": 60, "parallel": 2,
                    "overrides_jar": str(CM_JAR)},
            "corpus": {"library": [str(COMMUNITY)]}, "grade": {"timeout_s": 6, "parallel": 2, "max_maps": 4},
            "generate": {"local": {}, "providers": {}}, "continuation": {"models": []}}
#: what each case does unconfined with the overrides (the evidence the confinement prevents)
PREVENTED = {"exec": "changed or created MARKER-exec", "read-json": "the secret is in the output",
             "read-dots": "the secret is in the output", "read-csv": "the secret is in the output",
             "read-text": "the secret is in the output", "write": "changed or created written.txt",
             "network": "connected to the loopback listener", "fork": "changed or created MARKER-fork"}


@pytest.fixture(scope="module")
def setting(tmp_path_factory):
    """``(root, config, params files)``: the embedded corpus's Clock task alone, ingested,
    renamed and verified under ``root/data``, with the settings above."""
    if not (RECORD_JAR.is_file() and COMMUNITY.is_dir() and CM_JAR.is_file()):
        pytest.skip("needs TLA+ tools v1.8.0 and the Community Modules (library folder and jar)")
    if not confined(ToolConfig(jar=RECORD_JAR)):
        pytest.skip("this machine cannot confine runs (tests/test_confine.py checks what happens then)")
    root = tmp_path_factory.mktemp("hostile")
    corpus = root / "corpus"
    shutil.copytree(REPO / "alias/corpus/embedded/specifications/Clock", corpus / "specifications" / "Clock")
    shutil.copy(REPO / "alias/corpus/embedded/descriptions.json", corpus / "descriptions.json")
    extra = root / "hostile.yaml"
    extra.write_text(yaml.safe_dump(SETTINGS | {"corpus": SETTINGS["corpus"] | {"path": str(corpus)}}))
    c = embedded_config({"corpus.path": str(corpus), **_dotted(SETTINGS)})
    c = dataclasses.replace(c, paths=c.paths.under(root / "data"))
    from alias.stages import ingest, rename, verify

    for stage in (ingest, rename, verify):
        stage.run(c, c.paths)
    return root, c, (str(REPO / "params.yaml"), str(extra))


def _dotted(tree: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in tree.items():
        if isinstance(v, dict) and v:
            out |= _dotted(v, f"{prefix}{k}.")
        else:
            out[f"{prefix}{k}"] = v
    return out


def test_through_tlc_every_case_is_contained_and_unconfined_each_gets_out(setting):
    root, c, _ = setting
    from alias.stages.common import tool_config

    outcomes = run_suite(dataclasses.replace(tool_config(c), tlc_server=True), root / "tlc", time_limit_s=4)
    boxed = [o for o in outcomes if o.mode == "confined"]
    assert [o.case for o in boxed] == [case.name for case in CASES]
    for o in boxed:
        assert o.kind != "success" and o.reason.strip() and o.evidence == [] and o.next_ok, o
    assert {o.case: o.kind for o in boxed}["time-limit"] == "timeout"
    assert "No space left on device" in {o.case: o.reason for o in boxed}["fill-disk"]
    demo = {o.case: o for o in outcomes if o.mode != "confined"}
    for case, got in PREVENTED.items():
        assert any(e.startswith(got) for e in demo[case].evidence), demo[case]
    assert all(o.next_ok for o in demo.values())


@pytest.fixture
def private_tmp(tmp_path, monkeypatch) -> Path:
    """This test's own temporary directory (for this process and the workers it starts):
    the system one also holds other processes' run folders."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    monkeypatch.setenv("TMPDIR", str(tmp))
    return tmp


def test_grade_file_fails_every_case(setting, tmp_path, private_tmp):
    root, c, params = setting
    from alias.cli import main

    with Bait(tmp_path) as bait:
        before = bait.snapshot()
        for case in CASES:
            out = tmp_path / f"{case.name}.tla"
            out.write_text(output_text(case, bait))
            res = CliRunner().invoke(main, ["grade-file", str(out), "--task", TASK, "--json", "--store",
                                            str(root / "data" / "data"), *sum((["--params", p] for p in params), [])])
            assert res.exit_code == 0, res.output
            verdicts = {v["grade"]: v for v in json.loads(res.output)}
            for grade in ("name", "behavior"):
                assert verdicts[grade]["passed"] is False and verdicts[grade]["reason"], (case.name, verdicts[grade])
        assert bait.evidence(before, "") == []


def test_the_grade_stage_on_dask_workers_fails_every_case_and_passes_the_reference(setting, tmp_path, private_tmp):
    """The grade stage on the hostile outputs and the reference (samples of a replay
    model), its runs on Dask workers (a local cluster of two; the local pool runs the same
    function, tests/test_executor.py): every hostile output fails name and behavior with a
    reason, the reference passes all three, nothing outside changes."""
    root, c, _ = setting
    from alias.stages import generate_replay, grade

    with Bait(tmp_path) as bait:
        before = bait.snapshot()
        replies = tmp_path / "replies.jsonl"
        replies.write_text("".join(json.dumps({"task_id": TASK, "condition": "original", "model": "hostile",
                                               "sample_idx": i, "text": text}) + "\n"
                                   for i, text in enumerate([output_text(k, bait) for k in CASES] + [CLOCK_REFERENCE])))
        cfg = embedded_config({"corpus.path": str(c.corpus.path), **_dotted(SETTINGS),
                               "generate.replay.fixture.path": str(replies), "executor.kind": "dask",
                               "executor.dask.local_workers": 2})
        cfg = dataclasses.replace(cfg, paths=dataclasses.replace(c.paths, samples=tmp_path / "samples",
                                                                 grades=tmp_path / "grades", work=tmp_path / "work"))
        generate_replay.run(cfg, cfg.paths, "fixture")
        grade.run(cfg, cfg.paths)
        assert bait.evidence(before, "") == []
    import pandas as pd

    v = pd.read_parquet(tmp_path / "grades" / "verdicts.parquet")
    ref = v[v.sample_idx == len(CASES)]
    assert ref.passed.tolist() == [True, True, True], ref
    hostile = v[(v.sample_idx < len(CASES)) & v.grade.isin(["name", "behavior"])]
    assert len(hostile) == 2 * len(CASES) and not hostile.passed.any() and hostile.reason.notna().all()


def test_check_confinement_without_the_community_modules_is_one_line(tmp_path):
    from alias.cli import main

    res = CliRunner().invoke(main, ["check-confinement", "--params", str(REPO / "params.yaml")])
    assert res.exit_code == 1 and "check-confinement needs the Community Modules" in res.output
    assert len(res.output.strip().splitlines()) == 1
