"""Tests for alias.grade.stategraph: TLC's ``-dump dot`` state graphs, projection onto
data variables, equivalence of observable behaviors and control-label detection.

Tests marked ``tlc`` run TLC 2.15 (about 3 s per run); the others build graphs by hand.
"""
from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from alias.grade.stategraph import (DumpFailure, StateGraph, Witness, control_label_values,
                                    control_variables, dump_state_graph,
                                    equivalent_observable, normalize_value, parse_dot,
                                    parse_state_label, project)
from alias.tla.tools import ToolError, tlc_run_key

PETERSON = (Path(__file__).resolve().parents[1] / "alias" / "corpus" / "embedded"
            / "specifications" / "Peterson" / "Peterson.tla")
INIT_NEXT = "INIT Init\nNEXT Next\n"


# --------------------------------------------------------------------------- helpers


def graph(states: dict, edges: list[tuple], initial: list) -> StateGraph:
    """Hand-built graph: ``states`` id -> observation (a dict, or a value of ``v``)."""
    nodes = {str(k): (dict(v) if isinstance(v, dict) else {"v": str(v)})
             for k, v in states.items()}
    return StateGraph(nodes=nodes, edges=[(str(s), str(t)) for s, t in edges],
                      initial=[str(i) for i in initial])


def words(g: StateGraph, max_len: int) -> set[tuple]:
    """Oracle: every destuttered observation word of length <= max_len, by explicit
    enumeration of (word, set of nodes reachable with it)."""
    obs = {n: tuple(sorted(s.items())) for n, s in g.nodes.items()}
    succ = g.successors()

    def close(seeds):
        seen, stack = set(seeds), list(seeds)
        while stack:
            for t in succ[stack.pop()]:
                if obs[t] == obs[seeds[0]] and t not in seen:
                    seen.add(t)
                    stack.append(t)
        return seen

    out: set[tuple] = set()
    layer: dict[tuple, set] = {}
    for i in g.initial:
        layer.setdefault((obs[i],), set()).update(close([i]))
    while layer:
        out.update(layer)
        nxt: dict[tuple, set] = {}
        for w, front in layer.items():
            if len(w) >= max_len:
                continue
            for s in front:
                for t in succ[s]:
                    if obs[t] != w[-1]:
                        nxt.setdefault(w + (obs[t],), set()).update(close([t]))
        layer = nxt
    return out


def as_word(w: Witness) -> tuple:
    return tuple(tuple(sorted(o.items())) for o in w.sequence)


def check_witness(g1: StateGraph, g2: StateGraph, w: Witness) -> None:
    """The witness distinguishes the graphs and no shorter word does."""
    n = len(w.sequence)
    w1, w2 = words(g1, n), words(g2, n)
    word = as_word(w)
    assert (word in w1, word in w2) == ((True, False) if w.accepted_by == 1 else (False, True))
    assert not any(len(x) < n for x in w1 ^ w2), "a shorter distinguishing word exists"


# --------------------------------------------------------------------------- parse_dot

SAMPLE = r'''strict digraph DiskGraph {
edge [colorscheme="paired12"]
nodesep=0.35;
subgraph cluster_graph {
color="white";
-7251915822888511044 [label="/\\ r = [f |-> \"q\\\"uo\\\\te\", g |-> <<1, {2, 3}>>]\n/\\ s = \"a /\\\\ b = 1\"\n/\\ pc = \"a\"",style = filled]
5 [label="/\\ r = [ f |-> \"x\",\n  g |->\n      << {\"some\", \"set\"},\n         {1} >> ]\n/\\ s = <<>>\n/\\ pc = \"b\"",style = filled]
-7251915822888511044 -> 6 [label="Next",color="2",fontcolor="2"];
6 [label="/\\ r = 0\n/\\ s = (0 :> FALSE @@ 1 :> TRUE)\n/\\ pc = \"b\""];
6 -> 6 [label="",color="black",fontcolor="black"];
-7251915822888511044 -> 6 [label="Next",color="2",fontcolor="2"];
{rank = same; 5;-7251915822888511044;}
{rank = same; 6;}
}
}'''


def test_parse_dot_sample():
    g = parse_dot(SAMPLE)
    assert list(g.nodes) == ["-7251915822888511044", "5", "6"]
    assert g.initial == ["-7251915822888511044", "5"]
    assert g.edges == [("-7251915822888511044", "6"), ("6", "6")]  # repeat dropped
    assert g.nodes["-7251915822888511044"] == {
        "r": '[f |-> "q\\"uo\\\\te", g |-> <<1, {2, 3}>>]', "s": '"a /\\\\ b = 1"',
        "pc": '"a"'}
    # pretty-printed over several lines -> TLC's one-line form
    assert g.nodes["5"]["r"] == '[f |-> "x", g |-> <<{"some", "set"}, {1}>>]'
    assert g.nodes["6"] == {"r": "0", "s": "(0 :> FALSE @@ 1 :> TRUE)", "pc": '"b"'}
    assert g.variables == ("r", "s", "pc")
    assert g.successors()["6"] == ["6"]
    # a comment line leaves TLC's line format: the general DOT parser reads the same
    assert parse_dot("// not TLC's\n" + SAMPLE) == g


def test_parse_dot_general_syntax():
    text = '''/* comment */ digraph "G" {
      // another
      node [shape=box];
      "a" [style="rounded, filled"; label="x = 1"] ; b [label = "x = 2"]
      a -> b -> "a" [label=""]
      c [label="x = <<\\"s\\\\n\\", 3>>"]
    }'''
    g = parse_dot(text)
    assert g.initial == ["a"]
    assert g.edges == [("a", "b"), ("b", "a")]
    assert g.nodes["c"] == {"x": '<<"s\\n", 3>>'}


@pytest.mark.parametrize("bad", [
    "digraph G { 1 [label=\"x = 1\"]; 1 -> 2; }",          # 2 has no label
    "digraph G { 1 [label=\"x = 1\"];",                     # truncated
    "digraph G { 1 [label=\"nonsense\"] }",                 # not a state
    "digraph G { 1 [label=\"/\\\\ x = 1\\n/\\\\ x = 2\"] }",  # repeated variable
    "graph? {",
    "digraph G { 1 [label=<x = 1>] }",                      # HTML label
])
def test_parse_dot_errors(bad):
    with pytest.raises(ValueError):
        parse_dot(bad)


def test_parse_state_label():
    assert parse_state_label('x = <<1, 2>>') == {"x": "<<1, 2>>"}
    assert parse_state_label('/\\ a = "p /\\ q = \\"1\\""\n/\\ b = {}') == {
        "a": '"p /\\ q = \\"1\\""', "b": "{}"}
    # /\ inside brackets never splits
    assert parse_state_label('/\\ a = [k |-> 1 /\\ 2]\n/\\ b = 1') == {
        "a": "[k |-> 1 /\\ 2]", "b": "1"}
    assert parse_state_label("") == {}
    assert normalize_value('{ "a  b" ,\n 1 }') == '{"a  b", 1}'
    assert normalize_value('<< <<1>>, [ x |->\n  2 ] >>') == "<<<<1>>, [x |-> 2]>>"


# --------------------------------------------------------------------------- TLC

SMALL = r"""---- MODULE Small ----
EXTENDS Naturals, Sequences
VARIABLES x, pc, s
Init == x \in {0, 1} /\ pc = "a" /\ s = [f |-> "q\"t", g |-> <<>>]
Next == \/ pc = "a" /\ x < 2 /\ x' = x + 1 /\ pc' = "b" /\ UNCHANGED s
        \/ pc = "b" /\ pc' = "a" /\ s' = [s EXCEPT !.g = Append(@, x)] /\ x' = x
           /\ Len(s.g) < 2
        \/ UNCHANGED <<x, pc, s>>
====
"""


@pytest.mark.tlc
def test_dump_small_spec(tool_config):
    g = dump_state_graph({"Small.tla": SMALL}, "Small", INIT_NEXT, tool_config, ("-deadlock",))
    assert isinstance(g, StateGraph), g
    assert g.tlc is not None and g.tlc.kind == "success"
    assert g.tlc.run_key == tlc_run_key({"Small.tla": SMALL}, "Small", INIT_NEXT, tool_config, ("-deadlock",),
                                        dump_dot=True)
    assert len(g.nodes) == g.tlc.distinct_states == 8
    assert sorted(g.nodes[i]["x"] for i in g.initial) == ["0", "1"]
    assert {s["pc"] for s in g.nodes.values()} == {'"a"', '"b"'}
    assert {g.nodes[n]["s"] for n in g.nodes} >= {'[f |-> "q\\"t", g |-> <<>>]',
                                                  '[f |-> "q\\"t", g |-> <<1, 2>>]'}
    assert all((n, n) in g.edges for n in g.nodes)  # the UNCHANGED self-loops
    non_loops = [(s, t) for s, t in g.edges if s != t]
    assert len(non_loops) == 6
    by = {n: (s["x"], s["pc"], s["s"]) for n, s in g.nodes.items()}
    assert (by[non_loops[0][0]][1], by[non_loops[0][1]][1]) == ('"a"', '"b"')


@pytest.mark.tlc
def test_dump_failures(tool_config):
    r = dump_state_graph({"Small.tla": SMALL.replace(r"\/ UNCHANGED <<x, pc, s>>", "")},
                         "Small", INIT_NEXT, tool_config)
    assert isinstance(r, DumpFailure) and r.kind == "deadlock" and r.tlc.kind == "deadlock"
    with pytest.raises(ToolError):
        dump_state_graph({"Small.tla": SMALL}, "Small", INIT_NEXT, tool_config, ("-dump",))
    with pytest.raises(ToolError):
        dump_state_graph({"Small.tla": SMALL}, "Small", INIT_NEXT, tool_config, ("-simulate",))
    big = dump_state_graph({"Small.tla": SMALL}, "Small", INIT_NEXT, tool_config, ("-deadlock",), max_dot_bytes=50)
    assert isinstance(big, DumpFailure) and big.kind == "too_large" and big.tlc.kind == "success"
    assert "more than 50" in big.message


LABELS = {"Lbl_1": "start", "enter": "raise", "yield": "give", "wait": "spin", "cs": "crit",
          "leave": "exit"}


def peterson_variant(kind: str) -> str:
    text = PETERSON.read_text()
    if kind == "renamed":  # every label renamed, in the translation and the invariants
        for old, new in LABELS.items():
            text = text.replace(f'"{old}"', f'"{new}"')
    elif kind == "stutter":  # an extra pc-only step between cs and leave
        text = text.replace('''            /\\ pc' = [pc EXCEPT ![self] = "leave"]''',
                            '''            /\\ pc' = [pc EXCEPT ![self] = "pause"]''')
        text = text.replace("leave(self) ==", '''pause(self) == /\\ pc[self] = "pause"
               /\\ pc' = [pc EXCEPT ![self] = "leave"]
               /\\ UNCHANGED << flag, turn >>

leave(self) ==''')
        text = text.replace("\\/ cs(self) \\/ leave(self)", "\\/ cs(self) \\/ pause(self) \\/ leave(self)")
    elif kind == "extra_value":  # yield may also set turn to 2
        text = text.replace("/\\ turn' = Other(self)", "/\\ turn' \\in {Other(self), 2}")
    elif kind == "missing_step":  # nobody leaves the critical section
        text = text.replace("\\/ cs(self) \\/ leave(self)", "\\/ cs(self)")
    assert kind == "original" or text != PETERSON.read_text()
    return text


@pytest.fixture(scope="module")
def peterson(tool_config):
    cache: dict[str, StateGraph] = {}

    def get(kind: str) -> StateGraph:
        if kind not in cache:
            g = dump_state_graph({"Peterson.tla": peterson_variant(kind)}, "Peterson",
                                 INIT_NEXT, tool_config, ("-deadlock",))
            assert isinstance(g, StateGraph), g
            cache[kind] = g
        return cache[kind]
    return get


DATA = ["flag", "turn"]


@pytest.mark.tlc
def test_peterson_renamed_labels_equivalent(peterson):
    orig, ren = peterson("original"), peterson("renamed")
    assert len(orig.nodes) == len(ren.nodes) == 42
    assert {s["pc"] for s in ren.nodes.values()} != {s["pc"] for s in orig.nodes.values()}
    assert equivalent_observable(project(orig, DATA), project(ren, DATA)) == (True, None)
    # with pc kept the graphs differ, and the witness is the initial state
    ok, w = equivalent_observable(orig, ren)
    assert not ok and len(w.sequence) == 1 and w.accepted_by == 1
    # projecting the output under a variable map (the reference's names -> the output's)
    out = project(ren, ["flag", "turn"], rename={"flag": "want", "turn": "tie"})
    assert out.variables == ("want", "tie")
    back = project(out, ["want", "tie"], rename={"want": "flag", "tie": "turn"})
    assert equivalent_observable(project(orig, DATA), back)[0]


@pytest.mark.tlc
def test_peterson_extra_pc_step_equivalent(peterson):
    orig, stut = peterson("original"), peterson("stutter")
    assert len(stut.nodes) > len(orig.nodes)
    assert equivalent_observable(project(orig, DATA), project(stut, DATA)) == (True, None)
    assert equivalent_observable(project(stut, DATA), project(orig, DATA)) == (True, None)


@pytest.mark.tlc
def test_peterson_extra_value_not_equivalent(peterson):
    g1, g2 = project(peterson("original"), DATA), project(peterson("extra_value"), DATA)
    ok, w = equivalent_observable(g1, g2)
    assert not ok and w.accepted_by == 2
    # init, one flag raised, then turn = 2
    assert len(w.sequence) == 3 and w.sequence[-1]["turn"] == "2"
    assert w.sequence[0] == {"flag": "(0 :> FALSE @@ 1 :> FALSE)", "turn": "0"}
    check_witness(g1, g2, w)
    ok, w2 = equivalent_observable(g2, g1)
    assert not ok and w2.accepted_by == 1 and len(w2.sequence) == 3


@pytest.mark.tlc
def test_peterson_missing_step_not_equivalent(peterson):
    g1, g2 = project(peterson("original"), DATA), project(peterson("missing_step"), DATA)
    ok, w = equivalent_observable(g1, g2)
    assert not ok and w.accepted_by == 1
    # process 1 raises its flag, gives the turn to 0 (turn stays 0), enters and leaves
    assert [o["flag"] for o in w.sequence] == ["(0 :> FALSE @@ 1 :> FALSE)",
                                               "(0 :> FALSE @@ 1 :> TRUE)",
                                               "(0 :> FALSE @@ 1 :> FALSE)"]
    check_witness(g1, g2, w)
    assert "only graph 1" in str(w)


# --------------------------------------------------------------------------- equivalence


def test_nondeterminism_needs_subset_construction():
    # g1 decides early between two B states, g2 late: not bisimilar, same traces
    g1 = graph({0: "A", 1: "B", 2: "B", 3: "C", 4: "D"}, [(0, 1), (0, 2), (1, 3), (2, 4)], [0])
    g2 = graph({0: "A", 1: "B", 3: "C", 4: "D"}, [(0, 1), (1, 3), (1, 4)], [0])
    assert equivalent_observable(g1, g2) == (True, None)
    assert equivalent_observable(g2, g1) == (True, None)
    # with D gone from g2 the difference shows only after B
    g3 = graph({0: "A", 1: "B", 3: "C"}, [(0, 1), (1, 3)], [0])
    ok, w = equivalent_observable(g1, g3)
    assert not ok and w.accepted_by == 1
    assert [o["v"] for o in w.sequence] == ["A", "B", "D"]
    check_witness(g1, g3, w)


def test_hidden_steps_and_cycles():
    # A -(hidden)-> A' -> B, with a hidden cycle on A; vs. A -> B
    g1 = graph({0: "A", 1: "A", 2: "A", 3: "B"}, [(0, 1), (1, 2), (2, 0), (2, 3), (3, 3)], [0])
    g2 = graph({0: "A", 3: "B"}, [(0, 3)], [0])
    assert equivalent_observable(g1, g2)[0]
    # B -> A -> B ... only in g1 (the letters repeat but states differ)
    g1b = graph({0: "A", 1: "B", 2: "A"}, [(0, 1), (1, 2)], [0])
    ok, w = equivalent_observable(g1b, g2)
    assert not ok and [o["v"] for o in w.sequence] == ["A", "B", "A"]


def test_witness_is_shortest():
    # two differences: after A B (short) and after A C D (long, under a later letter)
    g1 = graph({0: "A", 1: "B", 2: "X", 3: "C", 4: "D", 5: "Y"},
               [(0, 1), (1, 2), (0, 3), (3, 4), (4, 5)], [0])
    g2 = graph({0: "A", 1: "B", 3: "C", 4: "D"}, [(0, 1), (0, 3), (3, 4)], [0])
    ok, w = equivalent_observable(g1, g2)
    assert not ok and [o["v"] for o in w.sequence] == ["A", "B", "X"]
    check_witness(g1, g2, w)
    g2.edges.append(("1", "2"))
    g2.nodes["2"] = {"v": "X"}
    ok, w = equivalent_observable(g1, g2)
    assert not ok and [o["v"] for o in w.sequence] == ["A", "C", "D", "Y"]


def test_initial_states_and_empty():
    g1 = graph({0: "A", 1: "B"}, [], [0, 1])
    g2 = graph({0: "A", 1: "B"}, [(0, 1)], [0])
    ok, w = equivalent_observable(g1, g2)
    assert not ok and w.accepted_by == 1 and [o["v"] for o in w.sequence] == ["B"]
    empty = StateGraph()
    assert equivalent_observable(empty, StateGraph()) == (True, None)
    ok, w = equivalent_observable(empty, g2)
    assert not ok and w.accepted_by == 2 and len(w.sequence) == 1


def test_different_variables_rejected():
    g1 = graph({0: {"a": "1"}}, [], [0])
    g2 = graph({0: {"b": "1"}}, [], [0])
    with pytest.raises(ValueError, match="different variables"):
        equivalent_observable(g1, g2)
    assert equivalent_observable(project(g2, ["b"], rename={"b": "a"}), g1)[0]


def test_project():
    g = graph({0: {"x": "1", "pc": '"a"', "y": "2"}, 1: {"x": "1", "pc": '"b"', "y": "3"}},
              [(0, 1)], [0])
    p = project(g, ["y", "x"], rename={"x": "u", "zz": "ignored"})
    assert p.nodes == {"0": {"y": "2", "u": "1"}, "1": {"y": "3", "u": "1"}}
    assert p.edges == g.edges and p.initial == g.initial
    with pytest.raises(ValueError, match="no variable"):
        project(g, ["x", "missing"])
    with pytest.raises(ValueError, match="collide"):
        project(g, ["x", "y"], rename={"x": "y"})


def random_graph(rng: random.Random, n: int, letters: str) -> StateGraph:
    states = {i: rng.choice(letters) for i in range(n)}
    edges = [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(0, 2 * n))]
    initial = rng.sample(range(n), rng.randint(1, min(2, n)))
    return graph(states, edges, initial)


def test_random_graphs_against_enumeration():
    rng = random.Random(7)
    seen = {True: 0, False: 0}
    for _ in range(400):
        g1 = random_graph(rng, rng.randint(1, 5), "AB")
        g2 = random_graph(rng, rng.randint(1, 5), "AB")
        if rng.random() < 0.3:  # a copy with extra hidden steps: often equivalent
            g2 = graph({**{k: v["v"] for k, v in g1.nodes.items()},
                        **{f"h{k}": v["v"] for k, v in g1.nodes.items()}},
                       [(f"h{s}", t) for s, t in g1.edges]
                       + [(k, f"h{k}") for k in g1.nodes], g1.initial)
        ok, w = equivalent_observable(g1, g2)
        seen[ok] += 1
        if ok:
            assert words(g1, 7) == words(g2, 7)
        else:
            check_witness(g1, g2, w)
    assert seen[True] > 50 and seen[False] > 50


def big_graph(n: int, labels: int, mutate: bool = False) -> StateGraph:
    """Data d in 0..n-1, ``labels`` control values per d: (d,0) -> (d,1) -> ... are
    hidden steps; from the last label d moves to d+1 or to 7d+3 (mod n)."""
    nodes, edges = {}, []
    for d in range(n):
        for k in range(labels):
            nodes[f"{d}.{k}"] = {"d": str(d), "pc": f'"L{k}"'}
            if k + 1 < labels:
                edges.append((f"{d}.{k}", f"{d}.{k + 1}"))
        last = f"{d}.{labels - 1}"
        edges.append((last, f"{(d + 1) % n}.0"))
        target = (7 * d + 3) % n
        if mutate and d == n // 2:
            target = (target + 1) % n
        edges.append((last, f"{target}.0"))
    return StateGraph(nodes=nodes, edges=edges, initial=["0.0"])


def test_20k_states_benchmark():
    g1 = project(big_graph(10_000, 2), ["d"])               # 20,000 states
    g2 = project(big_graph(10_000, 3), ["d"])               # 30,000 states
    t0 = time.perf_counter()
    assert equivalent_observable(g1, g2) == (True, None)
    elapsed = time.perf_counter() - t0
    assert elapsed < 10, elapsed
    ok, w = equivalent_observable(g1, project(big_graph(10_000, 3, mutate=True), ["d"]))
    assert not ok
    mid = 10_000 // 2
    assert w.sequence[-2]["d"] == str(mid)
    assert w.sequence[-1]["d"] in {str((7 * mid + 3) % 10_000), str((7 * mid + 4) % 10_000)}


# --------------------------------------------------------------------------- labels

UNIPROCESS = r"""---- MODULE Uni ----
EXTENDS Naturals, Sequences
(* --algorithm Uni
variables x = 0;
begin
  a: x := 1;   \* pc = "Comment"
  b: call P();
end algorithm *)
\* BEGIN TRANSLATION
VARIABLES x, light, mode, pc, stack, count

Init == /\ x = 0 /\ light = "red" /\ mode = "m1" /\ count = 0
        /\ stack = << >>
        /\ pc = "a"

a == /\ pc = "a"
     /\ x' = 1
     /\ pc' = "b"
     /\ light' = IF x > 0 THEN "green" ELSE "red"
     /\ mode' = 2
     /\ UNCHANGED << stack, count >>

b == /\ pc = "b"
     /\ stack' = << [ procedure |->  "P",
                      pc        |->  "Done" ] >>
                  \o stack
     /\ pc' = "P1"
     /\ count' = count + 1
     /\ light' = light
     /\ UNCHANGED << x, mode >>

P1 == /\ pc = "P1"
      /\ pc' = Head(stack).pc
      /\ stack' = Tail(stack)
      /\ light' = CASE x = 1 -> "yellow" [] OTHER -> "red"
      /\ UNCHANGED << x, mode, count >>

Terminating == pc = "Done" /\ UNCHANGED << x, light, mode, pc, stack, count >>
TypeOK == pc \in {"a", "b", "P1", "Done"} /\ "red" # light
====
pc = "AfterEnd"
"""

MULTI = r"""---- MODULE Multi ----
VARIABLES pc, q
ProcSet == {"p1"} \cup {1, 2}
Init == /\ q = 0
        /\ pc = [self \in ProcSet |-> CASE self = "p1" -> "Lbl_1"
                                        [] self \in {1, 2} -> "w0"]
s1 == /\ pc["p1"] = "Lbl_1"
      /\ pc' = [pc EXCEPT !["p1"] = "Done"]
      /\ q' = q
w0(self) == /\ pc[self] # "Done" /\ pc[self] = "w0"
            /\ pc' = [pc EXCEPT ![self] = "w1", !["p1"] = "Lbl_1"]
            /\ q' = [k \in {1} |-> "not a label of pc"]
Next == s1 \/ \E self \in {1, 2}: w0(self)
Inv == pc[2] = "w9" => "w8" = pc[1]
TypeOK == pc \in [ProcSet -> {"Lbl_1", "w0", "w1", "Unused"}]
====
"""


def test_control_label_values_peterson():
    text = PETERSON.read_text()
    assert control_label_values(text) == ["Lbl_1", "enter", "yield", "wait", "cs", "leave"]
    assert control_variables(text) == ["pc"]
    assert control_label_values(text, "turn") == []


def test_control_label_values_translations():
    assert control_label_values(UNIPROCESS) == ["a", "b", "Done", "P1"]
    assert control_label_values(UNIPROCESS, "light") == ["red", "green", "yellow"]
    assert control_label_values(MULTI) == ["Lbl_1", "w0", "Done", "w1", "w9", "w8"]
    assert control_label_values(MULTI, "q") == ["not a label of pc"]


LEXED = r"""---- MODULE Lexed ----
VARIABLES pc, x
(* --algorithm Lexed {  \* PlusCal with a syntax error: pc := "Leak"; x := ; } *)
(*****************************************************
   a comment with a line of only '=':
=======================================================
 *****************************************************)
Init == pc = "a\*b" /\ x = 0     \* pc = "Commented"
Next == /\ pc = "a\*b" /\ pc' = CASE x = 0 -> "c"[]OTHER -> "d"
        /\ x' = x
Spec == Init /\ [][Next]_pc
====
pc = "AfterEnd"
"""


def test_control_labels_through_the_lexer():
    # comments, strings and the module end come from alias.tla.lexer: a broken PlusCal
    # algorithm stays a comment, "\*" in a string is no comment, CASE arms may be glued
    # to [], a subscript ]_pc is no comparison, nothing after the closing ==== is read
    assert control_label_values(LEXED) == ["a\\*b", "c", "d"]
    assert control_variables(LEXED) == ["pc"]
    assert control_label_values(LEXED.replace("Spec ==", "====\nSpec ==")) == ["a\\*b", "c", "d"]
    assert control_label_values(LEXED.replace("Init ==", "====\nInit ==")) == []


def test_control_variables():
    # light: only strings (IF, CASE, copies); mode: "m1" and 2; x, count: numbers;
    # stack: records; pc: PlusCal's, although it is also set to Head(stack).pc
    assert control_variables(UNIPROCESS) == ["light", "pc"]
    assert control_variables(MULTI) == ["pc"]
    plain = """---- MODULE Light ----
VARIABLE color, n
Init == color \\in {"red", "green"} /\\ n = 0
Next == \\/ color = "red" /\\ color' = "green" /\\ n' = n
        \\/ color = "green" /\\ color' = "red" /\\ n' = n + 1
===="""
    assert control_variables(plain) == ["color"]
    assert control_label_values(plain, "color") == ["red", "green"]
    assert control_variables(plain.replace('color\' = "red"', "color' = n")) == []
