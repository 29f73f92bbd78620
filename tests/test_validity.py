"""Test-set validity on inputs modelled on public bug reports: Unicode TLA+ modules, Toolbox
annotation comments in comment-derived descriptions, and Toolbox models of constant-level
specs. Each corpus lives in ``tests/fixtures/validity/<case>`` and is copied to a tmp dir."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from alias.corpus.ingest import ascii_module, description_from_comments, ingest
from alias.corpus.testset import TestSet
from alias.rename.corpus import rename_corpus
from alias.rename.descriptions import description_names, rename_description
from alias.tla.cfg import parse_cfg
from alias.tla.lexer import comment_string_spans
from alias.tla.syntax import STANDARD_MODULES, module_info

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "validity"
UNICODE = set("≜∧∨∀∃∈∉≠≤≥⇒≡□◇⟨⟩∪∩⊆×→↦")


def _corpus(tmp_path: Path, case: str) -> Path:
    root = tmp_path / case
    shutil.copytree(FIXTURES / case, root)
    return root


def _code(text: str) -> str:
    """``text`` without its comments and strings."""
    out, i = [], 0
    for s, e in comment_string_spans(text):
        out.append(text[i:s])
        i = e
    return "".join(out) + text[i:]


def _renamed(tables: dict[str, pd.DataFrame], tmp_path: Path):
    return rename_corpus(tables["tasks"], tables["modules"], seed=7, files_dir=tmp_path / "renamed")


# -- (a) Unicode modules ------------------------------------------------------------------

def test_unicode_module_is_converted_to_ascii_at_ingest(tmp_path):
    """A module written with Unicode symbols reaches the modules table, the renamed files
    and the checks as ASCII; the candidate's detail says what was converted."""
    t = ingest(_corpus(tmp_path, "unicode"))
    cand = t["candidates"].set_index("model_module")
    assert cand.loc["UniClock", "status"] == "task"
    assert "Unicode" in cand.loc["UniClock", "detail"] and "UniClock.tla" in cand.loc["UniClock", "detail"]
    text = t["modules"].set_index("module").loc["UniClock", "text"]
    code = _code(text)
    assert all(ord(ch) < 128 for ch in code), sorted({ch for ch in code if ord(ch) > 127})
    assert "Init == /\\ hr \\in Hours" in text and "\\A i \\in 1 .. Len(log)" in text
    # the module reads the same: constants, variables and definitions
    info = module_info(text)
    assert info.variables == ["hr", "log"] and info.constants == ["Limit"]
    assert {"TypeOK", "Tick", "Spec", "Hops", "Sets", "Maps", "Bounds", "Some", "Full"} <= set(info.definitions)
    out = _renamed(t, tmp_path)
    [row] = [r for r in out.tasks if r["task_id"] == t["tasks"].task_id[0]]
    assert row["status"] == "ok", row["error"]
    for m in out.modules:
        assert all(ord(ch) < 128 for ch in _code(m["text"])), m["module"]


def test_unicode_without_ascii_form_is_excluded_with_a_unicode_reason(tmp_path):
    """A symbol the converter has no ASCII form for (``⊕``) excludes the candidate with a
    reason naming Unicode instead of failing SANY later."""
    t = ingest(_corpus(tmp_path, "unicode"))
    cand = t["candidates"].set_index("model_module")
    assert cand.loc["UniXor", "status"] == "excluded"
    assert "unicode" in cand.loc["UniXor", "reason"].lower()
    assert "⊕" in cand.loc["UniXor", "detail"] and "U+2295" in cand.loc["UniXor", "detail"]
    assert "UniXor" not in set(t["tasks"].system_module)


def test_ascii_module_leaves_unicode_comments_alone_and_keeps_alignment():
    comment_only = "---- MODULE C ----\n\\* fill 5 → pour 5→3 ≡ done\nVARIABLE x\nInit == x = \"≠\"\n====\n"
    assert ascii_module(comment_only).text == comment_only and ascii_module(comment_only).symbols == 0
    nested = ("---- MODULE N ----\nVARIABLE x\nNext ≜ ∧ x ∈ {1}\n       ∧ ∨ x' = 1\n"
              "         ∨ x' = 2\n====\n")
    res = ascii_module(nested, "N.tla")
    assert res.error is None and res.symbols == 6
    assert "Next == /\\ x \\in {1}\n        /\\ \\/ x' = 1\n           \\/ x' = 2\n" in res.text


@pytest.mark.tlc
def test_unicode_module_passes_strict_sany(tmp_path, sany):
    """SANY (strict; the default jar is the 2020 one, which stops at a Unicode symbol with
    a lexical error) accepts the ingested text of the Unicode module and its renamed copy."""
    t = ingest(_corpus(tmp_path, "unicode"))
    mods = t["modules"]
    files = {r.module: r.text for r in mods[mods.module == "UniClock"].itertuples()}
    ok, output = sany(files, "UniClock")
    assert ok, output
    out = _renamed(t, tmp_path)
    row = next(r for r in out.tasks if r["status"] == "ok")
    ok, output = sany({m["module"]: m["text"] for m in out.modules if m["task_id"] == row["task_id"]},
                      row["system_module"])
    assert ok, output


# -- (b) Toolbox annotations in comment-derived descriptions -------------------------------

def _leaks(description: str, names: set[str]) -> list[str]:
    """Original names left in a renamed description: a whole word as the renaming reads it,
    except that a digit before the name does not protect it (``@...Constants:0N``)."""
    return sorted(n for n in names if re.search(
        r"(?<![A-Za-z_])(?<![A-Za-z0-9]-)" + re.escape(n) + r"(?![A-Za-z0-9_])(?!-[A-Za-z0-9])", description))


def test_no_original_name_survives_in_comment_descriptions(tmp_path):
    """Ingest (no description file: every description comes from module comments) and the
    rename pipeline: no renamed name of a task is left in its renamed description."""
    t = ingest(_corpus(tmp_path, "toolbox"))
    tasks = t["tasks"].set_index("task_id")
    assert set(tasks.description_source) == {"comments"}
    out = _renamed(t, tmp_path)
    maps = pd.DataFrame(out.rename_map)
    checked = 0
    for row in out.tasks:
        assert row["status"] == "ok", row["error"]
        task = tasks.loc[row["task_id"]]
        mapping = dict(maps.loc[maps.task_id == row["task_id"], ["old", "new"]].values)
        cfg_names = {n for v in parse_cfg(task.cfg_text).names().values() for n in v}
        authored = set(t["modules"].loc[t["modules"].task_id == row["task_id"], "module"])
        renamed_names = set(description_names(mapping, cfg_names, authored | STANDARD_MODULES))
        assert {"N", "P"} & renamed_names or {"N", "Proc"} <= renamed_names
        assert _leaks(row["description"], renamed_names) == [], (row["task_id"], row["description"])
        assert "@model" not in row["description"] and "@model" not in task.description
        checked += 1
    assert checked == 2


def test_toolbox_lines_dropped_from_comment_descriptions():
    text = (FIXTURES / "toolbox/specifications/Relay/Relay.tla").read_text()
    d = description_from_comments(module_info(text))
    assert "relayed among the processes of Proc" in d and "pasted here by the author" in d
    for gone in ("@modelParameterConstants", "MV CONSTANT", "INVARIANT definition", "Last modified"):
        assert gone not in d


def test_rename_description_renames_a_toolbox_annotation_index():
    """Even when a Toolbox annotation reaches a description, ``0N`` loses ``N``."""
    out = rename_description("CONSTANT definitions @modelParameterConstants:0N and :12Quorum, N",
                             {"N": "Q", "Quorum": "Abcdef"}, {"N"}, set())
    assert out == "CONSTANT definitions @modelParameterConstants:0Q and :12Quorum, Q"
    out = rename_description("@modelParameterConstants:12Quorum", {"Quorum": "Abcdef"}, set(), set())
    assert out == "@modelParameterConstants:12Abcdef"


# -- (c) Toolbox model of a constant-level spec ---------------------------------------------

def test_toolbox_model_of_constant_level_spec_checks_the_spec(tmp_path):
    """``Puzzle.toolbox/Model_1/MC.tla`` of a spec without VARIABLE: the spec (the model
    folder's copy) is the system module and ``MC`` its wrapper."""
    t = ingest(_corpus(tmp_path, "toolbox"))
    cand = t["candidates"].set_index("model_module_path")
    c = cand.loc["specifications/Puzzle/Puzzle.toolbox/Model_1/MC.tla"]
    assert (c.status, c.system_module, c.wrapper_module) == ("task", "Puzzle", "MC")
    assert c.system_module_path == "specifications/Puzzle/Puzzle.toolbox/Model_1/Puzzle.tla"
    task = t["tasks"].set_index("system_module").loc["Puzzle"]
    assert task.model_module == "MC" and task.wrapper_module == "MC"
    assert "pairs of numbers from 1 to N" in task.description
    roles = t["modules"].set_index(["task_id", "module"]).role
    assert roles[(task.task_id, "Puzzle")] == "system" and roles[(task.task_id, "MC")] == "wrapper"
    mr = t["module_roles"].set_index("path").role
    assert mr["specifications/Puzzle/Puzzle.toolbox/Model_1/Puzzle.tla"] == "system"
    assert mr["specifications/Puzzle/Puzzle.toolbox/Model_1/MC.tla"] == "wrapper"


@pytest.mark.tlc
def test_fixture_tasks_verify(tmp_path, tool_config):
    """SANY + TLC confirm the fixture tasks (original and renamed copy) with the default jar."""
    from alias.corpus.verify import verify_tasks

    for case in ("unicode", "toolbox"):
        t = ingest(_corpus(tmp_path, case))
        out = rename_corpus(t["tasks"], t["modules"], seed=7, files_dir=tmp_path / case / "renamed")
        ts = TestSet(t["tasks"], t["modules"], pd.DataFrame(out.tasks), pd.DataFrame(out.modules),
                     pd.DataFrame(out.rename_map))
        _, rows = verify_tasks(ts, tool_config, tmp_path / case / "logs")
        for r in rows:
            assert r["in_test_set"], r
            assert r["original_distinct_states"] == r["manifest_distinct_states"], r
