"""Verify runs each model the way the TLA+ Examples' CI runs it (Methods "Test set"):
Java system properties a spec asks for with ``TLCGet("-D...")``, and a fixed TLC
``-seed`` for specs that draw with ``RandomElement``, whose renamed copy is excluded
with a reason that names the draw when the renamed draws differ."""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest
from pathlib import Path

import yaml

from alias.config import ConfigError, config_from_dict
from alias.corpus.verify import Copy, check_copy, random_operators, verify_task

DRAW = """---- MODULE Draw ----
EXTENDS Naturals, TLC
CONSTANT Vals, Special, Base
VARIABLE x
(* RandomElement in a comment does not count *)
Init == x \\in (RandomElement(SUBSET Vals) \\cap Special) \\cup {Base}
Next == UNCHANGED x
Spec == Init /\\ [][Next]_x
====
"""
PLAIN = DRAW.replace("RandomElement(SUBSET Vals)", "Vals")
CFG = "CONSTANT Vals = {a, b, c, d, e, f, g, h}\nSpecial = {a, b, c, d}\nBase = base\nSPECIFICATION Spec\n"

CDOT = """---- MODULE Cdot ----
EXTENDS TLC
ASSUME TLCGet("-Dtlc2.tool.impl.Tool.cdot") = "true"
VARIABLE x
Spec == x = 0 /\\ [][x' = x]_x
====
"""


def test_random_operators_are_found_in_code_only():
    assert random_operators(Copy({"Draw.tla": DRAW}, "Draw", CFG)) == ["RandomElement"]
    assert random_operators(Copy({"Draw.tla": PLAIN}, "Draw", CFG)) == []


@pytest.mark.tlc
def test_randomized_spec_runs_with_a_fixed_seed_and_reproduces(tmp_path, tool_config):
    """Without ``-seed`` two runs of a spec that draws may differ; with it they must not."""
    copy = Copy({"Draw.tla": DRAW}, "Draw", CFG)
    counts = set()
    for i in range(3):
        _, t = check_copy(copy, tool_config, tmp_path / f"logs{i}", seed=7)
        assert "-seed 7" in t["flags"], t
        assert t["kind"] == "success", t
        counts.add(t["distinct_states"])
    assert len(counts) == 1
    _, plain = check_copy(Copy({"Draw.tla": PLAIN}, "Draw", CFG), tool_config, tmp_path / "p", seed=7)
    assert "-seed" not in plain["flags"] and plain["distinct_states"] == 5


@pytest.mark.tlc
def test_randomized_state_mismatch_names_the_draw(tmp_path, tool_config):
    """A renamed copy whose draw lands elsewhere is ``state_mismatch_randomized``, its detail
    naming the operator. TLC draws by the position of a value in its set's order, so the
    renamed copy here lists its model values in another order (as renamed strings or records
    sort differently); seeds are tried until the two copies' draws differ."""
    original = Copy({"Draw.tla": DRAW}, "Draw", CFG)
    renamed = Copy({"Qkiv.tla": DRAW.replace("Draw", "Qkiv")}, "Qkiv",
                   CFG.replace("a, b, c, d, e, f, g, h", "sq, tq, uq, vq, wq, xq, yq, zq")
                   .replace("a, b, c, d}", "zq, yq, xq, wq}"))
    task = SimpleNamespace(task_id="t", expected_distinct_states=None)
    for seed in range(1, 15):
        _, row = verify_task(task, original, renamed, tool_config, tmp_path / str(seed), seed=seed)
        if not row["in_test_set"]:
            break
    assert row["reason"] == "state_mismatch_randomized", row
    assert "RandomElement" in row["detail"] and "-seed" in row["detail"]


@pytest.mark.tlc
def test_java_property_from_params_reaches_tlcget(tmp_path, tool_config):
    """``tla.properties`` sets ``-D`` properties as the Examples' CI does for CRDT and
    ReplicatedLog; without it their ASSUME fails."""
    copy = Copy({"Cdot.tla": CDOT}, "Cdot", "SPECIFICATION Spec\n")
    _, bare = check_copy(copy, tool_config, tmp_path / "a")
    assert bare["kind"] == "assumption_violated", bare
    with_prop = dataclasses.replace(tool_config, properties=(("tlc2.tool.impl.Tool.cdot", "true"),))
    _, t = check_copy(copy, with_prop, tmp_path / "b")
    assert t["kind"] == "success", t


def test_tla_properties_are_checked_at_load():
    data = yaml.safe_load((Path(__file__).resolve().parents[1] / "params.yaml").read_text())
    data["tla"]["properties"] = {"tlc2.tool.impl.Tool.cdot": "true"}
    assert config_from_dict(data).tla.properties == {"tlc2.tool.impl.Tool.cdot": "true"}
    data["tla"]["properties"] = {"x -jar evil": "1"}
    with pytest.raises(ConfigError, match=r"tla\.properties\.x -jar evil"):
        config_from_dict(data)


def test_verify_logs_name_library_folders_relatively():
    """A log names the library files TLC parsed by folder name, not by this machine's
    absolute path (the same run in another checkout writes the same bytes)."""
    from alias.corpus.verify import _library_relative
    from alias.tla.tools import ToolConfig

    tc = ToolConfig(jar=Path("x.jar"), library=("/abs/deps/tlaps-library", "/abs/deps/community-modules"))
    log = "Parsing file /abs/deps/tlaps-library/TLAPS.tla\nParsing file /abs/deps/community-modules/Functions.tla"
    assert _library_relative(log, tc) == ("Parsing file <library>/tlaps-library/TLAPS.tla\n"
                                          "Parsing file <library>/community-modules/Functions.tla")
