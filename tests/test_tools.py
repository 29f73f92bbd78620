"""Tests for alias.tla.tools and alias.tla.tlc_output.

Tests marked ``tlc`` run the real SANY/TLC of the default jar on tiny specs
written here (about 1 s per TLC run).
"""
from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import replace
from pathlib import Path

import pytest

from alias.tla.cfg import for_jar, parse_cfg
from alias.tla.tlc_output import KINDS, parse_tlc_output
from alias.tla.tools import (DOT_CAP, ToolError, capabilities, check_java, confined, find_jar, run_sany, run_tlc,
                             run_tlc_dump_dot, supports_check_deadlock, tlc_run_key, tool_version)

COUNTER = """---- MODULE Counter ----
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x' = (x + 1) % 5
Spec == Init /\\ [][Next]_x
TypeOK == x \\in 0..4
Small == x < 3
Reaches4 == <>(x = 4)
====
"""
STOPS = """---- MODULE Stops ----
EXTENDS Naturals
VARIABLE x
Init == x = 0
Next == x < 2 /\\ x' = x + 1
Spec == Init /\\ [][Next]_x
Reaches5 == <>(x = 5)
====
"""
FOREVER = """---- MODULE Forever ----
EXTENDS Naturals
VARIABLES x, y
Init == x = 0 /\\ y = 0
Next == \\/ x' = x + 1 /\\ y' = y
        \\/ y' = y + 1 /\\ x' = x
====
"""
BAD_PARSE = """---- MODULE Bad ----
VARIABLE x
Init == x = = 0
====
"""
BAD_SEMANTIC = """---- MODULE Sem ----
VARIABLE x
Init == x = y
Next == x' = x
====
"""
INIT_NEXT = "INIT Init\nNEXT Next\n"


# --------------------------------------------------------------------------- no Java


def test_find_jar_order(tmp_path, monkeypatch):
    default = find_jar(None)
    assert default.name == "tla2tools.jar" and default.is_file()
    other = tmp_path / "other.jar"
    other.write_bytes(b"")
    monkeypatch.delenv("ALIAS_TLA2TOOLS", raising=False)
    assert find_jar(str(other)) == other.resolve()
    env = tmp_path / "env.jar"
    env.write_bytes(b"")
    monkeypatch.setenv("ALIAS_TLA2TOOLS", str(env))
    assert find_jar(str(other)) == env.resolve()
    monkeypatch.setenv("ALIAS_TLA2TOOLS", str(tmp_path / "missing.jar"))
    with pytest.raises(FileNotFoundError, match="ALIAS_TLA2TOOLS"):
        find_jar(None)  # an explicitly named jar must exist: no silent fallback
    monkeypatch.delenv("ALIAS_TLA2TOOLS")
    with pytest.raises(FileNotFoundError, match="tla.jar"):
        find_jar(str(tmp_path / "nope.jar"))


def test_check_java(tool_config):
    import dataclasses

    assert "version" in check_java(tool_config)
    with pytest.raises(ToolError, match="cannot start Java"):
        check_java(dataclasses.replace(tool_config, java="/nonexistent/java"))


@pytest.mark.parametrize("files,main", [
    ({"../x.tla": "x"}, "x"),
    ({"a/b.tla": "x", "b.tla": "x"}, "b"),
    ({"x.txt": "x", "M.tla": "x"}, "M"),
    ({"M.tla": "x"}, "../M"),
    ({"M.tla": "x"}, "N"),
    ({".tla": "x", "M.tla": "x"}, "M"),
])
def test_unsafe_names_rejected(files, main, tool_config):
    with pytest.raises(ToolError):
        run_sany(files, main, tool_config)
    with pytest.raises(ToolError):
        run_tlc(files, main, INIT_NEXT, tool_config)


def test_bad_flag_rejected(tool_config):
    with pytest.raises(ToolError):
        run_tlc({"Counter.tla": COUNTER}, "Counter", INIT_NEXT, tool_config, ("-dump", "/etc/x"))
    # the state-graph dump: same allow-list, and no flag that gives a partial graph
    for flags in [("-dump", "dot", "/etc/x"), ("-simulate",), ("-dfid", "3"), ("-deadlock", "-simulate")]:
        with pytest.raises(ToolError):
            run_tlc_dump_dot({"Counter.tla": COUNTER}, "Counter", INIT_NEXT, tool_config, flags)
    with pytest.raises(ToolError):
        run_tlc_dump_dot({"../Counter.tla": COUNTER}, "Counter", INIT_NEXT, tool_config)


def _old_dump_run_key(files, main, cfg_text, version, flags, library, confinement=None):
    """The run key of the state-graph dump, written out: what it was before it used tools'
    public API, plus TLC's fixed fingerprint polynomial (``-fp``, part of every TLC run) and,
    for a confined run, its confinement."""
    payload = {"kind": "tlc-dump-dot",
               "files": {k: hashlib.sha256(v.encode("utf-8")).hexdigest() for k, v in sorted(files.items())},
               "main": main, "cfg": cfg_text, "version": version, "flags": list(flags),
               "library": list(library), "fp": 0, "seed": 1}
    if confinement:
        payload["confinement"] = confinement
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def test_dump_run_key_is_unchanged(tool_config):
    files, cfg = {"Counter.tla": COUNTER}, "SPECIFICATION Spec\n"
    plain = replace(tool_config, confine="off")
    key = tlc_run_key(files, "Counter", cfg, plain, ("-deadlock",), dump_dot=True)
    assert key == _old_dump_run_key(files, "Counter", cfg, tool_version(tool_config), ("-deadlock",),
                                    tool_config.library)
    assert key != tlc_run_key(files, "Counter", cfg, plain, ("-deadlock",))
    if confined(tool_config):  # a confined run's key names its confinement and limits
        boxed = tlc_run_key(files, "Counter", cfg, tool_config, ("-deadlock",), dump_dot=True)
        assert boxed == _old_dump_run_key(files, "Counter", cfg, tool_version(tool_config), ("-deadlock",),
                                          tool_config.library, "bwrap-v1:disk_mb=2048:max_processes=512")
        assert boxed != tlc_run_key(files, "Counter", cfg, replace(tool_config, disk_mb=1024), ("-deadlock",),
                                    dump_dot=True)


MODERN_SUCCESS = """TLC2 Version 2.18 of 20 March 2023 (rev: 3ea3222)
Starting... (2024-01-01 00:00:00)
Computing initial states...
Finished computing initial states: 1 distinct state generated at 2024-01-01 00:00:00.
Model checking completed. No error has been found.
  Estimates of the probability that TLC did not check all reachable states
  because two distinct states had the same fingerprint:
  calculated (optimistic):  val = 5.4E-19
12,345 states generated, 6,789 distinct states found, 0 states left on queue.
The depth of the complete state graph search is 42.
Finished in 01s at (2024-01-01 00:00:01)
"""


@pytest.mark.parametrize("text,code,kind", [
    (MODERN_SUCCESS, 0, "success"),
    ("Error: Invariant TypeOK is violated.\nError: The behavior up to this point is:\n"
     "State 1: <Initial predicate>\nx = 0\n\n1 states generated, 1 distinct states found, "
     "0 states left on queue.\n", 12, "invariant_violated"),
    ("Error: Action property Mono is violated.\n", 13, "property_violated"),
    ("Error: Temporal properties were violated.\n", 13, "property_violated"),
    ("Error: Deadlock reached.\n", 11, "deadlock"),
    ("Error: The configuration file did not specify the initial state predicate.\n", 151,
     "config_error"),
    ("Error: The invariant Foo specified in the configuration file\nis not defined in the "
     "specification.\n", 151, "config_error"),
    ("***Parse Error***\nWas expecting \"====\"\n\nFatal errors while parsing TLA+ spec\n",
     150, "parse_error"),
    ("Semantic errors:\n\n*** Errors: 1\n\nline 1\n\nUnknown operator: `y'.\n", 150,
     "semantic_error"),
    ("Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space\n", 1, "crash"),
    ("Error: Assumption line 4, col 8 to line 4, col 12 of module A is false.\n", 10,
     "assumption_violated"),
    ("", None, "crash"),
    ("garbage", 3, "crash"),
    # TLC 2.15 heads a list of warnings only with "Semantic errors:": no error
    ("Semantic errors:\n\n*** Warnings: 1\n\nline 6, col 1 to line 6, col 22 of module W\n\nMultiple declarations "
     "or definitions for symbol P.\n\n" + MODERN_SUCCESS, 0, "success"),
    # an action that leaves a variable unassigned is an error of the spec, not of its cfg
    ("Error: Successor state is not completely specified by the next-state action. The following variable "
     "is not defined: y.\n", 75, "eval_error"),
])
def test_parse_tlc_output_texts(text, code, kind):
    o = parse_tlc_output(text, code, False)
    assert o.kind == kind and o.kind in KINDS
    if kind != "success":
        assert o.error_message
    else:
        assert (o.states_generated, o.distinct_states, o.depth) == (12345, 6789, 42)
    assert parse_tlc_output(text, None, True).kind == "timeout"


# --------------------------------------------------------------------------- real tools

@pytest.mark.tlc
def test_tool_version_and_capabilities(jar_config):
    """Capabilities come from the version line, not from the jar's file name."""
    v, caps = tool_version(jar_config), capabilities(jar_config)
    if "cc6b616" in v:  # v1.8.0
        assert v == "TLC2 Version 2026.04.29.170100 (rev: cc6b616)"
        assert caps.modern and caps.check_deadlock and caps.alias and caps.no_generate_spec_te and not caps.fallback
    else:
        assert v == "TLC2 Version 2.15 of Day Month 20?? (rev: d5b5a7f)"
        assert not caps.modern and not caps.check_deadlock and not caps.no_generate_spec_te and caps.fallback
    assert supports_check_deadlock(jar_config) is caps.check_deadlock


@pytest.mark.tlc
def test_capabilities_of_a_renamed_jar_come_from_its_version(jar_config, tmp_path):
    renamed = tmp_path / "tools.jar"
    renamed.write_bytes(Path(jar_config.jar).read_bytes())
    assert capabilities(replace(jar_config, jar=renamed)).modern == capabilities(jar_config).modern


@pytest.mark.tlc
def test_success_exact_counts(jar_config):
    tool_config = jar_config
    r = run_tlc({"Counter.tla": COUNTER}, "Counter",
                "SPECIFICATION Spec\nINVARIANT TypeOK\n", tool_config)
    assert r.kind == "success", r.output
    assert (r.distinct_states, r.states_generated, r.depth) == (5, 6, 5)
    assert r.exit_code == 0 and not r.timed_out and r.error_message is None
    assert len(r.run_key) == 64 and r.tool_version.startswith("TLC2")
    assert run_tlc({"Counter.tla": COUNTER}, "Counter", "SPECIFICATION Spec\n",
                   tool_config).run_key != r.run_key


@pytest.mark.tlc
def test_dump_dot(tool_config, monkeypatch, tmp_path):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))  # the sandbox's temp dirs go here
    files, cfg = {"Counter.tla": COUNTER}, "SPECIFICATION Spec\n"
    d = run_tlc_dump_dot(files, "Counter", cfg, tool_config)
    plain = run_tlc(files, "Counter", cfg, tool_config)
    assert d.tlc.kind == plain.kind == "success" and d.tlc.distinct_states == plain.distinct_states == 5
    assert d.dot.startswith("strict digraph DiskGraph {") and d.dot.count("[label=") >= 5
    assert d.dot_bytes == len(d.dot.encode("utf-8")) <= DOT_CAP
    assert d.tlc.run_key == tlc_run_key(files, "Counter", cfg, tool_config, dump_dot=True) != plain.run_key
    assert "-dump" not in plain.output  # the plain run writes no graph
    small = run_tlc_dump_dot(files, "Counter", cfg, tool_config, max_dot_bytes=10)
    assert small.tlc.kind == "success" and small.dot is None and small.dot_bytes > 10  # not read
    assert list(tmp_path.iterdir()) == []  # every sandbox removed, the DOT file with it


@pytest.mark.tlc
def test_invariant_violated(jar_config, monkeypatch, tmp_path):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    r = run_tlc({"Counter.tla": COUNTER}, "Counter", INIT_NEXT + "INVARIANT Small\n",
                jar_config)
    assert r.kind == "invariant_violated", r.output
    assert "Small" in r.error_message and r.exit_code == 12
    assert r.distinct_states == 4
    # v1.8.0 runs with -noGenerateSpecTE: no trace-explorer spec is written or announced
    assert "TTrace" not in r.output and list(tmp_path.iterdir()) == []


@pytest.mark.tlc
def test_property_violated_liveness(jar_config):
    tool_config = jar_config
    # no fairness: the behaviour may stutter at x = 0 forever
    r = run_tlc({"Counter.tla": COUNTER}, "Counter",
                "SPECIFICATION Spec\nPROPERTY Reaches4\n", tool_config)
    assert r.kind == "property_violated", r.output
    assert r.exit_code == 13


@pytest.mark.tlc
def test_deadlock_and_check_deadlock_false(jar_config):
    tool_config = jar_config
    r = run_tlc({"Stops.tla": STOPS}, "Stops", INIT_NEXT, tool_config)
    assert r.kind == "deadlock", r.output
    assert r.distinct_states == 3 and r.exit_code == 11
    cfg_text = INIT_NEXT + "CHECK_DEADLOCK FALSE\n"
    modern = capabilities(tool_config).check_deadlock
    raw = run_tlc({"Stops.tla": STOPS}, "Stops", cfg_text, tool_config)
    # v1.8.0 reads the keyword; the 2.15 jar lacks it, so the cfg is rewritten for it only
    assert raw.kind == ("success" if modern else "config_error"), raw.output
    text, flags = for_jar(parse_cfg(cfg_text), modern, text=cfg_text)
    if modern:
        assert (text, flags) == (cfg_text, ())
    else:
        assert flags == ("-deadlock",) and "CHECK_DEADLOCK" not in text and parse_cfg(text).next == "Next"
    ok = run_tlc({"Stops.tla": STOPS}, "Stops", text, tool_config, flags)
    assert ok.kind == "success", ok.output
    assert ok.distinct_states == 3 and ok.depth == 3


@pytest.mark.tlc
def test_parse_error(jar_config):
    tool_config = jar_config
    s = run_sany({"Bad.tla": BAD_PARSE}, "Bad", tool_config)
    assert not s.ok_exit and not s.ok_strict and s.kind == "parse_error"
    assert any("Parse Error" in e for e in s.errors)
    r = run_tlc({"Bad.tla": BAD_PARSE}, "Bad", INIT_NEXT, tool_config)
    assert r.kind == "parse_error" and "Parse Error" in r.error_message


@pytest.mark.tlc
def test_semantic_error_sany_exit_zero(jar_config):
    tool_config = jar_config
    s = run_sany({"Sem.tla": BAD_SEMANTIC}, "Sem", tool_config)
    # SANY 2.1 (the 2020 jar) and 2.2 (v1.8.0) exit 0 after semantic errors
    assert s.exit_code == 0 and s.ok_exit and not s.ok_strict and s.kind == "semantic_error"
    assert s.errors == ["line 3, col 13 to line 3, col 13 of module Sem: Unknown operator: `y'."]
    r = run_tlc({"Sem.tla": BAD_SEMANTIC}, "Sem", INIT_NEXT, tool_config)
    assert r.kind == "semantic_error", r.output
    good = run_sany({"Counter.tla": COUNTER}, "Counter", tool_config)
    assert good.ok_exit and good.ok_strict and good.errors == [] and good.kind == "ok"


@pytest.mark.tlc
def test_sany_library_dirs(tool_config, tmp_path):
    (tmp_path / "LibMod.tla").write_text("---- MODULE LibMod ----\nEXTENDS Naturals\nDouble(n) == n + n\n====\n")
    files = {"Uses.tla": "---- MODULE Uses ----\nEXTENDS Naturals, LibMod\nK == Double(2)\n====\n"}
    missing = run_sany(files, "Uses", tool_config)
    assert not missing.ok_exit and missing.kind == "parse_error"
    assert any("Cannot find source file for module LibMod" in e for e in missing.errors)
    cfg = replace(tool_config, library=(str(tmp_path),))
    s = run_sany(files, "Uses", cfg)
    assert s.ok_strict, s.output


@pytest.mark.tlc
@pytest.mark.parametrize("cfg_text,needle", [
    (INIT_NEXT + "INVARIANT NoSuchInv\n", "NoSuchInv"),
    ("INVARIANT TypeOK\n", "initial state"),
    (INIT_NEXT + "INVARIANT Reaches4\n", "Reaches4"),
])
def test_config_error(jar_config, cfg_text, needle):
    tool_config = jar_config
    r = run_tlc({"Counter.tla": COUNTER}, "Counter", cfg_text, tool_config)
    assert r.kind == "config_error", r.output
    assert needle in r.error_message


@pytest.mark.tlc
def test_timeout_kills_process_group(tool_config):
    cfg = replace(tool_config, timeout_s=3)
    t0 = time.monotonic()
    r = run_tlc({"Forever.tla": FOREVER}, "Forever", INIT_NEXT, cfg)
    assert time.monotonic() - t0 < 15
    assert r.kind == "timeout" and r.timed_out and r.exit_code is None
    assert 2.5 < r.wall_s < 15
    m = re.search(r"(/\S*alias-tla-[^/\s]+)/", r.output)
    assert m, r.output
    tmpdir = m.group(1)
    assert not Path(tmpdir).exists()  # temp dir removed
    for proc in Path("/proc").iterdir():  # no process still runs in it
        if proc.name.isdigit():
            try:
                cmd = (proc / "cmdline").read_bytes().decode("utf-8", "replace")
            except OSError:
                continue
            assert tmpdir not in cmd, f"process {proc.name} survived: {cmd}"
    s = run_sany({"Counter.tla": COUNTER}, "Counter", replace(tool_config, timeout_s=0.01))  # no JVM starts in 10 ms
    assert s.kind == "timeout" and s.timed_out and not s.ok_exit and not s.ok_strict


@pytest.mark.tlc
def test_crash_missing_java_and_tiny_heap(tool_config):
    r = run_tlc({"Counter.tla": COUNTER}, "Counter", INIT_NEXT,
                replace(tool_config, java="/nonexistent/java"))
    assert r.kind == "crash" and r.exit_code is None
    assert "cannot start" in r.error_message
    s = run_sany({"Counter.tla": COUNTER}, "Counter", replace(tool_config, java="/nonexistent/java"))
    assert not s.ok_exit and s.kind == "crash" and "cannot start" in s.errors[0]
    r = run_tlc({"Counter.tla": COUNTER}, "Counter", INIT_NEXT, replace(tool_config, memory_mb=2))
    assert r.kind == "crash", r.output
    assert "OutOfMemoryError" in r.error_message or "out of memory" in r.error_message


@pytest.mark.tlc
def test_extra_kinds_assumption_and_eval(jar_config):
    tool_config = jar_config
    assume = "---- MODULE A ----\nVARIABLE x\nASSUME 1 = 2\nInit == x = 0\nNext == x' = x\n====\n"
    r = run_tlc({"A.tla": assume}, "A", INIT_NEXT, tool_config)
    assert r.kind == "assumption_violated", r.output
    ev = ("---- MODULE E ----\nEXTENDS Naturals\nVARIABLE x\nInit == x = 0\n"
          "Next == x' = x + \"a\"\n====\n")
    r = run_tlc({"E.tla": ev}, "E", INIT_NEXT, tool_config)
    assert r.kind == "eval_error", r.output
    unassigned = "---- MODULE U ----\nVARIABLE x, y\nInit == x = 0 /\\ y = 0\nNext == x' = x\n====\n"
    r = run_tlc({"U.tla": unassigned}, "U", INIT_NEXT, tool_config)
    assert r.kind == "eval_error" and "not completely specified" in r.error_message, r.output


@pytest.mark.tlc
def test_tlc_says_whether_its_own_parse_passed(jar_config):
    """``front_end_passed``: true past the parser (success, a violation, a cfg name the spec
    lacks), false on a parse or semantic error and where the cfg stops TLC before it parses."""
    runs = {"success": ({"Counter.tla": COUNTER}, "Counter", INIT_NEXT + "INVARIANT TypeOK\n"),
            "invariant_violated": ({"Counter.tla": COUNTER}, "Counter", INIT_NEXT + "INVARIANT Small\n"),
            "unbound cfg name": ({"Counter.tla": COUNTER}, "Counter", INIT_NEXT + "INVARIANT Nope\n"),
            "bad cfg": ({"Counter.tla": COUNTER}, "Counter", "INIT Init\nNEXTT Next\n"),
            "parse_error": ({"Bad.tla": BAD_PARSE}, "Bad", INIT_NEXT),
            "semantic_error": ({"Sem.tla": BAD_SEMANTIC}, "Sem", INIT_NEXT)}
    got = {k: run_tlc(*v, jar_config) for k, v in runs.items()}
    assert {k: (r.kind, r.front_end_passed) for k, r in got.items()} == {
        "success": ("success", True), "invariant_violated": ("invariant_violated", True),
        "unbound cfg name": ("config_error", True), "bad cfg": ("config_error", False),
        "parse_error": ("parse_error", False), "semantic_error": ("semantic_error", False)}
    assert got["invariant_violated"].error_lines[0] == "Error: Invariant Small is violated."
    assert got["success"].error_lines == ()


def test_refuses_community_modules_jar_on_manifest_classpath(tool_config, tmp_path):
    import shutil

    jar = tmp_path / "tla2tools.jar"
    shutil.copy(tool_config.jar, jar)
    (tmp_path / "CommunityModules.jar").write_bytes(b"")
    cfg = replace(tool_config, jar=jar)
    with pytest.raises(ToolError, match="CommunityModules"):
        run_tlc({"Counter.tla": COUNTER}, "Counter", INIT_NEXT, cfg)
    with pytest.raises(ToolError, match="CommunityModules"):
        run_sany({"Counter.tla": COUNTER}, "Counter", cfg)


_ORPHAN_SCRIPT = """
from alias.tla.tools import ToolConfig, find_jar, run_tlc
spec = "---- MODULE AliasOrphanProbe ----\\nEXTENDS Naturals\\nVARIABLE x\\nInit == x = 0\\nNext == x' = x + 1\\n====\\n"
run_tlc({"AliasOrphanProbe.tla": spec}, "AliasOrphanProbe", "INIT Init\\nNEXT Next\\n",
        ToolConfig(jar=find_jar(None), timeout_s=120, memory_mb=256))
"""


@pytest.mark.tlc
def test_tlc_dies_with_a_killed_parent():
    """A grading or verify process killed mid-run leaves no TLC behind (PDEATHSIG)."""
    import signal
    import subprocess
    import sys

    def probes() -> list[str]:
        out = subprocess.run(["pgrep", "-f", "AliasOrphanProbe"], capture_output=True, text=True).stdout
        return [p for p in out.split() if p]

    proc = subprocess.Popen([sys.executable, "-c", _ORPHAN_SCRIPT])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(probes()) < 2:   # the python and its java
        time.sleep(0.2)
    assert len(probes()) >= 2, "TLC did not start"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and probes():
        time.sleep(0.2)
    assert probes() == [], "TLC outlived its killed parent"


def test_stable_log_removes_what_differs_between_runs_and_machines():
    """v1.8.0 names its standard modules by a random temp folder and the jar's path."""
    from alias.tla.tlc_output import stable_log

    a = ("Parsing file /tmp/alias-tla-k3j_x/jtmp/tlc-632097522149565132/Naturals.tla "
         "(jar:file:/work/shared/tools/tla2tools-1.8.0/tla2tools.jar!/tla2sany/StandardModules/Naturals.tla)\n"
         "Finished in 01s at (2026-12-01 23:07:57)\n3 states generated, 3 distinct states found\n")
    b = ("Parsing file /var/tmp/alias-tla-99/jtmp/tlc-7678614260571951395/Naturals.tla "
         "(jar:file:/opt/tla/tla2tools.jar!/tla2sany/StandardModules/Naturals.tla)\n"
         "Finished in 02s at (2026-12-02 01:00:00)\n3 states generated, 3 distinct states found\n")
    # past a minute TLC writes "01min 27s", and it reads some modules from numbered folders of
    # its own (TLA+-Bench 1591, 962: two checkouts differed in these lines only)
    c = ("Parsing file /tmp/alias-tla-ab12/states/6008302248518854505/Cnnezc.tla (/tmp/alias-tla-ab12/Z.tla)\n"
         "Parsing file /tmp/alias-tla-ab12/jtmp/8242851005921744436/Xn.tla (/tmp/alias-tla-ab12/Z.tla)\n"
         "Finished in 01min 27s at (2026-12-02 05:01:02)\nFinished in 01h 02min 03s at (2026-12-02 05:01:02)\n")
    d = ("Parsing file /tmp/alias-tla-cd34/states/17306065316091182238/Cnnezc.tla (/tmp/alias-tla-cd34/Z.tla)\n"
         "Parsing file /tmp/alias-tla-cd34/jtmp/6639554380697835189/Xn.tla (/tmp/alias-tla-cd34/Z.tla)\n"
         "Finished in 34s at (2026-12-03 07:00:00)\nFinished in 2330ms at (2026-12-03 07:00:00)\n")
    assert stable_log(a) == stable_log(b) and stable_log(c) == stable_log(d)
    assert "3 distinct states found" in stable_log(a) and "Naturals.tla" in stable_log(a)
    assert "Finished in <wall> at (<time>)" in stable_log(c) and "/Cnnezc.tla" in stable_log(c)
    assert stable_log(a) != stable_log(a.replace("3 distinct", "4 distinct"))


def test_stable_log_drops_what_tlc_prints_on_a_timer():
    """Progress reports with rates and liveness checks of the state space found so far come
    every minute: a slower machine prints more of them (TLA+-Bench 1609, 1509)."""
    from alias.tla.tlc_output import stable_log

    end = ("Checking temporal properties for the complete state space with 1236 total distinct states at "
           "(2026-12-02 05:01:02)\nFinished checking temporal properties in 00s at 2026-12-02 05:01:02\n"
           "Progress(5) at 2026-12-02 05:01:02: 10,278 states generated, 1,236 distinct states found, "
           "0 states left on queue.\n")
    timer = ("Progress(2) at 2026-12-02 05:00:01: 1,335 states generated (1,335 s/min), 1,330 distinct states "
             "found (1,330 ds/min), 1,222 states left on queue.\n"
             "Checking 6 branches of temporal properties for the current state space with 10906 total distinct "
             "states at (2026-12-02 05:00:01)\nFinished checking temporal properties in 01s at 2026-12-02 05:00:02\n")
    assert stable_log(timer + end) == stable_log(end) == stable_log(timer + timer + end)
    assert "complete state space with 1236" in stable_log(end) and "10,278 states generated" in stable_log(end)


def test_a_timeout_reports_no_state_counts():
    """How far TLC got before the limit depends on the machine: a timeout has no counts."""
    from alias.tla.tlc_output import parse_tlc_output

    text = "Progress(9) at 2026-12-02 05:00:01: 30,501 states generated (1 s/min), 3,072 distinct states found\n"
    o = parse_tlc_output(text, None, True)
    assert (o.kind, o.distinct_states, o.states_generated, o.depth) == ("timeout", None, None, None)


@pytest.mark.tlc
def test_an_error_message_holds_no_wall_time_or_date(tool_config):
    """An error found in the initial state is followed by TLC's summary (counts, "Finished in
    00s at (date)"): the message stops before it, so a verdict's text is the same on every
    run and machine."""
    r = run_tlc({"Counter.tla": COUNTER.replace("Small == x < 3", "Small == x > 3")}, "Counter",
                INIT_NEXT + "INVARIANT Small\n", tool_config)
    assert r.kind == "invariant_violated"
    assert r.error_message.startswith("Error: Invariant Small is violated by the initial state")
    assert "x = 0" in r.error_message
    assert "Finished" not in r.error_message and "states generated" not in r.error_message
    assert not re.search(r"\d{4}-\d{2}-\d{2}", r.error_message)


@pytest.mark.tlc
def test_every_tlc_run_uses_one_fingerprint_polynomial(tool_config):
    """TLC picks its fingerprint polynomial at random unless told (``-fp``): every run gets
    the same one, and a flag of the caller's own wins."""
    r = run_tlc({"Counter.tla": COUNTER}, "Counter", INIT_NEXT, tool_config)
    assert re.search(r"with fp 0 and seed", r.output)
    own = run_tlc({"Counter.tla": COUNTER}, "Counter", INIT_NEXT, tool_config, ("-fp", "7"))
    assert re.search(r"with fp 7 and seed", own.output) and own.distinct_states == r.distinct_states == 5


@pytest.mark.tlc
def test_a_module_that_draws_at_random_gets_the_same_run_twice(tool_config):
    """Model outputs use ``RandomElement`` (TLA+-Bench 1384): without a fixed ``-seed`` TLC
    reports another state on every run, so a verdict's text changed between checkouts."""
    spec = ("---- MODULE Draw ----\nEXTENDS Naturals, TLC\nVARIABLE x\n"
            "Init == x = RandomElement(1..1000000)\nNext == x' = x\nZero == x = 0\n====\n")
    runs = [run_tlc({"Draw.tla": spec}, "Draw", INIT_NEXT + "INVARIANT Zero\n", tool_config) for _ in range(2)]
    assert [r.kind for r in runs] == ["invariant_violated"] * 2
    assert runs[0].error_message == runs[1].error_message and re.search(r"x = \d+", runs[0].error_message)
    assert re.search(r"with fp 0 and seed 1 ", runs[0].output)
