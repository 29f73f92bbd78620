"""The typed configuration: params.yaml is complete and is the only place with defaults;
every bad setting is one ConfigError naming its key."""
from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest
import yaml

from alias.config import Config, ConfigError, Paths, config_from_dict, load_config, rebase

REPO = Path(__file__).resolve().parents[1]
RAW = yaml.safe_load((REPO / "params.yaml").read_text())


def test_params_yaml_is_complete_and_typed():
    c = load_config(REPO / "params.yaml")
    assert isinstance(c, Config) and isinstance(c.paths, Paths)
    assert c.paths.store == Path("data/alias.duckdb") and c.tla.timeout_s == 300.0
    assert c.generate.models.keys() == {"tiny", "opus", "gpt5", "fixture"}
    assert all(e.enabled is False for e in c.generate.providers.values())  # nothing paid by default


@pytest.mark.parametrize("dotted, value, message", [
    ("grade.timeout_s", "abc", "grade.timeout_s: expected a number, got 'abc'"),
    ("grade.maps", 3, "grade.maps: unknown setting"),
    ("tla.parallel", 0, "tla.parallel: must be >= 1"),
    ("tla.memory_mb", 1.5, "tla.memory_mb: expected a whole number"),
    ("generate.local.tiny.top_p", None, "generate.local.tiny.top_p: is required for backend local"),
    ("generate.providers.opus", {"backend": "replay", "path": "x"}, "generate.providers.opus.backend: must be anthropic or openai"),
    ("generate.conditions", ["original", "shuffled"], "generate.conditions: must be a non-empty subset"),
    ("continuation.models", ["nope"], "continuation.models: 'nope' is not a key"),
    ("exposure.arms", ["both"], "exposure.arms: must be a non-empty subset"),
    ("meaningful.view", "sideways", "meaningful.view: must be original or random"),
    ("paths.store", 3, "paths.store: expected a string"),
    ("controls.parts", [1, 3], "controls.parts: must be 1, 2, ..., n (n >= 1)"),
    ("controls.parts", [], "controls.parts: must be 1, 2, ..., n (n >= 1)"),
])
def test_a_bad_setting_is_one_error_naming_its_key(dotted, value, message):
    with pytest.raises(ConfigError) as e:
        config_from_dict(RAW, {dotted: value})
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_missing_setting_names_its_key(tmp_path):
    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    del raw["tla"]["timeout_s"]
    f = tmp_path / "p.yaml"
    f.write_text(yaml.safe_dump(raw))
    with pytest.raises(ConfigError, match=r"p.yaml: tla.timeout_s: missing"):
        load_config(f)
    with pytest.raises(ConfigError, match="params file not found"):
        load_config(tmp_path / "nope.yaml")


def test_paths_rebase_under_a_folder(tmp_path):
    p = load_config(REPO / "params.yaml").paths.under(tmp_path)
    assert p.ingest == tmp_path / "data/ingest" and p.reports == tmp_path / "reports"


def test_rebase_takes_every_file_setting_from_the_pipeline_folder(tmp_path):
    """A store's settings are read back from another folder (``grade-file --store
    pipelines/tlabench/data`` from the root): each relative file setting of the TLA+-Bench
    pipeline, the Community Modules jar included, becomes relative to the pipeline folder
    (the overrides jar was left relative to the working directory: a one-line error)."""
    c = load_config([REPO / "params.yaml", REPO / "pipelines" / "tlabench" / "params.yaml"])
    assert c.tla.overrides_jar and not Path(c.tla.overrides_jar).is_absolute()
    r = rebase(c, tmp_path / "pipelines" / "tlabench")
    files = [r.tla.jar, r.tla.overrides_jar, *r.corpus.library, r.corpus.descriptions, str(r.corpus.path)]
    assert all(f.startswith(str(tmp_path / "pipelines" / "tlabench")) for f in files if f), files
    assert Path(r.tla.overrides_jar) == tmp_path / "pipelines" / "tlabench" / c.tla.overrides_jar


def test_no_stage_or_domain_module_repeats_a_params_default():
    """No ``.get("key", default)`` on a params mapping and no module-level DEFAULTS dicts:
    the defaults are params.yaml's (the dataclasses have none but ``None`` = not set)."""
    bad = []
    for f in sorted((REPO / "alias").rglob("*.py")):
        tree = ast.parse(f.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id.startswith("DEFAULT")
                                                    and t.id.endswith("PARAMS") for t in node.targets):
                bad.append(f"{f.relative_to(REPO)}:{node.lineno}")
    assert bad == []
    for cls in (c for c in vars(__import__("alias.config", fromlist=["x"])).values()
                if dataclasses.is_dataclass(c) and c.__module__ == "alias.config"):
        for fld in dataclasses.fields(cls):
            assert fld.default in (dataclasses.MISSING, None), (cls.__name__, fld.name)
