"""SANY in one long-lived JVM per process (``tla.sany_server``), so that a parse costs tens
of milliseconds instead of a JVM start.

:class:`SanyServer` runs ``java/SanyServer.java`` (compiled once per machine, jar and Java
into the JVM cache folder, :func:`server_classes`) and sends it one root module path at a
time; the server answers with SANY's exit code and output, exactly what ``java
tla2sany.SANY <file>`` prints and exits with (it calls the tools' ``SANYmain0``, which
throws the code ``SANYmain`` exits with; before each request it drops the tools' cached
module resolver, so no module resolves from an earlier request's folder). The client keeps
the sandbox of a process run: each request's files live in their own temporary folder, a
request over its time limit kills the server's process group (the next request starts a
fresh server), and a server that dies answers ``crash``. A jar without ``SANYmain0`` (the
2.15 fallback) or a Java without ``javac`` gets no server: SANY then runs as a process.
``tests/test_sany_server.py`` compares both ways on every kind of result.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SanyServer", "server_classes", "server_for", "ServerReply"]

SOURCE = Path(__file__).with_name("java") / "SanyServer.java"
_FAILED: set[str] = set()
_SERVERS: dict[tuple, "SanyServer"] = {}
_LOCK = threading.Lock()


@dataclass
class ServerReply:
    """One parse: ``exit_code`` (``None`` when the server died or timed out), ``output``,
    ``timed_out``, ``wall_s`` and ``error`` (why there is no exit code)."""

    exit_code: int | None
    output: str
    timed_out: bool
    wall_s: float
    error: str | None = None


def _javac(java: str) -> str | None:
    path = shutil.which(java)
    if path is None:
        return None
    javac = Path(os.path.realpath(path)).with_name("javac")
    return str(javac) if javac.is_file() else shutil.which("javac")


def _has_sanymain0(jar: Path) -> bool:
    try:
        with zipfile.ZipFile(jar) as z:
            return b"SANYmain0" in z.read("tla2sany/drivers/SANY.class")
    except (OSError, KeyError, zipfile.BadZipFile):
        return False


def server_classes(java: str, jar: Path, cache_dir: str) -> Path | None:
    """The folder of the compiled server for this Java and jar under ``cache_dir``
    (compiled on first use); ``None`` when it cannot be built (no ``javac``, a jar without
    ``SANYmain0``, a compile error): SANY then runs as a process."""
    if not cache_dir:
        return None
    st = Path(jar).stat()
    key = hashlib.sha256(f"{os.path.realpath(jar)}:{st.st_size}:{st.st_mtime_ns}:{java}".encode()
                         + SOURCE.read_bytes()).hexdigest()[:20]
    out = Path(cache_dir) / f"sany-server-{key}"
    if (out / "SanyServer.class").is_file():
        return out
    javac = _javac(java)
    if key in _FAILED or javac is None or not _has_sanymain0(Path(jar)):
        _FAILED.add(key)
        return None
    Path(cache_dir).mkdir(parents=True, exist_ok=True)
    part = Path(tempfile.mkdtemp(prefix=".sany-server-", dir=cache_dir))
    r = subprocess.run([javac, "-nowarn", "-cp", str(jar), "-d", str(part), str(SOURCE)], capture_output=True,
                       text=True, timeout=300)
    if r.returncode != 0 or not (part / "SanyServer.class").is_file():
        _FAILED.add(key)
        shutil.rmtree(part, ignore_errors=True)
        return None
    try:
        os.replace(part, out)
    except OSError:  # another process got there first
        shutil.rmtree(part, ignore_errors=True)
    return out


class SanyServer:
    """One server JVM: ``argv`` is the JVM command up to (not including) the main class."""

    def __init__(self, jvm_args: list[str], classes: Path):
        self.jvm_args, self.classes = jvm_args, classes
        self.proc: subprocess.Popen | None = None
        self.tmp: Path | None = None

    def _start(self) -> subprocess.Popen:
        self.tmp = Path(tempfile.mkdtemp(prefix="alias-tla-srv"))  # logs name it <run>, as a process run
        (self.tmp / "jtmp").mkdir()
        argv = [a.replace("{TMP}", str(self.tmp)) for a in self.jvm_args]
        cp = argv.index("-cp")
        argv[cp + 1] = f"{argv[cp + 1]}{os.pathsep}{self.classes}"
        self.proc = subprocess.Popen(argv + ["SanyServer"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, cwd=self.tmp, start_new_session=True)
        return self.proc

    def parse(self, path: Path, library: str, timeout_s: float) -> ServerReply:
        """SANY on the module file ``path`` (absolute), ``library`` the TLA-Library path."""
        t0 = time.monotonic()
        proc = self.proc if self.proc is not None and self.proc.poll() is None else self._start()
        try:
            proc.stdin.write(f"{path}\t{library}\n".encode("utf-8"))
            proc.stdin.flush()
            header = self._read_until(proc, b"\n", t0 + timeout_s)
            code, n = (int(x) for x in header.decode().split())
            body = self._read_n(proc, n, t0 + timeout_s)
        except TimeoutError:
            self.close()
            return ServerReply(None, "", True, time.monotonic() - t0, f"timeout after {timeout_s} s")
        except (OSError, ValueError, EOFError) as e:
            self.close()
            return ServerReply(None, f"SANY server died: {type(e).__name__}: {e}", False, time.monotonic() - t0,
                               str(e))
        return ServerReply(code, body.decode("utf-8", "replace"), False, time.monotonic() - t0)

    def _read_until(self, proc: subprocess.Popen, sep: bytes, deadline: float) -> bytes:
        data = b""
        while not data.endswith(sep):
            data += self._read_some(proc, 1, deadline)
        return data

    def _read_n(self, proc: subprocess.Popen, n: int, deadline: float) -> bytes:
        chunks, got = [], 0
        while got < n:
            chunk = self._read_some(proc, min(1 << 16, n - got), deadline)
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    @staticmethod
    def _read_some(proc: subprocess.Popen, n: int, deadline: float) -> bytes:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
            raise TimeoutError
        chunk = os.read(proc.stdout.fileno(), n)
        if not chunk:
            raise EOFError("the server closed its output")
        return chunk

    def close(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
            self.proc = None
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


@atexit.register
def _close_all() -> None:
    for server in list(_SERVERS.values()):
        server.close()


def server_for(key: tuple, jvm_args: list[str], classes: Path) -> tuple[SanyServer, threading.Lock]:
    """This process's server for ``key`` (a forked worker never uses its parent's), and the
    lock that serializes its requests."""
    full = (os.getpid(),) + key
    with _LOCK:
        if full not in _SERVERS:
            _SERVERS[full] = SanyServer(jvm_args, classes)
            _SERVERS[full].lock = threading.Lock()  # type: ignore[attr-defined]
        server = _SERVERS[full]
    return server, server.lock  # type: ignore[attr-defined]
