"""alias.grade.relabel: is one state graph another's up to a re-encoding of its values?
(issue 33, point 3 (c): hard negatives that only re-encode the reference are not kept)."""

from __future__ import annotations

import pytest

from alias.grade.relabel import DIFFERENT, IDENTICAL, RELABELED, UNDECIDED, relabeling
from alias.grade.stategraph import StateGraph


def graph(states: list[dict[str, str]], edges: list[tuple[int, int]], initial=(0,)) -> StateGraph:
    return StateGraph(nodes={str(i): s for i, s in enumerate(states)}, edges=[(str(a), str(b)) for a, b in edges],
                      initial=[str(i) for i in initial])


#: A three-phase cycle with a counter: phase "idle" -> "busy" -> "done" -> "idle", k counts laps mod 2.
PHASES = ['"idle"', '"busy"', '"done"']
REF = graph([{"ph": p, "k": str(k)} for k in (0, 1) for p in PHASES],
            [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0)])


def test_the_same_graph_is_identical_whatever_its_node_ids():
    other = StateGraph(nodes={f"n{i}": dict(s) for i, s in reversed(list(REF.nodes.items()))},
                       edges=[(f"n{a}", f"n{b}") for a, b in REF.edges], initial=["n0"])
    r = relabeling(REF, other)
    assert (r.kind, r.moved, r.tried) == (IDENTICAL, {}, 6)  # one try per state: no backtracking


def test_a_value_written_under_another_name_is_a_relabeling():
    """VoucherCancel's hard negatives: "cancelled" written where the reference writes "prepared"."""
    other = graph([{"ph": p.replace("busy", "cancelled"), "k": s["k"]} for s in REF.nodes.values() for p in [s["ph"]]],
                  [(int(a), int(b)) for a, b in REF.edges])
    r = relabeling(REF, other)
    assert (r.kind, r.moved) == (RELABELED, {"ph": {'"cancelled"': '"busy"'}})
    assert r.reason == 'equal up to ph via {"cancelled"->"busy"}'


def test_an_inert_component_is_dropped():
    """Peterson's ProcSet == 1..3 with Next over 1..2: a third component that never moves."""
    ref = graph([{"pc": f'<<"{a}", "{b}">>'} for a, b in ("aa", "ba", "bb")], [(0, 1), (1, 2), (2, 0)])
    other = graph([{"pc": f'<<"{a}", "{b}", "a">>'} for a, b in ("aa", "ba", "bb")], [(0, 1), (1, 2), (2, 0)])
    r = relabeling(ref, other)
    assert (r.kind, r.moved, r.reason) == (RELABELED, {}, "equal up to components constant in every state")


def test_other_steps_over_the_same_states_differ():
    """A swapped guard: the same six states, the cycle run the other way for one phase."""
    other = graph([dict(s) for s in REF.nodes.values()], [(0, 1), (1, 2), (2, 3), (3, 5), (5, 4), (4, 0)])
    r = relabeling(REF, other)
    assert r.kind == DIFFERENT and "bijection" in r.reason


def test_a_relabeling_must_keep_the_steps_and_the_initial_states():
    """Equal labels up to renaming k's values, but another initial state: different."""
    flipped = graph([{"ph": s["ph"], "k": str(1 - int(s["k"]))} for s in REF.nodes.values()],
                    [(int(a), int(b)) for a, b in REF.edges])
    # k via {1->0, 0->1} would give the same cycle, but a number read as another number is
    # other arithmetic, not a re-encoding (the grade's grammar leaves it out)
    assert relabeling(REF, flipped).kind == DIFFERENT
    laps = graph([{"ph": s["ph"], "k": '"odd"' if s["k"] == "1" else '"even"'} for s in REF.nodes.values()],
                 [(int(a), int(b)) for a, b in REF.edges])
    assert relabeling(REF, laps).kind == RELABELED  # numbers as strings: a re-encoding the grade accepts
    moved_start = graph([dict(s) for s in REF.nodes.values()], [(int(a), int(b)) for a, b in REF.edges], initial=(1,))
    assert relabeling(REF, moved_start).kind == DIFFERENT


def test_counts_and_shapes_are_compared_first():
    assert relabeling(REF, graph(list(REF.nodes.values())[:5], [(0, 1)])).reason.startswith("5 states")
    other = graph([{"ph": s["ph"], "k": f"<<{s['k']}>>"} for s in REF.nodes.values()],
                  [(int(a), int(b)) for a, b in REF.edges])
    assert relabeling(REF, other).kind == RELABELED  # k wrapped in a one-tuple: the same atoms, a re-encoding
    seqs = graph([{"ph": s["ph"], "k": "<<>>" if s["k"] == "0" else "<<1>>"} for s in REF.nodes.values()],
                 [(int(a), int(b)) for a, b in REF.edges])
    r = relabeling(REF, seqs)
    assert r.kind == DIFFERENT and r.reason.startswith("varying variables differ"), r


def test_the_search_stops_at_its_cap():
    """A ring of eight states against two rings of four (every state initial, one value
    each): no map exists; the search says so, or that it gave up after ``cap`` tries (a
    hard negative is then not kept)."""
    ring = graph([{"v": str(i)} for i in range(8)], [(i, (i + 1) % 8) for i in range(8)], initial=range(8))
    two = graph([{"v": str(i)} for i in range(8)], [(i, (i + 1) % 4 + 4 * (i // 4)) for i in range(8)],
                initial=range(8))
    full = relabeling(ring, two)
    assert full.kind == DIFFERENT and full.tried > 3
    assert (relabeling(ring, two, cap=3).kind, relabeling(ring, two, cap=3).tried) == (UNDECIDED, 3)
    one = graph([{"v": f'"s{i}"'} for i in range(8)], [(i, (i + 1) % 8) for i in range(8)])
    rotated = graph([{"v": f'"s{(i + 3) % 8}"'} for i in range(8)], [(i, (i + 1) % 8) for i in range(8)])
    assert relabeling(ring, ring).kind == relabeling(one, one).kind == IDENTICAL
    r = relabeling(one, rotated)
    assert r.kind == RELABELED and len(r.moved["v"]) == 8  # a ring of strings started elsewhere
    numbers = graph([{"v": str(i)} for i in range(8)], [(i, (i + 1) % 8) for i in range(8)])
    assert relabeling(numbers, graph([{"v": str((i + 3) % 8)} for i in range(8)],
                                     [(i, (i + 1) % 8) for i in range(8)])).kind == DIFFERENT
    with pytest.raises(ValueError, match="cap must be >= 1"):
        relabeling(ring, two, cap=0)


def test_a_long_cycle_is_relabeled_without_search():
    """A ring of 5000 named states started one further (one initial state): every image is
    forced by the one before, so the map is found in one try per state."""
    n = 5000
    ref = graph([{"at": f'"p{i}"'} for i in range(n)], [(i, (i + 1) % n) for i in range(n)])
    other = graph([{"at": f'"p{(i + 1) % n}"'} for i in range(n)], [(i, (i + 1) % n) for i in range(n)])
    r = relabeling(ref, other)
    assert (r.kind, r.tried) == (RELABELED, n)
