"""The ``tlabench`` grade runs TLC first and SANY only where TLC's own front end failed:
on real released outputs of each verdict kind its fields equal those of the benchmark's
order (SANY, then TLC), on TLA+ tools v1.8.0 and on the 2.15 fallback, with fewer SANY
runs; and a TLC output longer than the cache keeps grades the same from the cache."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from alias.grade.cache import OUTPUT_KEEP, ToolRunner
from alias.grade.tlabench import CompatGrader, _outside_words, loadable_files
from alias.tla.tools import ToolConfig
from conftest import RECORD_JAR, fallback_jar

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
RELEASE = SHARED / "corpus" / "tlabench-release"
LIBRARY = tuple(str(SHARED / "corpus/deps" / d) for d in ("community-modules", "tlaps-library"))
#: released outputs (spec id, model) of each of the benchmark's verdict kinds: an unbound
#: cfg name, a TLC-time semantic failure, two parse failures, a pass, a deadlock, no cfg
OUTPUTS = [("1000", "gemini-2-5-pro"), ("1002", "claude-opus-4-5"), ("1011", "gemini-2-5-pro"),
           ("1105", "claude-opus-4-5"), ("1275", "claude-opus-4-5"), ("1588", "claude-opus-4-5"),
           ("1142", "claude-opus-4-5")]
SMOKE = [OUTPUTS[i] for i in (0, 2, 4, 6)]   # on the 2.15 fallback

pytestmark = [pytest.mark.tlc, pytest.mark.corpus,
              pytest.mark.skipif(not RELEASE.is_dir(), reason="needs ../shared/corpus/tlabench-release")]


def _released(spec: str, model: str) -> tuple[str, dict]:
    text = (RELEASE / "outputs/generations/default" / model / f"{spec}.tla").read_text()
    rows = (json.loads(ln) for ln in (RELEASE / "outputs/verdicts/default" / f"{model}.jsonl").open())
    return text, next(r for r in rows if r["spec_id"] == spec)


@pytest.fixture(scope="module")
def compat():
    return CompatGrader.from_release(str(RELEASE), sany_timeout_s=60, tlc_timeout_s=60)


def _grade_all(compat: CompatGrader, jar: Path, tlc_first: bool, ids) -> tuple[list[dict], list[str]]:
    runner = ToolRunner(ToolConfig(jar=jar, library=LIBRARY, timeout_s=60, memory_mb=1024), None)
    grader = CompatGrader(compat.files, compat.gold, 60, 60, tlc_first=tlc_first)
    got = [grader.grade(spec, _released(spec, model)[0], runner) for spec, model in ids]
    return got, [c.tool for c in runner.calls]


@pytest.mark.parametrize("which", ["v1.8.0", "2.15"])
def test_tlc_first_gives_the_fields_of_sany_then_tlc(compat, which):
    jar = RECORD_JAR if which == "v1.8.0" else fallback_jar()
    if jar is None or not jar.is_file():
        pytest.skip(f"no {which} jar")
    ids = OUTPUTS if which == "v1.8.0" else SMOKE
    first, first_tools = _grade_all(compat, jar, True, ids)
    benchmark, bench_tools = _grade_all(compat, jar, False, ids)
    assert first == benchmark
    no_cfg = [g for g in first if g.get("reason") == "no_cfg"]
    sany_fails = [g for g in first if not g["sany_exit_ok"]]
    assert len(no_cfg) == 1 and len(sany_fails) == (2 if which == "v1.8.0" else 1)
    # the benchmark's order runs SANY on every output, TLC where SANY passed and a cfg exists;
    # TLC first runs SANY only where there is no cfg: where TLC's own front end failed (the
    # parse failures, and 1000, whose semantic errors SANY reports with exit code 0) SANY's
    # verdict is read from TLC's report
    assert bench_tools.count("sany") == len(ids) and first_tools.count("sany") == len(no_cfg)
    assert bench_tools.count("tlc") == len(ids) - len(sany_fails) - 1 and first_tools.count("tlc") == len(ids) - 1
    if which == "v1.8.0":  # and the verdicts are the benchmark's own
        for g, (spec, model) in zip(first, ids):
            _text, v = _released(spec, model)
            assert (g["sany_exit_ok"], g["passed"]) == (v["sany_pass"], bool(v.get("tlc_pass"))), (spec, model, g)


LONG = """---- MODULE Long ----
EXTENDS Naturals
VARIABLE x, pad
Init == x = 0 /\\ pad = [i \\in 1..40 |-> "abcdefghij"]
Next == x' = x + 1 /\\ UNCHANGED pad
Inv == x < 120
====
"""


def test_a_long_output_grades_the_same_from_the_cache(tmp_path):
    """An invariant violation whose trace makes the output longer than the cache keeps: the
    cached run has the error lines, the kind and the front end of the fresh one."""
    if not RECORD_JAR.is_file():
        pytest.skip("needs TLA+ tools v1.8.0")
    config = ToolConfig(jar=RECORD_JAR, timeout_s=120, memory_mb=512)
    cold = ToolRunner(config, tmp_path).tlc({"Long.tla": LONG}, "Long", "INIT Init\nNEXT Next\nINVARIANT Inv\n")
    warm = ToolRunner(config, tmp_path).tlc({"Long.tla": LONG}, "Long", "INIT Init\nNEXT Next\nINVARIANT Inv\n")
    assert len(cold.output) > OUTPUT_KEEP and len(warm.output) == OUTPUT_KEEP
    assert cold.kind == warm.kind == "invariant_violated" and cold.front_end_passed and warm.front_end_passed
    assert warm.error_lines == cold.error_lines and "Error: Invariant Inv is violated." in cold.error_lines
    assert not any("Invariant Inv is violated" in ln for ln in warm.output.splitlines()[:3])


def test_a_run_stages_every_module_it_could_load_and_no_other():
    files = {"Out.tla": "---- MODULE Out ----\nEXTENDS Helper\n====\n",
             "Helper.tla": "---- MODULE Helper ----\nI == INSTANCE Deep\n====\n",
             "Deep.tla": "---- MODULE Deep ----\n====\n",
             "Shadow.tla": "---- MODULE Shadow ----\n====\n",   # named in a library module only
             "Other.tla": "---- MODULE Other ----\nEXTENDS Deep\n====\n",   # no loaded module names it
             "Out.cfg": "INIT Init\n"}
    got = loadable_files(files, "Out", frozenset({"Shadow", "Naturals"}))
    assert sorted(got) == ["Deep.tla", "Helper.tla", "Out.cfg", "Out.tla", "Shadow.tla"]
    assert got["Helper.tla"] == files["Helper.tla"]
    # the outside words come from the library folders and the jar's standard modules
    words = _outside_words(LIBRARY, str(RECORD_JAR))
    assert {"SequencesExt", "Functions", "Naturals", "TLC"} <= words


def test_a_sany_time_limit_below_the_tlc_run_gives_sany_a_run_of_its_own():
    """TLC first must not skip a SANY that would have timed out: with a SANY limit (50 ms)
    below the TLC run's wall time, SANY runs and times out, as in the benchmark's order."""
    if not RECORD_JAR.is_file():
        pytest.skip("needs TLA+ tools v1.8.0")
    files = {"Helper.tla": "---- MODULE Helper ----\nEXTENDS Naturals\nK == 3\n====\n"}
    cfg = "INIT Init\nNEXT Next\n"
    out = ("---- MODULE Spec ----\nEXTENDS Naturals, Helper\nVARIABLE x\nInit == x = 0\n"
           "Next == x' = (x + 1) % K\n====\n")
    runner = ToolRunner(ToolConfig(jar=RECORD_JAR, timeout_s=60, memory_mb=512), None)
    got = [CompatGrader(files, {"t1": ("Spec", cfg, "t1_Spec.tla")}, 0.05, 60, tlc_first=first).grade("t1", out, runner)
           for first in (True, False)]
    assert got[0] == got[1] and got[0]["reason"] == "sany_fail: timeout" and not got[0]["passed"]
    relaxed = CompatGrader(files, {"t1": ("Spec", cfg, "t1_Spec.tla")}, 60, 60).grade("t1", out, runner)
    assert relaxed["passed"] and relaxed["tlc_kind"] == "success"
