"""Identifier kinds (Appendix C) and hidden required names (Methods, "Hidden required names").

An identifier is split into parts (``FinishUpdate`` -> ``Finish``, ``Update``;
``max_val`` -> ``max``, ``val``). Its category is

* ``convention`` when it is a TLA+ naming convention (:data:`CONVENTIONS`, also with the
  ``MC`` prefix of a model wrapper or with a trailing digit);
* ``domain`` when every part is an English dictionary word of two letters or more
  (the packaged Webster's 2nd International list of the ``english-words`` package,
  whose entries are lemmas, so regular inflections ``Values``, ``Departs`` count too);
* ``abbreviation`` otherwise (single letters, ``hr``, ``msgs``, ...).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

import pandas as pd
from english_words import get_english_words_set

from alias.tla.cfg import parse_cfg
from alias.tla.syntax import module_info, node_text, parse

#: TLA+ naming conventions: the operators the prompt, TLC and the PlusCal translator name.
CONVENTIONS = frozenset(
    {
        "Init", "Next", "Spec", "vars", "TypeOK", "TypeOk", "TypeInv", "TypeInvariant", "TypeCorrect",
        "Inv", "Invariant", "IInv", "Safety", "Liveness", "Fairness", "FairSpec", "LiveSpec", "SafeSpec",
        "Termination", "Terminating", "Symmetry", "Sym", "Perms", "Constraint", "StateConstraint",
        "ActionConstraint", "View", "Alias", "ProcSet", "pc", "stack", "Prop", "Properties",
        "Correctness", "Refinement", "Stuttering", "Done",
    }
)

_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """Lower-case English dictionary words (``english-words``: Webster's 2nd, web2)."""
    return frozenset(get_english_words_set(["web2"], lower=True))


def split_identifier(name: str) -> list[str]:
    """Split on underscores, case changes and digits: ``ABCorrectness`` -> ``AB``, ``Correctness``."""
    parts: list[str] = []
    for chunk in name.split("_"):
        parts += _PART.findall(chunk)
    return parts


def category(name: str) -> str:
    """Appendix C category of an identifier: ``convention`` | ``domain`` | ``abbreviation``."""
    base = name.rstrip("0123456789")
    stripped = base[2:] if base.startswith("MC") and len(base) > 2 else base
    if base in CONVENTIONS or stripped in CONVENTIONS:
        return "convention"
    words = [p.lower() for p in split_identifier(name) if not p.isdigit()]
    if words and all(len(w) >= 2 and is_english_word(w) for w in words):
        return "domain"
    return "abbreviation"


#: Inflectional endings tried when a word is not in the list itself (the list holds
#: lemmas: ``values`` -> ``value``, ``departs`` -> ``depart``, ``waiting`` -> ``wait``).
_SUFFIXES = (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("d", ""),
             ("ing", ""), ("ing", "e"))


def is_english_word(word: str) -> bool:
    """Whether lower-case ``word`` is in the dictionary, directly or as a regular
    inflection (plural, third person, past, gerund) of a listed lemma."""
    words = english_words()
    if word in words:
        return True
    for suffix, repl in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            if word[: -len(suffix)] + repl in words:
                return True
    # doubled final consonant: stopped -> stop, running -> run
    for suffix in ("ed", "ing"):
        stem = word[: -len(suffix)] if word.endswith(suffix) else ""
        if len(stem) >= 3 and stem[-1] == stem[-2] and stem[:-1] in words:
            return True
    return False


def mentions(text: str, name: str) -> bool:
    """Whether ``text`` mentions ``name`` as a whole word (case-sensitive)."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text or "") is not None


def referenced_names(module_text: str) -> set[str]:
    """Names a module refers to (``identifier_ref`` nodes of its tree-sitter tree)."""
    src = module_text.encode("utf-8")
    out: set[str] = set()
    stack = [parse(module_text).root_node]
    while stack:
        n = stack.pop()
        if n.type == "identifier_ref":
            out.add(node_text(n, src))
        stack.extend(n.children)
    return out


#: cfg sections whose names count as required (Init/Next/Spec entries never do).
REQUIRED_CFG_KINDS = {
    "constants": "constant",
    "invariants": "invariant",
    "properties": "property",
    "constraints": "constraint",
    "action_constraints": "action_constraint",
}

EXCLUDED_NAMES = frozenset({"Init", "Next", "Spec"})


def required_names(cfg_text: str, system_text: str, wrapper_text: str | None) -> list[tuple[str, str]]:
    """Names the model requires the system module to define, as ``(name, cfg_kind)``.

    The cfg's constants, invariants, properties, constraints and action constraints that
    the system module defines, plus (for a wrapper model) every system-module name the
    wrapper refers to (``wrapper_reference``). INIT/NEXT/SPECIFICATION entries and the
    names Init, Next and Spec are excluded (the name-based grade accepts them under any
    name, Appendix H). Order: cfg order, then wrapper references sorted.
    """
    info = module_info(system_text)
    defined = set(info.constants) | set(info.variables) | set(info.definitions)
    cfg = parse_cfg(cfg_text)
    names = cfg.names()
    skip = set(EXCLUDED_NAMES)
    for k in ("init", "next", "specification"):
        skip.update(names.get(k, []))
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for key, kind in REQUIRED_CFG_KINDS.items():
        for n in names.get(key, []):
            if n in defined and n not in skip and n not in seen:
                out.append((n, kind))
                seen.add(n)
    if wrapper_text is not None:
        for n in sorted(referenced_names(wrapper_text) & defined):
            if n not in skip and n not in seen:
                out.append((n, "wrapper_reference"))
                seen.add(n)
    return out


def identifier_rows(rename_map: pd.DataFrame) -> list[dict]:
    """One ``identifiers`` row per renamed name of ``rename_map``: its Appendix C
    ``category`` and ``parts`` (JSON list)."""
    return [{"task_id": r.task_id, "old": r.old, "new": r.new, "module": r.module, "kind": r.kind,
             "category": category(r.old), "parts": json.dumps(split_identifier(r.old))}
            for r in rename_map.itertuples()]


def required_name_rows(task, system_text: str, wrapper_text: str | None, new_names: dict[str, str],
                       renamed_description: str | None) -> list[dict]:
    """The ``required_names`` rows of one task (a ``tasks`` row): each name its cfg
    requires (:func:`required_names`), whether the original description mentions it
    (``hidden`` when not), its new name and whether the renamed description mentions that.
    A cfg the parser rejects gives no rows (the caller records a warning)."""
    rows = []
    for name, kind in required_names(task.cfg_text, system_text, wrapper_text):
        mentioned = mentions(task.description, name)
        new = new_names.get(name)
        rows.append({"task_id": task.task_id, "name": name, "cfg_kind": kind, "new_name": new,
                     "category": category(name), "mentioned": mentioned,
                     "mentioned_renamed": (mentions(renamed_description, new)
                                           if (new and isinstance(renamed_description, str)) else None),
                     "hidden": not mentioned})
    return rows
