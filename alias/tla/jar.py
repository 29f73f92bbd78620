"""What a ``tla2tools.jar`` is and can do: its version line (:func:`tool_version`), its
capabilities (:func:`capabilities`, read from that line, never from the file name), the
digest of the library folders (:func:`library_digest`, what run keys hold instead of
paths), and the refusal of a jar whose manifest would load the Community Modules."""

from __future__ import annotations

import dataclasses
import hashlib
import re
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .jvm import CFG_NAME, PROBE_TLA, jvm_args
from .runner import execute
from .tlc_output import parse_tlc_output
from .toolconfig import ToolConfig, ToolError, jar_key

__all__ = ["tool_version", "version_or_unknown", "Capabilities", "capabilities", "supports_check_deadlock",
           "library_digest", "check_classpath"]

_VERSION_CACHE: dict[tuple[str, str], str] = {}
_CAPABILITIES: dict[tuple[str, str], "Capabilities"] = {}
_LIBRARY_DIGESTS: dict[tuple[str, ...], str] = {}


def tool_version(config: ToolConfig) -> str:
    """TLC's version line, e.g. ``'TLC2 Version 2.15 of Day Month 20?? (rev: d5b5a7f)'``.

    Cached per jar (path, size, mtime).  Obtained from the first ``TLC2 Version`` line
    TLC prints (``tlc2.TLC -version``: ``TLC2 Version 2026.04.29.170100 (rev: cc6b616)``
    for v1.8.0); falls back to the jar manifest
    (``'tla2tools <Implementation-Version> (rev: <short rev>)'``).  Raises
    ``FileNotFoundError`` if the jar does not exist.
    """
    key = jar_key(config)
    if key in _VERSION_CACHE:
        return _VERSION_CACHE[key]
    version = ""
    try:
        r = subprocess.run([config.java, "-XX:-UsePerfData", "-cp", str(config.jar),
                            "tlc2.TLC", "-version"], capture_output=True, text=True,
                           timeout=60, stdin=subprocess.DEVNULL)
        m = re.search(r"^TLC2 Version .*$", r.stdout + r.stderr, re.M)
        version = m.group(0).strip() if m else ""
    except (OSError, subprocess.TimeoutExpired):
        pass
    if not version:
        with zipfile.ZipFile(config.jar) as z:
            man = z.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
        iv = re.search(r"^Implementation-Version: (.*)$", man, re.M)
        rev = re.search(r"^X-Git-ShortRevision: (.*)$", man, re.M)
        version = (f"tla2tools {iv.group(1).strip() if iv else '?'} "
                   f"(rev: {rev.group(1).strip() if rev else '?'})")
    _VERSION_CACHE[key] = version
    return version


def version_or_unknown(config: ToolConfig) -> str:
    """:func:`tool_version`, or ``'unknown (<why>)'`` when it cannot be had."""
    try:
        return tool_version(config)
    except Exception as e:
        return f"unknown ({e})"


@dataclass(frozen=True)
class Capabilities:
    """What a jar's TLC can do, from its version line (:func:`capabilities`).

    ``version``: :func:`tool_version`. ``modern``: TLC >= 2.16 (every dated release,
    v1.8.0 among them). ``check_deadlock`` / ``alias``: the cfg keywords ``CHECK_DEADLOCK``
    and ``ALIAS`` (older jars get the cfg rewritten, :func:`alias.tla.cfg.for_jar`).
    ``no_generate_spec_te``: the flag ``-noGenerateSpecTE`` (v1.8.0 otherwise writes
    ``*_TTrace_*`` files on a violation). ``multi_module_files``: a ``.tla`` file may hold
    several modules. ``fallback``: the 2020 PyPI jar (TLC 2.15), the zero-setup fallback.
    """

    version: str
    modern: bool
    check_deadlock: bool
    alias: bool
    no_generate_spec_te: bool
    multi_module_files: bool
    fallback: bool


def _version_number(version: str) -> tuple[int, int] | None:
    m = re.search(r"TLC2 Version (\d+)\.(\d+)", version)
    return (int(m.group(1)), int(m.group(2))) if m else None


def capabilities(config: ToolConfig) -> Capabilities:
    """The :class:`Capabilities` of ``config.jar``, decided from its version line (TLC 2.N
    or a dated version); only a jar whose version cannot be read gets a probe run (a
    deadlocking spec with ``CHECK_DEADLOCK FALSE``, run as a plain process: modern iff it
    succeeds). Cached per jar. Raises ``FileNotFoundError`` if the jar does not exist."""
    key = jar_key(config)
    if key in _CAPABILITIES:
        return _CAPABILITIES[key]
    version = tool_version(config)
    number = _version_number(version)
    modern = number >= (2, 16) if number is not None else _probe_modern(config)
    caps = Capabilities(version=version, modern=modern, check_deadlock=modern, alias=modern,
                        no_generate_spec_te=modern, multi_module_files=modern,
                        fallback=number is not None and number < (2, 16))
    _CAPABILITIES[key] = caps
    return caps


def _probe_modern(config: ToolConfig) -> bool:
    """Whether TLC of ``config.jar`` knows ``CHECK_DEADLOCK``: the probe module deadlocks
    at once, so only a jar that reads the keyword reports success."""
    base = dataclasses.replace(config, cds=False)
    r, _ = execute(lambda tmp: jvm_args(base, tmp) + ["tlc2.TLC", "-metadir", f"{tmp}/states", "-config", CFG_NAME,
                                                      "Probe"],
                   {"Probe.tla": PROBE_TLA, CFG_NAME: "INIT Init\nNEXT Next\nCHECK_DEADLOCK FALSE\n"}, 120)
    return parse_tlc_output(r.output, r.exit_code, r.timed_out).kind == "success"


def supports_check_deadlock(config: ToolConfig) -> bool:
    """Whether the jar knows the cfg keyword ``CHECK_DEADLOCK`` (and ``ALIAS``): TLC >= 2.16,
    v1.8.0 among them (:func:`capabilities`)."""
    return capabilities(config).check_deadlock


def library_digest(library: tuple[str, ...] | list[str]) -> str:
    """sha256 of the library folders' ``.tla`` files (each by its path inside its folder,
    folders in order): what a run key holds instead of the folders' absolute paths, so that
    a tool-run cache moves between machines and checkouts. Cached per folder list."""
    key = tuple(str(d) for d in library)
    if key not in _LIBRARY_DIGESTS:
        h = hashlib.sha256()
        for i, d in enumerate(key):
            root = Path(d)
            for f in sorted(root.rglob("*.tla")) if root.is_dir() else []:
                h.update(f"{i}:{f.relative_to(root).as_posix()}\0".encode() + hashlib.sha256(f.read_bytes()).digest())
        _LIBRARY_DIGESTS[key] = h.hexdigest()
    return _LIBRARY_DIGESTS[key]


def check_classpath(jar: Path) -> None:
    """Refuse a jar whose manifest ``Class-Path`` would pull in the Community
    Modules jar (Java overrides such as ``IOUtils`` can run commands): raises
    :class:`ToolError` when a ``CommunityModules*.jar`` lies next to it."""
    for other in Path(jar).parent.glob("CommunityModules*.jar"):
        raise ToolError(f"{other} lies next to {jar}; the jar's manifest Class-Path would "
                        "load it. Remove it or use a jar in another directory.")
