"""CIR: consistent identifier renaming of TLA+ tasks (modules, cfg, descriptions).

Public API: :func:`rename_task` / :class:`RenameResult` / :func:`leftover_identifiers`
(:mod:`alias.rename.cir`), :class:`NameGenerator` / :class:`RenameError`
(:mod:`alias.rename.names`), :func:`rename_description` (:mod:`alias.rename.descriptions`).
"""

from alias.rename.cir import KINDS, RenameResult, leftover_identifiers, rename_task
from alias.rename.descriptions import description_names, rename_description
from alias.rename.names import NameGenerator, RenameError

__all__ = [
    "KINDS", "NameGenerator", "RenameError", "RenameResult", "description_names",
    "leftover_identifiers", "rename_description", "rename_task",
]
