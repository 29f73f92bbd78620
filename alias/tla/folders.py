"""A SANY or TLC run's folder: where its input files are written, where the tool works and
writes, and from where its output and state graph are read back before the folder goes.

Two kinds, one interface (:class:`Folder`): :class:`HostFolder`, a fresh folder
``alias-tla-*`` in the system temporary directory (runs without confinement), and
:class:`BoxFolder`, a folder inside a confined run's own size-limited tmpfs
(:mod:`alias.tla.confine`), reached through an open directory descriptor, so nothing of it
is on this machine's disk and the kernel frees it with the last process and descriptor
that hold it. ``path`` is the folder as the tool sees it (what goes on its command line).

Nothing left behind: a :class:`HostFolder` holds an exclusive ``flock`` on a file inside it
for as long as its owner lives; :func:`sweep` (run once per process before its first host
folder) removes every ``alias-tla-*`` folder whose lock nobody holds, i.e. whose process was
killed before it could remove it (a run killed at its time limit removes its own).
"""

from __future__ import annotations

import abc
import fcntl
import os
import shutil
import stat
import tempfile
import threading
import time
from pathlib import Path

__all__ = ["Folder", "HostFolder", "BoxFolder", "PREFIX", "OUTPUT_CAP", "read_capped", "sweep"]

#: The name every run folder starts with (:func:`alias.tla.tlc_output.stable_log` writes
#: ``<run>`` for it in logs).
PREFIX = "alias-tla-"
#: Maximum characters of tool output kept per run (head 1 MiB + tail 3 MiB).
OUTPUT_CAP = 4 * 1024 * 1024
_HEAD = 1024 * 1024
_LOCK = ".alias-lock"
#: A folder without a lock file (written by an older ALIAS) is swept only after this long.
_UNLOCKED_AGE_S = 24 * 3600
#: A folder younger than this is never swept: its owner may not hold its lock yet.
_YOUNG_S = 60
_SWEPT: set[tuple[int, str]] = set()
_SWEEP_LOCK = threading.Lock()


def read_capped(f) -> str:
    """The text of the binary file object ``f`` (read from its start), at most
    :data:`OUTPUT_CAP` bytes of it: its first 1 MiB and its last 3 MiB around a line
    ``[... N bytes of output cut ...]``; UTF-8, bad bytes replaced."""
    size = os.fstat(f.fileno()).st_size
    f.seek(0)
    if size <= OUTPUT_CAP:
        data = f.read()
    else:
        head = f.read(_HEAD)
        f.seek(size - (OUTPUT_CAP - _HEAD))
        data = head + f"\n[... {size - OUTPUT_CAP} bytes of output cut ...]\n".encode() + f.read()
    return data.decode("utf-8", "replace")


class Folder(abc.ABC):
    """A run folder: ``path`` as the tool sees it; files by plain name (no ``/``)."""

    path: str

    @abc.abstractmethod
    def _open(self, name: str, flags: int) -> int:
        """A file descriptor for ``name`` opened with ``flags`` (``O_*``), inside the folder only."""

    def write(self, name: str, text: str) -> None:
        """Write ``text`` (UTF-8) into the file ``name``."""
        fd = self._open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        with open(fd, "w", encoding="utf-8") as f:
            f.write(text)

    def size(self, name: str) -> int | None:
        """Bytes in the regular file ``name``; ``None`` when there is none."""
        try:
            fd = self._open(name, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            return st.st_size if stat.S_ISREG(st.st_mode) else None
        finally:
            os.close(fd)

    def read_bytes(self, name: str) -> bytes:
        """The file ``name``'s bytes."""
        with open(self._open(name, os.O_RDONLY | os.O_NOFOLLOW), "rb") as f:
            return f.read()

    def read_text(self, name: str) -> str:
        """The file ``name`` as text (UTF-8, bad bytes replaced)."""
        with open(self._open(name, os.O_RDONLY | os.O_NOFOLLOW), "rb") as f:
            return f.read().decode("utf-8", "replace")

    def read_capped(self, name: str) -> str:
        """:func:`read_capped` of the file ``name``; ``""`` when there is none."""
        try:
            fd = self._open(name, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return ""
        with open(fd, "rb") as f:
            return read_capped(f)

    @abc.abstractmethod
    def remove(self) -> None:
        """Delete the folder and everything in it."""


class HostFolder(Folder):
    """A fresh ``alias-tla-*`` folder in the system temporary directory holding ``files``
    and an empty ``jtmp`` (the JVM's ``java.io.tmpdir``), locked while it exists."""

    def __init__(self, files: dict[str, str], prefix: str = PREFIX):
        sweep()
        self.path = tempfile.mkdtemp(prefix=prefix)
        self._lock = os.open(os.path.join(self.path, _LOCK), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(self._lock, fcntl.LOCK_EX)
        os.mkdir(os.path.join(self.path, "jtmp"))
        for name, text in files.items():
            self.write(name, text)

    def _open(self, name: str, flags: int) -> int:
        return os.open(os.path.join(self.path, name), flags | os.O_CLOEXEC, 0o644)

    def remove(self) -> None:
        """Remove the folder and everything in it (then drop its lock)."""
        shutil.rmtree(self.path, ignore_errors=True)
        if self._lock >= 0:
            os.close(self._lock)
            self._lock = -1


class BoxFolder(Folder):
    """A folder inside a confined run's tmpfs: ``path`` inside the confinement, ``fd`` an
    open descriptor of the same folder (this process's way in, also after the confined
    processes ended). :meth:`create` makes one in the directory ``parent_fd``."""

    def __init__(self, fd: int, path: str):
        self.fd, self.path = fd, path

    @classmethod
    def create(cls, parent_fd: int, parent_path: str, name: str, files: dict[str, str]) -> "BoxFolder":
        """A new folder ``name`` under ``parent_fd`` (seen as ``parent_path`` inside) with
        ``files`` and an empty ``jtmp``."""
        os.mkdir(name, 0o755, dir_fd=parent_fd)
        folder = cls(os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=parent_fd),
                     f"{parent_path}/{name}")
        os.mkdir("jtmp", 0o755, dir_fd=folder.fd)
        for file, text in files.items():
            folder.write(file, text)
        return folder

    def _open(self, name: str, flags: int) -> int:
        if "/" in name:
            raise ValueError(f"not a plain file name: {name!r}")
        return os.open(name, flags | os.O_CLOEXEC, 0o644, dir_fd=self.fd)

    def remove(self, parent_fd: int | None = None) -> None:
        """Close the descriptor; with ``parent_fd`` (a confinement still running) also
        delete the folder's files."""
        if parent_fd is not None:
            for wait in (0.1, 0.5, None):
                try:
                    _rmtree_at(parent_fd, os.path.basename(self.path))
                    break
                except OSError:  # a run of the tool server may still be writing (TLC's
                    if wait is None:  # metadir after a timeout): its files go with the tmpfs
                        break
                    time.sleep(wait)
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _rmtree_at(parent_fd: int, name: str) -> None:
    """Delete ``name`` under the directory ``parent_fd`` and everything in it, without
    following links (a run may have written any)."""
    try:
        st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
    except OSError:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(name, dir_fd=parent_fd)
        return
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent_fd)
    try:
        for entry in os.listdir(fd):
            _rmtree_at(fd, entry)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=parent_fd)


def sweep(root: str | None = None) -> list[str]:
    """Remove the ``alias-tla-*`` folders under ``root`` (default: the system temporary
    directory) that no living process holds: a lock file nobody has locked (its owner was
    killed), or no lock file and older than a day (written by an older ALIAS). Folders
    younger than a minute are kept. Once per process and folder; returns what it removed."""
    root = root or tempfile.gettempdir()
    with _SWEEP_LOCK:
        if (os.getpid(), root) in _SWEPT:
            return []
        _SWEPT.add((os.getpid(), root))
    removed = []
    try:
        entries = [e for e in os.scandir(root) if e.name.startswith(PREFIX) and e.is_dir(follow_symlinks=False)]
    except OSError:
        return removed
    for entry in entries:
        if _abandoned(entry.path):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.path)
    return removed


def _abandoned(path: str) -> bool:
    """Whether the run folder ``path`` has no living owner (see :func:`sweep`)."""
    try:
        age = time.time() - os.stat(path).st_mtime
    except OSError:
        return False
    if age < _YOUNG_S:
        return False
    try:
        fd = os.open(os.path.join(path, _LOCK), os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return age > _UNLOCKED_AGE_S
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
