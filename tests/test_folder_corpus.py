"""``corpus.kind: folder`` without TLC: the candidates of the fixture corpus, model choice,
descriptions, and the pipeline folder that ``init-pipeline`` writes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from alias.config import load_config
from alias.corpus.folder import ingest_folder, model_size
from alias.errors import AliasError
from alias.pipelines import DEFAULT_STAGES, init_pipeline, pipeline_yaml
from test_own_specs import CANDIDATES

REPO = Path(__file__).resolve().parents[1]
DVC = Path(sys.executable).parent / "dvc"
FIXTURES = REPO / "tests" / "fixtures"


def test_fixture_candidates_and_descriptions():
    t = ingest_folder(FIXTURES / "own_specs", None, (str(FIXTURES / "own_specs_lib"),))
    got = {(r.model_module_path, r.cfg_path): (r.status, r.reason if isinstance(r.reason, str) else None)
           for r in t["candidates"].itertuples()}
    assert got == CANDIDATES
    tasks = t["tasks"].set_index("task_id")
    assert tasks.loc["toolbox_Lamp.toolbox_Model_1.Lamp.MC", ["system_module", "wrapper_module"]].tolist() == ["Lamp", "MC"]
    assert list(tasks.loc["library.Doubler.Doubler", "library_modules"]) == ["Arith"]
    assert list(tasks.loc["multi.Multi.Multi", "author_modules"]) == ["Multi"]   # Step and Toggle live in its file
    assert tasks.loc["values.Chan.Chan", "description_source"] == "sidecar"


def _spec(folder: Path, name: str, n: int, cfg: str | None = None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.tla").write_text(f"---- MODULE {name} ----\nEXTENDS Naturals\nCONSTANT N\nVARIABLE x\n"
                                        "Init == x = 0\nNext == x < N /\\ x' = x + 1\n====\n")
    (folder / f"{cfg or name}.cfg").write_text(f"CONSTANT N = {n}\nINIT Init\nNEXT Next\n")


def test_smallest_model_and_json_descriptions(tmp_path):
    _spec(tmp_path / "a", "Count", 1000)
    _spec(tmp_path / "a", "Count", 3, cfg="CountSmall")
    (tmp_path / "d.json").write_text(json.dumps({"Count": "Counts up to N."}))
    t = ingest_folder(tmp_path, tmp_path / "d.json")
    cand = t["candidates"].set_index("cfg_path")
    assert cand.loc["a/CountSmall.cfg", "status"] == "task" and cand.loc["a/Count.cfg", "reason"] == "duplicate_model"
    assert t["tasks"].iloc[0][["description", "description_source"]].tolist() == ["Counts up to N.", "json"]
    assert model_size("CONSTANTS N = 3 Procs = {p1, p2} Msg = \"hi\"\nINIT Init\n") == 6
    assert model_size("not a cfg {") == 0


def test_init_pipeline_writes_only_what_differs(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    for f in ("params.yaml", "dvc.yaml"):
        (repo / f).write_text((REPO / f).read_text())
    folder = init_pipeline(repo, "mine", FIXTURES / "own_specs", library=(str(FIXTURES / "own_specs_lib"),), timeout_s=30)
    params = yaml.safe_load((folder / "params.yaml").read_text())
    assert set(params) == {"paths", "corpus", "controls", "tla"} and params["tla"] == {"timeout_s": 30}
    assert params["controls"] == {"parts": [1]}  # dvc.yaml's foreach of controls@PART reads it here
    assert params["paths"]["sql"] == "../../sql" and params["corpus"]["kind"] == "folder"
    c = load_config([repo / "params.yaml", folder / "params.yaml"])
    assert (folder / c.corpus.path).resolve() == (FIXTURES / "own_specs").resolve()
    stages = yaml.safe_load((folder / "dvc.yaml").read_text())["stages"]
    assert list(stages)[0] == "check_params" and "audit" in stages
    assert all("${paths.checked}" in s["deps"] for k, s in stages.items() if k != "check_params")
    with pytest.raises(AliasError, match="exists"):
        init_pipeline(repo, "mine", FIXTURES / "own_specs")
    with pytest.raises(AliasError, match="no stage 'nope'"):
        init_pipeline(repo, "other", FIXTURES / "own_specs", stages=("nope",))
    # a list that cannot run (the newcomer's `--stages grade`: dvc repro then stopped at a
    # missing samples table) is refused before anything is written
    with pytest.raises(AliasError, match="stage grade needs verify in --stages"):
        init_pipeline(repo, "other", FIXTURES / "own_specs", stages=("grade",))
    with pytest.raises(AliasError, match="stage grade needs generate_local or generate_provider or generate_replay or exposure"):
        init_pipeline(repo, "other", FIXTURES / "own_specs", stages=("ingest", "rename", "verify", "grade"))
    with pytest.raises(AliasError, match="stage audit needs load"):
        init_pipeline(repo, "other", FIXTURES / "own_specs", stages=DEFAULT_STAGES[:-3] + ("audit",))
    assert not (repo / "pipelines" / "other").exists()
    with_controls = init_pipeline(repo, "other", FIXTURES / "own_specs", stages=DEFAULT_STAGES + ("controls",))
    assert "controls" in yaml.safe_load((with_controls / "dvc.yaml").read_text())["stages"]


@pytest.mark.skipif(not DVC.exists(), reason="needs the virtualenv's dvc")
def test_a_folder_with_the_controls_runs_its_parts_and_one_without_controls_parts_is_refused(tmp_path):
    """DVC reads ``${controls.parts}`` from the pipeline folder's ``params.yaml``:
    ``init-pipeline`` writes it, and DVC lists the folder's ``controls@1``; a folder whose
    ``params.yaml`` lacks it is refused in one line (DVC would fail to parse the folder's
    whole ``dvc.yaml``)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for f in ("params.yaml", "dvc.yaml"):
        (repo / f).write_text((REPO / f).read_text())
    folder = init_pipeline(repo, "mine", FIXTURES / "own_specs", stages=DEFAULT_STAGES + ("controls",))
    subprocess.run([str(DVC), "init", "--no-scm", "-q"], cwd=repo, check=True)
    listed = subprocess.run([str(DVC), "stage", "list"], cwd=folder, capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    assert "controls@1  " in listed.stdout and "Outputs data/controls/1" in listed.stdout
    params = yaml.safe_load((folder / "params.yaml").read_text())
    del params["controls"]
    (folder / "params.yaml").write_text(yaml.safe_dump(params))
    with pytest.raises(AliasError, match=r"pipelines/mine/params.yaml: controls.parts missing \(dvc.yaml's stage controls"):
        pipeline_yaml(repo, "mine", DEFAULT_STAGES + ("controls",))


def test_check_params_and_load_declare_every_section():
    """check_params must rerun (and stop a bad value) whatever setting changes, and the
    store records every setting: both declare every section but ``executor``."""
    from alias.config import Config
    from dataclasses import fields

    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    sections = {f.name for f in fields(Config)} - {"executor"}
    for name in ("check_params", "load"):
        assert set(stages[name]["params"]) == sections, name
