"""What every equivalence-control generator shares: the variant, the reason a generator
does not apply, the reference as the generators see it, and the registry of classes.

A generator is a function ``Context -> Iterator[Variant | NotApplicable]`` registered
under its class name with :func:`generator`; it yields candidates best first (the
controls keep the first ones TLC confirms).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable, Iterator

import tree_sitter as ts

from alias.corpus.testset import Reference
from alias.grade.behavior import OutputSide
from alias.grade.mutants import _Module, _roots, _strip_parens
from alias.grade.refinement import Encoding, Leaf, Match, Pair, Side
from alias.tla.cfg import Cfg, parse_cfg
from alias.tla.syntax import module_info, parse
from alias.tla.values import parse_value

from .rewrite import fresh_name, words_of

__all__ = ["Variant", "NotApplicable", "Context", "GENERATORS", "generator", "identity_pairs", "finish"]


@dataclass(frozen=True)
class Variant:
    """One behavior-preserving restructuring of a reference's system module.

    ``cls``: its class (a key of :data:`GENERATORS`); ``variant_id``: short and stable
    within the task (``merge_record:x+y``); ``description``: what changed, in words;
    ``text``: the whole variant system module; ``pairs``: the refinement mapping's pairs
    for the reference variables the variant changes (the others map to themselves);
    ``consts``: R constant -> G constant (a reference constant missing here keeps its
    cfg value; a variant constant the reference defines is bound to that definition)."""

    cls: str
    variant_id: str
    description: str
    text: str
    pairs: tuple[Pair, ...] = ()
    consts: tuple[tuple[str, str], ...] = ()

    def side(self, ref: Reference) -> OutputSide:
        """The variant as an output of the reference's task (the reference's wrapper re-pointed at it)."""
        return OutputSide({ref.system_module: self.text}, ref.system_module)

    def match(self, r_variables: list[str], g_variables: list[str]) -> Match:
        """The known mapping over all of R's variables (unchanged ones map to themselves)."""
        return Match.of(identity_pairs(self.pairs, r_variables, g_variables), r_variables, g_variables)

    def mapping_json(self) -> str:
        """The known mapping as JSON: ``{"leaves": {R leaf: G leaf [via encoding]},
        "constants": {R: G}}`` (unchanged variables left out)."""
        m = Match(self.pairs, {}, {}, [])
        return json.dumps({"leaves": m.describe()["leaves"], "constants": dict(self.consts)}, sort_keys=True)


def identity_pairs(pairs: tuple[Pair, ...], r_variables: list[str], g_variables: list[str]) -> list[Pair]:
    """``pairs`` plus ``v -> v`` for every R variable no pair covers that G declares."""
    covered = {p.r.var for p in pairs}
    extra = [Pair(Leaf(v), Leaf(v), Encoding()) for v in r_variables if v not in covered and v in g_variables]
    return list(pairs) + extra


@dataclass(frozen=True)
class NotApplicable:
    """A generator that cannot make (another) variant of this reference, and why."""

    cls: str
    reason: str


@dataclass
class Context:
    """The reference as the generators see it: the parsed system module ``m`` (mutant
    generator's reader), its cfg, the initial predicate and next-state relation (nodes and,
    where they are a definition's body, the definition names), the reference's constants
    and variables (of its model's EXTENDS closure, as the behavior grade declares them),
    the reachable states TLC dumped (``states``; ``None`` when unavailable), the words of
    every file (``taken``: fresh names avoid them) and the texts of the other author modules
    that import the system module (``others``: a wrapper; they see its names)."""

    ref: Reference
    r_vars: list[str]
    r_consts: list[str]
    states: Side | None = None
    m: _Module = field(init=False)
    cfg: Cfg = field(init=False)
    taken: set[str] = field(init=False)
    others: dict[str, str] = field(init=False)
    init_node: ts.Node | None = field(init=False)
    next_node: ts.Node | None = field(init=False)

    def __post_init__(self):
        self.m = _Module(self.ref.system_text)
        self.cfg = parse_cfg(self.ref.cfg_text)
        self.taken = words_of(self.ref.files.values())
        self.others = {m: self.ref.files[f"{m}.tla"] for m in self.ref.author_modules
                       if m != self.ref.system_module and f"{m}.tla" in self.ref.files
                       and self.ref.system_module in self._imported_by(m)}
        self.init_node, self.next_node = _roots(self.m, "Init", "Next", "Spec", self.cfg)

    def _imported_by(self, module: str) -> set[str]:
        """The modules ``module`` EXTENDS or INSTANCEs, transitively (among the task's files)."""
        seen: set[str] = set()
        todo = [module]
        while todo:
            m = todo.pop()
            text = self.ref.files.get(f"{m}.tla")
            for n in module_info(text).imports if text is not None else []:
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        return seen

    def definition_of(self, node: ts.Node | None) -> str | None:
        """The name of the definition whose body ``node`` is (``None`` otherwise)."""
        if node is None:
            return None
        name = self.m.owner(node)
        body = self.m.body(name) if name else None
        same = body is not None and any((b.start_byte, b.end_byte) == (node.start_byte, node.end_byte)
                                        for b in (body, _strip_parens(body)))
        return name if same else None

    @property
    def cfg_names(self) -> set[str]:
        """Every name the cfg mentions (constants, substitutions, invariants, ...)."""
        return {n for names in self.cfg.names().values() for n in names}

    def values(self, var: str) -> set | None:
        """The values ``var`` takes in the reachable states (parsed from TLC's texts); None
        without a dump of every reachable state."""
        if self.states is None or not self.states.reachable:
            return None
        return {parse_value(t) for t in {s[var] for s in self.states.states if var in s}}

    @property
    def all_variables(self) -> set[str]:
        """The system module's variables and those of its model's EXTENDS closure."""
        return self.m.variables | set(self.r_vars)

    @property
    def other_definitions(self) -> set[str]:
        """Names the other author modules define (any of them may be state-level)."""
        return {d for m in self.ref.author_modules if m != self.ref.system_module and f"{m}.tla" in self.ref.files
                for d in module_info(self.ref.files[f"{m}.tla"]).definitions}

    def instances(self) -> list[tuple[ts.Node, str, set[str]]]:
        """Every INSTANCE of the system module: (node, module, the names it substitutes
        explicitly with ``WITH``)."""
        m, out = self.m, []
        for u in m.units:
            inst = u if u.type == "instance" else next((c for c in u.named_children if c.type == "instance"), None)
            if inst is not None and inst.named_children:
                given = {m.t(s.named_children[0]) for s in inst.named_children if s.type == "substitution"}
                out.append((inst, m.t(inst.named_children[0]), given))
        return out

    def taken_implicitly(self, name: str) -> bool:
        """Whether an INSTANCE takes ``name`` as a parameter by implicit substitution."""
        for _, mod, given in self.instances():
            text = self.ref.files.get(f"{mod}.tla")
            info = module_info(text) if text is not None else None
            if info is not None and name in set(info.variables) | set(info.constants) and name not in given:
                return True
        return False

    def in_proofs(self, name: str) -> bool:
        """Whether a THEOREM, proof or USE/HIDE of the system module names ``name`` (a
        variable or definition a variant changes would no longer parse there)."""
        m = self.m
        return any(name in words_of([m.t(u)]) for u in m.module.named_children
                   if u.type in ("theorem", "use_or_hide", "proof"))

    def used_elsewhere(self, name: str) -> bool:
        """Whether another author module (a wrapper, say) mentions ``name``."""
        return any(name in words_of([t]) for t in self.others.values())

    def reach(self) -> set[str]:
        """Definitions the initial predicate and next-state relation use (with their owners)."""
        roots = [n for n in (self.init_node, self.next_node) if n is not None]
        return self.m.reachable(roots) | {o for o in map(self.m.owner, roots) if o}

    def unit_of(self, name: str) -> ts.Node:
        """The top-level unit of definition ``name`` (its LOCAL wrapper included)."""
        d = self.m.defs[name]
        return d.parent if d.parent is not None and d.parent.type == "local_definition" else d

    def parses(self, text: str) -> bool:
        """Whether tree-sitter reads ``text`` without errors (or the original had errors too)."""
        return self.m.has_error or not parse(text).root_node.has_error

    def namer(self) -> Callable[[str], str]:
        """Fresh names for one variant: ``stem``, else ``stem_1``, ... never a word of the task's files."""
        taken = set(self.taken)
        return lambda stem: fresh_name(stem, taken)


def finish(cx: Context, cls: str, vid: str, desc: str, e, **kw) -> Variant | NotApplicable:
    """The variant the edits ``e`` (:class:`~.rewrite.Edits`) make, or why there is none
    (no change; a module tree-sitter no longer reads)."""
    text = e.result()
    if text == cx.ref.system_text:
        return NotApplicable(cls, f"{vid}: no change")
    if not cx.parses(text):
        return NotApplicable(cls, f"{vid}: the edited module does not parse")
    return Variant(cls, vid, desc, text, **kw)


#: Class name -> generator (registration order; :data:`alias.grade.equivalence.CLASSES` orders them).
GENERATORS: dict[str, Callable[[Context], Iterator[Variant | NotApplicable]]] = {}


def generator(name: str):
    """Register a generator under class ``name``."""
    def deco(fn):
        GENERATORS[name] = fn
        return fn
    return deco
