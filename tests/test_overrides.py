"""The Community Modules' Java overrides (``tla.overrides_jar``: upstream's
CommunityModules-deps.jar, alias/tla/overrides.py), loaded by confined TLC runs only: on every
graph over three nodes upstream's Graphs!AreConnectedIn and UndirectedGraphs!ConnectedComponents
equal the modules' own definitions with Seq(S) bounded by |S| (a path between two nodes has a
simple one no longer), in a TLC process and in the TLC server; unconfined, the jar is not
loaded and TLC cannot evaluate the definitions; the run key names the jar; the jar whose
entry name Java refuses is repaired; and the TLA+ Examples models that need the overrides
(YoYoAllGraphs, TLC/TestGraphs) check the manifest's state counts."""
from __future__ import annotations

import dataclasses
import json
import zipfile
from pathlib import Path

import pytest

from alias.tla.overrides import _bad_names, usable_jar
from alias.tla.tools import ToolConfig, ToolError, confined, overrides_jar, run_tlc, tlc_run_key
from conftest import RECORD_JAR

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
COMMUNITY = SHARED / "corpus" / "deps" / "community-modules"
CM_JAR = SHARED / "tools" / "community-modules" / "CommunityModules-deps.jar"
EXAMPLES = SHARED / "corpus" / "tlaplus-examples" / "specifications"

ORACLE = """---- MODULE GraphOracle ----
EXTENDS Naturals, FiniteSets, Sequences, SequencesExt
N == {1, 2, 3}
D == INSTANCE Graphs
U == INSTANCE UndirectedGraphs
BPath(S, Edge(_, _)) == {p \\in BoundedSeq(S, Cardinality(S)) :
                           p # <<>> /\\ \\A i \\in 1..(Len(p) - 1) : Edge(p[i], p[i + 1])}
Conn(m, n, G) == \\E p \\in BPath(G.node, LAMBDA a, b : <<a, b>> \\in G.edge) : p[1] = m /\\ p[Len(p)] = n
IsCC(S, G) == S # {} /\\ \\A m, n \\in S : \\E p \\in BPath(S, LAMBDA a, b : {a, b} \\in G.edge) :
                                          p[1] = m /\\ p[Len(p)] = n
CC(G) == {S \\in SUBSET G.node : IsCC(S, G) /\\ \\A T \\in SUBSET G.node : S \\subseteq T /\\ S # T => ~IsCC(T, G)}
\\* edges over N, nodes a subset of N: also edges with an end outside G.node
ASSUME \\A nodes \\in SUBSET N : \\A E \\in SUBSET (N \\X N) :
         LET G == [node |-> nodes, edge |-> E] IN
         \\A m, n \\in N \\cup {0} : D!AreConnectedIn(m, n, G) = Conn(m, n, G)
ASSUME \\A nodes \\in SUBSET N : \\A E \\in SUBSET {{a, b} : a, b \\in N} :
         LET G == [node |-> nodes, edge |-> E] IN U!ConnectedComponents(G) = CC(G)
ASSUME U!IsStronglyConnected([node |-> {}, edge |-> {}]) = FALSE
ASSUME D!IsStronglyConnected([node |-> {"a", "b"}, edge |-> {<<"a", "b">>, <<"b", "a">>}])
ASSUME ~D!IsStronglyConnected([node |-> {"a", "b"}, edge |-> {<<"a", "b">>}])
\\* a tuple written as a function, a set written as an interval, a triple and a singleton
ASSUME D!AreConnectedIn(1, 2, [node |-> {1, 2}, edge |-> {[i \\in 1..2 |-> i], <<2, 1, 2>>}])
ASSUME U!ConnectedComponents([node |-> {1, 2, 3}, edge |-> {1..2, {3}}]) = {{1, 2}, {3}}
====
"""
#: the process's environment is not the run's: only the locale and time zone pass
ENV = """---- MODULE Env ----
EXTENDS IOUtils
ASSUME "HOME" \\notin DOMAIN IOEnv /\\ "PATH" \\notin DOMAIN IOEnv /\\ "ALIAS_TLA2TOOLS" \\notin DOMAIN IOEnv
====
"""


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> ToolConfig:
    if not RECORD_JAR.is_file() or not COMMUNITY.is_dir() or not CM_JAR.is_file():
        pytest.skip("needs TLA+ tools v1.8.0 and the Community Modules (library folder and jar)")
    cfg = ToolConfig(jar=RECORD_JAR, library=(str(COMMUNITY),), timeout_s=300, memory_mb=512,
                     jvm_cache=str(tmp_path_factory.mktemp("jvm")), overrides_jar=str(CM_JAR))
    if not confined(cfg):
        pytest.skip("this machine cannot confine runs: the overrides are never loaded (tests/test_confine.py)")
    return cfg


@pytest.mark.tlc
@pytest.mark.parametrize("server", [False, True], ids=["process", "server"])
def test_upstreams_graph_overrides_equal_the_definitions_on_every_graph_over_three_nodes(config, server):
    cfg = dataclasses.replace(config, tlc_server=server)
    r = run_tlc({"GraphOracle.tla": ORACLE}, "GraphOracle", "", cfg)
    assert (r.kind, r.exit_code) == ("success", 0), r.output[-2000:]
    env = run_tlc({"Env.tla": ENV}, "Env", "", cfg)
    assert env.kind == "success", env.output[-2000:]
    unconfined = dataclasses.replace(cfg, confine="off")  # the jar is configured but never loaded
    assert overrides_jar(unconfined) is None
    assert run_tlc({"GraphOracle.tla": ORACLE}, "GraphOracle", "", unconfined).kind == "eval_error"
    assert run_tlc({"Env.tla": ENV}, "Env", "", unconfined).kind == "eval_error"


@pytest.mark.tlc
def test_a_malformed_graph_is_upstreams_verdict(config):
    """Upstream's overrides (unlike ALIAS's former GraphOverrides.java): a record without a
    node field is an eval error, an edge of the wrong shape is no edge."""
    r = run_tlc({"NotAGraph.tla": "---- MODULE NotAGraph ----\nEXTENDS Naturals, Graphs\n"
                 "ASSUME AreConnectedIn(1, 2, [nodes |-> {1, 2}, edge |-> {}])\n====\n"}, "NotAGraph", "", config)
    assert r.kind == "eval_error" and "should be a graph record whose node field is a set" in r.output
    for module, expr in (("Graphs", "AreConnectedIn(1, 2, [node |-> {1, 2}, edge |-> {{1, 2}}])"),
                         ("UndirectedGraphs", "IsStronglyConnected([node |-> {1, 2}, edge |-> {<<1, 2>>}])")):
        spec = f"---- MODULE BadEdge ----\nEXTENDS Naturals, {module}\nASSUME {expr}\n====\n"
        assert run_tlc({"BadEdge.tla": spec}, "BadEdge", "", config).kind == "assumption_violated"


def test_the_run_key_names_the_overrides_jar(config, tmp_path):
    files, cfg = {"GraphOracle.tla": ORACLE}, ""
    on = tlc_run_key(files, "GraphOracle", cfg, config)
    off = tlc_run_key(files, "GraphOracle", cfg, dataclasses.replace(config, overrides_jar=""))
    other = tmp_path / "other.jar"
    other.write_bytes(CM_JAR.read_bytes() + b"\0")   # another jar (a zip reads past trailing bytes)
    another = tlc_run_key(files, "GraphOracle", cfg, dataclasses.replace(config, overrides_jar=str(other)))
    assert len({on, off, another}) == 3
    with pytest.raises(ToolError, match="overrides_jar does not exist"):
        run_tlc(files, "GraphOracle", cfg, dataclasses.replace(config, overrides_jar=str(tmp_path / "none.jar")))


def test_the_jar_java_cannot_open_is_repaired_once_with_each_entry_named_by_its_class(tmp_path):
    if not CM_JAR.is_file():
        pytest.skip("needs the Community Modules jar")
    with zipfile.ZipFile(CM_JAR) as z:
        bad = [i.filename for i in _bad_names(z)]
        names = z.namelist()
    assert len(bad) == 1 and bad[0].startswith("org/jgrapht/alg/linkprediction/S")
    fixed = usable_jar(CM_JAR, str(tmp_path))
    with zipfile.ZipFile(fixed) as z:
        assert not _bad_names(z)
        got = z.namelist()
    assert set(got) ^ set(names) == {bad[0], "org/jgrapht/alg/linkprediction/S\u00f8rensenIndexLinkPrediction.class"}
    assert usable_jar(CM_JAR, str(tmp_path)) == fixed and fixed.stat().st_mtime_ns == fixed.stat().st_mtime_ns
    assert usable_jar(fixed, "") == fixed   # a jar Java opens is used as it is
    with pytest.raises(ToolError, match="needs a JVM cache folder"):
        usable_jar(CM_JAR, "")


def _model(folder: str, module: str, cfg: str) -> tuple[dict[str, str], str, int]:
    d = EXAMPLES / folder
    manifest = json.loads((d / "manifest.json").read_text())
    expected = next(m["distinctStates"] for mod in manifest["modules"] for m in mod["models"]
                    if m["path"].endswith(f"/{cfg}"))
    return {p.name: p.read_text() for p in d.glob("*.tla")}, (d / cfg).read_text(), expected


@pytest.mark.tlc
@pytest.mark.parametrize("folder,module,cfg", [("YoYo", "YoYoAllGraphs", "YoYoAllGraphs.cfg"),
                                                ("TLC", "TestGraphs", "TestGraphs.cfg")])
def test_examples_models_that_need_the_overrides_check_the_manifests_state_count(config, folder, module, cfg):
    """YoYoAllGraphs (UndirectedGraphs!IsStronglyConnected in Init) and TLC/TestGraphs
    (IOUtils!IOEnv): unconfined, without the overrides, TLC stops; confined, with them,
    the state counts of the Examples' manifest."""
    files, cfg_text, expected = _model(folder, module, cfg)
    r = run_tlc(files, module, cfg_text, dataclasses.replace(config, tlc_server=True))
    assert (r.kind, r.distinct_states) == ("success", expected), r.output[-2000:]
    without = run_tlc(files, module, cfg_text, dataclasses.replace(config, confine="off"))
    assert without.kind == "eval_error"
