"""The refinement procedure of the behavior grade: TLC checks under refinement mappings.

:mod:`alias.grade.refinement` finds the mappings (each of R's variables as an expression
over G's); this module stages the output, profiles both modules with TLC's state dumps,
and checks each mapping in both directions:

* **forward** -- module ``AliasForward`` EXTENDS R's model, declares G's variables
  (staged as ``AliasV_<name>``) and instantiates G; its specification is G's, with R's
  variables following the mapping::

      AliasFInit == AliasG!AliasOutInit /\\ x = E_x /\\ ...
      AliasFNext == AliasG!AliasOutNext /\\ x' = E_x' /\\ ...
      AliasFSpec == AliasFInit /\\ [][AliasFNext]_<<G's and R's variables>> /\\ AliasG!AliasOutFair

  (with ``g' = g'`` before the mapping for each G variable ``g`` whose domain it moves:
  TLC then evaluates G's new value once, not at every key the mapping reads).

  TLC checks R's specification formula, invariants and properties (R's own
  definitions, as in the renaming procedure), so every behavior of G, mapped, is a
  behavior of R and satisfies R's properties.
* **reverse** -- where each G variable is an expression over R's (no auxiliary
  variable), module ``AliasReverse`` EXTENDS R's model and instantiates G ``WITH
  AliasV_g <- F_g``; TLC runs R's specification and checks G's safety formula
  ``I /\\ [][N]_v``. Where G keeps variables R's state does not determine (a history
  variable), TLC dumps the state graphs of R and of the forward module, both are
  projected onto R's variables and must accept the same sequences of observable states
  (:func:`alias.grade.stategraph.equivalent_observable`).

Constants: a constant of R the output does not declare keeps its cfg value (the output
may define it); a constant the output declares but R defines is bound to R's definition
(``INSTANCE`` substitutes it by name); one the cfg assigns but R does not declare is
declared in the root. Model values a re-encoding names are root constants
``AliasMV_<name>`` the cfg binds to them.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from dataclasses import dataclass

from alias.grade.refinement import (Encoding, Leaf, Match, Pair, Refinement, Search, Side, complete_levels, injections,
                                    integer_keyed, shifted_encodings, to_refinement)
from alias.grade.specshape import append_definitions, definition_block, fairness_block
from alias.rename.names import RenameError
from alias.tla.cfg import Constant
from alias.tla.syntax import module_info, parse
from alias.tla.values import parse_value

FORWARD = "AliasForward"
REVERSE = "AliasReverse"
PROFILE = "AliasProfile"
#: TLC's report of a CASE of the forward module with no true arm: a value of G outside a
#: re-encoding's domain (the encoding was read off G's initial states only).
_NO_CASE_ARM = re.compile(r"CASE with no conditions true\.\s*line (\d+), col (\d+) to line (\d+), col (\d+) "
                          rf"of module {FORWARD}\b")
_FRESH = re.compile(r"\bAlias[A-Z]\d+\b")
VAR_PREFIX = "AliasV_"
#: Limits of the state dumps that prune the search: distinct states (TLC stops exploring
#: there: a CONSTRAINT on ``TLCGet("distinct")``, deterministic with one TLC worker) and
#: bytes of TLC's DOT file. A dump that reaches either counts as incomplete and the search
#: falls back to initial states; limits in states, not seconds, so that the search, and the
#: verdict, do not depend on the machine's speed.
PROFILE_MAX_STATES = 50_000
PROFILE_MAX_BYTES = 20_000_000
#: a profile cut at its state limit keeps, per variable with at most this many distinct
#: values, the values it saw: what a re-encoding is learnt from where the search compares
#: initial states only (:attr:`alias.grade.refinement.Side.values`)
PROFILE_VALUES_LIMIT = 5_000
#: the states of that shorter cut where the profile's is over its limit in bytes
PROFILE_CUT_STATES = 5_000
#: Where no dump prunes the search (R's or G's profile failed), the most one-to-one maps
#: of the variables TLC checks for one output: the paper's limit of maps (Methods).
UNPROFILED_MAPS = 60
#: The data-graph path's product graph stops at this many times R's states (at least
#: PROFILE_MAX_STATES): a larger one is not compared (without a bound on G alone, TLC would
#: run it to its time limit), and the path fails with ``data_graph_unavailable``.
GRAPH_CAP_FACTOR = 10
#: The most product-graph states the data-graph path dumps and compares for one output
#: (summed over its mappings; checked before each dump): a wrong
#: output of a PlusCal reference has every surviving mapping dumped, and one control (a
#: mutant of TLA+-Bench 1103) held a worker for over 13 minutes parsing such graphs.
#: Past it the path stops (attempt line); states, not seconds.
DATA_GRAPH_BUDGET_STATES = 250_000
#: Root definitions of the state limit (named instances of TLC and Naturals: no clash with
#: a module's own definitions).
PROFILE_CAP = ["AliasCapTLC == INSTANCE TLC", "AliasCapNat == INSTANCE Naturals",
               f'AliasProfileCap == AliasCapNat!<(AliasCapTLC!TLCGet("distinct"), {PROFILE_MAX_STATES})']
#: the shorter cut's cap (a CONSTRAINT beside PROFILE_CAP's definitions)
CUT_CAP = f'AliasCutCap == AliasCapNat!<(AliasCapTLC!TLCGet("distinct"), {PROFILE_CUT_STATES})'


def g_name(v: str) -> str:
    """The name of output variable ``v`` in the staged modules."""
    return VAR_PREFIX + v


@dataclass
class Staged:
    """An output staged for the refinement checks: ``files`` (with ``AliasOutInit``,
    ``AliasOutNext``, ``AliasOutVars``, ``AliasOutFair`` appended), the model module
    ``model``, the constant map ``consts`` (R -> G), the output's variables ``g_vars``
    and the constants the root must declare (``root_consts``)."""

    files: dict[str, str]
    model: str
    consts: dict[str, str]
    g_vars: list[str]
    root_consts: list[str]


class Refiner:
    """The refinement procedure for one output, on top of a
    :class:`~alias.grade.behavior.BehaviorGrader` (its staging, cfg and TLC helpers)."""

    def __init__(self, grader, out, verdict):
        self.gr = grader
        self.out = out
        self.v = verdict
        self.tried = 0
        #: whether a search ran on both modules' dumps (and found no mapping to check)
        self.searched = False
        #: re-encodings (CASE expressions, bound names blanked) that TLC found undefined on
        #: a reachable state of G: every mapping that uses one fails its forward check
        self.undefined: set[str] = set()
        #: the reasons of the checks :meth:`_unprofiled` made, over every constant map
        self.unprofiled: list[str | None] = []
        #: the last forward module sent to TLC (where a reported span is read)
        self._forward_text = ""
        #: product-graph states the data-graph path has dumped (:data:`DATA_GRAPH_BUDGET_STATES`)
        self.graph_states = 0

    # ------------------------------------------------------------------ staging
    def stage(self, cm: dict[str, str], g_vars: list[str], g_consts: list[str]) -> Staged | str:
        """Stage the output with constants ``cm`` (R -> G) and variables renamed to
        :func:`g_name`; a reason string when it cannot be staged."""
        gr = self.gr
        mapping = dict(getattr(gr, "_defs", {}))
        mapping.update({g: r for r, g in cm.items()})
        mapping.update({g: g_name(g) for g in g_vars})
        try:
            files, model = gr._stage(self._with_companions(g_vars), mapping)
        except RenameError as e:
            return f"name_capture: {e}"
        except Exception as e:  # a module tree-sitter cannot resolve
            return f"staging_failed: {type(e).__name__}"
        files = explicit_substitutions(files, {k: v for k, v in mapping.items() if k != v},
                                       {k for k, t in files.items() if t != gr.ref.files.get(k)})
        block = self._spec_block(files, model, g_vars)
        if isinstance(block, str):
            return block
        mod, text = block
        files = dict(files)
        files[f"{mod}.tla"] = append_definitions(files[f"{mod}.tla"], text)
        unbound = self._unbound_constants(cm, g_consts)
        if isinstance(unbound, str):
            return unbound
        return Staged(files, model, dict(cm), list(g_vars), unbound)

    def _with_companions(self, g_vars: list[str]):
        """The output side with copies of the reference's author modules that its modules
        EXTEND (transitively) and that declare one of its variables ``g_vars``: staged with
        the output, they are renamed with it, so G's ``pc`` of LockHS's ``EXTENDS Lock`` is
        not R's ``pc`` (the profile and the checks instantiate G beside R)."""
        out, ref = self.out, self.gr.ref
        wanted = set(g_vars)
        extra: dict[str, str] = {}
        todo = [m for t in out.modules.values() for m in module_info(t).extends]
        while todo:
            m = todo.pop()
            text = ref.files.get(f"{m}.tla")
            if m in out.modules or m in extra or m not in ref.author_modules or text is None:
                continue
            info = module_info(text)
            if wanted & set(info.variables) or any(e in ref.author_modules for e in info.extends):
                extra[m] = text
                todo += info.extends
        if not any(wanted & set(module_info(t).variables) for t in extra.values()):
            return out
        return dataclasses.replace(out, modules=dict(out.modules) | extra)

    def _spec_block(self, files: dict[str, str], model: str, g_vars: list[str]) -> tuple[str, str] | str:
        """(module, definitions) naming the output's ``I``, ``N``, ``v`` and fairness:
        from its specification formula, else from its initial predicate and next-state
        action (the cfg's INIT/NEXT names, ``Init``/``Next``, or the definitions at their
        positions in the reference), with all its variables as ``v``."""
        mod, name, shape = self.gr._locate(files, model)
        if shape is not None:
            return mod, definition_block("AliasOut", shape) + fairness_block("AliasOut", shape)
        # no formula of the shape I /\ [][N]_v (one written another way, or an INIT/NEXT
        # cfg): the output's initial predicate and next-state action, without fairness --
        # the forward check can then only fail more often, never pass a wrong output
        pair = self.gr.output_init_next(files)
        if pair is None:
            return name if name != "init_next" else "no_init_next"
        init, nxt = pair
        vs = ", ".join(g_name(g) for g in g_vars)
        return self.gr.system_name, (f"AliasOutInit == {init}\nAliasOutNext == {nxt}\nAliasOutVars == <<{vs}>>\n"
                     "AliasOutFair == TRUE\n")

    def _unbound_constants(self, cm: dict[str, str], g_consts: list[str]) -> list[str] | str:
        """Output constants neither mapped to R's nor defined by R: those the cfg assigns
        are declared in the root; any other is a reason string."""
        mapped = set(cm.values())
        r_defs = self.gr.reference_definitions()
        assigned = {c.name for c in self.gr.cfg.constants}
        root = []
        for c in g_consts:
            if c in mapped or c in self.gr.r_consts or c in r_defs:
                continue
            if c not in assigned:
                return f"output_constant_unbound: {c}"
            root.append(c)
        return root

    # ------------------------------------------------------------------ root modules
    def _root(self, st: Staged, name: str, ref: Refinement | None, body: list[str]) -> tuple[dict, object]:
        """Files with root module ``name`` (EXTENDS R's model; root constants; ``body``)
        and its cfg base with the output's overrides and the model values bound."""
        gr = self.gr
        head = [f"EXTENDS {gr.ref.model_module}"]
        consts = list(st.root_consts) + [f"AliasMV_{m}" for m in (ref.model_values if ref else [])]
        if consts:
            head.append("CONSTANTS " + ", ".join(consts))
        c = gr._cfg_base()
        over, own = gr._output_overrides(st.files)
        c.constants += over + [Constant(f"AliasMV_{m}", "=", m) for m in (ref.model_values if ref else [])]
        files = dict(st.files)
        files[f"{name}.tla"] = f"---- MODULE {name} ----\n" + "\n".join(head + body + own) + "\n====\n"
        return files, c

    def _product(self, st: Staged, exprs: dict[str, str], evaluated: list[str] = ()) -> list[str]:
        """The forward module's definitions: G's variables, G's instance and R's variables
        following ``exprs`` (R variable -> expression over G's). Each G variable of
        ``evaluated`` (``Refinement.shifted``) is first compared with itself: TLC then holds
        its value in full, where a function G's step builds (``[k \\in S |-> e]``) would
        otherwise be evaluated again at each key the mapping reads (task 784 of TLA+-Bench:
        the forward check in 31 s instead of 46 s; docs/measurements.md)."""
        gv = [g_name(g) for g in st.g_vars]
        rv = list(self.gr.r_vars)
        lines = [f"VARIABLES {', '.join(gv)}", f"AliasG == INSTANCE {st.model}"]
        lines += [f"AliasE_{i} == {exprs[r]}" for i, r in enumerate(rv)]
        init = " /\\ ".join(["AliasG!AliasOutInit"] + [f"{g} = {g}" for g in evaluated]
                             + [f"{r} = AliasE_{i}" for i, r in enumerate(rv)])
        nxt = " /\\ ".join(["AliasG!AliasOutNext"] + [f"{g}' = {g}'" for g in evaluated]
                            + [f"{r}' = AliasE_{i}'" for i, r in enumerate(rv)])
        lines += [f"AliasFInit == {init}", f"AliasFNext == {nxt}",
                  f"AliasFVars == <<{', '.join(gv + rv)}>>",
                  "AliasFSpec == AliasFInit /\\ [][AliasFNext]_AliasFVars /\\ AliasG!AliasOutFair"]
        return lines

    def forward(self, st: Staged, ref: Refinement):
        """TLC runs the product and checks R's specification, invariants and properties."""
        gr = self.gr
        body = self._product(st, ref.forward, ref.shifted) + gr.reference_checks()
        files, c = self._root(st, FORWARD, ref, body)
        c.specification, c.init, c.next = "AliasFSpec", None, None
        c.invariants = [f"AliasRefInv{i}" for i in range(len(gr.cfg.invariants))]
        c.properties = ["AliasRefSpec"] + [f"AliasRefProp{i}" for i in range(len(gr.cfg.properties))]
        text, flags = gr._write(c)
        self._forward_text = files[f"{FORWARD}.tla"]
        return gr._tlc(files, FORWARD, text, flags, "forward_refinement")

    def _learn_undefined(self, detail: str) -> None:
        """Remember the re-encoding a forward check's ``CASE with no conditions true``
        points at (a span of one line of the forward module)."""
        m = _NO_CASE_ARM.search(detail)
        if m is None or m.group(1) != m.group(3):
            return
        lines = self._forward_text.splitlines()
        line, a, b = int(m.group(1)), int(m.group(2)), int(m.group(4))
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        case = text[a - 1:b]
        bound = re.match(r"CASE (Alias[A-Z]\d+) = ", case)
        start = text.rfind(f"LET {bound.group(1)} == ", 0, a) if bound else -1
        if start >= 0:  # the encoded expression and its arms: "LET X == e IN CASE X = v -> w [] ..."
            self.undefined.add(_FRESH.sub("_", text[start:b]))

    def _undefined_in(self, exprs: dict[str, str]) -> str | None:
        """A remembered undefined re-encoding that the expressions ``exprs`` (R variable ->
        expression over G) use, or None."""
        if not self.undefined:
            return None
        text = _FRESH.sub("_", "\n".join(exprs.values()))
        for d in sorted(self.undefined):
            # the whole CASE: a longer one (more arms) starting alike may be defined
            if any(not text.startswith(" []", i + len(d)) for i in _find_all(text, d)):
                return d
        return None

    def reverse(self, st: Staged, ref: Refinement):
        """TLC runs R and checks G's safety formula with G's variables as expressions over R's."""
        gr = self.gr
        subst = ", ".join(f"{g_name(g)} <- {ref.inverse[g]}" for g in st.g_vars)
        body = [f"AliasG == INSTANCE {st.model} WITH {subst}", "AliasGVars == AliasG!AliasOutVars",
                "AliasGSafety == AliasG!AliasOutInit /\\ [][AliasG!AliasOutNext]_AliasGVars"]
        files, c = self._root(st, REVERSE, ref, body)
        c.properties = ["AliasGSafety"]
        c.check_deadlock = False
        text, flags = gr._write(c)
        return gr._tlc(files, REVERSE, text, flags, "reverse_refinement")

    def reverse_graph(self, st: Staged, ref: Refinement) -> tuple[bool, str]:
        """R's state graph and the forward module's, projected onto R's variables, accept
        the same sequences of observable states. (passed, detail)."""
        gr = self.gr
        rg = gr.reference_graph()
        if rg is None:
            return False, "reference state graph not available"
        files, c = self._root(st, FORWARD, ref, self._product(st, ref.forward, ref.shifted))
        c.specification, c.init, c.next, c.view = "AliasFSpec", None, None, None
        c.check_deadlock = False
        text, flags = gr._write(c)
        pg = gr._dump(files, FORWARD, text, flags, "graph_refinement")
        if pg is None:
            return False, "state graph of the output under the mapping not available"
        rv = list(gr.r_vars)
        same, witness = gr.sg.equivalent_observable(gr.sg.project(rg, rv), gr.sg.project(pg, rv))
        return same, "equivalent" if same else f"state graphs differ: {str(witness)[:300]}"

    def data_graph(self, st: Staged, m: Match) -> str | None:
        """Appendix I with a refinement mapping of R's data variables (R has control-label
        variables such as PlusCal's ``pc``; G's control state may be shaped otherwise):
        TLC dumps R's state graph and the product's (R's control variables held at a
        dummy value), both are projected onto R's data variables and must accept the
        same sequences of observable states. None on a pass, else a reason."""
        gr, v = self.gr, self.v
        self.tried += 1
        data = [x for x in gr.r_vars if x not in gr.r_control]
        ref = to_refinement(m, g_name)
        exprs = dict(ref.forward) | {x: '"AliasNone"' for x in gr.r_control}
        v.mapping = {"variables": to_refinement(m, lambda x: x).forward, "constants": dict(st.consts),
                     "labels": {}, **m.describe()}
        rg = gr.reference_graph()
        dead = self._undefined_in({x: exprs[x] for x in data})
        if dead is not None:
            v.attempts.append(f"data graph {m.describe()['leaves']}: not run, its re-encoding {dead} is undefined "
                              "on a reachable state of the output (TLC, an earlier mapping)")
            return "data_graph_unavailable"
        # G alone may have no state bound: the product's graph stops at a multiple of R's
        # (a count of states, not seconds), and one that reaches it is not compared
        cap = max(PROFILE_MAX_STATES, GRAPH_CAP_FACTOR * len(rg.nodes)) if rg is not None else PROFILE_MAX_STATES
        body = self._product(st, exprs) + PROFILE_CAP[:2] + [
            f'AliasGraphCap == AliasCapNat!<(AliasCapTLC!TLCGet("distinct"), {cap})']
        files, c = self._root(st, FORWARD, ref, body)
        c.specification, c.init, c.next, c.view = "AliasFSpec", None, None, None
        c.constraints = list(c.constraints) + ["AliasGraphCap"]
        c.check_deadlock = False
        text, flags = gr._write(c)
        pg = gr._dump(files, FORWARD, text, flags, "graph_data_mapping")
        self.graph_states += 0 if pg is None else len(pg.nodes)
        if pg is not None and len(pg.nodes) >= cap:
            v.attempts.append(f"data graph {m.describe()['leaves']}: the output's graph reaches {cap:,} states")
            return "data_graph_unavailable"
        if rg is None or pg is None:
            self._forward_text = files[f"{FORWARD}.tla"]
            self._learn_undefined(gr.dump_error or "")
            v.attempts.append(f"data graph {m.describe()['leaves']}: state graph not available")
            return "data_graph_unavailable"
        same, w = gr.sg.equivalent_observable(gr.sg.project(rg, data), gr.sg.project(pg, data))
        v.attempts.append(f"data graph {m.describe()['leaves']}: {'equivalent' if same else 'differs: ' + str(w)[:200]}")
        v.forward = v.reverse = "graph_equivalent" if same else "graph_differs"
        if not same:
            return "data_graph_differs"
        return self._data_properties(st, ref, exprs)

    def _data_properties(self, st: Staged, ref: Refinement, exprs: dict[str, str]) -> str | None:
        """TLC runs the product and checks the cfg's properties that mention no control
        variable and the output's own definitions of those that do (the data graphs compare
        safety only), with the cfg's deadlock check (as
        :meth:`alias.grade.behavior.BehaviorGrader._data_properties`): None when they hold."""
        gr = self.gr
        props, own = gr.data_properties(), gr.control_properties_defined(st.files, st.model)
        deadlock = gr.cfg.check_deadlock is not False
        if not props and not own and not deadlock:
            return None
        body = self._product(st, exprs) + [f"AliasRefProp{i} == {gr.cfg.properties[i]}" for i in props]
        body += [f"AliasOutProp{j} == AliasG!{p}" for j, p in enumerate(own)]
        files, c = self._root(st, FORWARD, ref, body)
        c.specification, c.init, c.next = "AliasFSpec", None, None
        c.properties = [f"AliasRefProp{i}" for i in props] + [f"AliasOutProp{j}" for j in range(len(own))]
        c.check_deadlock = gr.cfg.check_deadlock
        text, flags = gr._write(c)
        res = gr._tlc(files, FORWARD, text, flags, "data_properties_refinement")
        self.v.attempts.append(f"data graph: {'deadlock, ' if deadlock else ''}properties: {res.kind}")
        if res.passed:
            return None
        self.v.error_text = res.detail
        return f"data_properties_{res.kind}"

    def run_data_graph(self, g_vars: list[str], g_consts: list[str], limit: int) -> str | None:
        """:meth:`data_graph` over the mappings of R's data variables the dumps allow."""
        data = [x for x in self.gr.r_vars if x not in self.gr.r_control]
        if not data:
            return "no_data_variables"
        reason, r_data = "no_refinement_mapping_fits", None
        for cm in constant_maps(self.gr.r_consts, g_consts):
            st = self.stage(cm, g_vars, g_consts)
            if isinstance(st, str):
                reason = st
                continue
            if r_data is None:
                r_side = self.gr.reference_side()
                if r_side is None:
                    return "no_data_variables"
                r_data = Side(data, [{k: s[k] for k in data} for s in r_side.states],
                              [{k: s[k] for k in data} for s in r_side.initial], r_side.reachable)
            g_side = self.profile(st, reachable=r_data.reachable)
            if g_side is None:
                continue
            for m in Search(r_data, g_side, subset=True).matches(limit):
                if self.tried >= limit:
                    return "search_cut"
                # R's graph only once some mapping fits the dumps (TLC may run it to its limit)
                if self.gr.reference_graph() is None:  # nothing to compare any mapping's graph with
                    self.v.attempts.append("data graph: the reference's state graph is not available "
                                           "(over the dump limits)")
                    return "data_graph_unavailable"
                if self.graph_states >= DATA_GRAPH_BUDGET_STATES:
                    self.v.attempts.append(f"data graph: stopped after dumping {self.graph_states:,} states of "
                                           "the output's product graphs")
                    return "data_graph_budget_exhausted"
                reason = self.data_graph(st, m)
                if reason is None:
                    return None
        return reason

    # ------------------------------------------------------------------ profiles
    def profile(self, st: Staged, reachable: bool = True, levels: bool = False) -> Side | None:
        """The output's states from a dump of G alone (R's variables held at a dummy
        value; the cfg's symmetry and view dropped; of its constraints, those that mention
        no reference variable, and where the others mention R's variables, the output's own
        definitions of the same names): every reachable state within the profile limits
        (with ``reachable``: R's dump holds its reachable states), else only the initial
        states, with the values a dump cut at its limit saw (:attr:`Side.values`) and the
        complete breadth-first levels of that dump (also with ``levels``: R's dump, cut,
        holds its first levels); None when TLC cannot run the output."""
        gr = self.gr
        body = self._profile_body(st)
        back = {g_name(g): g for g in st.g_vars}
        values, prefix = None, None
        if reachable or levels:
            # G's own definitions of the cfg's constraints on R's variables bound it;
            # lacking them, G unbounded (R's states then a subset of its, if it ends).
            # Its levels are then not G's alone: the search reads them only where R's
            # exploration is unrestricted
            own = self._own_constraints(st) if gr.constrained else None
            lines, cons, acts = own or ([], [], [])
            files, c = self._root(st, PROFILE, None, body + lines)
            self._profile_cfg(c, ["AliasProfileCap"] + gr.variable_free_constraints() + cons, acts)
            full = self._side(files, PROFILE, c, back, "profile_output")
            if full is not None and reachable:
                return full
            if full is not None:
                prefix = (full.prefix, full.prefix_levels, full.prefix_depth) if full.prefix_depth >= 0 else None
            else:
                prefix = renamed_levels(gr.dump_prefix, back)
                if prefix is None and gr.dump_error is None and not reachable:   # over the limit in bytes
                    prefix = self._cut_values(st, body + lines, c, back)[1]
            if full is None and reachable:
                values = {back[k]: v for k, v in (gr.dump_values or {}).items() if k in back} or None
                if values is None and gr.dump_error is None:  # over the limit in bytes: a shorter cut
                    values, prefix = self._cut_values(st, body + lines, c, back)
        files, c = self._root(st, PROFILE, None, body)
        self._profile_cfg(c, ["AliasProfileCap"] + gr.variable_free_constraints(), ["AliasPNoStep"])
        initial = self._side(files, PROFILE, c, back, "profile_output_initial", reachable=False)
        if initial is not None:
            initial.values = values
            initial.with_prefix(prefix)
        return initial

    def _profile_body(self, st: Staged) -> list[str]:
        """The profile module's definitions: G's variables and instance, R's variables held
        at a dummy value."""
        rv = list(self.gr.r_vars)
        gv = [g_name(g) for g in st.g_vars]
        return [f"VARIABLES {', '.join(gv)}", f"AliasG == INSTANCE {st.model}",
                "AliasPInit == " + " /\\ ".join(["AliasG!AliasOutInit"] + [f'{r} = "AliasNone"' for r in rv]),
                f"AliasPNext == AliasG!AliasOutNext /\\ UNCHANGED <<{', '.join(rv)}>>",
                f"AliasPVars == <<{', '.join(gv + rv)}>>",
                "AliasPSpec == AliasPInit /\\ [][AliasPNext]_AliasPVars",
                "AliasPNoStep == UNCHANGED AliasPVars /\\ ~UNCHANGED AliasPVars"] + PROFILE_CAP

    def _sampled_values(self, st: Staged) -> dict[str, list[str]] | None:
        """G's variables -> their value texts over G's first :data:`PROFILE_CUT_STATES` states
        (as :meth:`_cut_values`), where no profile prunes the search; None when TLC gives none."""
        body = self._profile_body(st)
        files, c = self._root(st, PROFILE, None, body)
        self._profile_cfg(c, ["AliasProfileCap"] + self.gr.variable_free_constraints(), [])
        return self._cut_values(st, body, c, {g_name(g): g for g in st.g_vars})[0]

    def _cut_values(self, st: Staged, body: list[str], c, back: dict[str, str]) -> tuple[dict | None, tuple | None]:
        """The values of G's variables over its first :data:`PROFILE_CUT_STATES` states,
        where its dump cut at :data:`PROFILE_MAX_STATES` is over the limit in bytes (TLA+-Bench
        867: Paxos, its message sets), and the complete levels of that cut."""
        files, c2 = self._root(st, PROFILE, None, body + [CUT_CAP])
        self._profile_cfg(c2, ["AliasCutCap"] + [x for x in c.constraints if x != "AliasProfileCap"],
                          list(c.action_constraints))
        cut = self._side(files, PROFILE, c2, back, "profile_output_cut", cut=True)
        if cut is None:
            return None, None
        levels = (cut.prefix, cut.prefix_levels, cut.prefix_depth) if cut.prefix_depth >= 0 else None
        return few_values(cut.states, PROFILE_VALUES_LIMIT) or None, levels

    @staticmethod
    def _profile_cfg(c, constraints: list[str], action_constraints: list[str]) -> None:
        c.specification, c.init, c.next = "AliasPSpec", None, None
        c.constraints, c.action_constraints = constraints, action_constraints
        c.symmetry, c.view, c.check_deadlock = None, None, False

    def _own_constraints(self, st: Staged) -> tuple[list[str], list[str], list[str]] | None:
        """The output's own definitions of the cfg's CONSTRAINT and ACTION_CONSTRAINT names
        that mention reference variables: ``(definitions, constraints, action constraints)``
        of the profile module; None when the output does not define each of them (without
        parameters). An output checked with the task's cfg bounds its own state space so:
        TLA+-Bench 1576's and 867's re-encoded controls, whose dumps were their initial
        states only, where an encoding of a label was learnt from one value."""
        free = set(self.gr.variable_free_constraints())
        defined = self.gr.output_definitions(st.files, st.model)
        lines: list[str] = []
        kinds: tuple[list[str], list[str]] = ([], [])
        for k, names in enumerate((self.gr.cfg.constraints, self.gr.cfg.action_constraints)):
            for name in names:
                if k == 0 and name in free:
                    continue
                if defined.get(name) != 0:
                    return None
                alias = f"AliasPCon{len(lines)}"
                lines.append(f"{alias} == AliasG!{name}")
                kinds[k].append(alias)
        return lines, kinds[0], kinds[1]

    def _side(self, files, main, c, names: dict[str, str], purpose: str, reachable: bool = True,
              cut: bool = False) -> Side | None:
        text, flags = self.gr._write(c)
        g = self.gr._dump(files, main, text, flags, purpose, profile=True)
        return None if g is None else graph_side(g, names, reachable, cut)

    # ------------------------------------------------------------------ the search
    def run(self, g_vars: list[str], g_consts: list[str], skip: set, limit: int) -> str | None:
        """Search and check mappings under each constant map; ``None`` on a pass, else
        the reason of the last failure. ``skip``: renaming maps the paper's procedure
        already tried, as ``(frozenset(constant map), frozenset(variable map))``."""
        reason, r_side = None, None
        for cm in constant_maps(self.gr.r_consts, g_consts):
            st = self.stage(cm, g_vars, g_consts)
            if isinstance(st, str):
                reason = st
                continue
            if r_side is None:  # R's dump only once some constant map stages the output
                r_side = self.gr.reference_side()
                if r_side is None:
                    return self._unprofiled(st, skip, limit, "reference_profile_unavailable")
            # G alone has no state constraint of R's: where R needs one that mentions its
            # variables, G's own definitions of the cfg's names bound G's dump; failing
            # them (or where R's own dump is too large), G's initial states prune
            g_side = self.profile(st, reachable=r_side.reachable,
                                  levels=r_side.prefix_depth >= 0 and not self.gr.restricted_exploration)
            if g_side is None:
                out = self._unprofiled(st, skip, limit, "output_profile_failed")
                if out is None:
                    return None
                reason = reason or out
                continue
            out = self._search(st, cm, Search(r_side, g_side, subset=self.gr.restricted_exploration), skip, limit)
            if out is None or out == "search_cut":
                return out
            reason = out if out != "not_found" else (reason or "no_refinement_mapping_fits")
        return reason or "no_refinement_mapping_fits"

    def _unprofiled(self, st: Staged, skip: set, limit: int, why: str) -> str | None:
        """Where no dump prunes the search (``why``: R's or G's profile failed, e.g. R's
        65,536 initial states of GameOfLife over the byte limit), the one-to-one maps of
        R's variables to G's (G's others auxiliary), most similar names first, each checked
        by TLC as any mapping: None on a pass, else the last reason of these checks (under
        any constant map), else ``why``.
        At most :data:`UNPROFILED_MAPS` (the paper's limit) over all constant maps; three
        alike failures that are not violations (a parse error of the staged output) end it.
        Within that budget, the same maps with an index shift follow (:meth:`_unprofiled_shifts`)."""
        rv, reasons, n = list(self.gr.r_vars), self.unprofiled, 0
        for vm in injections(rv, st.g_vars, limit=UNPROFILED_MAPS):
            if (frozenset(st.consts.items()), frozenset(vm.items())) in skip:
                continue
            if self.tried >= limit or len(reasons) >= UNPROFILED_MAPS or _same_failure(reasons, 3):
                break
            n += 1
            reasons.append(self.check(st, Match.of([Pair(Leaf(r), Leaf(g), Encoding()) for r, g in vm.items()],
                                                   rv, st.g_vars)))
            if reasons[-1] is None:
                return None
        self.v.attempts.append(f"refinement: {why}; {n} one-to-one maps of the variables checked by TLC without "
                               "a dump")
        budget_left = self.tried < limit and len(reasons) < UNPROFILED_MAPS
        if budget_left and not _same_failure(reasons, 3) and self._unprofiled_shifts(st, limit):
            return None
        return reasons[-1] if reasons else why

    def _unprofiled_shifts(self, st: Staged, limit: int) -> bool:
        """After the one-to-one maps without a dump failed: those maps again where a
        variable of the same name in both takes functions whose domains differ by an index
        shift in the first states of both dumps (:func:`alias.grade.refinement.domain_shift`:
        TLA+-Bench 784, Game of Life on a 0-based board, 65,536 initial states), each
        checked by TLC as any mapping. True on a pass."""
        if not set(self.gr.r_vars) & set(st.g_vars):
            return False   # no variable of the same name in both: no dump needed
        r_vals = self.gr.reference_cut_values() or {}
        parsed = {r: {parse_value(t) for t in r_vals[r]} for r in self.gr.r_vars if r in st.g_vars and r in r_vals}
        movable = {r: vals for r, vals in parsed.items() if integer_keyed(vals)}
        if not movable:
            return False   # no variable of both names takes functions a shift could move: no dump of G
        g_vals = self._sampled_values(st)
        if not g_vals:
            return False
        shifts = {}
        for r, vals in movable.items():
            if r in g_vals:
                encs = shifted_encodings(vals, {parse_value(t) for t in g_vals[r]}, subset=True)
                if encs:
                    shifts[r] = encs[0]
        n = 0
        for vm in injections(list(self.gr.r_vars), st.g_vars, limit=UNPROFILED_MAPS):
            if not any(vm[r] == r for r in shifts) or self.tried >= limit or len(self.unprofiled) >= UNPROFILED_MAPS:
                continue
            n += 1
            pairs = [Pair(Leaf(r), Leaf(g), shifts[r] if g == r and r in shifts else Encoding()) for r, g in vm.items()]
            self.unprofiled.append(self.check(st, Match.of(pairs, list(self.gr.r_vars), st.g_vars)))
            if self.unprofiled[-1] is None:
                return True
        if shifts:
            self.v.attempts.append(f"refinement: {n} of those maps with indices moved ({', '.join(sorted(shifts))}) "
                                   "checked by TLC")
        return False

    def _search(self, st: Staged, cm: dict, search: Search, skip: set, limit: int) -> str | None:
        """Check the mappings ``search`` finds: None on a pass, ``'search_cut'`` at
        ``limit``, ``'not_found'`` when none fits, else the last failure's reason."""
        found, reason = False, None
        for m in search.matches(limit):
            if not search.steps_fit(m):  # no TLC run: a step of G's dump maps to no step of R's
                continue
            found = True
            if m.is_renaming and (frozenset(cm.items()), frozenset(m.renaming.items())) in skip:
                continue
            if self.tried >= limit:
                self.v.attempts.append(f"refinement search cut at {limit} mappings")
                return "search_cut"
            reason = self.check(st, m)
            if reason is None:
                return None
        if search.exhausted:
            self.v.attempts.append(f"refinement search stopped after comparing {search.rows_compared:,} state "
                                   f"rows ({search.tried_pairs:,} pairs tried)")
        if search.step_misfits and found:
            self.v.attempts.append(f"refinement search: {search.step_misfits} mappings not run by TLC (their steps "
                                   f"differ, first: {search.step_witness[:200]})")
        if not found and search.exhausted:
            self.v.error_text = (f"the refinement search compared {search.rows_compared:,} state rows "
                                 f"without finding a mapping and stopped")
            return "search_budget_exhausted"
        if not found:
            self.searched = True
            self.v.error_text = search.explain()
            self.v.attempts.append(f"refinement search: {self.v.error_text}")
            return "not_found"
        return reason or "not_found"

    def check(self, st: Staged, m: Match) -> str | None:
        """Forward and reverse checks of one mapping; None on a pass, else a reason."""
        ref = to_refinement(m, g_name)
        v = self.v
        dead = self._undefined_in(ref.forward)
        if dead is not None:
            v.attempts.append(f"refinement {m.describe()['leaves']}: not run, its re-encoding {dead} is undefined on "
                              "a reachable state of the output (TLC, an earlier mapping)")
            return "forward_eval_error"
        self.tried += 1
        shown = to_refinement(m, lambda x: x)
        v.mapping = {"variables": shown.forward, "constants": dict(st.consts), "labels": {},
                     **m.describe()}
        fwd = self.forward(st, ref)
        v.forward, v.distinct_states, v.error_text = fwd.kind, fwd.distinct_states, fwd.detail
        desc = m.describe()["leaves"]
        if not fwd.passed:
            v.attempts.append(f"refinement {desc}: forward {fwd.kind}: {(fwd.detail or '')[:200]}")
            self._learn_undefined(fwd.detail or "")
            return f"forward_{fwd.kind}"
        if ref.inverse is not None:
            rev = self.reverse(st, ref)
            v.reverse, v.error_text = rev.kind, rev.detail
            ok, detail = rev.passed, rev.detail
            kind = rev.kind
        else:
            ok, detail = self.reverse_graph(st, ref)
            kind = "graph_equivalent" if ok else "graph_differs"
            v.reverse, v.error_text = kind, None if ok else detail
        v.attempts.append(f"refinement {desc}: forward passes, reverse {kind}")
        return None if ok else f"reverse_{kind}"


def _same_failure(reasons: list[str | None], limit: int) -> bool:
    """Whether the last ``limit`` checks failed alike, without a violation (a crash or an
    evaluation error of the output that no other map mends)."""
    last = reasons[-limit:]
    return len(last) == limit and len(set(last)) == 1 and str(last[0]).startswith("forward_") \
        and not str(last[0]).endswith(("_violated", "_deadlock"))


def _find_all(text: str, sub: str):
    i = text.find(sub)
    while i >= 0:
        yield i
        i = text.find(sub, i + 1)


def explicit_substitutions(files: dict[str, str], renamed: dict[str, str], staged: set[str]) -> dict[str, str]:
    """``files`` with every ``INSTANCE M`` of the ``staged`` modules that takes a renamed
    name (``renamed``: old -> new) by implicit substitution given it explicitly
    (``WITH x <- AliasV_x``): M is not renamed, so its parameter ``x`` would find no ``x``."""
    out = dict(files)
    for key in sorted(k for k in staged if k in files):
        src = files[key].encode("utf-8")
        edits = []
        for inst in _instances(parse(files[key]).root_node):
            mod = src[inst.named_children[0].start_byte:inst.named_children[0].end_byte].decode()
            if f"{mod}.tla" not in files or f"{mod}.tla" in staged:
                continue
            info = module_info(files[f"{mod}.tla"])
            subs = [c for c in inst.named_children if c.type == "substitution"]
            given = {src[c.named_children[0].start_byte:c.named_children[0].end_byte].decode() for c in subs}
            add = [f"{p} <- {renamed[p]}" for p in info.variables + info.constants if p in renamed and p not in given]
            if add:
                edits.append((inst.end_byte, (", " if subs else " WITH ") + ", ".join(add)))
        for at, text in sorted(edits, reverse=True):
            src = src[:at] + text.encode("utf-8") + src[at:]
        out[key] = src.decode("utf-8")
    return out


def _instances(node):
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "instance" and n.named_children:
            yield n
        elif n.type not in ("comment", "block_comment"):
            stack.extend(n.children)


def few_values(states, limit: int) -> dict[str, list[str]]:
    """Variable -> its distinct value texts over ``states`` (``{variable: text}`` each),
    for the variables with at most ``limit`` of them."""
    seen: dict[str, set[str]] = {}
    for s in states:
        for k, x in s.items():
            vals = seen.setdefault(k, set())
            if len(vals) <= limit:
                vals.add(x)
    return {k: sorted(v) for k, v in seen.items() if len(v) <= limit}


def graph_side(g, names: dict[str, str], reachable: bool = True, cut: bool = False) -> Side:
    """A :class:`Side` from a state graph: variables renamed by ``names`` (staged name ->
    name; others dropped), values as TLC's texts; a ``reachable`` graph's complete
    breadth-first levels as its prefix (every level, or where the graph is ``cut`` at a
    state limit, those before the deepest)."""
    states = {nid: {names[k]: x for k, x in s.items() if k in names} for nid, s in g.nodes.items()}
    index = {nid: i for i, nid in enumerate(states)}
    edges = tuple((index[a], index[b]) for a, b in g.edges if a in index and b in index) if reachable else ()
    rows = list(states.values())
    side = Side(list(names.values()), rows, [states[i] for i in g.initial if i in states], reachable, edges)
    if reachable:
        side.with_prefix(complete_levels(rows, [index[i] for i in g.initial if i in index], edges, cut=cut))
    return side


def cut_levels(g) -> list | None:
    """``[states, levels, depth]`` of the complete breadth-first levels of a state graph
    cut at a state limit (staged names; JSON-ready), or None."""
    index = {nid: i for i, nid in enumerate(g.nodes)}
    edges = [(index[a], index[b]) for a, b in g.edges if a in index and b in index]
    got = complete_levels(list(g.nodes.values()), [index[i] for i in g.initial if i in index], edges, cut=True)
    return None if got is None else [got[0], got[1], got[2]]


def renamed_levels(prefix: list | None, names: dict[str, str]) -> tuple | None:
    """:func:`cut_levels`' ``[states, levels, depth]`` with the variables renamed by
    ``names`` (staged name -> name; others dropped), as :meth:`Side.with_prefix` takes it."""
    if not prefix:
        return None
    states, levels, depth = prefix
    return [{names[k]: x for k, x in s.items() if k in names} for s in states], list(levels), int(depth)


def constant_maps(r_consts: list[str], g_consts: list[str], limit: int = 24):
    """Maps R constant -> G constant (partial, one-to-one): same names kept; the others
    paired by position, then every other injection, at most ``limit``; an R constant left
    out keeps its cfg value, a G constant left out is bound by name (see the module doc)."""
    fixed = {c: c for c in r_consts if c in g_consts}
    r_rest = [c for c in r_consts if c not in fixed]
    g_rest = [c for c in g_consts if c not in fixed]
    k = min(len(r_rest), len(g_rest))
    seen = 0
    for size in range(k, -1, -1):
        for rs in itertools.combinations(r_rest, size):
            for gs in itertools.permutations(g_rest, size):
                yield {**fixed, **dict(zip(rs, gs))}
                seen += 1
                if seen >= limit:
                    return


__all__ = ["Refiner", "Staged", "graph_side", "constant_maps", "g_name", "explicit_substitutions", "FORWARD",
           "REVERSE", "PROFILE"]
