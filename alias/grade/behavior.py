"""The behavior-based grade (Methods "Behavior-based grade", Appendices H and I).

An output G is compared with the reference R of its condition under a one-to-one map
from R's variables and constants to G's.  The grader translates G into R's vocabulary
(every mapped name of G is renamed to R's name with the same scope-aware renamer as
CIR, :func:`alias.rename.cir.rename_names`), stages the translated output under the
module names ``AliasOut`` (the system module) and ``AliasOutModel`` (its model: the
task's wrapper re-pointed at ``AliasOut``, or ``AliasOut`` itself), and runs two TLC
checks, both with the task's cfg constants, state constraints, symmetry set and view:

* **forward** -- module ``AliasForward`` EXTENDS R's model module and instantiates the
  output's model (``AliasG == INSTANCE AliasOutModel``, every parameter substituted by
  the same-named symbol of R); TLC runs G's specification formula (``AliasG!Spec``) and
  checks R's specification formula as a property and the cfg's invariants and
  properties with R's own definitions.  It passes when every behavior of G is a
  behavior of R and satisfies R's properties.  R is the root's EXTENDS closure, not an
  instance, because TLC evaluates the constant-level definitions of an instantiated
  module again at every use (a ``TypeOK`` over ``SortedSeqs``: once per state).
* **reverse** -- module ``AliasReverse`` EXTENDS R's model module and instantiates the
  output; TLC runs R's specification (the cfg's) and checks G's safety formula
  ``I /\\ [][N]_v`` (see :mod:`alias.grade.specshape`), so an output that allows too
  few behaviors (one that never moves) fails.

G is correct when both pass under one map.  Maps: identical names first, then the other
bijections ordered by name similarity, at most ``max_maps`` in all (60, params
``grade.max_maps``).  Before trying a map TLC prunes it cheaply: one run per module
computes the set of initial values of each variable (TLC with an action constraint that
allows no step, dumping the state graph), and a map must pair variables whose initial
value sets are equal.

Control-label variables (Appendix I): for a reference with string-valued control
variables (the ``pc`` of a PlusCal translation) the grader also tries 1-to-1 maps
between the string values of the two modules (shared strings first, then the rest in
order of first appearance); failing those, TLC dumps both state graphs, both are
projected onto the data variables and must accept the same sequences of observable
states (:func:`alias.grade.stategraph.equivalent_observable`).

Every TLC run is recorded in :attr:`BehaviorVerdict.calls` and cached by run key.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field, replace

from alias.corpus.testset import Reference
from alias.grade import behavior_refine as br
from alias.grade import stategraph
from alias.grade.cache import Call, ToolRunner
from alias.grade.refinement import bijections
from alias.grade.specshape import (append_definitions, defined_names, definition_arities, definition_block,
                                   definition_names_used, instance_use, split_spec, spec_shaped_definitions)
from alias.rename.cir import rename_names
from alias.rename.names import RenameError
from alias.tla.cfg import Cfg, CfgError, Constant, for_jar, parse_cfg
from alias.tla.extract import split_modules
from alias.tla.syntax import module_info
from alias.tla.tools import supports_check_deadlock, tlc_run_key

OUT = "AliasOut"
OUT_MODEL = "AliasOutModel"
FORWARD = "AliasForward"
REVERSE = "AliasReverse"
INIT_DUMP = "AliasInitDump"
PROFILE_REF = "AliasProfileRef"
FAIRNESS_PROBE = "AliasFairnessProbe"
_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_HEADER = re.compile(r"^(\s*-{4,}\s*MODULE\s+)([A-Za-z0-9_]+)(\s*-{4,})", re.M)


@dataclass
class OutputSide:
    """The modules of one output: ``modules`` (module name -> text), the name of the
    module that plays the system module (``system``) and, optionally, the module that
    plays the wrapper (``wrapper``).  A model output is just ``{S: text}`` with
    ``system=S``; the reference's wrapper is then copied and re-pointed at it.  The
    grader controls pass whole renamed copies (system, wrapper and helper modules)."""

    modules: dict[str, str]
    system: str
    wrapper: str | None = None

    def __post_init__(self):
        self.modules = _one_module_per_text(self.modules)


def _one_module_per_text(modules: dict[str, str]) -> dict[str, str]:
    """``modules`` (name -> text, or file name -> text) with each text that holds further
    top-level modules after its own (:func:`~alias.tla.extract.split_modules`) split into
    one entry per module: SANY finds the modules after the first only in the root file, and
    the grader's root is its own module (TLA+-Bench 1009, 1394)."""
    out: dict[str, str] = {}
    for key, text in modules.items():
        parts = split_modules(text) if text.count("MODULE") > 1 else {}
        if len(parts) < 2:
            out[key] = text
            continue
        suffix = ".tla" if key.endswith(".tla") else ""
        first, *rest = parts.items()
        out[key] = first[1]
        for name, part in rest:
            if f"{name}{suffix}" not in modules:
                out.setdefault(f"{name}{suffix}", part)
    return out


@dataclass
class CheckResult:
    passed: bool
    kind: str
    detail: str | None = None
    distinct_states: int | None = None


@dataclass
class BehaviorVerdict:
    """Result of :func:`grade_behavior`.

    ``passed``; ``reason`` (``None`` on a pass, else a code such as
    ``variable_count_differs``, ``output_syntax_error``, ``no_spec_formula``, ``no_map_passes``,
    ``no_refinement_mapping_fits``, ``forward_<TLC kind>``, ``reverse_<TLC kind>``); ``method``:
    the paper's procedure's ``'renaming'`` (forward and reverse TLC checks under a
    renaming), ``'label_map'`` (with a map of control-label strings) or ``'data_graph'``
    (projected state graphs, Appendix I); the refinement procedure's
    ``'refinement_mapping'`` (forward and reverse checks under a refinement mapping) or
    ``'data_graph_mapping'`` (Appendix I's graphs under a mapping of the data variables);
    for a reference without variables, ``'constant_level'`` (refinement procedure only: the
    output's assumptions hold under the task's cfg, :meth:`BehaviorGrader._grade_constant_level`);
    ``mapping``: ``{'variables': {R: G}, 'constants': {R: G}, 'labels': {R: G}}`` of the
    map that passed (or of the last map tried; a refinement mapping's ``variables`` gives
    each R variable's expression over G's, ``leaves`` the pairs and ``auxiliary`` the G
    variables it leaves out); ``maps_tried`` (both procedures' maps); ``forward``/``reverse``:
    TLC kinds of the last checks; ``distinct_states``: distinct states of the last forward
    check; ``error_text``: TLC's error message of the last failed check (``None`` on a
    pass); ``attempts``: one line per map tried; ``calls``.
    """

    passed: bool
    reason: str | None = None
    method: str | None = None
    mapping: dict | None = None
    maps_tried: int = 0
    forward: str | None = None
    reverse: str | None = None
    distinct_states: int | None = None
    error_text: str | None = None
    attempts: list[str] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)


# --------------------------------------------------------------------------- helpers
def _set_header(text: str, name: str) -> str:
    return _HEADER.sub(lambda m: m.group(1) + name + m.group(3), text, count=1)


_EXTENDS = re.compile(r"\bEXTENDS\b((?:\s*[A-Za-z0-9_]+\s*,)*\s*[A-Za-z0-9_]+)")
_INSTANCE = re.compile(r"\bINSTANCE(\s+)([A-Za-z0-9_]+)")


def rename_module_refs(text: str, mod_map: dict[str, str]) -> str:
    """Rename module names in EXTENDS lists and after INSTANCE (not other identifiers)."""
    if not mod_map:
        return text

    def ext(m: re.Match) -> str:
        return "EXTENDS" + re.sub(r"[A-Za-z0-9_]+", lambda x: mod_map.get(x.group(0), x.group(0)), m.group(1))

    text = _EXTENDS.sub(ext, text)
    return _INSTANCE.sub(lambda m: "INSTANCE" + m.group(1) + mod_map.get(m.group(2), m.group(2)), text)


def _module(name: str, body: str) -> str:
    return f"---- MODULE {name} ----\n{body}====\n"


def replace_strings(text: str, mapping: dict[str, str]) -> str:
    """Replace string literals ``"a"`` by ``"mapping[a]"`` in one pass (no chains)."""
    if not mapping:
        return text
    return _STRING.sub(lambda m: '"' + mapping.get(m.group(1), m.group(1)) + '"', text)


def _declared(texts: list[str]) -> tuple[list[str], list[str]]:
    vs: list[str] = []
    cs: list[str] = []
    for t in texts:
        info = module_info(t)
        vs += [v for v in info.variables if v not in vs]
        cs += [c for c in info.constants if c not in cs]
    return vs, cs


def _extends_closure(root: str, files: dict[str, str]) -> list[str]:
    """Texts of ``root`` and of the modules it EXTENDS, transitively (those in ``files``),
    root first: their constants and variables are the model's parameters."""
    return _closure(root, files, instances=False)


_UNNAMED_INSTANCE = re.compile(r"^\s*(?:LOCAL\s+)?INSTANCE\s+([A-Za-z0-9_]+)", re.M)


def visible_closure(root: str, files: dict[str, str]) -> list[str]:
    """Texts of ``root`` and of the modules whose definitions it sees unprefixed (EXTENDS
    and unnamed INSTANCE, transitively), root first."""
    return _closure(root, files, instances=True)


def _defining_module(files: dict[str, str], model: str, text: str, name: str, closure: list[str]) -> str:
    """The module to append the split formula ``name``'s definitions to: ``model``, or the
    module of ``text`` where ``model`` takes it by an unnamed ``INSTANCE ... WITH``, whose
    substitutions the formula's variables must go through (TLA+-Bench 1394: ``Spec`` of
    ``x_unchanged`` with ``x <- fizzbuzz``; copied into ``model`` its subscript named an
    ``x`` that ``model`` lacks). Only where no other module of the model's ``closure``
    defines ``name``: SANY keeps the first of clashing imported definitions (a warning),
    which need not be the one found here, and the checks must split the formula TLC runs."""
    mod = next((k[:-4] for k, t in files.items() if t == text and k.endswith(".tla")), model)
    own = files.get(f"{model}.tla", "")
    if mod == model or not re.search(rf"^\s*INSTANCE\s+{re.escape(mod)}\s+WITH\b", own, re.M):
        return model
    return mod if sum(name in defined_names(t) for t in closure) == 1 else model


_ANY_INSTANCE = re.compile(r"\bINSTANCE\s+([A-Za-z0-9_]+)")


def _pairing_closure(root: str, files: dict[str, str]) -> list[str]:
    """Texts of ``root`` and every module it imports (EXTENDS, named or unnamed
    INSTANCE), root first, in a order a renamed copy keeps: to pair modules by position."""
    return _closure(root, files, instances=True, named=True)


def _closure(root: str, files: dict[str, str], *, instances: bool, named: bool = False) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    todo = [root]
    while todo:
        m = todo.pop(0)
        if m in seen or f"{m}.tla" not in files:
            continue
        seen.add(m)
        text = files[f"{m}.tla"]
        out.append(text)
        inst = (_ANY_INSTANCE if named else _UNNAMED_INSTANCE).findall(text) if instances else []
        todo += module_info(text).extends + inst
    return out


#: The two procedures of the behavior grade (``grade.behavior.mappings``): ``renaming``,
#: the paper's one-to-one maps of variables and constants; ``refinement``, that procedure
#: first and then refinement mappings (:mod:`alias.grade.behavior_refine`).
PROCEDURES = ("renaming", "refinement")

#: TLC results that can depend on the map; any other failure under the identity map
#: (eval or config error, timeout, crash) ends the search: another map cannot fix it.
_VIOLATIONS = {"invariant_violated", "property_violated", "deadlock", "assumption_violated"}


def _identity(vm: dict, cm: dict) -> bool:
    return all(a == b for a, b in vm.items()) and all(a == b for a, b in cm.items())


# --------------------------------------------------------------------------- grader
class BehaviorGrader:
    """Grades outputs against one reference; reuses the reference-side TLC runs."""

    #: The module name an output's system module is staged under.
    system_name = OUT

    def __init__(self, ref: Reference, runner: ToolRunner, *, max_maps: int = 60,
                 max_dot_bytes: int = 200_000_000, mappings: str = "refinement", max_refinements: int = 1000):
        if mappings not in PROCEDURES:
            raise ValueError(f"mappings must be one of {', '.join(PROCEDURES)}, got {mappings!r}")
        self.ref = ref = replace(ref, files=_one_module_per_text(ref.files))
        self.runner = runner
        self.max_maps = max_maps
        self.mappings = mappings
        self.max_refinements = max_refinements
        self.max_dot_bytes = max_dot_bytes
        self.cfg: Cfg = parse_cfg(ref.cfg_text)
        self.r_vars, self.r_consts = _declared(_extends_closure(ref.model_module, ref.files))
        self.modern = supports_check_deadlock(runner.config)
        self._shared: dict = {}  # reference-side results, shared by the per-call copies

    @property
    def sg(self):
        """The state-graph module (:mod:`alias.grade.stategraph`)."""
        return stategraph

    @property
    def r_control(self) -> list[str]:
        """The reference's control-label variables (Appendix I)."""
        if "control" not in self._shared:
            # Only PlusCal-style program counters: a string-valued *data* variable (a
            # traffic light's "red") must keep its values, or a wrong output could pass.
            self._shared["control"] = [v for v in self.sg.control_variables(self.ref.system_text)
                                       if v in self.r_vars and v == "pc"]
        return self._shared["control"]

    # ------------------------------------------------------------------ staging
    def _stage(self, out: OutputSide, mapping: dict[str, str], labels: dict[str, str] | None = None
               ) -> tuple[dict[str, str], str]:
        """Translate the output side by ``mapping`` (G name -> R name), rename its
        modules to ``AliasOut``/``AliasOutModel`` and return (files, model module name).
        Raises RenameError on a name capture."""
        ref = self.ref
        mods = dict(out.modules)
        system_text = _set_header(mods.pop(out.system), out.system)
        mods[out.system] = system_text
        wrapper = out.wrapper
        if wrapper is None and ref.wrapper_module:
            wrapper = ref.wrapper_module
            mods[wrapper] = ref.files[f"{wrapper}.tla"]
        mod_map = {out.system: OUT}
        if wrapper:
            mod_map[wrapper] = OUT_MODEL
        taken = {k[:-4] for k in ref.files}
        for i, name in enumerate(sorted(m for m in mods if m not in mod_map)):
            if name in taken:
                mod_map[name] = f"AliasOutM{i}"
        lib = {k[:-4]: v for k, v in ref.files.items() if k[:-4] not in mods}
        # module names first, textually (EXTENDS / INSTANCE / header): a module may share
        # its name with one of its constants (MODULE Prisoner, CONSTANT Prisoner)
        staged = {mod_map.get(m, m): _set_header(rename_module_refs(t, mod_map), mod_map.get(m, m))
                  for m, t in mods.items()}
        names = {k: v for k, v in mapping.items() if k != v and k not in staged}
        translated = rename_names(staged, names, author=set(staged), library_modules=lib) if names else staged
        if labels:
            translated = {k: replace_strings(v, labels) for k, v in translated.items()}
        files = dict(ref.files)
        for name, text in translated.items():
            files[f"{name}.tla"] = _set_header(text, name)
        return files, (OUT_MODEL if wrapper else OUT)

    # ------------------------------------------------------------------ spec location
    def _locate(self, files: dict[str, str], model: str) -> tuple[str | None, str | None, object]:
        """(module to append the split definitions to, spec name, SpecShape) or
        (None, reason, None).  A definition counts when it is visible in the module:
        its own, or one it gets by EXTENDS or an unnamed INSTANCE (``INSTANCE TwoPhase``)."""
        cfg = self.cfg
        order = [model] if model == OUT else [model, OUT]
        names: list[str] = []
        if cfg.specification:
            names.append(cfg.specification)
        names.append("Spec")
        closures = {m: visible_closure(m, files) for m in order}
        # the fallback name only in the output's system module (or its model): a ``Spec``
        # of a module it EXTENDS (TLA+-Bench 1559: LockHS extends Lock, whose Spec lacks
        # LockHS's history variables) is not the output's formula
        own = {files.get(f"{OUT}.tla"), files.get(f"{model}.tla")}
        for name in names:
            for m in order:
                texts = closures[m]
                for i, t in enumerate(texts):
                    if name != cfg.specification and t not in own:
                        continue
                    if name in defined_names(t):
                        shape = split_spec(t, name, extra=tuple(texts[:i] + texts[i + 1:]))
                        if shape is not None:
                            return _defining_module(files, m, t, name, texts), name, shape
                        break
        # the definition at the reference spec's position (module of the closure, then
        # definition order): a renamed copy keeps both, so its renamed Spec is found even
        # when the wrapper also defines other formulas of that shape (MCVoting's MCSpec)
        hit = self._positional_spec(closures[order[0]], order[0], files)
        if hit is not None:
            return hit
        # any definition of the shape I /\ [][N]_v; with several (a module that also
        # defines a channel's InChan_Spec), the one whose subscript covers the most
        # variables, then the last one defined
        found = []
        for m in order:
            texts = closures[m]
            for i, t in enumerate(texts):
                extra = tuple(texts[:i] + texts[i + 1:])
                for pos, name in enumerate(spec_shaped_definitions(t, extra)):
                    shape = split_spec(t, name, extra=extra)
                    home = _defining_module(files, m, t, name, texts)
                    found.append((self._coverage(shape, texts), pos, home, name, shape))
        if found:
            _cov, _pos, m, name, shape = max(found, key=lambda x: (x[0], x[1]))
            return m, name, shape
        if cfg.init and cfg.next:
            return None, "init_next", None
        return None, "no_spec_formula", None

    def output_init_next(self, files: dict[str, str]) -> tuple[str, str] | None:
        """Names of the staged output's initial predicate and next-state action, each
        the cfg's INIT/NEXT name, else ``Init``/``Next``, else the parameterless
        definition at the position of the reference's (a renamed copy keeps it); None
        when either is missing."""
        g_defs = definition_arities(files[f"{OUT}.tla"])
        r_defs = definition_arities(self.ref.system_text)
        names = []
        for want, plain in ((self.cfg.init, "Init"), (self.cfg.next, "Next")):
            hit = next((n for n in (want, plain) if n and g_defs.get(n) == 0), None)
            if hit is None and want in r_defs and len(r_defs) == len(g_defs):
                cand = list(g_defs)[list(r_defs).index(want)]
                hit = cand if g_defs[cand] == 0 else None
            if hit is None:
                return None
            names.append(hit)
        return names[0], names[1]

    def reference_definitions(self) -> set[str]:
        """Names the reference's model sees (definitions of its EXTENDS and unnamed
        INSTANCE closure among the task's files)."""
        if "defs" not in self._shared:
            self._shared["defs"] = {n for t in visible_closure(self.ref.model_module, self.ref.files)
                                    for n in definition_arities(t)}
        return self._shared["defs"]

    @property
    def restricted_exploration(self) -> bool:
        """Whether the cfg keeps TLC from some reachable states or identifies states
        (CONSTRAINT, ACTION_CONSTRAINT, SYMMETRY, VIEW): R's dump then shows a subset."""
        c = self.cfg
        return bool(c.constraints or c.action_constraints or c.symmetry or c.view)

    @property
    def constrained(self) -> bool:
        """Whether the cfg bounds exploration with a CONSTRAINT or ACTION_CONSTRAINT that
        mentions a reference variable (one that mentions none, such as ``TLCGet("level")
        < 6``, bounds the output's own dumps too: :meth:`variable_free_constraints`)."""
        free = set(self.variable_free_constraints())
        return any(c not in free for c in self.cfg.constraints + self.cfg.action_constraints)

    def reference_uses(self) -> dict[str, set[str]]:
        """Definition -> names it mentions, over R's model and the modules it sees
        unprefixed (:func:`definition_names_used`, module definitions included); an
        instance of module M (:func:`instance_use`) mentions the variables M declares,
        which it substitutes by name unless told otherwise (EWD998ChanID's
        ``EWD998ChanStateConstraint == EWD998Chan!StateConstraint`` mentions the
        variables). Cached per grader."""
        if "uses" not in self._shared:
            uses: dict[str, set[str]] = {}
            for t in visible_closure(self.ref.model_module, self.ref.files):
                uses.update(definition_names_used(t, instances=True))
            for key in self.ref.files:
                if key.endswith(".tla"):
                    uses[instance_use(key[:-4])] = set(_declared(_extends_closure(key[:-4], self.ref.files))[0])
            self._shared["uses"] = uses
        return self._shared["uses"]

    @staticmethod
    def output_definitions(files: dict[str, str], model: str) -> dict[str, int]:
        """Definition -> arity over the staged output's model ``model`` and the modules it
        sees unprefixed."""
        out: dict[str, int] = {}
        for t in reversed(visible_closure(model, files)):
            out.update(definition_arities(t))
        return out

    def variable_free_constraints(self) -> list[str]:
        """The cfg's CONSTRAINT entries whose definitions (R's, transitively) mention no
        reference variable: TLA+-Bench 1548 bounds the depth (``TLCGet("level") < 6``),
        which bounds a dump of the output alone just as R's."""
        if "free_constraints" not in self._shared:
            uses = self.reference_uses()
            names = set(self.r_vars)
            self._shared["free_constraints"] = [c for c in self.cfg.constraints
                                                if c in uses and not _uses_any(c, {"R": uses}, names)]
        return self._shared["free_constraints"]

    def _reference_graph_cfg(self) -> tuple[str, tuple[str, ...]]:
        c = self._cfg_base()
        c.check_deadlock = False
        c.view = None
        return self._write(c)

    def reference_graph(self):
        """R's state graph (the cfg without invariants, properties, view; deadlock
        allowed), or None; cached per grader."""
        text, flags = self._reference_graph_cfg()
        return self._once("graph", lambda: self._dump(self.ref.files, self.ref.model_module, text, flags,
                                                      "graph_reference"))

    def reference_side(self):
        """R's states for the refinement search (:class:`alias.grade.refinement.Side`):
        every reachable state within the profile limits, else its initial states; None
        when TLC gives neither. Cached per grader."""
        return self._once("side", self._reference_side)

    def _reference_side(self):
        names = {v: v for v in self.r_vars}
        c = self._cfg_base()
        c.check_deadlock, c.view = False, None
        c.constraints = list(c.constraints) + ["AliasProfileCap"]
        text, flags = self._write(c)
        files = dict(self.ref.files)
        files[f"{PROFILE_REF}.tla"] = _module(PROFILE_REF, "\n".join([f"EXTENDS {self.ref.model_module}"]
                                                                      + br.PROFILE_CAP) + "\n")
        g = self._dump(files, PROFILE_REF, text, flags, "profile_reference", profile=True)
        side = None if g is None else br.graph_side(g, names)
        if side is None:
            prefix = self.dump_prefix
            if prefix is None and self.dump_error is None:  # over the limit in bytes: a shorter cut's levels
                prefix = self._reference_cut(files, c)
            init = self._init_graph(self.ref.files, self.ref.model_module, self.r_vars,
                                    None if self.cfg.specification else self.cfg.init, profile=True)
            side = None if init is None else br.graph_side(init, names, reachable=False).with_prefix(
                br.renamed_levels(prefix, names))
        return side

    def _reference_cut(self, files: dict[str, str], c) -> list | None:
        """The complete levels of R's dump cut at :data:`alias.grade.behavior_refine.PROFILE_CUT_STATES`
        (``[states, levels, depth]``), where its profile is over the limit in bytes."""
        g = self._reference_cut_graph(files, c)
        return None if g is None else br.cut_levels(g)

    def _reference_cut_graph(self, files: dict[str, str], c):
        files = dict(files)
        files[f"{PROFILE_REF}.tla"] = _module(PROFILE_REF, "\n".join([f"EXTENDS {self.ref.model_module}"]
                                                                      + br.PROFILE_CAP + [br.CUT_CAP]) + "\n")
        c.constraints = [x for x in c.constraints if x != "AliasProfileCap"] + ["AliasCutCap"]
        text, flags = self._write(c)
        return self._dump(files, PROFILE_REF, text, flags, "profile_reference_cut", profile=True)

    def reference_cut_values(self) -> dict[str, list[str]] | None:
        """R's variables -> the distinct value texts of its first
        :data:`alias.grade.behavior_refine.PROFILE_CUT_STATES` states (TLC's dump cut there),
        for those with at most :data:`alias.grade.behavior_refine.PROFILE_VALUES_LIMIT`; None
        when TLC gives no such dump. Where no profile prunes the search, these samples
        show each function's domain (:meth:`alias.grade.behavior_refine.Refiner._unprofiled`)."""
        def compute():
            c = self._cfg_base()
            c.check_deadlock, c.view = False, None
            g = self._reference_cut_graph(self.ref.files, c)
            return None if g is None else br.few_values(g.nodes.values(), br.PROFILE_VALUES_LIMIT)
        return self._once("cut_values", compute)

    def _positional_spec(self, g_texts: list[str], model: str, files: dict[str, str]):
        """``(model, name, shape)`` of the output definition at the position of the
        reference's specification formula (the cfg's SPECIFICATION, else ``Spec``) in the
        visible closures of both models, if it has the shape ``I /\\ [][N]_v``; else None."""
        r_texts = visible_closure(self.ref.model_module, self.ref.files)
        for name in [n for n in (self.cfg.specification, "Spec") if n]:
            for i, t in enumerate(r_texts):
                r_defs = list(definition_arities(t))
                if name not in r_defs:
                    continue
                if i >= len(g_texts):
                    return None
                g_defs = list(definition_arities(g_texts[i]))
                k = r_defs.index(name)
                if k >= len(g_defs) or len(g_defs) != len(r_defs):
                    return None
                extra = tuple(g_texts[:i] + g_texts[i + 1:])
                shape = split_spec(g_texts[i], g_defs[k], extra=extra)
                return (_defining_module(files, model, g_texts[i], g_defs[k], g_texts), g_defs[k], shape) \
                    if shape is not None else None
        return None

    def _coverage(self, shape, texts: list[str]) -> int:
        """How many of the reference's variables the subscript ``v`` of ``shape`` names
        (directly, or through the definition it names, e.g. ``vars``)."""
        v = shape.vars.text
        words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", v))
        for t in texts:
            m = re.search(rf"^{re.escape(v.strip())}\s*==(.*?)(?=^\S|\Z)", t, re.M | re.S) \
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v.strip()) else None
            if m:
                words |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", m.group(1)))
        return len(words & set(self.r_vars))

    # ------------------------------------------------------------------ cfg builders
    def _cfg_base(self) -> Cfg:
        c = copy.deepcopy(self.cfg)
        c.invariants, c.properties = [], []
        c.alias, c.postcondition, c.possible = None, None, []
        return c

    def _write(self, c: Cfg) -> tuple[str, tuple[str, ...]]:
        return for_jar(c, self.modern, supports_alias=self.modern)

    def forward(self, files: dict[str, str], model: str, spec_name: str | None) -> CheckResult:
        """TLC runs G's specification formula and checks R's formula, invariants and
        properties.  The root module EXTENDS R's model and instantiates G's
        (``AliasG == INSTANCE <model>``): TLC pre-evaluates the constant-level
        definitions of the root's EXTENDS closure once, but not those of a module it
        instantiates with parameters, so R's invariants (``TypeOK`` over a set such as
        ``SortedSeqs``) are evaluated as in R's own model run instead of once per state.
        The output side gets the cfg's definition overrides qualified with its module
        (``X <- [AliasOut] d``), as in :meth:`reverse`."""
        cfg = self.cfg
        defs = [f"EXTENDS {self.ref.model_module}", f"AliasG == INSTANCE {model}"] + self.reference_checks()
        c = self._cfg_base()
        c.invariants = [f"AliasRefInv{i}" for i in range(len(cfg.invariants))]
        c.properties = ["AliasRefSpec"] + [f"AliasRefProp{i}" for i in range(len(cfg.properties))]
        # INIT/NEXT cfg: the staged AliasOutInit/AliasOutNext name the output's own (renamed) pair
        return self._run_output(files, spec_name, defs, c, "forward", ("AliasOutInit", "AliasOutNext"))

    def _run_output(self, files: dict[str, str], spec_name: str | None, defs: list[str], c: Cfg,
                    purpose: str, init_next: tuple[str, str]) -> CheckResult:
        """TLC on the root module ``defs`` (which instantiates the output as ``AliasG``)
        with cfg ``c``, the behavior being the output's formula ``spec_name`` or, where the
        cfg uses INIT/NEXT, its definitions ``init_next``; the output side gets the cfg's
        definition overrides qualified with its module."""
        if spec_name is not None:
            defs = defs + [f"AliasGSpec == AliasG!{spec_name}"]
            c.specification, c.init, c.next = "AliasGSpec", None, None
        else:
            defs = defs + [f"AliasGInit == AliasG!{init_next[0]}", f"AliasGNext == AliasG!{init_next[1]}"]
            c.specification, c.init, c.next = None, "AliasGInit", "AliasGNext"
        consts, own = self._output_overrides(files)
        c.constants += consts
        files = dict(files)
        files[f"{FORWARD}.tla"] = _module(FORWARD, "\n".join(defs + own) + "\n")
        text, flags = self._write(c)
        return self._tlc(files, FORWARD, text, flags, purpose)

    def reference_checks(self) -> list[str]:
        """Root definitions of what the forward check verifies, with R's definitions:
        ``AliasRefSpec`` (the cfg's SPECIFICATION, or ``INIT /\\ [][NEXT]_vars``),
        ``AliasRefInv<i>`` and ``AliasRefProp<i>`` (the cfg's invariants and properties)."""
        cfg = self.cfg
        if cfg.specification:
            defs = [f"AliasRefSpec == {cfg.specification}"]
        else:
            vs = ", ".join(self.r_vars)
            defs = [f"AliasRefSpec == {cfg.init} /\\ [][{cfg.next}]_<<{vs}>>"]
        defs += [f"AliasRefInv{i} == {n}" for i, n in enumerate(cfg.invariants)]
        defs += [f"AliasRefProp{i} == {n}" for i, n in enumerate(cfg.properties)]
        return defs

    def _output_overrides(self, files: dict[str, str]) -> tuple[list[Constant], list[str]]:
        """The cfg's overrides of definitions, qualified for the staged output modules
        (every staged file the reference does not have as is): the root is R's model,
        so an unqualified entry reaches only R's definitions. Returns the cfg entries and
        the root definitions they need (:meth:`_own_replacements`)."""
        extra = [Constant(const.name, const.op, const.value, mod)
                 for const, mod in self._overrides(files, self._output_modules(files))
                 if const.op == "=" or not const.module]
        return self._own_replacements(extra + self._qualified_for_output(files), files)

    def _own_replacements(self, consts: list[Constant], files: dict[str, str]) -> tuple[list[Constant], list[str]]:
        """TLC reads the replacement of ``X <- [AliasOut] D`` in the root, R's model. When the
        output side defines ``D`` with its own operators (MCCRDT's ``Next <- ReductionNext``,
        ``ReductionNext`` composing the system module's ``Increment`` and ``Gossip``), R's
        ``D`` would check R's actions in G's place; such an entry gets the output's
        ``D`` instead, through a root definition ``AliasGOvN == AliasG!D``. So does a ``D``
        that mentions output variables staged under names of their own (the refinement
        procedure's: MCtcp's ``Init <- MCInit``, ``MCInit`` over the variables, would
        otherwise give R's variables, not G's, their initial values)."""
        texts = {m: files[f"{m}.tla"] for m in self._output_modules(files)}
        uses = {m: definition_names_used(t) for m, t in texts.items()}
        own_vars = {v for t in texts.values() for v in module_info(t).variables} - set(self.r_vars)
        targets = set(uses.get(OUT, {})) | own_vars
        out, own, alias = [], [], {}
        for const in consts:
            if const.op == "<-" and _uses_any(const.value, uses, targets):
                if const.value not in alias:
                    alias[const.value] = f"AliasGOv{len(alias)}"
                    k = next(definition_arities(t)[const.value] for m, t in texts.items()
                             if const.value in uses[m])
                    ps = f"({', '.join(f'p{i}' for i in range(k))})" if k else ""
                    own.append(f"{alias[const.value]}{ps} == AliasG!{const.value}{ps}")
                const = replace(const, value=alias[const.value])
            out.append(const)
        return out, own

    def reverse(self, files: dict[str, str], model: str) -> CheckResult:
        ref = self.ref
        body = (f"EXTENDS {ref.model_module}\nAliasG == INSTANCE {model}\n"
                "AliasGVars == AliasG!AliasOutVars\n"
                "AliasGSafety == AliasG!AliasOutInit /\\ [][AliasG!AliasOutNext]_AliasGVars\n")
        c = self._cfg_base()
        c.properties = ["AliasGSafety"]
        c.check_deadlock = False
        consts, own = self._output_overrides(files)
        c.constants += consts
        files = dict(files)
        files[f"{REVERSE}.tla"] = _module(REVERSE, body + "".join(d + "\n" for d in own))
        text, flags = self._write(c)
        return self._tlc(files, REVERSE, text, flags, "reverse")

    def _output_modules(self, files: dict[str, str]) -> tuple[str, ...]:
        """The staged output side: every staged module the reference does not have as is."""
        return tuple(k[:-4] for k, t in files.items()
                     if k[:-4] not in (FORWARD, REVERSE) and self.ref.files.get(k) != t)

    def _qualified_for_output(self, files: dict[str, str]) -> list[Constant]:
        """A qualified cfg override ``X = [Mod] v`` (or ``X <- [Mod] d``) again for each
        staged output module other than ``Mod`` that defines ``X`` after translation: the
        output's copy of ``Mod`` under another name (a renamed imported module) needs it
        too, or TLC evaluates the definition the cfg replaces (an unbounded CHOOSE)."""
        declared = set(self.r_consts)
        out_mods = self._output_modules(files)
        extra = []
        for const in self.cfg.constants:
            if not const.module or const.name in declared:
                continue
            for m in out_mods:
                if m != const.module and const.name in definition_arities(files[f"{m}.tla"]):
                    extra.append(Constant(const.name, const.op, const.value, m))
        return extra

    def _overrides(self, files: dict[str, str], modules) -> list[tuple[Constant, str]]:
        """(cfg entry, module) for every unqualified cfg entry that overrides a
        *definition* (not a declared constant) which ``modules`` define."""
        declared = set(self.r_consts)
        out = []
        for const in self.cfg.constants:
            if const.module or const.name in declared:
                continue
            for m in modules:
                key = f"{m}.tla"
                if key in files and const.name in definition_arities(files[key]):
                    out.append((const, m))
        return out

    def _tlc(self, files, main, cfg_text, flags, purpose) -> CheckResult:
        r = self.runner.tlc(files, main, cfg_text, flags, purpose=purpose)
        detail = None if r.kind == "success" else (r.error_message or r.kind)
        return CheckResult(r.kind == "success", r.kind, detail, r.distinct_states)

    # ------------------------------------------------------------------ init values
    def _init_values(self, files: dict[str, str], model: str, variables: list[str],
                     init: str | None) -> dict[str, frozenset] | None:
        """Set of initial values per variable (TLC with no step allowed), or None."""
        g = self._init_graph(files, model, variables, init)
        if g is None:
            return None
        out: dict[str, set] = {v: set() for v in variables}
        for state in g.nodes.values():
            for v in variables:
                if v in state:
                    out[v].add(state[v])
        return {v: frozenset(s) for v, s in out.items()}

    def _init_graph(self, files: dict[str, str], model: str, variables: list[str], init: str | None,
                    profile: bool = False):
        """TLC's dump of the initial states (no step allowed; ``profile``: within the
        refinement search's profile limits), or None."""
        c = self._cfg_base()
        c.constraints, c.action_constraints, c.symmetry, c.view = [], ["AliasNoStep"], None, None
        c.check_deadlock = False
        if init is not None:
            c.specification, c.init, c.next = None, init, "AliasNoNext"
        vs = ", ".join(variables)
        body = (f"EXTENDS {model}\nAliasNoStep == UNCHANGED <<{vs}>> /\\ ~UNCHANGED <<{vs}>>\n"
                f"AliasNoNext == UNCHANGED <<{vs}>>\n")
        files = dict(files)
        files[f"{INIT_DUMP}.tla"] = _module(INIT_DUMP, body)
        text, flags = self._write(c)
        if profile:
            return self._dump(files, INIT_DUMP, text, flags, "profile_reference_initial", profile=True)
        return self._dump(files, INIT_DUMP, text, flags, "init_dump")

    def _dump(self, files: dict[str, str], main: str, cfg_text: str, flags, purpose: str, *,
              profile: bool = False):
        """The state graph TLC dumps for this run (cached by run key), or None.
        ``profile``: a dump that prunes the refinement search, within its limits in bytes
        (part of the cache key) and states (:data:`alias.grade.behavior_refine.PROFILE_MAX_STATES`,
        which the run's cfg enforces): one that reaches either is remembered as ``too_large``,
        and one that reaches the state limit leaves the values it saw (:attr:`dump_values`)."""
        cap = br.PROFILE_MAX_BYTES if profile else self.max_dot_bytes
        key = "dot-" + tlc_run_key(files, main, cfg_text, self.runner.config, flags) + \
            (f"-cap{cap}" if profile else "")
        hit = self.runner.load_extra(key)
        self.dump_error = None  # TLC's message where the dump failed (the refinement search reads it)
        #: variable -> the distinct value texts of a profile cut at its state limit (the
        #: first states TLC found), where it has at most ``PROFILE_VALUES_LIMIT`` of them
        self.dump_values: dict[str, list[str]] | None = None
        #: the complete breadth-first levels of a profile cut at its state limit,
        #: ``[states, levels, depth]`` (:func:`alias.grade.refinement.complete_levels`)
        self.dump_prefix: list | None = None
        if hit is not None and not (profile and hit.get("kind") == "too_large" and "prefix" not in hit):
            self.runner._record(Call("tlc", key, hit.get("kind", "success"), True, 0.0, purpose))
            if hit.get("kind") != "success":
                self.dump_error, self.dump_values = hit.get("error"), hit.get("values")
                self.dump_prefix = hit.get("prefix")
                return None
            return self.sg.StateGraph(nodes=hit["nodes"], edges=[tuple(e) for e in hit["edges"]],
                                      initial=hit["initial"])
        g = self.sg.dump_state_graph(files, main, cfg_text, self.runner.config, flags, max_dot_bytes=cap)
        tlc = g.tlc
        ok = isinstance(g, self.sg.StateGraph)
        self.runner._record(Call("tlc", key, tlc.kind if tlc else "crash", False, tlc.wall_s if tlc else 0.0,
                                 purpose))
        if ok and profile and len(g.nodes) >= br.PROFILE_MAX_STATES:
            self.dump_values = br.few_values(g.nodes.values(), br.PROFILE_VALUES_LIMIT)
            self.dump_prefix = br.cut_levels(g)
            ok, g = False, self.sg.DumpFailure("too_large", "the profile's state limit", tlc)
        if ok:
            self.runner.store_extra(key, {"kind": "success", "nodes": g.nodes, "edges": g.edges,
                                          "initial": g.initial})
            return g
        self.dump_error = tlc.error_message if tlc else None
        if g.kind not in ("timeout", "crash"):
            entry = {"kind": g.kind, "error": self.dump_error}
            if profile and g.kind == "too_large":
                entry["values"], entry["prefix"] = self.dump_values or {}, self.dump_prefix
            self.runner.store_extra(key, entry)
        return None

    def reference_init_values(self) -> dict[str, frozenset] | None:
        """The reference's initial values per variable, computed once per grader; every
        output that uses them records the TLC run they came from (as cached after the
        first), so its ``run_keys`` do not depend on which output came first."""
        init = None if self.cfg.specification else self.cfg.init
        return self._once("init", lambda: self._init_values(self.ref.files, self.ref.model_module, self.r_vars, init))

    def _once(self, key: str, compute):
        """``compute()`` once per grader (shared by its per-output copies); every output
        that uses the result records the tool runs it came from (as cached after the first),
        so an output's ``run_keys`` do not depend on which output came first."""
        if key not in self._shared:
            before = len(self.runner.calls)
            value = compute()
            self._shared[f"{key}_calls"] = list(self.runner.calls[before:])
            self._shared[key] = value
        else:
            for c in self._shared.get(f"{key}_calls", []):
                self.runner._record(replace(c, cached=True, wall_s=0.0))
        return self._shared[key]

    # ------------------------------------------------------------------ main
    def grade(self, out: OutputSide) -> BehaviorVerdict:
        """Grade one output side; thread-safe (each call works on a shallow copy with
        its own call list; the reference's initial values are shared)."""
        worker = copy.copy(self)
        worker.runner = self.runner.child()
        return worker._grade(out)

    def _grade(self, out: OutputSide) -> BehaviorVerdict:
        self._tried_maps: set = set()
        if not self.r_vars and self.mappings == "renaming":
            return self._done(BehaviorVerdict(passed=False),
                              "reference_without_variables: a constant-level reference has no behavior to compare")
        if not self.r_vars:
            return self._grade_constant_level(out)
        if self.mappings == "renaming":
            return self._grade_renaming(out)
        return self._grade_refinement(out)

    def _grade_constant_level(self, out: OutputSide) -> BehaviorVerdict:
        """A reference without variables (TLA+-Bench 967, Stones: an ASSUME that prints a
        solution) has no behavior to compare: the behaviors of two variable-free modules
        are alike, and what TLC can check of either is its assumptions. So the output must
        declare no variable either, and TLC evaluates its assumptions under the task's cfg
        (its constants mapped onto R's, :func:`alias.grade.behavior_refine.constant_maps`):
        a pass (``method`` ``constant_level``) when they hold under some constant map, as in
        the name grade; else the last map's reason."""
        g_vars, g_consts = self._output_declared(out)
        v = BehaviorVerdict(passed=False)
        if g_vars:
            return self._done(v, f"variable_count_differs: reference 0, output {len(g_vars)}")
        reason, tried = "no_constant_map", 0
        text, flags = self._write(self._cfg_base())
        for cm in br.constant_maps(self.r_consts, g_consts):
            try:
                files, model = self._stage(out, {g: r for r, g in cm.items()})
            except RenameError as e:
                reason = f"name_capture: {e}"
                continue
            tried += 1
            res = self._tlc(files, model, text, flags, "constant_level")
            v.mapping = {"variables": {}, "constants": dict(cm), "labels": {}}
            v.forward, v.distinct_states, v.error_text = res.kind, res.distinct_states, res.detail
            v.attempts.append(f"constant level {cm}: {res.kind}{': ' + res.detail[:200] if res.detail else ''}")
            if res.passed:
                return self._done(v, None, tried, method="constant_level")
            reason = f"constant_level_{res.kind}"
        return self._done(v, reason, tried)

    def _output_declared(self, out: OutputSide) -> tuple[list[str], list[str]]:
        """The output's variables and constants: those of its model's EXTENDS closure."""
        g_files = {k: v for k, v in self.ref.files.items() if k != f"{self.ref.system_module}.tla"}
        g_files.update({f"{m}.tla": t for m, t in out.modules.items()})
        g_root = out.wrapper or (self.ref.wrapper_module if self.ref.wrapper_module else out.system)
        if not out.wrapper and self.ref.wrapper_module:
            g_files[f"{self.ref.system_module}.tla"] = out.modules[out.system]
        return _declared(_extends_closure(g_root, g_files))

    def _grade_refinement(self, out: OutputSide) -> BehaviorVerdict:
        """The paper's procedure where the counts agree; failing it, refinement mappings
        (:class:`alias.grade.behavior_refine.Refiner`)."""
        g_vars, g_consts = self._output_declared(out)
        first = None
        if len(g_vars) == len(self.r_vars) and len(g_consts) == len(self.r_consts):
            first = self._grade_renaming(out, data_graph=False)
            if first.passed or (first.reason or "").startswith(("output_syntax_error", "forward_parse_error")):
                return first  # a pass, or a module no mapping can make parse
        elif not g_vars and self.r_vars and module_info(out.modules[out.system]).has_errors:
            return self._done(BehaviorVerdict(passed=False), "output_syntax_error: no variable declaration readable")
        if not g_vars:
            return first or self._done(BehaviorVerdict(passed=False), "output_declares_no_variable")
        self._defs = self._overridden_definitions(out)
        v = BehaviorVerdict(passed=False, attempts=list(first.attempts) if first else [])
        r = br.Refiner(self, out, v)
        reason = r.run(g_vars, g_consts, self._tried_maps, self.max_refinements)
        if reason is not None and self.r_control:
            # Appendix I last: its graphs see safety only, so every mapping that TLC can
            # check with R's whole formula (fairness included) comes first
            best = getattr(self, "_best_map", None) if first is not None else None
            if best is not None and self._data_graph(out, best[0], best[1], v):
                return self._done(v, None, (first.maps_tried if first else 0) + r.tried, method="data_graph")
            if self.data_graph_sound(v):
                graph_reason = r.run_data_graph(g_vars, g_consts, self.max_refinements)
                if graph_reason is None:
                    return self._done(v, None, (first.maps_tried if first else 0) + r.tried,
                                      method="data_graph_mapping")
        tried = (first.maps_tried if first else 0) + r.tried
        if reason is None:
            return self._done(v, None, tried, method="refinement_mapping")
        if first is not None and r.tried == 0 and not r.searched:
            # no dump to search (TLC could not run the output alone): the paper's verdict
            first.attempts = v.attempts + [f"refinement: {reason}"]
            return self._done(first, first.reason, tried, method=None)
        return self._done(v, reason, tried)

    def check_mapping(self, out: OutputSide, match, consts: dict[str, str]) -> BehaviorVerdict:
        """The forward and reverse checks of ``out`` under one given refinement mapping
        (:class:`alias.grade.refinement.Match`) and constant map ``consts`` (R -> G): how
        the equivalence controls confirm a variant with the mapping its generator knows.
        Passed, or failed with the reason; never raises for a bad output."""
        worker = copy.copy(self)
        worker.runner = self.runner.child()
        worker._tried_maps = set()
        worker._defs = worker._overridden_definitions(out)
        g_vars, g_consts = worker._output_declared(out)
        v = BehaviorVerdict(passed=False)
        r = br.Refiner(worker, out, v)
        st = r.stage(dict(consts), g_vars, g_consts)
        if isinstance(st, str):
            return worker._done(v, st)
        reason = r.check(st, match)
        return worker._done(v, reason, 1, method=None if reason else "refinement_mapping")

    def _grade_renaming(self, out: OutputSide, data_graph: bool = True) -> BehaviorVerdict:
        """The paper's procedure: one-to-one maps of variables and constants; with
        ``data_graph``, Appendix I's graph comparison as its last resort (the refinement
        procedure runs it after its own search instead, :meth:`_grade_refinement`)."""
        v = BehaviorVerdict(passed=False)
        self._best_map = None
        g_vars, g_consts = self._output_declared(out)
        refusal = self._count_refusal(out, g_vars, g_consts)
        if refusal:
            return self._done(v, refusal)
        self._defs = self._overridden_definitions(out)
        ended, tried, best = self._search_renamings(out, g_vars, g_consts, v)
        if ended is not None:
            return ended
        if self.r_control and best is not None:
            return self._appendix_i(out, best, tried, v, data_graph)
        return self._done(v, v.reason or "no_map_passes", tried)

    def _count_refusal(self, out: OutputSide, g_vars: list[str], g_consts: list[str]) -> str | None:
        """Why the paper's one-to-one maps cannot apply, or None."""
        if not g_vars and self.r_vars and module_info(out.modules[out.system]).has_errors:
            # a module tree-sitter cannot read declares nothing it can see: say so, not
            # "output 0 variables" for an output that has a VARIABLE line
            return "output_syntax_error: no variable declaration readable"
        if len(g_vars) != len(self.r_vars):
            return f"variable_count_differs: reference {len(self.r_vars)}, output {len(g_vars)}"
        if len(g_consts) != len(self.r_consts):
            return f"constant_count_differs: reference {len(self.r_consts)}, output {len(g_consts)}"
        return None

    def _search_renamings(self, out: OutputSide, g_vars: list[str], g_consts: list[str],
                          v: BehaviorVerdict) -> tuple[BehaviorVerdict | None, int, tuple | None]:
        """Try the maps of constants and variables: ``(final verdict or None, maps tried,
        best (constant map, variable map) for Appendix I)``."""
        # a constant keeps a constant of the same name (the cfg assigns values by name);
        # only the differently named ones are permuted
        const_maps = bijections(self.r_consts, g_consts,
                                 lambda a, b: (a == b) if (a in g_consts or b in self.r_consts) else True)
        var_maps = bijections(self.r_vars, g_vars)
        tried, best = 0, None
        for n_cm, cm in enumerate(const_maps):
            # the first constant map tries the best variable map at once (the cheap path
            # for a correct output); later ones only maps that TLC's initial values allow
            cands = var_maps[:1] if n_cm == 0 else list(self._pruned_var_maps(out, cm, g_vars))
            done: list[dict] = []
            while cands:
                vm = cands.pop(0)
                if vm in done:
                    continue
                done.append(vm)
                if tried >= self.max_maps:
                    return self._done(v, v.reason or "no_map_passes", tried), tried, best
                tried += 1
                res = self._try(out, cm, vm, None, v)
                if res == "passed":
                    return self._done(v, None, tried, method="renaming"), tried, best
                if res == "fatal":
                    # a TLC error no map can fix; a reference with control labels still
                    # gets the state-graph comparison of Appendix I
                    if not (self.r_control and (v.reason or "").startswith(("forward_", "reverse_"))):
                        return self._done(v, v.reason, tried), tried, best
                    return None, tried, best or (cm, vm)
                best = best or (cm, vm)
                if n_cm == 0 and not cands and len(done) == 1 and len(var_maps) > 1:
                    cands = [m for m in self._pruned_var_maps(out, cm, g_vars) if m not in done]
        return None, tried, best

    def _appendix_i(self, out: OutputSide, best: tuple, tried: int, v: BehaviorVerdict,
                    data_graph: bool) -> BehaviorVerdict:
        """Appendix I for a reference with control-label variables: maps of its labels
        under the best map found, then (with ``data_graph``) the data-graph comparison."""
        cm, vm = best
        for labels in self._label_maps(out, vm):
            if tried >= self.max_maps:
                break
            tried += 1
            if self._try(out, cm, vm, labels, v) == "passed":
                return self._done(v, None, tried, method="label_map")
        self._best_map = best
        if data_graph and self._data_graph(out, cm, vm, v):
            return self._done(v, None, tried, method="data_graph")
        return self._done(v, v.reason or "no_map_passes", tried)

    def _done(self, v: BehaviorVerdict, reason, tried: int = 0, method=None) -> BehaviorVerdict:
        v.reason = reason
        v.passed = reason is None
        v.method = method
        v.maps_tried = tried
        v.calls = list(self.runner.calls)
        return v

    def _mapping_of(self, cm, vm, labels) -> dict[str, str]:
        # G name -> R name for staging
        m = dict(getattr(self, "_defs", {}))
        m.update({g: r for r, g in cm.items()})
        m.update({g: r for r, g in vm.items()})
        return m

    def _repeated(self, v: BehaviorVerdict, res: CheckResult, limit: int = 3) -> str:
        """End the search when ``limit`` maps in a row fail with the same error that is
        not a violation (same kind and first message line: e.g. an unbounded CHOOSE
        that no map can fix)."""
        if res.kind in _VIOLATIONS:
            self._last_errors = []
            return "next"
        first = re.sub(r"line \d+, col \d+.*", "", (res.detail or "").splitlines()[0] if res.detail else "")
        sig = (res.kind, first)
        errs = getattr(self, "_last_errors", [])
        errs = (errs + [sig])[-limit:]
        self._last_errors = errs
        if len(errs) == limit and len(set(errs)) == 1:
            v.attempts.append(f"{limit} maps in a row fail with the same {res.kind}: search ended")
            return "fatal"
        return "next"

    def _overridden_definitions(self, out: OutputSide) -> dict[str, str]:
        """G name -> R name for the definitions the cfg overrides by name (``None =
        None``, ``Ballot <- MCBallot``, and the ``MCBallot`` of it): TLC needs them under
        the cfg's names.  A name the output defines maps to itself; otherwise the output's
        definition at the same position (definition order in the system / wrapper module, same arity) is
        taken -- the order a renamed copy keeps.  Unmatched names are left alone (the
        output then lacks a name the cfg needs, a hidden-name failure)."""
        ref = self.ref
        declared = set(self.r_consts)
        # unqualified overrides, and qualified ones (``NoHash = [Nano] NoHashVal``) whose
        # module the output renamed: both need the cfg's name on the output's definition
        names = {c.name for c in self.cfg.constants if c.name not in declared}
        # and the right-hand side of a substitution (``Seq <- LimitedSeq``, ``Lim <- [Sys]
        # MCLim``): TLC looks it up in the model, where a renamed wrapper calls it otherwise
        names |= {c.value.strip() for c in self.cfg.constants if c.op == "<-"}
        # pair the reference's modules with the output's: the closures (EXTENDS and
        # unnamed INSTANCE) of both models, position by position
        g_files = {k: v for k, v in ref.files.items() if k != f"{ref.system_module}.tla"}
        g_files.update({f"{m}.tla": t for m, t in out.modules.items()})
        if not out.wrapper and ref.wrapper_module:
            g_files[f"{ref.system_module}.tla"] = out.modules[out.system]
        g_root = out.wrapper or (ref.wrapper_module if ref.wrapper_module else out.system)
        pairs = list(zip(_pairing_closure(ref.model_module, ref.files), _pairing_closure(g_root, g_files)))
        out_defs: set[str] = set()
        for _, g_text in pairs:
            out_defs |= set(definition_arities(g_text))
        result: dict[str, str] = {}
        for r_text, g_text in pairs:
            r_ar = definition_arities(r_text)
            g_ar = definition_arities(g_text)
            r_list, g_list = list(r_ar), list(g_ar)
            for name in sorted(names):
                if name in out_defs or name not in r_ar:
                    continue
                i = r_list.index(name)
                if i < len(g_list) and g_ar[g_list[i]] == r_ar[name] and g_list[i] not in result \
                        and g_list[i] not in r_ar:
                    result[g_list[i]] = name
        return result

    def _try(self, out: OutputSide, cm, vm, labels, v: BehaviorVerdict) -> str:
        v.mapping = {"variables": dict(vm), "constants": dict(cm), "labels": dict(labels or {})}
        try:
            files, model = self._stage(out, self._mapping_of(cm, vm, labels), labels)
        except RenameError as e:
            v.attempts.append(f"map {vm} {cm}: name capture ({e})")
            v.reason = "name_capture"
            return "next"
        except Exception as e:  # a module tree-sitter cannot resolve
            v.attempts.append(f"map {vm} {cm}: staging failed ({type(e).__name__}: {e})")
            v.reason = f"staging_failed: {type(e).__name__}"
            return "fatal"
        mod, name, shape = self._locate(files, model)
        if shape is None and name != "init_next":
            v.reason = name
            return "fatal"
        if shape is not None:
            files = dict(files)
            key = f"{mod}.tla"
            files[key] = append_definitions(files[key], definition_block("AliasOut", shape))
        else:  # INIT/NEXT cfg: the output's initial predicate and next-state action
            pair = self.output_init_next(files)
            if pair is None:
                v.reason = "no_init_next"
                return "fatal"
            vs = ", ".join(self.r_vars)
            files = dict(files)
            files[f"{OUT}.tla"] = append_definitions(
                files[f"{OUT}.tla"], f"AliasOutInit == {pair[0]}\nAliasOutNext == {pair[1]}\nAliasOutVars == <<{vs}>>\n")
        if not labels:  # checked under this renaming: the refinement search need not again
            self._tried_maps.add((frozenset(cm.items()), frozenset(vm.items())))
        fwd = self.forward(files, model, name if shape is not None else None)
        v.forward, v.distinct_states, v.error_text = fwd.kind, fwd.distinct_states, fwd.detail
        if not fwd.passed:
            v.attempts.append(f"map {vm} {cm} {labels or ''}: forward {fwd.kind}: {(fwd.detail or '')[:200]}")
            v.reason = f"forward_{fwd.kind}"
            if fwd.kind == "parse_error" or (fwd.kind not in _VIOLATIONS and _identity(vm, cm)):
                return "fatal"  # not caused by the map: no other map can help
            return self._repeated(v, fwd)
        rev = self.reverse(files, model)
        v.reverse, v.error_text = rev.kind, rev.detail
        if not rev.passed:
            v.attempts.append(f"map {vm} {cm} {labels or ''}: reverse {rev.kind}: {(rev.detail or '')[:200]}")
            v.reason = f"reverse_{rev.kind}"
            if rev.kind not in _VIOLATIONS and _identity(vm, cm):
                return "fatal"
            return self._repeated(v, rev)
        v.attempts.append(f"map {vm} {cm} {labels or ''}: forward and reverse pass")
        return "passed"

    def _pruned_var_maps(self, out: OutputSide, cm: dict, g_vars: list[str]) -> list[dict]:
        """Variable maps whose paired initial-value sets agree (Methods: pruned by TLC)."""
        r_init = self.reference_init_values()
        try:
            files, model = self._stage(out, {g: r for r, g in cm.items()})
        except Exception:
            files = None
        g_init = None
        if files is not None and r_init is not None:
            mod, name, shape = self._locate(files, model)
            init = None
            if shape is not None:
                files = dict(files)
                files[f"{mod}.tla"] = append_definitions(files[f"{mod}.tla"], definition_block("AliasOut", shape))
                init = "AliasOutInit"
            elif name == "init_next":
                pair = self.output_init_next(files)
                init = pair[0] if pair else None
            if init is not None:
                g_init = self._init_values(files, model, g_vars, init)
        control = set(self.r_control)
        if r_init is None or g_init is None:
            return bijections(self.r_vars, g_vars)[: self.max_maps]

        def compatible(r: str, g: str) -> bool:
            if r in control:  # label values may differ by name
                return all(x.startswith('"') for x in g_init.get(g, ())) and \
                    len(g_init.get(g, ())) == len(r_init.get(r, ()))
            return r_init.get(r) == g_init.get(g)

        return bijections(self.r_vars, g_vars, compatible)[: self.max_maps]

    def _label_maps(self, out: OutputSide, vm: dict) -> list[dict[str, str]]:
        """Candidate maps G label -> R label for the control variables (Appendix I)."""
        maps: list[dict[str, str]] = []
        g_text = out.modules[out.system]
        for r_var in self.r_control:
            g_var = vm.get(r_var, r_var)
            r_labels = self.sg.control_label_values(self.ref.system_text, r_var)
            g_labels = self.sg.control_label_values(g_text, g_var)
            if not r_labels or len(r_labels) != len(g_labels):
                continue
            shared = [x for x in r_labels if x in g_labels]
            rs = [x for x in r_labels if x not in shared]
            gs = [x for x in g_labels if x not in shared]
            m = {x: x for x in shared} | dict(zip(gs, rs))  # G -> R, order of appearance
            if any(a != b for a, b in m.items()):
                maps.append(m)
            m2 = dict(zip(g_labels, r_labels))
            if m2 != m and any(a != b for a, b in m2.items()):
                maps.append(m2)
        return maps

    def _data_graph(self, out: OutputSide, cm: dict, vm: dict, v: BehaviorVerdict) -> bool:
        """Appendix I fallback: the projected state graphs on the data variables must
        accept the same sequences of observable states."""
        data = [x for x in self.r_vars if x not in self.r_control]
        if not data or not self.data_graph_sound(v):
            return False
        try:
            files, model = self._stage(out, self._mapping_of(cm, vm, None))
        except Exception:
            return False
        mod, name, shape = self._locate(files, model)
        c = self._cfg_base()
        c.check_deadlock = False
        c.view = None
        rtext, rflags = self._write(c)
        rg = self._dump(self.ref.files, self.ref.model_module, rtext, rflags, "graph_reference")
        if rg is None:
            v.attempts.append("data graph: reference state graph not available")
            return False
        gc = copy.deepcopy(c)
        # the output runs alone here: a qualified override of a reference module the
        # output does not load is dropped (TLC rejects it), the output's copy gets it
        present = {module_info(t).name for t in _pairing_closure(model, files)}
        gc.constants = [k for k in gc.constants
                        if not (k.module and k.module in self.ref.author_modules and k.module not in present)]
        gc.constants += self._qualified_for_output(files)
        if shape is not None:
            gc.specification, gc.init, gc.next = name, None, None
        gtext, gflags = self._write(gc)
        gg = self._dump(files, model, gtext, gflags, "graph_output")
        if gg is None:
            v.attempts.append("data graph: output state graph not available")
            return False
        same, witness = self.sg.equivalent_observable(self.sg.project(rg, data), self.sg.project(gg, data))
        v.attempts.append(f"data graph on {data}: {'equivalent' if same else 'differs: ' + str(witness)[:200]}")
        if not same:
            v.reason = "data_graph_differs"
            return False
        return self._data_properties(files, model, name if shape is not None else None, v)

    def reference_fairness(self) -> tuple[str, ...]:
        """The temporal conjuncts of R's specification formula besides ``[][N]_v``
        (``WF_vars(Next)``, ...): ``()`` for a cfg with INIT/NEXT or a formula ``I /\\
        [][N]_v``; ``("<formula>",)`` when the formula's shape is not recognised."""
        if "fairness" not in self._shared:
            self._shared["fairness"] = self._reference_fairness()
        return self._shared["fairness"]

    def _reference_fairness(self) -> tuple[str, ...]:
        name = self.cfg.specification
        if not name:
            return ()
        texts = visible_closure(self.ref.model_module, self.ref.files)
        for i, t in enumerate(texts):
            if name in definition_arities(t):
                shape = split_spec(t, name, extra=tuple(texts[:i] + texts[i + 1:]))
                if shape is None:
                    return (f"<{name}>",)
                return tuple(" ".join(p.text.split()) for p in shape.fairness)
        return (f"<{name}>",)

    def data_graph_sound(self, v: BehaviorVerdict) -> bool:
        """Whether Appendix I's data-graph comparison may accept: the projected graphs
        compare safety only and the cfg's data properties say nothing of R's fairness,
        so a reference whose specification formula has fairness (or a formula whose
        shape is not ``I /\\ [][N]_v /\\ ...``) gets no data-graph pass: an output that
        weakens ``WF_vars(P0)`` to ``WF_vars(p0)`` has R's data graph and passes R's
        liveness properties (TLA+-Bench 1579).  Except where TLC cannot evaluate R's
        fairness at all (:meth:`fairness_probe` ends in an error, not a verdict): then no
        check of it exists and the data graph decides, with a note in the attempts."""
        fair = self.reference_fairness()
        if not fair:
            return True
        probe = self.fairness_probe()
        if probe.kind not in _VIOLATIONS and probe.kind not in ("success", "timeout"):
            # TLC cannot evaluate R's fairness at all (1103: WF of an action that leaves a
            # variable of the subscript unprimed; 13: \A over a variable): it is no part
            # of what TLC can compare, on either side
            note = f"data graph: the reference's fairness is not checked, TLC cannot evaluate it ({probe.kind})"
            ok = True
        else:
            note = f"data graph not run: the reference's specification has fairness {'; '.join(fair)[:200]}"
            ok = False
        if note not in v.attempts:
            v.attempts.append(note)
        return ok

    def fairness_probe(self) -> CheckResult:
        """TLC on R's model checking R's own specification formula as a PROPERTY (so
        its fairness is evaluated, which a cfg without PROPERTY never asks): success
        when TLC can check R's fairness; cached per grader."""
        def run() -> CheckResult:
            c = self._cfg_base()
            c.check_deadlock = False
            c.properties = ["AliasRefSpec"]
            files = dict(self.ref.files)
            body = [f"EXTENDS {self.ref.model_module}"] + self.reference_checks()[:1]
            files[f"{FAIRNESS_PROBE}.tla"] = _module(FAIRNESS_PROBE, "\n".join(body) + "\n")
            text, flags = self._write(c)
            return self._tlc(files, FAIRNESS_PROBE, text, flags, "fairness_probe")
        return self._once("fairness_probe", run)

    def data_properties(self) -> list[int]:
        """Indexes of the cfg's PROPERTY entries that mention no control-label variable
        (through R's definitions, transitively): what the data-graph comparison, which
        sees safety only, checks with TLC too."""
        if "data_props" not in self._shared:
            uses = self.reference_uses()
            control = set(self.r_control)
            self._shared["data_props"] = [i for i, p in enumerate(self.cfg.properties)
                                          if not _uses_any(p, {"R": uses}, control) and p not in control]
        return self._shared["data_props"]

    def control_properties_defined(self, files: dict[str, str], model: str) -> list[str]:
        """The cfg's PROPERTY names that mention a control-label variable and that the
        output (``model`` and the modules it sees unprefixed) defines itself: on a
        data-graph pass the output must satisfy its own version of them (R's, over R's
        labels, cannot be evaluated on G's)."""
        data = set(self.data_properties())
        defined = set()
        for t in visible_closure(model, files):
            defined.update(defined_names(t))
        return [p for i, p in enumerate(self.cfg.properties) if i not in data and p in defined]

    def _data_properties(self, files: dict[str, str], model: str, spec_name: str | None, v: BehaviorVerdict) -> bool:
        """TLC runs the output and checks the cfg's properties that mention no control
        variable (:meth:`data_properties`) and the output's own definitions of those that
        do (:meth:`control_properties_defined`): a data-graph pass must keep R's liveness
        (a PlusCal output whose fairness is dropped has R's data graph). The run keeps the
        cfg's deadlock check, as the forward check does: the projected graphs cannot tell a
        state with no successor from R's stuttering ``Terminating`` step (TLA+-Bench 508: an
        output without it deadlocks at ``"Done"``)."""
        props, own = self.data_properties(), self.control_properties_defined(files, model)
        cfg = self.cfg
        deadlock = cfg.check_deadlock is not False
        if not props and not own and not deadlock:
            return True
        pair = self.output_init_next(files) if spec_name is None else ("", "")
        if pair is None:  # an INIT/NEXT cfg and an output without those definitions
            v.reason = "no_init_next"
            return False
        defs = [f"EXTENDS {self.ref.model_module}", f"AliasG == INSTANCE {model}"]
        defs += [f"AliasRefProp{i} == {cfg.properties[i]}" for i in props]
        defs += [f"AliasOutProp{j} == AliasG!{p}" for j, p in enumerate(own)]
        c = self._cfg_base()   # the cfg's CHECK_DEADLOCK, as in the forward check
        c.properties = [f"AliasRefProp{i}" for i in props] + [f"AliasOutProp{j}" for j in range(len(own))]
        res = self._run_output(files, spec_name, defs, c, "data_properties", pair)
        checked = "deadlock, " if deadlock else ""
        v.attempts.append(f"data graph: {checked}properties {[cfg.properties[i] for i in props]}, "
                          f"the output's {own}: {res.kind}")
        if not res.passed:
            v.reason, v.error_text = f"data_properties_{res.kind}", res.detail
        return res.passed


def _uses_any(name: str, uses: dict[str, dict[str, set[str]]], targets: set[str]) -> bool:
    """Whether definition ``name`` of the output modules (``uses``: module -> definition ->
    names it mentions) is one of ``targets`` or mentions one, directly or through other
    definitions of those modules."""
    defined = {d: u for m in uses.values() for d, u in m.items()}
    todo, seen = [name], set()
    while todo:
        d = todo.pop()
        if d in targets:  # a definition, or a name no module defines (a variable)
            return True
        if d in seen or d not in defined:
            continue
        seen.add(d)
        todo += defined[d]
    return False


def grade_behavior(ref: Reference, out: OutputSide | str, runner: ToolRunner, *,
                   max_maps: int = 60, mappings: str = "refinement") -> BehaviorVerdict:
    """Grade one output by behavior (Methods "Behavior-based grade"; Appendices H, I).

    ``out``: an :class:`OutputSide`, or the extracted module text of a model output
    (graded as the task's system module beside the reference's wrapper).  Never raises
    for a bad output; a failure is a verdict with a ``reason``.
    """
    if isinstance(out, str):
        out = OutputSide({ref.system_module: _set_header(out, ref.system_module)}, ref.system_module)
    try:
        return BehaviorGrader(ref, runner, max_maps=max_maps, mappings=mappings).grade(out)
    except CfgError as e:
        return BehaviorVerdict(passed=False, reason=f"cfg_error: {e}")
