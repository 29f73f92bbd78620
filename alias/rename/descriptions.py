"""Renamed task descriptions: the paper's three-part rule.

For every name ``old`` of the rename map:

1. a name the cfg refers to (``cfg_names``) is always renamed, since the model needs
   the new name for TLC to check its output;
2. otherwise a *lowercase word* (a name made only of the letters ``a``-``z``) or a TLA+
   module name (``module_names`` plus the standard modules) keeps its name;
3. every other name is renamed.

Matching is by whole words: a match must not touch a letter, digit or underscore on
either side, and a hyphen joined to a letter or digit on the far side also counts as
part of the word, so ``Bakery`` inside ``Bakery-Boulangerie`` or ``one-step`` is left
alone, while ``TypeOK.`` , ``(Init)``, ``Next's`` and ``x'`` are matched.  Longer names are
tried first, the text is scanned once, left to right, so the result is deterministic.

A TLA+ Toolbox annotation glues a constant's index to its name
(``@modelParameterConstants:0N``, ``...:12Quorum``): after such an index the name is
matched too, so the annotation cannot keep an original name (ingest drops these lines from
comment-derived descriptions anyway).
"""

from __future__ import annotations

import re

from alias.tla.syntax import STANDARD_MODULES

_LOWER_WORD = re.compile(r"[a-z]+\Z")
#: After a Toolbox annotation's index (one to three digits): ``@modelParameterConstants:0``.
_TOOLBOX_INDEX = "|".join(f"(?<=@modelParameterConstants:{'[0-9]' * d})" for d in (1, 2, 3))


def description_names(mapping: dict[str, str], cfg_names: set[str],
                      module_names: set[str]) -> dict[str, str]:
    """The part of ``mapping`` that the three-part rule renames in a description."""
    modules = set(module_names) | STANDARD_MODULES
    out = {}
    for old, new in mapping.items():
        if old in cfg_names:
            out[old] = new
        elif _LOWER_WORD.match(old) or old in modules:
            continue
        else:
            out[old] = new
    return out


def rename_description(text: str, mapping: dict[str, str], cfg_names: set[str],
                       module_names: set[str]) -> str:
    """``text`` with the names that the three-part rule selects replaced (see module
    docstring).  ``mapping``: old -> new names of the task; ``cfg_names``: names the
    task's cfg refers to (original spelling); ``module_names``: author module names."""
    sub = description_names(mapping, cfg_names, module_names)
    if not sub:
        return text
    return name_pattern(sub).sub(lambda m: sub[m.group(0)], text)


def name_pattern(names, *, hyphenated: bool = True) -> re.Pattern:
    """The whole-word pattern of ``names`` (module docstring): longer names first, no
    letter, digit or underscore on either side, and a name glued to a Toolbox
    annotation's index matched too; with ``hyphenated`` a hyphenated word is left whole
    (``Bakery-Boulangerie``; descriptions), without it each part is a word (comments).
    ``names`` must not be empty."""
    alts = "|".join(re.escape(k) for k in sorted(names, key=lambda k: (-len(k), k)))
    before, after = (r"(?<![A-Za-z0-9]-)", r"(?!-[A-Za-z0-9])") if hyphenated else ("", "")
    return re.compile(r"(?:(?<![A-Za-z0-9_])" + before + "|" + _TOOLBOX_INDEX + r")(?:" + alts
                      + r")(?![A-Za-z0-9_])" + after)
