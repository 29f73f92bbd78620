"""SANY in one long-lived JVM (alias.tla.sany_server) gives what a SANY process gives: the
same exit code, kind, errors and (normalized) output on every kind of input, no module
resolved from an earlier request's folder, a time limit that kills it, and no server on a
jar without SANYmain0."""
from __future__ import annotations

import dataclasses
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from alias.tla.executor import LocalExecutor
from alias.tla import tool_server
from alias.tla.tool_server import server_classes
from alias.tla.tlc_output import stable_log
from alias.tla.tools import ToolConfig, run_sany, run_tlc, run_tlc_dump_dot
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


# ----------------------------------------------------------------------------- TLC
CLOCK = "---- MODULE Clock ----\nEXTENDS Naturals\nVARIABLE hr\nInit == hr = 1\nNext == hr' = IF hr = 12 THEN 1 ELSE hr + 1\n" \
        "TypeOK == hr \\in 1..12\nSmall == hr < 5\nLive == <>(hr = 12)\n====\n"
TLC_CASES = {
    "success": ({"Clock.tla": CLOCK}, "Clock", "INIT Init\nNEXT Next\nINVARIANT TypeOK\n"),
    "invariant violated": ({"Clock.tla": CLOCK}, "Clock", "INIT Init\nNEXT Next\nINVARIANT Small\n"),
    "liveness (LiveWorker's MBean)": ({"Clock.tla": CLOCK}, "Clock", "INIT Init\nNEXT Next\nPROPERTY Live\n"),
    "liveness again": ({"Clock.tla": CLOCK}, "Clock", "INIT Init\nNEXT Next\nPROPERTY Live\n"),
    "config error": ({"Clock.tla": CLOCK}, "Clock", "INIT Init\nNEXT Next\nINVARIANT Nope\n"),
    "same name, other variables": ({"Clock.tla": CLOCK.replace("VARIABLE hr", "VARIABLES hr, min")
                                    .replace("Init == hr = 1", "Init == hr = 1 /\\ min = 0")
                                    .replace("Next == hr'", "Next == UNCHANGED min /\\ hr'")},
                                   "Clock", "INIT Init\nNEXT Next\nINVARIANT TypeOK\n"),
    "deadlock": ({"D.tla": "---- MODULE D ----\nVARIABLE x\nInit == x = 0\nNext == x = 0 /\\ x' = 1\n====\n"},
                 "D", "INIT Init\nNEXT Next\n"),
    "CHECK_DEADLOCK FALSE": ({"D.tla": "---- MODULE D ----\nVARIABLE x\nInit == x = 0\nNext == x = 0 /\\ x' = 1\n====\n"},
                             "D", "INIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\n"),
    "eval error": ({"E.tla": "---- MODULE E ----\nEXTENDS Naturals\nVARIABLE x\nInit == x = 1 \\div 0\nNext == x' = x\n====\n"},
                   "E", "INIT Init\nNEXT Next\n"),
    "assumption violated": ({"A.tla": "---- MODULE A ----\nCONSTANT N\nASSUME N > 3\nVARIABLE x\nInit == x = N\n"
                                      "Next == x' = x\n====\n".replace("MODULE A ----\n", "MODULE A ----\nEXTENDS Naturals\n")},
                            "A", "CONSTANT N = 2\nINIT Init\nNEXT Next\n"),
    "parse error": ({"P.tla": "---- MODULE P ----\nVARIABLE x\nInit == x = = 0\n====\n"}, "P", "INIT Init\nNEXT Init\n"),
    "library module, -D property": ({"L.tla": "---- MODULE L ----\nEXTENDS SequencesExt, TLC\nVARIABLE x\n"
                                              "Init == x = TLCGet(\"-Dtlc2.tool.impl.Tool.cdot\")\nNext == x' = x\n====\n"},
                                    "L", "INIT Init\nNEXT Next\n"),
    "success again": ({"Clock.tla": CLOCK}, "Clock", "INIT Init\nNEXT Next\nINVARIANT TypeOK\n"),
}


def _embedded_models() -> dict:
    out = {}
    for d in sorted((REPO / "alias/corpus/embedded/specifications").iterdir()):
        files = {p.name: p.read_text() for p in d.glob("*.tla")}
        for cfg in sorted(d.glob("*.cfg")):
            main = max((n[:-4] for n in files if cfg.stem.startswith(n[:-4])), key=len)
            out[f"embedded {d.name}/{cfg.name}"] = (files, main, cfg.read_text())
    return out


@pytest.fixture(scope="module")
def tlc_configs(configs):
    base, _sany = configs
    base = dataclasses.replace(base, properties=(("tlc2.tool.impl.Tool.cdot", "true"),))
    return base, dataclasses.replace(base, tlc_server=True)


def _same_tlc(a, b) -> None:
    assert (a.exit_code, a.kind, a.distinct_states, a.states_generated, a.depth, a.timed_out) == \
           (b.exit_code, b.kind, b.distinct_states, b.states_generated, b.depth, b.timed_out)
    assert stable_log(a.error_message or "") == stable_log(b.error_message or "")
    assert stable_log(a.output) == stable_log(b.output)   # banner and version too
    assert a.run_key == b.run_key


@pytest.mark.tlc
@pytest.mark.parametrize("case", list(TLC_CASES) + list(_embedded_models()))
def test_tlc_server_and_process_agree(tlc_configs, case):
    """One module-scoped server answers every case in turn, so each case also checks that
    nothing of the runs before it (same module names, other variables) carries over."""
    files, main, cfg = (TLC_CASES | _embedded_models())[case]
    process, server = (run_tlc(files, main, cfg, c) for c in tlc_configs)
    _same_tlc(process, server)
    assert server.kind == {"success": "success", "invariant violated": "invariant_violated", "deadlock": "deadlock",
                           "config error": "config_error", "eval error": "eval_error", "parse error": "parse_error",
                           "assumption violated": "assumption_violated"}.get(case, server.kind)


@pytest.mark.tlc
def test_tlc_server_state_graph_equals_the_process_one(tlc_configs):
    files, main, cfg = TLC_CASES["success"]
    process, server = (run_tlc_dump_dot(files, main, cfg, c) for c in tlc_configs)
    assert process.tlc.distinct_states == server.tlc.distinct_states == 12
    # node ids are fingerprints (TLC draws its polynomial per run): compare labelled edges
    assert _labelled_edges(process.dot) == _labelled_edges(server.dot) and len(_labelled_edges(server.dot)) == 12


def _labelled_edges(dot: str) -> set[tuple[str, str]]:
    labels = dict(re.findall(r'^(-?\d+) \[label="([^"]*)"', dot, re.M))
    return {(labels[a], labels[b]) for a, b in re.findall(r"^(-?\d+) -> (-?\d+)", dot, re.M)}


@pytest.mark.tlc
def test_tlc_time_limit_kills_the_server_and_the_next_request_gets_a_new_one(tlc_configs):
    _process, server = tlc_configs
    spin = {"S.tla": "---- MODULE S ----\nEXTENDS Naturals\nVARIABLE x\nInit == x = 0\nNext == x' = x + 1\n====\n"}
    slow = run_tlc(spin, "S", "INIT Init\nNEXT Next\n", dataclasses.replace(server, timeout_s=3))
    assert slow.kind == "timeout" and slow.timed_out and slow.exit_code is None
    assert "Starting..." in slow.output          # what TLC printed before the kill is kept
    again = run_tlc(*TLC_CASES["success"], server)
    assert (again.kind, again.distinct_states) == ("success", 12)


def _check(config: ToolConfig, case: str) -> tuple[str, int | None]:
    r = run_tlc(*TLC_CASES[case], config)
    return r.kind, r.distinct_states


@pytest.mark.tlc
def test_tlc_in_worker_processes(tlc_configs):
    _process, server = tlc_configs
    run_tlc(*TLC_CASES["success"], server)   # this process's server exists before the fork
    cases = ["success", "config error", "invariant violated", "deadlock"] * 2
    got = dict(LocalExecutor(2).run(_check, server, cases))
    assert [got[i] for i in range(len(cases))] == [("success", 12), ("config_error", None),
                                                   ("invariant_violated", 5), ("deadlock", 2)] * 2


@pytest.mark.tlc
def test_worker_servers_leave_no_folder_when_the_pool_closes(tlc_configs, tmp_path, monkeypatch):
    """A pool worker ends with os._exit and starts with its parent's finalizers cleared: its
    servers are stopped, and their folders removed, by a finalizer it registers itself."""
    _process, server = tlc_configs
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))   # the workers inherit it
    with LocalExecutor(2) as pool:
        got = dict(pool.run(_check, server, ["success", "deadlock"] * 2))
    assert sorted(got.values()) == [("deadlock", 2)] * 2 + [("success", 12)] * 2
    assert not list(tmp_path.glob("alias-tla-srv*"))


@pytest.mark.tlc
def test_tlc_server_is_replaced_after_max_runs(tlc_configs, monkeypatch):
    """A server ends after ``max_runs`` runs (its Metaspace would fill: some of each run's
    classes outlive it) and the next request starts a fresh one; no verdict is lost."""
    _process, server = tlc_configs
    monkeypatch.setattr(tool_server.TlcServer, "max_runs", 3)
    monkeypatch.setattr(tool_server, "_SERVERS", {})
    pids, got = set(), []
    for case in ["success", "config error", "invariant violated"] * 3:
        got.append(_check(server, case))
        pids |= {s.proc.pid for s in tool_server._SERVERS.values() if s.proc is not None}
    assert got == [("success", 12), ("config_error", None), ("invariant_violated", 5)] * 3
    assert len(pids) == 3   # runs 1-3, 4-6, 7-9: each server ends after its third run
    assert all(s.proc is None for s in tool_server._SERVERS.values())


def _server_cmdlines() -> list[list[str]]:
    return [Path(f"/proc/{s.proc.pid}/cmdline").read_bytes().decode().split("\0")
            for s in tool_server._SERVERS.values() if s.proc is not None and "TlcServer" in type(s).__name__]


@pytest.mark.tlc
def test_tlc_server_jvm_has_the_short_run_flags_only_when_asked(tlc_configs, monkeypatch):
    """``short_run_flags`` puts SHORT_RUN_FLAGS on the TLC server's command line; off, none
    of them; the verdicts are the same either way."""
    if not Path("/proc").is_dir():
        pytest.skip("needs /proc")
    _process, server = tlc_configs
    monkeypatch.setattr(tool_server, "_SERVERS", {})
    on = [_check(server, c) for c in ("success", "invariant violated")]
    assert [set(tool_server.SHORT_RUN_FLAGS) <= set(c) for c in _server_cmdlines()] == [True]
    off = [_check(dataclasses.replace(server, short_run_flags=False), c) for c in ("success", "invariant violated")]
    lines = _server_cmdlines()
    assert len(lines) == 2 and sorted(bool(set(tool_server.SHORT_RUN_FLAGS) & set(c)) for c in lines) == [False, True]
    assert on == off == [("success", 12), ("invariant_violated", 5)]
    for s in tool_server._SERVERS.values():
        s.close()


@pytest.mark.tlc
def test_a_java_that_rejects_the_short_run_flags_gets_a_server_without_them(tlc_configs, monkeypatch):
    """A Java that does not start with the flags (another JVM, an older JDK) still gets the
    TLC server, without them, rather than a crash per run."""
    _process, server = tlc_configs
    assert tool_server.jvm_accepts(server.java, tool_server.SHORT_RUN_FLAGS)
    bogus = ("-XX:+AliasNoSuchOption",)
    assert not tool_server.jvm_accepts(server.java, bogus)
    monkeypatch.setattr(tool_server, "SHORT_RUN_FLAGS", bogus)
    monkeypatch.setattr(tool_server, "_SERVERS", {})
    assert _check(server, "invariant violated") == ("invariant_violated", 5)
    assert [c for c in _server_cmdlines() if bogus[0] in c] == [] and len(_server_cmdlines()) == 1
    for s in tool_server._SERVERS.values():
        s.close()


_SPIN_CLIENT = """
import sys
from alias.tla.tools import ToolConfig, run_tlc
spec = "---- MODULE Spin ----\\nEXTENDS Naturals\\nVARIABLE x\\nInit == x = 0\\nNext == x' = x + 1\\n====\\n"
run_tlc({"Spin.tla": spec}, "Spin", "INIT Init\\nNEXT Next\\n",
        ToolConfig(jar=sys.argv[1], timeout_s=300, memory_mb=256, jvm_cache=sys.argv[2], tlc_server=True))
"""


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] not in "ZX"
    except (OSError, IndexError):
        return False


@pytest.mark.tlc
def test_tlc_server_dies_with_a_killed_client(configs):
    """A grading process killed while its server checks a model that never ends leaves no
    JVM running (the server watches its parent; the client's time limit died with it)."""
    if not Path("/proc").is_dir():
        pytest.skip("needs /proc")
    client = subprocess.Popen([sys.executable, "-c", _SPIN_CLIENT, str(RECORD_JAR), configs[0].jvm_cache])
    server, deadline = None, time.monotonic() + 60
    while server is None and time.monotonic() < deadline:
        found = subprocess.run(["pgrep", "-P", str(client.pid), "-f", "aliastools.TlcServer "], capture_output=True, text=True)
        server = int(found.stdout.split()[0]) if found.stdout.split() else None
        time.sleep(0.2)
    assert server is not None, "the TLC server did not start"
    time.sleep(3)                                    # TLC is exploring Spin's states now
    assert _alive(server)
    client.send_signal(signal.SIGKILL)
    client.wait()
    deadline = time.monotonic() + 10
    while _alive(server) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(server), "the TLC server outlived its killed client"


SEQUENCE = [  # found by trying to break the server: each step must give what a process gives
    ("sets a JVM property", {"S.tla": "---- MODULE S ----\nEXTENDS TLC\nASSUME TLCSet(\"-Dtlc2.tool.impl.Tool.cdot\", TRUE)\n"
                                       "VARIABLE x\nInit == x = 0\nNext == UNCHANGED x\n====\n"}, "S", "INIT Init\nNEXT Next\n"),
    ("\\cdot without the property", {"C.tla": "---- MODULE C ----\nEXTENDS Naturals\nVARIABLE x\nInit == x = 0\n"
                                               "A == x' = x + 1\nB == x' = x * 2\nNext == x < 5 /\\ (A \\cdot B)\n====\n"},
     "C", "INIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\n"),
    ("TLCSet(\"pause\") reads stdin", {"P.tla": "---- MODULE P ----\nEXTENDS TLC, Naturals\nVARIABLE x\nInit == x = 0\n"
                                                "Next == x < 3 /\\ x' = x + 1 /\\ (x = 1 => TLCSet(\"pause\", TRUE))\n====\n"},
     "P", "INIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\n"),
    ("writes a relative file", {"W.tla": "---- MODULE W ----\nEXTENDS Json, TLC\nASSUME JsonSerialize(\"leak.json\", <<1, 2>>)\n"
                                         "VARIABLE x\nInit == x = 0\nNext == UNCHANGED x\n====\n"}, "W", "INIT Init\nNEXT Next\n"),
    ("reads it in the next run", {"R.tla": "---- MODULE R ----\nEXTENDS Json, TLC\nASSUME PrintT(JsonDeserialize(\"leak.json\"))\n"
                                           "VARIABLE x\nInit == x = 0\nNext == UNCHANGED x\n====\n"}, "R", "INIT Init\nNEXT Next\n"),
    ("a module named like the server", {"TlcServer.tla": "---- MODULE TlcServer ----\nEXTENDS TLC\nVARIABLE x\nmain(a) == 1\n"
                                                         "Init == x = main(1)\nNext == UNCHANGED x\n====\n"},
     "TlcServer", "INIT Init\nNEXT Next\n"),
]


@pytest.mark.tlc
def test_no_run_changes_the_next_and_none_waits_for_input(tlc_configs):
    """A TLCSet("-D...") is undone, stdin is empty, relative files do not outlive their run,
    and the server's own classes cannot serve as a module's Java overrides."""
    process, server = tlc_configs
    process = dataclasses.replace(process, properties=())
    server = dataclasses.replace(server, properties=(), timeout_s=30)
    for name, files, main, cfg in SEQUENCE:
        a, b = run_tlc(files, main, cfg, process), run_tlc(files, main, cfg, server)
        _same_tlc(a, b)
        assert not b.timed_out, name
    assert [run_tlc(f, m, c, server).kind for _n, f, m, c in SEQUENCE[1:2] + SEQUENCE[4:5]] == ["eval_error"] * 2
