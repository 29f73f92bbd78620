"""Meaningful names: the third renaming condition (paper, Appendix R).

"Claude Opus 4.8 proposes a new meaningful name for each identifier and we apply and
re-verify the renaming in the same way as the random one."  This module does the four
steps around that LLM call, for any backend:

``naming_prompt(task, identifiers, *, view='original') -> str``
    The prompt.  The LLM sees the task's author modules and its TLC configuration and
    the list of identifiers to rename, each with its kind and the module(s) defining
    it; it answers with one JSON object ``{"current name": "new name", ...}``.
``parse_name_map(reply_text, expected_names, *, original_names=None, taken=()) -> (mapping, problems)``
    Robust JSON extraction (code fences, prose around it, a wrapping object) and
    validation (:func:`validate_name_map`); the map is usable iff ``problems == []``.
``apply_meaningful_map(modules, cfg_text, description, mapping, *, author, library_modules) -> MeaningfulResult``
    Applies a fixed map to the modules (:func:`alias.rename.cir.rename_names`: the
    scope-aware resolution of the random CIR, a capture raises and is reported), to the
    cfg (:func:`alias.tla.cfg.rename_cfg`) and to the description with the three-part
    rule of the random CIR (:func:`alias.rename.descriptions.rename_description`).
``verify_meaningful(original_files, main_module, cfg_text, result, config, *, original=None) -> MeaningfulVerification``
    Strict SANY and TLC on the renamed copy, compared with the original on TLC's
    outcome kind, distinct states and depth, as ``alias.stages.verify_task`` does for the
    random copy.
``propose_meaningful_map(task, identifiers, propose, ...)``
    prompt -> ``propose(prompt) -> reply_text`` -> parse, one call, no retry.

The set of identifiers is the random CIR's: :func:`meaningful_identifiers` lists the
names :func:`alias.rename.cir.rename_task` renames (module names, constants, variables,
operators, LET names ...), one row per (module, name) with its kind.  The map is by
name text, as the random one is, so a name defined in several modules gets one new name.

Decisions where Appendix R is silent (each can be changed by a caller):

* **What the LLM sees** (``view``).  Default ``'original'``: the original modules and
  cfg, with the original names to rename; the prompt asks for names that differ from
  every current name.  ``'random'``: the random-CIR copy (pass its modules and cfg in
  ``task`` and the identifier rows of :func:`rename_task`, whose ``new_name`` is then
  listed); :func:`compose_map` turns the reply (random -> meaningful) into the map
  original -> meaningful.  Note that CIR keeps comments, so the random copy's comments
  still carry original names.
* **A new name must differ from every original name of the task**, not only its own
  (``unchanged`` / ``original_name`` problems): the condition is meant to replace the
  names a model could recall, the description rule and the leftover scan assume the
  original names are gone, and a swap (``Pass -> Next``, ``Next -> Step``) would put an
  original name on another definition.
* **Lengths change.**  Random names keep the length of the old name so that ``/\\`` and
  ``\\/`` junction columns stay aligned (Appendix G); meaningful names cannot.  The map is
  applied as it is and no column is re-aligned: a name of another length before the first
  bullet of a junction list moves it, SANY may then group the list differently, and the
  re-verification (SANY + TLC, distinct states and depth) decides.  This is one way a
  meaningful renaming can fail (the paper keeps 77/100).
* No retry with feedback: one proposal per task; a map with any problem is invalid.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from alias.rename.cir import RenameError, RenameResult, leftover_identifiers, rename_names, rename_task
from alias.rename.descriptions import rename_description
from alias.rename.names import STANDARD_OPERATORS, TLA_KEYWORDS
from alias.tla.cfg import CfgError, for_jar, parse_cfg, rename_cfg
from alias.tla.syntax import STANDARD_MODULES, parse
from alias.tla.tools import run_sany, run_tlc, supports_check_deadlock

__all__ = [
    "NAMING_PROMPT_VERSION", "TLA_RESERVED_WORDS", "CFG_KEYWORDS", "NameProblem", "MeaningfulResult",
    "MeaningfulVerification", "meaningful_identifiers", "naming_prompt", "extract_json_object",
    "validate_name_map", "parse_name_map", "compose_map", "apply_meaningful_map", "verify_meaningful",
    "propose_meaningful_map", "is_valid_name",
]

#: Names this exact prompt text; store it with every proposal.
NAMING_PROMPT_VERSION = "alias-meaningful-names-v1"

#: The reserved words of TLA+ (Specifying Systems, Table 6 / TLA+2 proof language) and
#: the built-in constants BOOLEAN, STRING, TRUE, FALSE.  ``WF_``/``SF_`` are prefixes: a
#: name that starts with them is rejected separately.
TLA_RESERVED_WORDS = frozenset(
    """
    ASSUME ASSUMPTION AXIOM CASE CHOOSE CONSTANT CONSTANTS DOMAIN ELSE ENABLED EXCEPT
    EXTENDS IF IN INSTANCE LET LOCAL MODULE OTHER SF_ SUBSET THEN THEOREM UNCHANGED UNION
    VARIABLE VARIABLES WF_ WITH
    ACTION BY COROLLARY DEF DEFINE DEFS HAVE HIDE LAMBDA LEMMA NEW OBVIOUS OMITTED ONLY
    PICK PROOF PROPOSITION PROVE QED RECURSIVE STATE SUFFICES TAKE TEMPORAL USE WITNESS
    BOOLEAN FALSE STRING TRUE
    """.split()
) | TLA_KEYWORDS

#: Section keywords of the TLC configuration language: such a name could not be named
#: in a cfg (``alias.tla.cfg`` tokenizes them as keywords).
CFG_KEYWORDS = frozenset(
    """
    CONSTANT CONSTANTS INIT NEXT SPECIFICATION INVARIANT INVARIANTS PROPERTY PROPERTIES
    CONSTRAINT CONSTRAINTS ACTION_CONSTRAINT ACTION_CONSTRAINTS SYMMETRY VIEW
    CHECK_DEADLOCK ALIAS POSTCONDITION TRUE FALSE
    """.split()
)

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class NameProblem:
    """One reason a proposed map is unusable.

    ``kind``: ``no_json`` (no JSON object in the reply), ``duplicate_key`` (a name given
    twice in the JSON), ``missing`` (an expected name without a new name),
    ``unexpected`` (a key that is not an expected name), ``not_string`` (a new name that
    is not a string), ``invalid_identifier``, ``reserved_word`` (TLA+ keyword, ``WF_``/
    ``SF_`` prefix or cfg keyword), ``standard_operator``, ``standard_module``,
    ``unchanged`` (new == old), ``original_name`` (the original name of another
    identifier), ``duplicate`` (two names get the same new name), ``collision`` (a name
    the spec keeps, from ``taken``), ``capture`` (:func:`rename_names` refused),
    ``leftover`` (an original name still in the renamed modules), ``rename_error`` (the
    random CIR could not list the task's identifiers).
    ``name``: the old name concerned (``None`` when none); ``detail``: readable text.
    """

    kind: str
    name: str | None
    detail: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.detail}"


# ----------------------------------------------------------------------- identifiers
def meaningful_identifiers(modules: dict[str, str], author: set[str] | None = None,
                           cfg_text: str | None = None,
                           library_modules: dict[str, str] | None = None) -> list[dict]:
    """The identifiers the random CIR renames, as rows ``{'module', 'name', 'kind'}``
    (:attr:`RenameResult.identifiers` without the random name), sorted by module, name.
    A meaningful map must give each distinct ``name`` a new name."""
    res = rename_task(modules, author, cfg_text, seed=0, salt="meaningful",
                      library_modules=library_modules)
    return [{"module": r["module"], "name": r["name"], "kind": r["kind"]} for r in res.identifiers]


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _rows(identifiers: Iterable[Any]) -> list[dict]:
    rows = []
    for r in identifiers:
        if isinstance(r, str):
            rows.append({"name": r, "kind": None, "module": None})
        else:
            rows.append({"name": _get(r, "name"), "kind": _get(r, "kind"), "module": _get(r, "module"),
                         "new_name": _get(r, "new_name")})
    return rows


# ---------------------------------------------------------------------------- prompt
_INSTRUCTION = (
    "You are a TLA+ specification engineer. Below is a TLA+ specification{cfg_part}. "
    "Give each of its identifiers listed below a new name that is meaningful: it should "
    "describe the role of the identifier in this specification, the way a careful author "
    "would name it. Every new name must differ from the identifier's current name and from "
    "every other name listed below, and no two identifiers may get the same new name. A new "
    "name must be a valid TLA+ identifier (letters, digits and underscores, starting with a "
    "letter or an underscore), must not be a TLA+ keyword (such as VARIABLE, EXTENDS, "
    "UNCHANGED or CHOOSE), a TLC configuration keyword (such as INIT or INVARIANT), a "
    "standard module name (such as Naturals or Sequences) or an operator of a standard "
    "module (such as Nat, Len, Append or Cardinality), must not start with WF_ or SF_ and "
    "must not equal any other name used in the specification, including bound variables "
    "and operator parameters. Reply with only a JSON object that maps every current name "
    "to its new name, for example {{\"{example}\": \"NewName\"}}, and nothing else."
)


def naming_prompt(task: Any, identifiers: Iterable[Any], *, view: str = "original") -> str:
    """The prompt asking an LLM for a meaningful name per identifier.

    ``task``: a mapping or object with ``modules`` (module name -> text, the author
    modules shown to the LLM, in this order), optional ``cfg_text`` (shown when given)
    and optional ``model_module`` (the cfg's module, for its file name).
    ``identifiers``: rows ``{'name', 'kind', 'module'}`` (e.g. :func:`meaningful_identifiers`
    or ``RenameResult.identifiers``) or plain names.  ``view``: ``'original'`` lists
    each row's ``name``; ``'random'`` lists its ``new_name`` (the random CIR name; then
    ``task`` holds the random copy) and never shows the original names in the list.
    A name defined in several modules is listed once, with every (kind, module).
    """
    if view not in ("original", "random"):
        raise ValueError(f"view must be 'original' or 'random', not {view!r}")
    modules: dict[str, str] = dict(_get(task, "modules") or {})
    if not modules:
        raise ValueError("task has no modules to show")
    cfg_text = _get(task, "cfg_text")
    identifiers = list(identifiers)
    listed: dict[str, list[tuple[str | None, str | None]]] = {}
    for r in _rows(identifiers):
        name = r["name"] if view == "original" else r.get("new_name")
        if not name:
            raise ValueError(f"identifier row without a {'name' if view == 'original' else 'new_name'}: {r}")
        mod = r["module"]
        if view == "random" and mod is not None:
            mod = _random_module_name(mod, identifiers)
        listed.setdefault(name, [])
        if (r["kind"], mod) not in listed[name]:
            listed[name].append((r["kind"], mod))
    if not listed:
        raise ValueError("no identifiers to rename")
    lines = [_INSTRUCTION.format(cfg_part=" with its TLC model configuration" if cfg_text else "",
                                 example=next(iter(listed))), ""]
    lines.append(f"Identifiers to rename ({len(listed)}), each with its kind and the module that defines it:")
    for name, places in listed.items():
        where = "; ".join(
            ", ".join(x for x in (k and f"{k}", m and f"defined in module {m}") if x) or "identifier"
            for k, m in places)
        lines.append(f"- {name}: {where}")
    for mod, text in modules.items():
        lines += ["", f"Module {mod} (file {mod}.tla):", "```tla", text.rstrip("\n"), "```"]
    if cfg_text:
        main = _get(task, "model_module")
        lines += ["", f"TLC model configuration{f' (file {main}.cfg)' if main else ''}:", "```",
                  cfg_text.rstrip("\n"), "```"]
    lines += ["", "Reply with the JSON object only."]
    return "\n".join(lines) + "\n"


def _random_module_name(module: str, identifiers: Iterable[Any]) -> str:
    for r in _rows(identifiers):
        if r["kind"] == "module" and r["name"] == module and r.get("new_name"):
            return r["new_name"]
    return module


# ------------------------------------------------------------------------ validation
def is_valid_name(name: str) -> bool:
    """``[A-Za-z_][A-Za-z0-9_]*`` with at least one letter (TLA+ needs one)."""
    return bool(_IDENT.match(name)) and any(c.isalpha() for c in name)


def _name_problem(old: str, new: str) -> NameProblem | None:
    if not is_valid_name(new):
        return NameProblem("invalid_identifier", old, f"{old} -> {new!r} is not a TLA+ identifier")
    if new in TLA_RESERVED_WORDS or new.startswith(("WF_", "SF_")) or new in CFG_KEYWORDS:
        return NameProblem("reserved_word", old, f"{old} -> {new} is a reserved word")
    if new in STANDARD_MODULES:
        return NameProblem("standard_module", old, f"{old} -> {new} is a standard module name")
    if new in STANDARD_OPERATORS:
        return NameProblem("standard_operator", old, f"{old} -> {new} is a standard-module operator")
    return None


def validate_name_map(mapping: Mapping[str, Any], expected_names: Iterable[str], *,
                      original_names: Iterable[str] | None = None,
                      taken: Iterable[str] = ()) -> list[NameProblem]:
    """Every problem of ``mapping`` (old -> new) as a map for ``expected_names``.

    ``original_names``: names no new name may equal (default: ``expected_names``; in the
    ``'random'`` view pass the task's original names).  ``taken``: further names the
    renamed spec keeps (bound variables, library operators ...), reported as
    ``collision`` (:func:`apply_meaningful_map` also catches captures through
    :func:`rename_names`).  Problems come in a fixed order: per expected name (sorted),
    then unexpected keys, then duplicates.
    """
    expected = sorted(set(expected_names))
    exp_set = set(expected)
    originals = set(expected if original_names is None else original_names)
    taken_set = set(taken) - exp_set
    out: list[NameProblem] = []
    by_new: dict[str, list[str]] = {}
    for old in expected:
        if old not in mapping:
            out.append(NameProblem("missing", old, f"no new name for {old}"))
            continue
        new = mapping[old]
        if not isinstance(new, str):
            out.append(NameProblem("not_string", old, f"{old} -> {new!r} is not a string"))
            continue
        p = _name_problem(old, new)
        if p is not None:
            out.append(p)
            continue
        if new == old:
            out.append(NameProblem("unchanged", old, f"{old} keeps its name"))
            continue
        if new in originals:
            out.append(NameProblem("original_name", old, f"{old} -> {new} reuses an original name"))
            continue
        if new in taken_set:
            out.append(NameProblem("collision", old, f"{old} -> {new} collides with a name the spec keeps"))
            continue
        by_new.setdefault(new, []).append(old)
    for key in sorted(k for k in mapping if k not in exp_set):
        out.append(NameProblem("unexpected", key, f"{key} is not an identifier to rename"))
    for new, olds in sorted(by_new.items()):
        if len(olds) > 1:
            for old in olds:
                out.append(NameProblem("duplicate", old, f"{', '.join(olds)} all -> {new}"))
    return out


# --------------------------------------------------------------------------- parsing
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.S)


def _pairs_hook(pairs: list[tuple[str, Any]]) -> dict:
    d: dict = {}
    dups: list[str] = []
    for k, v in pairs:
        if k in d:
            dups.append(k)
        d[k] = v
    if dups:
        d[_DUP_MARK] = dups
    return d


_DUP_MARK = "\0duplicate keys"


def _objects(text: str) -> list[dict]:
    """Every JSON object that starts at a ``{`` of ``text`` and decodes, outermost first."""
    dec = json.JSONDecoder(object_pairs_hook=_pairs_hook)
    out, i = [], 0
    while True:
        i = text.find("{", i)
        if i < 0:
            return out
        try:
            obj, end = dec.raw_decode(text, i)
        except ValueError:
            i += 1
            continue
        if isinstance(obj, dict):
            out.append(obj)
        i = end


def _unwrap(obj: dict, expected: set[str]) -> dict:
    """``{"mapping": {...}}`` / ``{"renames": {...}}``: the inner object when the outer
    one has a single key that is not an expected name and holds a dict of strings."""
    keys = [k for k in obj if k != _DUP_MARK]
    if len(keys) == 1 and keys[0] not in expected and isinstance(obj[keys[0]], dict):
        return obj[keys[0]]
    return obj


def extract_json_object(reply_text: str, expected_names: Iterable[str] = ()) -> dict | None:
    """The JSON object of a reply: fenced blocks first (a ```json block before any other),
    then the whole text; among the objects found, the one with the most keys among
    ``expected_names`` (the first on a tie).  A wrapper ``{"renames": {...}}`` is opened.
    Only when nothing decodes, trailing commas before ``}`` are dropped and the text is
    searched again.  ``None`` if no object decodes."""
    expected = set(expected_names)
    cands: list[dict] = []
    blocks = sorted(_FENCE.findall(reply_text or ""), key=lambda b: b[0].lower() != "json")
    for _lang, body in blocks:
        cands += _objects(body)
    cands += _objects(reply_text or "")
    if not cands:  # a common slip: a trailing comma before the closing brace
        cands = _objects(re.sub(r",(\s*)}", r"\1}", reply_text or ""))
    if not cands:
        return None
    cands = [_unwrap(c, expected) for c in cands]
    best = max(range(len(cands)),
               key=lambda i: (len({str(k).strip() for k in cands[i]} & expected), -i))
    return cands[best]


def parse_name_map(reply_text: str, expected_names: Iterable[str], *,
                   original_names: Iterable[str] | None = None,
                   taken: Iterable[str] = ()) -> tuple[dict[str, str], list[NameProblem]]:
    """Extract and validate a name map from an LLM reply.

    Returns ``(mapping, problems)``: ``mapping`` holds the string entries of the reply
    for expected names (keys and values stripped of surrounding whitespace; so it may be
    partial), ``problems`` every reason the map is unusable (:class:`NameProblem`,
    :func:`validate_name_map`); use the map only when ``problems`` is empty.
    """
    expected = set(expected_names)
    obj = extract_json_object(reply_text, expected)
    if obj is None:
        return {}, [NameProblem("no_json", None, "the reply holds no JSON object")]
    problems: list[NameProblem] = []
    for k in obj.pop(_DUP_MARK, []):
        problems.append(NameProblem("duplicate_key", k, f"{k} is given more than once"))
    raw = {k.strip(): (v.strip() if isinstance(v, str) else v) for k, v in obj.items()}
    problems += validate_name_map(raw, expected, original_names=original_names, taken=taken)
    mapping = {k: v for k, v in raw.items() if k in expected and isinstance(v, str)}
    return mapping, problems


def compose_map(random_map: Mapping[str, str], reply_map: Mapping[str, str]) -> dict[str, str]:
    """Original -> meaningful from original -> random (``RenameResult.mapping``) and a
    reply random -> meaningful (the ``'random'`` view).  Names missing from the reply are
    left out (the validation reports them)."""
    return {old: reply_map[new] for old, new in random_map.items() if new in reply_map}


# -------------------------------------------------------------------------- applying
@dataclass
class MeaningfulResult:
    """Outcome of :func:`apply_meaningful_map`.

    ``ok``: the map was valid and applied.  ``problems``: why not (empty when ``ok``).
    ``mapping``: the map as given.  ``modules``: new module name -> renamed text (the
    author modules; empty when not ``ok``).  ``module_names``: old author module name ->
    new (nested modules included).  ``cfg_text`` / ``description``: renamed (``None``
    when not given or not ``ok``).  ``library_modules``: kept modules, by name.
    """

    ok: bool
    problems: list[NameProblem]
    mapping: dict[str, str]
    modules: dict[str, str] = field(default_factory=dict)
    module_names: dict[str, str] = field(default_factory=dict)
    cfg_text: str | None = None
    description: str | None = None
    library_modules: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def error(self) -> str | None:
        """The problems as one line (``None`` when ``ok``)."""
        return None if self.ok else "; ".join(str(p) for p in self.problems[:10])

    def module(self, old: str) -> str:
        """The new name of module ``old`` (itself when not renamed)."""
        return self.module_names.get(old, old)


def _author_module_names(modules: dict[str, str], author_files: set[str]) -> set[str]:
    """File module names plus the names of nested modules of the author files."""

    out = set(author_files)
    for f in author_files:
        src = modules[f].encode("utf-8")
        stack = [parse(modules[f]).root_node]
        while stack:
            n = stack.pop()
            if n.type == "module":
                nm = n.child_by_field_name("name")
                if nm is None:
                    nm = next((c for c in n.named_children if c.type == "identifier"), None)
                if nm is not None:
                    out.add(src[nm.start_byte:nm.end_byte].decode("utf-8"))
            stack.extend(n.children)
    return out


def apply_meaningful_map(modules: dict[str, str], cfg_text: str | None, description: str | None,
                         mapping: Mapping[str, str], *, author: set[str] | None = None,
                         library_modules: dict[str, str] | None = None) -> MeaningfulResult:
    """Apply a meaningful map the way the random CIR applies its own.

    ``modules``: module name -> text of the task; ``author``: the names whose definitions
    are renamed (default: all); ``library_modules``: kept modules (their names and
    definitions are reserved, as in :func:`rename_task`).  The map must rename exactly the
    identifiers of :func:`meaningful_identifiers` and pass :func:`validate_name_map`
    (originals forbidden, names the renamed modules keep reported as ``collision``);
    :func:`rename_names` then rewrites the author modules (a new name that would capture
    a bound variable or a kept operator is a ``capture`` problem, nothing is applied), a
    leftover scan checks that no original name survives, :func:`rename_cfg` renames the
    cfg and the description follows the three-part rule with the cfg's names and the
    module names (author, library and standard).
    """

    mapping = dict(mapping)
    library_modules = dict(library_modules or {})
    author_files = set(modules) if not author else set(author) & set(modules)
    try:
        res = rename_task(modules, author_files, cfg_text, seed=0, salt="meaningful",
                          library_modules=library_modules)
    except RenameError as e:  # the task's identifiers cannot even be listed
        return MeaningfulResult(False, [NameProblem("rename_error", None, str(e))], mapping,
                                library_modules=library_modules)
    expected = set(res.mapping)
    problems = validate_name_map(mapping, expected, taken=set(res.library_modules) | set(library_modules))
    if problems:
        return MeaningfulResult(False, problems, mapping, library_modules=library_modules)
    try:
        new_modules = rename_names(modules, mapping, author_files, library_modules)
    except RenameError as e:
        return MeaningfulResult(False, [NameProblem("capture", None, str(e))], mapping,
                                library_modules=library_modules)
    mod_names = _author_module_names(modules, author_files)
    module_names = {m: mapping[m] for m in sorted(mod_names) if m in mapping}
    check = RenameResult(mapping=mapping, identifiers=[], modules=new_modules, module_names=module_names,
                         cfg_text=None, library_modules=res.library_modules)
    left = leftover_identifiers(check, expected)
    if left:
        return MeaningfulResult(False, [NameProblem("leftover", n, f"{n} still in {m} line {ln}")
                                        for m, n, ln in left], mapping, library_modules=library_modules)
    new_cfg = rename_cfg(cfg_text, mapping) if cfg_text is not None else None
    new_desc = None
    if description is not None:
        cfg_names: set[str] = set()
        if cfg_text:
            for v in parse_cfg(cfg_text).names().values():
                cfg_names.update(v)
        new_desc = rename_description(description, mapping, cfg_names,
                                      set(STANDARD_MODULES) | mod_names | set(library_modules))
    return MeaningfulResult(True, [], mapping, new_modules, module_names, new_cfg, new_desc,
                            library_modules)


# ------------------------------------------------------------------------- verifying
@dataclass
class MeaningfulVerification:
    """Outcome of :func:`verify_meaningful`.

    ``verified``: the copy passes strict SANY and TLC with the original's outcome kind
    (``success``), distinct states and depth.  ``reason``: ``None`` when verified, else a
    code in the style of ``verify_task``: ``apply_error``, ``sany_original[_timeout|_crash]``,
    ``tlc_original_<kind>``, ``sany_meaningful[_timeout|_crash]``, ``tlc_meaningful_<kind>``,
    ``state_mismatch``.  ``detail``: readable text.  ``original`` / ``meaningful``: the
    TLC outcome as ``{'kind', 'distinct_states', 'states_generated', 'depth'}`` (and
    ``sany_ok``), ``{}`` when not run.
    """

    verified: bool
    reason: str | None
    detail: str | None
    original: dict = field(default_factory=dict)
    meaningful: dict = field(default_factory=dict)

    def to_row(self, task_id: str) -> dict:
        """A flat row for a table (one per task)."""
        return {"task_id": task_id, "verified": self.verified, "reason": self.reason, "detail": self.detail,
                "original_kind": self.original.get("kind"),
                "original_distinct_states": self.original.get("distinct_states"),
                "original_depth": self.original.get("depth"),
                "meaningful_kind": self.meaningful.get("kind"),
                "meaningful_distinct_states": self.meaningful.get("distinct_states"),
                "meaningful_depth": self.meaningful.get("depth")}


def _sany_tlc(files: dict[str, str], main: str, cfg_text: str, config) -> tuple[dict, str | None]:
    """Strict SANY, then TLC (cfg adapted to the jar as ``stages._check`` does).
    Returns (outcome dict, error text)."""

    sany = run_sany(files, main, config)
    out: dict = {"sany_ok": bool(sany.ok_strict), "sany_kind": sany.kind}
    if not sany.ok_strict:
        return out, "; ".join(sany.errors) or sany.kind
    try:
        modern = supports_check_deadlock(config)
        cfg_out, flags = for_jar(parse_cfg(cfg_text), modern, supports_alias=modern, text=cfg_text)
    except CfgError as e:
        out["kind"] = "config_error"
        return out, str(e)
    tlc = run_tlc(files, main, cfg_out, config, extra_flags=flags)
    out.update(kind=tlc.kind, distinct_states=tlc.distinct_states, states_generated=tlc.states_generated,
               depth=tlc.depth)
    return out, tlc.error_message


def _sany_reason(cond: str, out: dict) -> str:
    k = out.get("sany_kind")
    return f"sany_{cond}_{k}" if k in ("timeout", "crash") else f"sany_{cond}"


def verify_meaningful(original_files: dict[str, str], main_module: str, cfg_text: str,
                      result: MeaningfulResult, config, *, original: dict | None = None
                      ) -> MeaningfulVerification:
    """Re-verify a meaningful copy against its original, as ``verify_task`` does.

    ``original_files``: file name (``X.tla``) -> text of the original task, library
    modules included (they are reused for the copy; author files are replaced by
    ``result.modules``).  ``main_module``: the original model module (the cfg's).
    ``cfg_text``: the original cfg.  ``config``: :class:`alias.tla.tools.ToolConfig`.
    ``original``: a known TLC outcome of the original (``{'kind', 'distinct_states',
    'depth'}``, e.g. from ``test_set``), which skips the two original runs.
    """
    if original is None:
        original, err = _sany_tlc(original_files, main_module, cfg_text, config)
        if not original.get("sany_ok"):
            return MeaningfulVerification(False, _sany_reason("original", original), err, original)
    else:
        original, err = dict(original), None
    if original.get("kind") != "success":
        return MeaningfulVerification(False, f"tlc_original_{original.get('kind')}", err, original)
    if not result.ok:
        return MeaningfulVerification(False, "apply_error", result.error, original)
    renamed_stems = set(result.module_names)
    files = {f: t for f, t in original_files.items()
             if not (f.endswith(".tla") and f[:-4] in renamed_stems)}
    files.update({f"{m}.tla": t for m, t in result.modules.items()})
    main = result.module(main_module)
    mine, err = _sany_tlc(files, main, result.cfg_text or "", config)
    if not mine.get("sany_ok"):
        return MeaningfulVerification(False, _sany_reason("meaningful", mine), err, original, mine)
    if mine.get("kind") != "success":
        return MeaningfulVerification(False, f"tlc_meaningful_{mine.get('kind')}", err, original, mine)
    a = (original.get("distinct_states"), original.get("depth"))
    b = (mine.get("distinct_states"), mine.get("depth"))
    if a != b:
        return MeaningfulVerification(False, "state_mismatch",
                                      f"original {a[0]}/{a[1]} vs meaningful {b[0]}/{b[1]} (distinct/depth)",
                                      original, mine)
    return MeaningfulVerification(True, None, None, original, mine)


# ---------------------------------------------------------------------- one proposal
def propose_meaningful_map(task: Any, identifiers: Sequence[Any], propose: Callable[[str], str], *,
                           view: str = "original", original_names: Iterable[str] | None = None,
                           taken: Iterable[str] = ()) -> dict:
    """Prompt, one ``propose(prompt) -> reply_text`` call, parse.

    Returns ``{'prompt', 'reply', 'mapping', 'problems', 'prompt_version'}``; in the
    ``'random'`` view ``mapping`` is keyed by the random names (see :func:`compose_map`)
    and ``original_names`` defaults to the rows' ``name``.
    """
    rows = _rows(identifiers)
    prompt = naming_prompt(task, identifiers, view=view)
    reply = propose(prompt)
    if view == "random":
        expected = [r["new_name"] for r in rows]
        originals = set(original_names) if original_names is not None else {r["name"] for r in rows}
        originals |= set(expected)
    else:
        expected = [r["name"] for r in rows]
        originals = original_names
    mapping, problems = parse_name_map(reply if isinstance(reply, str) else "", expected,
                                       original_names=originals, taken=taken)
    return {"prompt": prompt, "reply": reply, "mapping": mapping, "problems": problems,
            "prompt_version": NAMING_PROMPT_VERSION}
