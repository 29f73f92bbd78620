"""SANY in one long-lived JVM (alias.tla.sany_server) gives what a SANY process gives: the
same exit code, kind, errors and (normalized) output on every kind of input, no module
resolved from an earlier request's folder, a time limit that kills it, and no server on a
jar without SANYmain0."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from alias.tla.executor import LocalExecutor
from alias.tla.sany_server import server_classes
from alias.tla.tlc_output import stable_log
from alias.tla.tools import ToolConfig, run_sany
from conftest import RECORD_JAR, fallback_jar

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "corpus"
LIB = tuple(str(d) for d in (SHARED / "deps" / "community-modules", SHARED / "deps" / "tlaps-library") if d.is_dir())

B1 = "---- MODULE B ----\nC == 3\n====\n"
B2 = "---- MODULE B ----\nD == 4\n====\n"
CASES = {
    "ok, imports B": ({"A.tla": "---- MODULE A ----\nEXTENDS B, Naturals\nVARIABLE v\nInit == v = C\n====\n",
                       "B.tla": B1}, "A"),
    "another B, same names": ({"A.tla": "---- MODULE A ----\nEXTENDS B\nVARIABLE v\nInit == v = D\n====\n",
                               "B.tla": B2}, "A"),
    "parse error": ({"A.tla": "---- MODULE A ----\nVARIABLE v\nInit == v = = 1\n====\n"}, "A"),
    "semantic error": ({"Sem.tla": "---- MODULE Sem ----\nVARIABLE x\nInit == x = y\nNext == x' = x\n====\n"}, "Sem"),
    "missing module": ({"A.tla": "---- MODULE A ----\nEXTENDS Nope\n====\n"}, "A"),
    "library module": ({"A.tla": "---- MODULE A ----\nEXTENDS SequencesExt, TLAPS\n====\n"}, "A"),
    "lexical error": ({"A.tla": "---- MODULE A ----\nx == \"abc\n====\n"}, "A"),
    "level error": ({"L.tla": "---- MODULE L ----\nVARIABLE x\nC == x'\nASSUME C\n====\n"}, "L"),
    "first B again": ({"A.tla": "---- MODULE A ----\nEXTENDS B, Naturals\nVARIABLE v\nInit == v = C\n====\n",
                       "B.tla": B1}, "A"),
}


def _embedded_cases() -> dict:
    out = {}
    for d in sorted((REPO / "alias/corpus/embedded/specifications").iterdir()):
        files = {p.name: p.read_text() for p in d.glob("*.tla")}
        for name in files:
            out[f"embedded {d.name}/{name}"] = (files, name[:-4])
    return out


@pytest.fixture(scope="module")
def configs(tmp_path_factory):
    if not RECORD_JAR.is_file():
        pytest.skip("needs TLA+ tools v1.8.0")
    cache = str(tmp_path_factory.mktemp("jvm"))
    if server_classes("java", RECORD_JAR, cache) is None:
        pytest.skip("no javac here: the server cannot be built")
    base = ToolConfig(jar=RECORD_JAR, library=LIB, timeout_s=60, memory_mb=512, jvm_cache=cache)
    return base, dataclasses.replace(base, sany_server=True)


def _same(a, b) -> None:
    assert (a.exit_code, a.kind, a.ok_exit, a.ok_strict, a.errors) == (b.exit_code, b.kind, b.ok_exit, b.ok_strict,
                                                                       b.errors)
    assert stable_log(a.output) == stable_log(b.output)
    assert a.run_key == b.run_key


@pytest.mark.tlc
@pytest.mark.parametrize("case", list(CASES) + list(_embedded_cases()))
def test_server_and_process_agree(configs, case):
    files, main = (CASES | _embedded_cases())[case]
    process, server = (run_sany(files, main, c) for c in configs)
    _same(process, server)
    assert server.wall_s < 30


@pytest.mark.tlc
def test_no_module_resolves_from_an_earlier_request(configs):
    """The tools cache their module resolver: without a reset per request, the second A
    would read the first request's B (and fail on D)."""
    _process, server = configs
    for case in ("ok, imports B", "another B, same names", "first B again"):
        r = run_sany(*CASES[case], server)
        assert r.kind == "ok" and r.errors == [], (case, r.output)


def _parse(config: ToolConfig, case: str) -> tuple[str, int | None]:
    r = run_sany(*CASES[case], config)
    return r.kind, r.exit_code


@pytest.mark.tlc
def test_time_limit_kills_the_server_and_the_next_request_gets_a_new_one(configs):
    _process, server = configs
    slow = run_sany(*CASES["ok, imports B"], dataclasses.replace(server, timeout_s=0.001))
    assert slow.kind == "timeout" and slow.timed_out and slow.exit_code is None
    assert _parse(server, "parse error") == ("parse_error", 255)


@pytest.mark.tlc
def test_worker_processes_start_their_own_servers(configs):
    _process, server = configs
    run_sany(*CASES["ok, imports B"], server)   # this process's server exists before the fork
    cases = ["parse error", "semantic error", "ok, imports B", "missing module"] * 2
    got = dict(LocalExecutor(2).run(_parse, server, cases))
    assert [got[i] for i in range(len(cases))] == [("parse_error", 255), ("semantic_error", 0), ("ok", 0),
                                                   ("parse_error", 255)] * 2


@pytest.mark.tlc
def test_the_fallback_jar_gets_no_server(tmp_path):
    jar = fallback_jar()
    if jar is None:
        pytest.skip("no fallback jar")
    assert server_classes("java", jar, str(tmp_path)) is None     # no SANYmain0 in the 2020 jar
    c = ToolConfig(jar=jar, timeout_s=60, memory_mb=512, jvm_cache=str(tmp_path), sany_server=True)
    assert _parse(c, "parse error")[0] == "parse_error"
