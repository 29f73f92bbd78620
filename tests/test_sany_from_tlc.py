"""SANY's verdict read from TLC's own front end (``tools.sany_from_tlc``): where TLC stopped
there with a parse or a semantic error, the result equals a SANY run's on the same files
(kind, exit code, errors) on TLA+ tools v1.8.0 and on the 2.15 fallback; anywhere else
(a pass, a TLC-time error, a timeout, an output a cache cut) there is none and SANY must
run. The exit codes come from one probe per jar, kept in the JVM cache folder."""
from __future__ import annotations

import dataclasses
import json
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from alias.grade.cache import ToolRunner
from alias.grade.tlabench import CompatGrader
from alias.tla import sany, tools
from alias.tla.tools import ToolConfig, run_sany, run_tlc, sany_exit_codes, sany_from_tlc
from conftest import RECORD_JAR, fallback_jar

pytestmark = pytest.mark.tlc

CFG = "INIT Init\nNEXT Next\n"
HEAD = "---- MODULE Spec ----\nEXTENDS Naturals, Helper\nVARIABLE x\n"
HELPER = {"Helper.tla": "---- MODULE Helper ----\nEXTENDS Naturals\nK == 3\n====\n"}
CASES = {
    "parse_error": HEAD + "Init == x = (0\nNext == x' = x\n====\n",
    "missing_module": "---- MODULE Spec ----\nEXTENDS Naturals, Nowhere\nVARIABLE x\nInit == x = 0\n====\n",
    "semantic_error": HEAD + "Init == x = Undefined\nNext == x' = x + Other\n====\n",
    "level_error": HEAD + "Init == x = 0\nNext == x' = x\nProp == [](x' = x)\n====\n",
}


def _no_tmp(errors: list[str]) -> list[str]:
    """The errors with each run's own temporary folder named alike (two SANY runs differ there)."""
    return [re.sub(r"/[^ ]*/alias-tla-[^/ ]+", "<run>", e) for e in errors]


def _jar(which: str):
    jar = RECORD_JAR if which == "v1.8.0" else fallback_jar()
    if jar is None or not jar.is_file():
        pytest.skip(f"no {which} jar")
    return jar


@pytest.mark.parametrize("which", ["v1.8.0", "2.15"])
def test_tlc_front_end_gives_what_a_sany_run_gives(which, tmp_path):
    config = ToolConfig(jar=_jar(which), timeout_s=60, memory_mb=512, jvm_cache=str(tmp_path / "jvm"))
    kinds = {}
    for name, text in CASES.items():
        files = HELPER | {"Spec.tla": text}
        tlc = run_tlc(files | {"Spec.cfg": CFG}, "Spec", CFG, config)
        sany = run_sany(files, "Spec", config)
        got = sany_from_tlc(tlc, files, "Spec", config)
        assert got is not None, (name, tlc.kind, tlc.output[-400:])
        assert (got.kind, got.exit_code, _no_tmp(got.errors), got.ok_exit, got.ok_strict) == \
            (sany.kind, sany.exit_code, _no_tmp(sany.errors), sany.ok_exit, sany.ok_strict), name
        assert got.run_key == sany.run_key and got.wall_s == 0.0
        kinds[name] = (got.kind, got.exit_code)
    # SANY exits 255 after a parse error and 0 after semantic errors, on both jars
    assert kinds == {"parse_error": ("parse_error", 255), "missing_module": ("parse_error", 255),
                     "semantic_error": ("semantic_error", 0), "level_error": ("semantic_error", 0)}


#: A string holding "--algorithm" outside a comment beside a translation: v1.8.0's SANY
#: records "A unexpected problem was encountered attempting to validate the specification"
#: while loading and exits 255, though its report reads like a semantic error (found by a
#: review of the first version, which read exit code 0 from it); 2.15 checks no PlusCal.
PLUSCAL_VALIDATION = ("---- MODULE Spec ----\nEXTENDS Naturals\nS == \"--algorithm A\"\n"
                      "\\* BEGIN TRANSLATION\nVARIABLES y, pc\nvars == << y, pc >>\n"
                      "Init == y = 0 /\\ pc = \"L\"\nNext == UNCHANGED vars\n\\* END TRANSLATION\n====\n")


def test_a_load_time_error_that_reads_like_a_semantic_error_gets_a_sany_run(tmp_path):
    config = ToolConfig(jar=_jar("v1.8.0"), timeout_s=60, memory_mb=512, jvm_cache=str(tmp_path / "jvm"))
    files = {"Spec.tla": PLUSCAL_VALIDATION}
    tlc = run_tlc(files | {"Spec.cfg": CFG}, "Spec", CFG, config)
    sany = run_sany(files, "Spec", config)
    assert tlc.kind == "semantic_error" and not tlc.front_end_passed and sany.exit_code == 255
    assert "validate the specification" in " ".join(sany.errors)
    assert sany_from_tlc(tlc, files, "Spec", config) is None
    # the grade then runs SANY and gives the benchmark's verdict: a SANY failure
    gold = {"t1": ("Spec", CFG, "t1_Spec.tla")}
    runner = ToolRunner(config, None)
    got = [CompatGrader({}, gold, 60, 60, tlc_first=first).grade("t1", PLUSCAL_VALIDATION, runner)
           for first in (True, False)]
    assert got[0] == got[1] and got[0]["reason"] == "sany_fail: semantic_error" and not got[0]["sany_exit_ok"]


def test_no_verdict_where_tlc_got_past_its_front_end_or_its_output_was_cut(tmp_path):
    config = ToolConfig(jar=_jar("v1.8.0"), timeout_s=60, memory_mb=512, jvm_cache=str(tmp_path / "jvm"))
    files = HELPER | {"Spec.tla": HEAD + "Init == x = 0\nNext == x' = (x + 1) % K\n====\n"}
    ok = run_tlc(files | {"Spec.cfg": CFG}, "Spec", CFG, config)
    assert ok.kind == "success" and sany_from_tlc(ok, files, "Spec", config) is None
    # TLC's own semantic check of the cfg (an undefined operator named there) is not SANY's
    bad_cfg = CFG + "INVARIANT Missing\n"
    late = run_tlc(files | {"Spec.cfg": bad_cfg}, "Spec", bad_cfg, config)
    assert late.front_end_passed and sany_from_tlc(late, files, "Spec", config) is None
    parse = HELPER | {"Spec.tla": CASES["parse_error"]}
    failed = run_tlc(parse | {"Spec.cfg": CFG}, "Spec", CFG, config)
    assert sany_from_tlc(failed, parse, "Spec", config) is not None
    cut = dataclasses.replace(failed, output=failed.output[len("TLC2 Version"):])  # a cache kept its end
    assert sany_from_tlc(cut, parse, "Spec", config) is None
    timed_out = dataclasses.replace(failed, kind="timeout", timed_out=True)
    assert sany_from_tlc(timed_out, parse, "Spec", config) is None


def test_exit_codes_are_probed_once_per_jar_and_kept_in_the_jvm_cache(tmp_path, monkeypatch):
    config = ToolConfig(jar=_jar("v1.8.0"), timeout_s=60, memory_mb=512, jvm_cache=str(tmp_path / "jvm"))
    monkeypatch.setattr(sany, "_SANY_EXIT_CODES", {})
    assert sany_exit_codes(config) == {"parse_error": 255, "semantic_error": 0}
    [kept] = (tmp_path / "jvm").glob("sany-exit-codes-*.json")
    assert json.loads(kept.read_text()) == {"parse_error": 255, "semantic_error": 0}
    # a later process reads the file and runs no probe
    monkeypatch.setattr(sany, "_SANY_EXIT_CODES", {})
    monkeypatch.setattr(sany, "run_sany", lambda *a, **k: pytest.fail("probed again"))
    assert sany_exit_codes(config) == {"parse_error": 255, "semantic_error": 0}
    # a damaged file, or one whose values are not exit codes, is probed again (here: the
    # probe says nothing, so no verdict is read)
    monkeypatch.setattr(sany, "run_sany", lambda files, main, cfg: dataclasses.replace(
        run_sany_result("crash"), exit_code=1))
    for damaged in ("{not json", '{"parse_error": "0", "semantic_error": 0}', '{"parse_error": 0}',
                    '{"parse_error": true, "semantic_error": 0}', '{"parse_error": 256, "semantic_error": 0}'):
        kept.write_text(damaged)
        monkeypatch.setattr(sany, "_SANY_EXIT_CODES", {})
        assert sany_exit_codes(config) == {"parse_error": None, "semantic_error": None}, damaged


def test_first_probes_at_once_in_threads_all_get_the_codes(tmp_path, monkeypatch):
    """Threads of one process probing a fresh jar at once each write the file through a
    temporary file of their own: none fails, all read the same codes, one file is left."""
    config = ToolConfig(jar=_jar("v1.8.0"), jvm_cache=str(tmp_path / "jvm"))
    monkeypatch.setattr(sany, "run_sany", lambda files, main, cfg: dataclasses.replace(
        run_sany_result("parse_error" if "(0" in files["Probe.tla"] else "semantic_error"),
        exit_code=255 if "(0" in files["Probe.tla"] else 0))
    for _round in range(20):
        monkeypatch.setattr(sany, "_SANY_EXIT_CODES", {})
        for f in (tmp_path / "jvm").glob("*"):
            f.unlink()
        with ThreadPoolExecutor(8) as pool:
            got = list(pool.map(lambda _i: sany_exit_codes(config), range(8)))
        assert all(g == {"parse_error": 255, "semantic_error": 0} for g in got)
        assert [f.name.startswith("sany-exit-codes-") for f in (tmp_path / "jvm").iterdir()] == [True]


def run_sany_result(kind: str) -> tools.SanyResult:
    return tools.SanyResult(kind=kind, exit_code=None, wall_s=0.0, output="", run_key="", ok_exit=False,
                            ok_strict=False, errors=[])
