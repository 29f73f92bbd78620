"""Nothing paid runs by default: with API keys in the environment and the providers'
batch endpoints on loopback servers, the stages that can call a provider (every
``generate_provider@KEY``, ``meaningful``, ``continuation``) send nothing while the entries
say ``enabled: false`` (params.yaml's default) -- and, as a control, do send once one is
enabled, so the servers are really the ones the stages would reach."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from test_batches import ANTHROPIC_KEY, OPENAI_KEY, FakeAnthropic, FakeOpenAI  # tests/ is on sys.path

REPO = Path(__file__).resolve().parents[1]


def _stage(cwd: Path, env: dict, *args: str) -> str:
    r = subprocess.run([sys.executable, "-m", "alias", *args], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout + r.stderr


def test_with_keys_set_and_providers_disabled_nothing_is_sent(embedded_stage_inputs, tmp_path):
    wd, _ = embedded_stage_inputs
    work = tmp_path / "repo"
    shutil.copytree(wd / "data", work / "data")
    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    raw["corpus"].update(path=str(REPO / "alias/corpus/embedded"),
                         descriptions=str(REPO / "alias/corpus/embedded/descriptions.json"))
    raw["continuation"]["models"] = ["opus", "gpt5"]           # the providers, as a user might list them
    raw["meaningful"]["proposer"] = {"backend": "anthropic", "enabled": False, "model": "claude-opus-4-8",
                                     "max_tokens": 8192}
    (work / "params.yaml").write_text(yaml.safe_dump(raw))
    with FakeAnthropic() as anth, FakeOpenAI() as oai:
        env = dict(os.environ, ANTHROPIC_API_KEY=ANTHROPIC_KEY, OPENAI_API_KEY=OPENAI_KEY,
                   ANTHROPIC_BASE_URL=anth.base_url, OPENAI_BASE_URL=oai.base_url)
        out = _stage(work, env, "generate-provider", "--model", "opus")
        out += _stage(work, env, "generate-provider", "--model", "gpt5")
        out += _stage(work, env, "continuation")
        out += _stage(work, env, "meaningful")
        assert (anth.requests, oai.requests) == (0, 0)
        for key in ("opus", "gpt5"):
            st = json.loads((work / f"data/samples/{key}/status.json").read_text())
            assert st["status"] == "disabled" and st["samples"] == 0 and "enabled: true" in st["reason"]
        assert "is disabled" in out
        assert json.loads((work / "data/meaningful/status.json").read_text())["status"] == "disabled"
        assert not (work / ".alias/ledgers").exists()              # nothing registered either
        # the control: enabling one model is one parameter, and then it is sent
        raw["generate"]["providers"]["opus"].update(enabled=True, poll_interval_s=0)
        (work / "params.yaml").write_text(yaml.safe_dump(raw))
        _stage(work, env, "generate-provider", "--model", "opus")
        assert anth.requests > 0 and len(anth.creates) == 1 and oai.requests == 0
    st = json.loads((work / "data/samples/opus/status.json").read_text())
    assert st["status"] == "ok" and st["samples"] == 60
