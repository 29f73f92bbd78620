"""ALIAS's Java overrides of Graphs!AreConnectedIn and UndirectedGraphs!ConnectedComponents
(alias/tla/java/GraphOverrides.java, ``tla.graph_overrides``): on every graph over three
nodes they equal the modules' own definitions with Seq(S) bounded by |S| (a path between two
nodes has a simple one no longer), in a TLC process and in the TLC server; without them TLC
cannot evaluate the definitions; the run key says whether they were loaded; and the TLA+
Examples model that needs them checks the manifest's state count."""
from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from alias.tla import tool_server
from alias.tla.tools import ToolConfig, ToolError, graph_overrides, run_tlc, tlc_run_key
from conftest import RECORD_JAR

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "corpus"
COMMUNITY = SHARED / "deps" / "community-modules"
YOYO = SHARED / "tlaplus-examples" / "specifications" / "YoYo"

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

NOT_A_GRAPH = """---- MODULE NotAGraph ----
EXTENDS Naturals, Graphs
ASSUME AreConnectedIn(1, 2, [nodes |-> {1, 2}, edge |-> {}])
====
"""

# an edge TLC could not compare with <<a, b>> (Graphs) or {a, b} (UndirectedGraphs): an error, not "no edge"
BAD_EDGES = {
    "Graphs": ("AreConnectedIn(1, 2, [node |-> {1, 2}, edge |-> {{1, 2}}])",
               "AreConnectedIn: G.edge holds {1, 2}, which is not a tuple (TLC cannot compare it with <<a, b>>)"),
    "UndirectedGraphs": ("IsStronglyConnected([node |-> {1, 2}, edge |-> {<<1, 2>>}])",
                         "ConnectedComponents: G.edge holds <<1, 2>>, which is not a finite set "
                         "(TLC cannot compare it with {a, b})"),
}


@pytest.fixture(scope="module")
def config(tmp_path_factory) -> ToolConfig:
    if not RECORD_JAR.is_file() or not COMMUNITY.is_dir():
        pytest.skip("needs TLA+ tools v1.8.0 and the Community Modules")
    if shutil.which("javac") is None:
        pytest.skip("needs a JDK (javac)")
    return ToolConfig(jar=RECORD_JAR, library=(str(COMMUNITY),), timeout_s=300, memory_mb=512,
                      jvm_cache=str(tmp_path_factory.mktemp("jvm")), graph_overrides=True)


@pytest.mark.tlc
@pytest.mark.parametrize("server", [False, True], ids=["process", "server"])
def test_the_overrides_equal_the_definitions_on_every_graph_over_three_nodes(config, server):
    cfg = dataclasses.replace(config, tlc_server=server)
    r = run_tlc({"GraphOracle.tla": ORACLE}, "GraphOracle", "", cfg)
    assert (r.kind, r.exit_code) == ("success", 0), r.output[-2000:]
    without = run_tlc({"GraphOracle.tla": ORACLE}, "GraphOracle", "", dataclasses.replace(cfg, graph_overrides=False))
    assert without.kind == "eval_error"  # the definitions quantify over Seq(S)


@pytest.mark.tlc
def test_a_value_that_is_not_a_graph_is_an_eval_error_naming_the_operator(config):
    r = run_tlc({"NotAGraph.tla": NOT_A_GRAPH}, "NotAGraph", "", config)
    assert r.kind == "eval_error"
    assert "AreConnectedIn: the graph [nodes |-> {1, 2}, edge |-> {}] is not a record with a field node" in r.output


@pytest.mark.tlc
@pytest.mark.parametrize("module", sorted(BAD_EDGES))
def test_an_edge_of_the_wrong_shape_is_an_eval_error(config, module):
    expr, message = BAD_EDGES[module]
    spec = f"---- MODULE BadEdge ----\nEXTENDS Naturals, {module}\nASSUME {expr}\n====\n"
    r = run_tlc({"BadEdge.tla": spec}, "BadEdge", "", config)
    assert r.kind == "eval_error" and message in r.output


@pytest.mark.tlc
def test_the_run_key_names_the_overrides_and_their_source(config, monkeypatch):
    files, cfg = {"GraphOracle.tla": ORACLE}, ""
    assert graph_overrides(config) is not None
    assert graph_overrides(dataclasses.replace(config, graph_overrides=False)) is None
    on = tlc_run_key(files, "GraphOracle", cfg, config)
    off = tlc_run_key(files, "GraphOracle", cfg, dataclasses.replace(config, graph_overrides=False))
    assert on != off
    monkeypatch.setattr(tool_server, "OVERRIDES_DIGEST", tool_server.OVERRIDES_DIGEST + "x")
    assert tlc_run_key(files, "GraphOracle", cfg, config) not in (on, off)   # another override source


def test_overrides_asked_for_but_not_buildable_are_one_error_not_other_verdicts(config, monkeypatch):
    """Without a JVM cache folder (or javac) the overrides cannot be built: a ToolError
    that names the setting, rather than TLC runs whose verdicts depend on the machine."""
    with pytest.raises(ToolError, match="set tla.graph_overrides: false"):
        run_tlc({"GraphOracle.tla": ORACLE}, "GraphOracle", "", dataclasses.replace(config, jvm_cache=""))
    monkeypatch.setattr(tool_server, "override_classes", lambda *a: None)
    with pytest.raises(ToolError, match="needs? a JDK with javac"):
        graph_overrides(config)


@pytest.mark.tlc
def test_yoyo_all_graphs_checks_the_manifests_state_count(config):
    """YoYo/YoYoAllGraphs (UndirectedGraphs!IsStronglyConnected in Init): without the
    overrides TLC stops at Init ("non-enumerable quantifier bound"); with them, the state
    count of the Examples' manifest."""
    manifest = json.loads((YOYO / "manifest.json").read_text())
    expected = next(m["distinctStates"] for mod in manifest["modules"] for m in mod["models"]
                    if m["path"].endswith("YoYoAllGraphs.cfg"))
    files = {"YoYoAllGraphs.tla": (YOYO / "YoYoAllGraphs.tla").read_text()}
    cfg = (YOYO / "YoYoAllGraphs.cfg").read_text()
    r = run_tlc(files, "YoYoAllGraphs", cfg, dataclasses.replace(config, tlc_server=True))
    assert (r.kind, r.distinct_states) == ("success", expected) == ("success", 26731)
    without = run_tlc(files, "YoYoAllGraphs", cfg, dataclasses.replace(config, graph_overrides=False))
    assert without.kind == "eval_error" and "non-enumerable quantifier bound" in without.output
