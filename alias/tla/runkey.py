"""Run keys: the sha256 of everything that decides a SANY or TLC run's result (file
contents, main module, cfg, tool version, flags, the library's digest, system properties,
TLC's fingerprint index and seed, the confinement and the Java overrides), never a path, so
a tool-run cache is keyed by them and moves between checkouts."""

from __future__ import annotations

import hashlib
import json

from . import confine
from .jar import library_digest, version_or_unknown
from .overrides import overrides_digest
from .toolconfig import ToolConfig

__all__ = ["FP_INDEX", "run_key", "sany_run_key", "tlc_run_key", "tlc_kind"]

#: TLC's ``-fp``: the fingerprint polynomial. Without it TLC picks one of its 131 at random,
#: and which state an error report shows (e.g. the initial state a temporal property is
#: violated by) can change from run to run; with it the same inputs give the same log.
FP_INDEX = 0


def run_key(kind: str, files: dict[str, str], main: str, cfg_text: str | None,
            version: str, flags: tuple[str, ...], config: ToolConfig) -> str:
    """The run key of a ``kind`` run (``sany``, ``tlc``, ``tlc-dump-dot``): a confined run's
    key names its confinement (:func:`alias.tla.confine.key`) and a TLC run's the
    overrides it loads (:func:`alias.tla.overrides.overrides_digest`), so results of
    confined and unconfined runs never share a key."""
    payload = {
        "kind": kind,
        "files": {k: hashlib.sha256(v.encode("utf-8")).hexdigest()
                  for k, v in sorted(files.items())},
        "main": main, "cfg": cfg_text, "version": version, "flags": list(flags),
        "library": library_digest(config.library) if config.library else [],
    }
    if config.properties:
        payload["properties"] = sorted(config.properties)
    box = confine.key(config)
    if box is not None:
        payload["confinement"] = box
    if kind != "sany":
        overrides = overrides_digest(config)
        if overrides is not None:
            payload["overrides"] = overrides
        payload["fp"], payload["seed"] = FP_INDEX, config.seed
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


def sany_run_key(files: dict[str, str], main: str, config: ToolConfig) -> str:
    """The ``run_key`` that :func:`alias.tla.sany.run_sany` gives these arguments (sha256
    hex of the file contents, main module, tool version, library and confinement),
    computed without running anything; a cache of SANY results is keyed by it."""
    return run_key("sany", files, main, None, version_or_unknown(config), (), config)


def tlc_run_key(files: dict[str, str], main: str, cfg_text: str, config: ToolConfig,
                extra_flags: tuple[str, ...] | list[str] = (), *, dump_dot: bool = False) -> str:
    """The ``run_key`` that :func:`alias.tla.tlc.run_tlc` (``dump_dot=True``:
    :func:`alias.tla.tlc.run_tlc_dump_dot`) gives these arguments, without running TLC."""
    return run_key(tlc_kind(dump_dot), files, main, cfg_text, version_or_unknown(config), tuple(extra_flags), config)


def tlc_kind(dump_dot: bool) -> str:
    """The run kind of a TLC run (``tlc``, or ``tlc-dump-dot`` with its state graph)."""
    return "tlc-dump-dot" if dump_dot else "tlc"
