"""The Community Modules' Java overrides (``tla.overrides_jar``), loaded by confined TLC runs
only.

``CommunityModules-deps.jar`` (the TLA+ Examples' CI runs TLC with it) holds the Java
overrides of ``IOUtils``, ``Json``, ``CSV``, ``Graphs``, ``UndirectedGraphs``,
``SequencesExt``, ... and their index class ``tlc2.overrides.TLCOverrides``, which TLC >= 2.16
loads by that name from its class path (the default of the system property
``tlc2.overrides.TLCOverrides``): putting the jar after ``tla2tools.jar`` on the class path
is all it takes. Several Community Modules operators exist only to be overridden (``IOEnv``,
``ndJsonDeserialize``, the graph operators over ``Seq(S)``); ``IOUtils!IOExec`` runs any
command and ``IOUtils``, ``Json`` and ``CSV`` read and write files, so the jar goes only
where the run is confined (:mod:`alias.tla.confine`): :func:`overrides_jar` is ``None``
otherwise, and on a jar older than 2.16 (the 2.15 fallback).

Java 17.0.8 and later refuse to open a jar with an entry name that is not UTF-8 (``invalid
CEN header (bad entry name)``): the jar built at the Community Modules' commit has one (a
jgrapht class, ``S<bad bytes>rensenIndexLinkPrediction.class``), and with it TLC silently
finds neither the overrides nor the modules inside. :func:`usable_jar` then writes, once per
machine into the JVM cache, a copy in which each such entry is named by the class the entry
holds (read from its class file); nothing else changes.
"""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
from pathlib import Path

from . import confine
from .jar import capabilities
from .toolconfig import ToolConfig, ToolError, write_atomic

__all__ = ["overrides_jar", "overrides_digest", "with_overrides", "usable_jar", "INDEX_CLASS"]

#: The index class of the Community Modules' overrides (TLC's default for the property).
INDEX_CLASS = "tlc2.overrides.TLCOverrides"
#: The version of :func:`usable_jar`'s repair: part of the repaired copy's name.
_REPAIR_VERSION = 1
_DIGESTS: dict[tuple[str, int, int], str] = {}
_USABLE: dict[tuple[str, int, int, str], Path] = {}


def overrides_jar(config: ToolConfig) -> Path | None:
    """The Community Modules jar TLC runs of ``config`` load (:func:`usable_jar` of
    ``config.overrides_jar``), or ``None``: none configured, runs not confined, or a jar
    older than TLC 2.16. Raises :class:`ToolError` when the configured jar does not exist
    or its copy cannot be written."""
    if not config.overrides_jar or not confine.active(config) or not capabilities(config).modern:
        return None
    src = Path(config.overrides_jar)
    if not src.is_file():
        raise ToolError(f"tla.overrides_jar does not exist: {src}")
    st = src.stat()
    k = (str(src.resolve()), st.st_size, st.st_mtime_ns, config.jvm_cache)
    if k not in _USABLE:
        _USABLE[k] = usable_jar(src, config.jvm_cache)
    return _USABLE[k]


def overrides_digest(config: ToolConfig) -> str | None:
    """What a TLC run key holds about the overrides: ``tlc2.overrides.TLCOverrides@<the
    first 16 hex of the configured jar's sha256>``, or ``None`` where :func:`overrides_jar`
    is ``None``."""
    if overrides_jar(config) is None:
        return None
    st = os.stat(config.overrides_jar)
    k = (os.path.realpath(config.overrides_jar), st.st_size, st.st_mtime_ns)
    if k not in _DIGESTS:
        _DIGESTS[k] = hashlib.sha256(Path(config.overrides_jar).read_bytes()).hexdigest()[:16]
    return f"{INDEX_CLASS}@{_DIGESTS[k]}"


def with_overrides(argv: list[str], jar: Path | None) -> list[str]:
    """``argv`` (a JVM command with ``-cp JAR``) with ``jar`` after the tools on the class
    path (unchanged for ``None``)."""
    if jar is None:
        return argv
    cp = argv.index("-cp")
    return argv[:cp + 1] + [f"{argv[cp + 1]}{os.pathsep}{jar}"] + argv[cp + 2:]


def _bad_names(z: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The entries whose name Java cannot read (not UTF-8)."""
    bad = []
    for info in z.infolist():
        raw = info.filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437")
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            bad.append(info)
    return bad


def usable_jar(src: Path, cache_dir: str) -> Path:
    """``src`` itself when Java can open it, else its repaired copy
    ``<cache_dir>/community-modules-<sha256 of src>-r<version>.jar`` (made on first use,
    atomically). Raises :class:`ToolError` when a copy is needed but there is no cache
    folder or it cannot be written."""
    with zipfile.ZipFile(src) as z:
        bad = _bad_names(z)
        if not bad:
            return src
        digest = hashlib.sha256(Path(src).read_bytes()).hexdigest()[:20]
        out = Path(cache_dir) / f"community-modules-{digest}-r{_REPAIR_VERSION}.jar" if cache_dir else None
        if out is None:
            raise ToolError(f"{src} has entry names Java cannot read; its repaired copy needs a JVM cache folder")
        if not out.is_file():
            try:
                write_atomic(out, _repaired(z, {i.filename for i in bad}))
            except OSError as e:
                raise ToolError(f"cannot write the repaired copy of {src} into {cache_dir}: {e}") from e
    return out


def _repaired(z: zipfile.ZipFile, bad: set[str]) -> bytes:
    """The bytes of a copy of ``z`` in which each entry named in ``bad`` is named by the
    class its class file declares (dropped when it declares none)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as out:
        for info in z.infolist():
            data = z.read(info)
            name = info.filename
            if name in bad:
                name = _class_name(data)
                if name is None:
                    continue
            copy = zipfile.ZipInfo(name, date_time=info.date_time)
            copy.compress_type, copy.external_attr = info.compress_type, info.external_attr
            out.writestr(copy, data)
    return buf.getvalue()


def _class_name(data: bytes) -> str | None:
    """``pkg/Name.class`` for the class file ``data`` (its ``this_class`` entry), or
    ``None`` when ``data`` is no class file this reader understands."""
    if data[:4] != b"\xca\xfe\xba\xbe":
        return None
    count, pos, i = int.from_bytes(data[8:10], "big"), 10, 1
    utf8: dict[int, bytes] = {}
    classes: dict[int, int] = {}
    sizes = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4, 19: 2, 20: 2}
    while i < count:
        tag = data[pos]
        if tag == 1:
            n = int.from_bytes(data[pos + 1:pos + 3], "big")
            utf8[i] = data[pos + 3:pos + 3 + n]
            pos += 3 + n
        elif tag in sizes:
            if tag == 7:
                classes[i] = int.from_bytes(data[pos + 1:pos + 3], "big")
            pos += 1 + sizes[tag]
            i += 1 if tag in (5, 6) else 0  # a long or a double takes two entries
        else:
            return None
        i += 1
    this = int.from_bytes(data[pos + 2:pos + 4], "big")
    try:
        return utf8[classes[this]].decode("utf-8") + ".class"
    except (KeyError, UnicodeDecodeError):
        return None
