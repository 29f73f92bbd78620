// ALIAS: Java overrides of two Community Modules operators whose TLA+ definitions TLC cannot
// evaluate, since they quantify over Seq(S): Graphs!AreConnectedIn and
// UndirectedGraphs!ConnectedComponents (YoYo/YoYoAllGraphs and ewd687a/MCEWD687a of the TLA+
// Examples use them; the Examples' CI runs them with the Community Modules jar, whose other
// overrides, IOUtils among them, can run commands, so ALIAS never loads that jar).
//
// Written for ALIAS from the modules' TLA+ definitions: pure computations on finite graphs,
// no I/O. A path there is a non-empty sequence of nodes of G.node whose consecutive nodes
// are joined by an edge (<<a, b>> in Graphs, {a, b} in UndirectedGraphs), so a node is
// connected to itself and an edge with an end outside G.node joins nothing; so does a tuple
// of another length (Graphs) or a set of another size (UndirectedGraphs). An element of
// G.edge that is not a tuple (Graphs) or not a finite set (UndirectedGraphs) is an error,
// as TLC's comparison of it with <<a, b>> or {a, b} would be; so is a G that is not a record
// with fields node and edge, or a field that is not a finite set. TLC (v1.8.0+) loads this index class when the system property
// tlc2.overrides.TLCOverrides names it (alias/tla/tools.py sets it: tla.graph_overrides).
package aliastools;

import java.util.ArrayDeque;
import tlc2.output.EC;
import tlc2.overrides.ITLCOverrides;
import tlc2.overrides.TLAPlusOperator;
import tlc2.tool.EvalException;
import tlc2.value.impl.BoolValue;
import tlc2.value.impl.RecordValue;
import tlc2.value.impl.SetEnumValue;
import tlc2.value.impl.StringValue;
import tlc2.value.impl.TupleValue;
import tlc2.value.impl.Value;
import tlc2.value.impl.ValueVec;

public final class GraphOverrides implements ITLCOverrides {
  @SuppressWarnings("rawtypes")
  @Override
  public Class[] get() {
    return new Class[] {GraphOverrides.class};
  }

  /** Graphs!AreConnectedIn(m, n, G): a path of G from m to n. */
  @TLAPlusOperator(identifier = "AreConnectedIn", module = "Graphs", warn = false)
  public static Value areConnectedIn(final Value m, final Value n, final Value g) {
    final Value[] nodes = finiteSet(field(g, "node", "AreConnectedIn"), "AreConnectedIn", "G.node");
    final boolean[][] adj = new boolean[nodes.length][nodes.length];
    for (Value e : finiteSet(field(g, "edge", "AreConnectedIn"), "AreConnectedIn", "G.edge")) {
      final Value t = e.toTuple();
      if (!(t instanceof TupleValue)) {
        throw shape("AreConnectedIn", e, "a tuple", "<<a, b>>");
      }
      if (((TupleValue) t).size() == 2) {
        final int a = indexOf(nodes, ((TupleValue) t).elems[0]);
        final int b = indexOf(nodes, ((TupleValue) t).elems[1]);
        if (a >= 0 && b >= 0) {
          adj[a][b] = true;
        }
      }
    }
    final int from = indexOf(nodes, m);
    final int to = indexOf(nodes, n);
    return from >= 0 && to >= 0 && reachable(adj, from)[to] ? BoolValue.ValTrue : BoolValue.ValFalse;
  }

  /** UndirectedGraphs!ConnectedComponents(G): the maximal non-empty sets of nodes of G that
   *  paths within the set connect. */
  @TLAPlusOperator(identifier = "ConnectedComponents", module = "UndirectedGraphs", warn = false)
  public static Value connectedComponents(final Value g) {
    final String op = "ConnectedComponents";
    final Value[] nodes = finiteSet(field(g, "node", op), op, "G.node");
    final boolean[][] adj = new boolean[nodes.length][nodes.length];
    for (Value e : finiteSet(field(g, "edge", op), op, "G.edge")) {
      final Value s = e.toSetEnum();
      if (s == null) {
        throw shape(op, e, "a finite set", "{a, b}");
      }
      final ValueVec ends = ((SetEnumValue) s.normalize()).elems;
      if (ends.size() == 2) {
        final int a = indexOf(nodes, ends.elementAt(0));
        final int b = indexOf(nodes, ends.elementAt(1));
        if (a >= 0 && b >= 0) {
          adj[a][b] = adj[b][a] = true;
        }
      }
    }
    final boolean[] placed = new boolean[nodes.length];
    final ValueVec components = new ValueVec();
    for (int i = 0; i < nodes.length; i++) {
      if (!placed[i]) {
        final boolean[] reach = reachable(adj, i);
        final ValueVec members = new ValueVec();
        for (int j = 0; j < nodes.length; j++) {
          if (reach[j]) {
            placed[j] = true;
            members.addElement(nodes[j]);
          }
        }
        components.addElement(new SetEnumValue(members, false).normalize());
      }
    }
    return new SetEnumValue(components, false).normalize();
  }

  private static boolean[] reachable(final boolean[][] adj, final int from) {
    final boolean[] seen = new boolean[adj.length];
    final ArrayDeque<Integer> todo = new ArrayDeque<>();
    seen[from] = true;
    todo.add(from);
    while (!todo.isEmpty()) {
      final int a = todo.poll();
      for (int b = 0; b < adj.length; b++) {
        if (adj[a][b] && !seen[b]) {
          seen[b] = true;
          todo.add(b);
        }
      }
    }
    return seen;
  }

  private static int indexOf(final Value[] nodes, final Value v) {
    for (int i = 0; i < nodes.length; i++) {
      if (nodes[i].equals(v)) {
        return i;
      }
    }
    return -1;
  }

  private static EvalException shape(final String op, final Value e, final String kind, final String pair) {
    return new EvalException(EC.GENERAL, op + ": G.edge holds " + e + ", which is not " + kind
        + " (TLC cannot compare it with " + pair + ")");
  }

  private static Value field(final Value g, final String name, final String op) {
    final Value r = g.toRcd();
    final Value v = r instanceof RecordValue ? ((RecordValue) r).select(new StringValue(name)) : null;
    if (v == null) {
      throw new EvalException(EC.GENERAL, op + ": the graph " + g + " is not a record with a field " + name);
    }
    return v;
  }

  private static Value[] finiteSet(final Value s, final String op, final String what) {
    final Value e = s.toSetEnum();
    if (e == null) {
      throw new EvalException(EC.GENERAL, op + ": " + what + " is not a finite set: " + s);
    }
    final ValueVec elems = ((SetEnumValue) e.normalize()).elems;
    final Value[] out = new Value[elems.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = elems.elementAt(i);
    }
    return out;
  }
}
