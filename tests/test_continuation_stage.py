"""The continuation stage (Appendix L) on the embedded corpus: tiny local model, skipped providers."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from alias.config import ConfigError
from alias.corpus.testset import TestSet
from alias.generate.continuation import (CONTINUATION_COLUMNS, continuation_items, longest_shared_token_run,
                                         prefix_line_count, strip_fences)
from alias.stages import continuation
from alias.store.db import read_parquet
from conftest import embedded_config

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def inputs(embedded_stage_inputs):
    """The embedded corpus's ingest/rename outputs and an all-tasks test set (conftest)."""
    return embedded_stage_inputs


def _run(wd: Path, c, out: Path) -> dict:
    return continuation.run(c, dataclasses.replace(c.paths, continuation=out, work=out.parent / "work"))


def _raw(models: dict, keys: list[str]) -> dict:
    groups = {"local": {}, "providers": {}, "replay": {}}
    for k, e in models.items():
        groups[{"local": "local", "replay": "replay"}.get(e["backend"], "providers")][k] = e
    return {f"generate.{g}": m for g, m in groups.items()} | {
        "continuation.models": keys, "continuation.n_samples": 1, "continuation.max_new_tokens": 16}


def _params(base, models: dict, keys: list[str]):
    c = embedded_config(_raw(models, keys))
    return dataclasses.replace(c, paths=base.paths)


def _items(base):
    return continuation_items(TestSet.load(base.paths), "tlaplus/Examples")


def test_items_follow_the_prefix_rule_and_name_the_renamed_file(inputs):
    wd, base = inputs
    d = wd / "data"
    items = _items(base)
    mods = read_parquet(d / "ingest/modules.parquet")
    ren = read_parquet(d / "rename/renamed_modules.parquet")
    assert len(items) == 12 and [i.condition for i in items[:2]] == ["original", "random"]
    for it in items:
        table = mods if it.condition == "original" else ren
        row = table[(table.task_id == it.task_id) & (table.role == "system")].iloc[0]
        lines = row.text.splitlines(keepends=True)
        assert it.prefix_lines == prefix_line_count(len(lines)) and it.prefix_lines >= 8
        assert it.prefix + it.remainder == row.text
        assert "GitHub repository tlaplus/Examples" in it.prompt
    clock = [i for i in items if i.task_id == "Clock.Clock.Clock"]
    new = ren[(ren.task_id == "Clock.Clock.Clock") & (ren.role == "system")].module.iloc[0]
    assert "the file specifications/Clock/Clock.tla " in clock[0].prompt
    assert f"the file specifications/Clock/{new}.tla " in clock[1].prompt and f"MODULE {new} " in clock[1].prompt
    # 40% of Clock's 38 lines, floored: 15 lines shown
    assert clock[0].prefix_lines == 15 and clock[0].prompt.count("\n") - 2 == 15


def test_tiny_local_model_writes_two_rows_per_task(inputs, tmp_path):
    from alias.generate.tiny import build_tiny_model, embedded_texts

    wd, base = inputs
    tiny = REPO / "models/tiny"
    if not (tiny / "model.safetensors").exists():
        tiny = build_tiny_model(embedded_texts(), tmp_path / "tiny", train_steps=10)
    entry = {"backend": "local", "model_dir": str(tiny), "temperature": 0.7, "top_p": 0.95, "batch_size": 12,
             "seed": 0, "max_new_tokens": 999, "stop_at_closing_line": True}
    st = _run(wd, _params(base, {"tiny": entry}, ["tiny"]), tmp_path / "out")
    assert st["models"]["tiny"] == {"backend": "local", "status": "ok", "reason": None, "requests": 12,
                                          "samples": 12, "failed": 0}
    assert st["tasks"] == 6 and st["rows"] == 12
    df = read_parquet(tmp_path / "out/continuations.parquet")
    assert list(df.columns) == CONTINUATION_COLUMNS
    assert {t: sorted(g) for t, g in df.groupby("task_id").condition} == {
        t: ["original", "random"] for t in sorted(set(df.task_id))} and df.task_id.nunique() == 6
    assert (df.model == "tiny").all() and (df.sample_idx == 0).all()
    assert str(df.longest_run.dtype) in ("int64", "Int64") and df.longest_run.notna().all()
    items = {(i.task_id, i.condition): i for i in _items(base)}
    for r in df.itertuples():
        it = items[(r.task_id, r.condition)]
        assert r.prefix_lines == it.prefix_lines and r.reference_remainder == it.remainder
        assert r.longest_run == longest_shared_token_run(strip_fences(r.continuation), it.remainder)
    assert json.loads((tmp_path / "out/status.json").read_text()) == st


def test_provider_without_key_and_replay_are_skipped(inputs, tmp_path, monkeypatch, capsys):
    from click.testing import CliRunner

    from alias.cli import main

    wd, base = inputs
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    models = {"opus": {"backend": "anthropic", "enabled": True, "model": "claude-opus-4-8", "max_tokens": 8192},
              "fixture": {"backend": "replay", "path": "data/replay/embedded_outputs.jsonl"}}
    st = _run(wd, _params(base, models, ["opus", "fixture"]), tmp_path / "out")
    err = capsys.readouterr().err
    assert "continuation opus: skipped: ANTHROPIC_API_KEY is not set" in err
    assert "continuation fixture: skipped: replay files hold no released continuations" in err
    assert st["models"]["opus"]["status"] == "skipped" and st["models"]["opus"]["requests"] == 12
    assert st["models"]["fixture"]["status"] == "skipped" and st["rows"] == 0
    df = read_parquet(tmp_path / "out/continuations.parquet")
    assert list(df.columns) == CONTINUATION_COLUMNS and df.empty
    assert not (tmp_path / "work/ledgers/continuation-opus.sqlite").exists()  # nothing registered without a key
    # an unknown key is a one-line error of the command, before any work
    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    for k, v in _raw(models, ["nope"]).items():
        sec, key = k.split(".")
        raw[sec][key] = v
    f = tmp_path / "params.yaml"
    f.write_text(yaml.safe_dump(raw), encoding="utf-8")
    res = CliRunner().invoke(main, ["continuation", "--params", str(f)])
    assert res.exit_code == 1 and "ConfigError" in res.output and "continuation.models: 'nope'" in res.output
    with pytest.raises(ConfigError):
        _params(base, models, ["nope"])
