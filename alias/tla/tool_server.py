"""SANY and TLC in long-lived JVMs, one of each per process (``tla.sany_server``,
``tla.tlc_server``), so that a parse or a short model check costs tens of milliseconds
instead of a JVM start.

:class:`SanyServer` runs ``java/SanyServer.java`` and sends it one root module path at a
time; the server answers with SANY's exit code and output, exactly what ``java
tla2sany.SANY <file>`` prints and exits with (it calls the tools' ``SANYmain0``, which
throws the code ``SANYmain`` exits with; before each request it drops the tools' cached
module resolver, so no module resolves from an earlier request's folder).
:class:`TlcServer` runs ``java/TlcServer.java``: each request is one ``tlc2.TLC`` run with
the arguments a process run gets, in the run's own folder, in a fresh class loader over the
jar (TLC keeps its settings and the model in static fields: no class of the tools is shared
between two runs); the exit code is the one ``TLC.main`` exits with and the output goes to
the run folder's ``alias-output.txt``, as for a process.
Both are compiled once per machine, jar and Java into the JVM cache folder
(:func:`server_classes`). The client keeps the sandbox of a process run: a confined server
(:mod:`alias.tla.confine`) runs with all its requests inside one confinement, whose tmpfs
holds each request's own folder (:meth:`_JvmServer.folder`); a request over its time limit
kills the server's process group (the next request starts a fresh server), and a server
that dies answers
``crash`` (SANY) or its exit status (TLC, which may call ``System.exit``). A jar without
``SANYmain0`` (the 2.15 fallback) or a Java without ``javac`` gets no server: the tools
then run as processes. ``tests/test_tool_server.py`` compares both ways on every kind of
result.
"""

from __future__ import annotations

import atexit
import hashlib
import multiprocessing.util
import os
import select
import shutil
import signal
import subprocess
import secrets
import tempfile
import threading
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .confine import BOX_TMP, Sandbox
from .folders import PREFIX, BoxFolder, Folder, HostFolder

__all__ = ["SanyServer", "TlcServer", "server_classes", "server_for", "ServerReply", "SHORT_RUN_FLAGS",
           "jvm_accepts"]

#: the servers' Java package (no TLA+ module name can be a class of it: TLC looks for
#: Java overrides of a module by the module's name on the class path)
PACKAGE = "aliastools"
SOURCES = tuple(Path(__file__).with_name("java") / f"{n}.java" for n in ("SanyServer", "TlcServer", "ParentWatch"))
_FAILED: set[str] = set()
#: JVM options of the TLC server for short runs (``tla.short_run_flags``). Each run defines
#: the jar's classes anew in its own loader, so the JVM verifies their bytecode and compiles
#: their hot methods on every run, and most runs end before compiled code pays off: no
#: bytecode verification of classes outside the JDK (the jar is the tools the user
#: configured, which verification would not make safer; model outputs are TLA+ text, never
#: bytecode) and compilation thresholds five times the default (a run of minutes still
#: gets compiled code within its first seconds). Measured on 2 cores, v1.8.0: busy CPU of
#: grading TLA+-Bench's 189 released outputs 74-81 s -> 56-70 s, verdicts identical
#: (docs/measurements.md).
SHORT_RUN_FLAGS = ("-XX:+UnlockDiagnosticVMOptions", "-XX:-BytecodeVerificationRemote",
                   "-XX:CompileThresholdScaling=5")
_ACCEPTS: dict[tuple, bool] = {}
_SERVERS: dict[tuple, "_JvmServer"] = {}
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


def _compiled(java: str, jar: Path, cache_dir: str, sources: tuple[Path, ...], prefix: str, usable) -> Path | None:
    """The folder of ``sources`` compiled against ``jar`` with this Java under ``cache_dir``
    (``<prefix>-<key>``, compiled on first use, atomically); ``None`` when they cannot be
    built: no cache folder, no ``javac``, ``usable(jar)`` false, a compile error or timeout."""
    if not cache_dir:
        return None
    st = Path(jar).stat()
    key = hashlib.sha256(f"{os.path.realpath(jar)}:{st.st_size}:{st.st_mtime_ns}:{java}".encode()
                         + b"".join(p.read_bytes() for p in sources)).hexdigest()[:20]
    out = Path(cache_dir) / f"{prefix}-{key}"
    if all((out / PACKAGE / f"{p.stem}.class").is_file() for p in sources):
        return out
    javac = _javac(java)
    if key in _FAILED or javac is None or not usable(Path(jar)):
        _FAILED.add(key)
        return None
    Path(cache_dir).mkdir(parents=True, exist_ok=True)
    part = Path(tempfile.mkdtemp(prefix=f".{prefix}-", dir=cache_dir))
    try:
        ok = subprocess.run([javac, "-nowarn", "-cp", str(jar), "-d", str(part), *map(str, sources)],
                            capture_output=True, text=True, timeout=300).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok or not all((part / PACKAGE / f"{p.stem}.class").is_file() for p in sources):
        _FAILED.add(key)
        shutil.rmtree(part, ignore_errors=True)
        return None
    try:
        os.replace(part, out)
    except OSError:  # another process got there first
        shutil.rmtree(part, ignore_errors=True)
    return out


def server_classes(java: str, jar: Path, cache_dir: str) -> Path | None:
    """The folder of the compiled servers (SANY and TLC) for this Java and jar under
    ``cache_dir`` (compiled on first use); ``None`` when they cannot be built (no ``javac``,
    a jar without ``SANYmain0``, a compile error): the tools then run as processes."""
    return _compiled(java, jar, cache_dir, SOURCES, "tool-servers", _has_sanymain0)


def jvm_accepts(java: str, options: tuple[str, ...]) -> bool:
    """Whether ``java`` starts with ``options`` (``java OPTIONS -version`` exits 0 within
    60 s and prints nothing on stdout, where a JVM writes its warnings); asked once per
    process, Java and options."""
    key = (java, options)
    if key not in _ACCEPTS:
        try:
            r = subprocess.run([java, *options, "-version"], capture_output=True, timeout=60)
            _ACCEPTS[key] = r.returncode == 0 and not r.stdout  # stdout is a server's reply channel
        except (OSError, subprocess.TimeoutExpired):
            _ACCEPTS[key] = False
    return _ACCEPTS[key]


class _JvmServer:
    """One server JVM: ``jvm_args`` is the JVM command up to (not including) the main
    class; :attr:`main` the main class and its arguments (``{JAR}``: the jar)."""

    main: tuple[str, ...] = ()
    #: whether the server's class path holds the jar (else only the compiled servers)
    jar_on_classpath = True
    #: JVM options of this server beyond a process run's
    extra_jvm: tuple[str, ...] = ()
    heap_extra_mb = 0

    def __init__(self, jvm_args: list[str], classes: Path, confine_as=None, readable: tuple[str, ...] = ()):
        self.jvm_args, self.classes = jvm_args, classes
        self.confine_as, self.readable = confine_as, (*readable, str(classes))
        self.proc: subprocess.Popen | None = None
        self.home: HostFolder | None = None
        self.box: Sandbox | None = None

    def _argv(self, home: str) -> list[str]:
        argv = [a.replace("{TMP}", home) for a in self.jvm_args]
        argv = [f"-Xmx{int(a[4:-1]) + self.heap_extra_mb}m" if a.startswith("-Xmx") and a.endswith("m") else a
                for a in argv]
        cp = argv.index("-cp")
        jar = argv[cp + 1]
        argv[cp + 1] = f"{jar}{os.pathsep}{self.classes}" if self.jar_on_classpath else str(self.classes)
        argv[cp:cp] = self.extra_jvm
        return argv + [a.replace("{JAR}", jar) for a in self.main]

    def _start(self) -> subprocess.Popen:
        """A fresh server: confined (:mod:`alias.tla.confine`, started from this process's
        keeper thread, whose life its ``--die-with-parent`` follows) or a plain process in
        a folder ``alias-tla-srv*`` of the temporary directory (logs name it ``<run>``)."""
        pipes = dict(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        if self.confine_as is None:
            self.home = HostFolder({}, prefix=f"{PREFIX}srv")
            self.proc = subprocess.Popen(self._argv(self.home.path), cwd=self.home.path, start_new_session=True,
                                         **pipes)
            return self.proc
        name = f"{PREFIX}srv{secrets.token_hex(6)}"
        self.box = _in_keeper(lambda: Sandbox(self._argv(f"{BOX_TMP}/{name}"), self.confine_as, self.readable,
                                              name=name, **pipes))
        os.mkdir("jtmp", 0o755, dir_fd=self.box.folder.fd)
        self.box.release()
        self.proc = self.box.proc
        return self.proc

    def _running(self) -> subprocess.Popen:
        return self.proc if self.proc is not None and self.proc.poll() is None else self._start()

    def folder(self, files: dict[str, str]) -> Folder:
        """A fresh run folder holding ``files`` where this server's runs see it (inside its
        confinement, which it starts if need be, or in the temporary directory)."""
        if self.confine_as is None:
            return HostFolder(files)
        self._running()
        folder = BoxFolder.create(self.box.root_fd, BOX_TMP, f"{PREFIX}{secrets.token_hex(8)}", files)
        folder.box = self.box  # type: ignore[attr-defined]
        return folder

    def drop(self, folder: Folder) -> None:
        """Remove a folder of :meth:`folder` (inside a confinement that still runs, its files
        too; one that ended took them with it)."""
        if isinstance(folder, BoxFolder):
            alive = self.box is not None and getattr(folder, "box", None) is self.box and self.box.root_fd >= 0
            folder.remove(self.box.root_fd if alive else None)
        else:
            folder.remove()

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

    def close(self) -> int | None:
        """Stop the server; its exit status when it had already ended by itself."""
        status = None
        if self.box is not None:
            status = self.box.kill()
            self.box.close()
            self.box.folder.remove()
            self.box = None
        elif self.proc is not None:
            status = self.proc.poll()
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
        self.proc = None
        if self.home is not None:
            self.home.remove()
            self.home = None
        return status


class SanyServer(_JvmServer):
    """The SANY server: :meth:`parse` one root module per request."""

    main = (f"{PACKAGE}.SanyServer",)

    def parse(self, path: Path, library: str, timeout_s: float) -> ServerReply:
        """SANY on the module file ``path`` (absolute), ``library`` the TLA-Library path."""
        t0 = time.monotonic()
        proc = self._running()
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


class TlcServer(_JvmServer):
    """The TLC server: :meth:`run` one ``tlc2.TLC`` run per request."""

    main = (f"{PACKAGE}.TlcServer", "{JAR}")
    #: MiB added to ``-Xmx``: the server's own share of the heap (the jar's class bytes), so
    #: that TLC has at least a process's heap
    heap_extra_mb = 64
    jar_on_classpath = False  # each run loads the tools in its own class loader
    #: runs after which the server JVM ends and the next request starts a fresh one (some of
    #: each model check's classes outlive it; it also ends at half its Metaspace or old generation)
    max_runs = 200

    @property
    def extra_jvm(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("--add-opens", "java.base/java.lang=ALL-UNNAMED",  # to drop each run's shutdown hook
                f"-Dalias.tlc_server.max_runs={int(self.max_runs)}")

    def run(self, run_dir: Path, library: str, args: list[str], timeout_s: float) -> ServerReply:
        """TLC with ``args`` (what follows ``tlc2.TLC`` on a process's command line) in
        ``run_dir``, which receives ``alias-output.txt`` (the reply's ``output`` is empty:
        read the file). A TLC that ends the JVM (``System.exit``) gives its exit status.
        Raises ``ValueError`` for an argument with a tab or a newline."""
        if any("\t" in a or "\n" in a for a in (str(run_dir), library, *args)):
            raise ValueError("a TLC server request cannot carry a tab or a newline")
        t0 = time.monotonic()
        proc = self._running()
        try:
            proc.stdin.write("\t".join([str(run_dir), library, *args]).encode("utf-8") + b"\n")
            proc.stdin.flush()
            reply = self._read_until(proc, b"\n", t0 + timeout_s).decode().split() or ["?"]
            code, recycle = int(reply[0]), reply[1:] == ["recycle"]
        except TimeoutError:
            self.close()
            return ServerReply(None, "", True, time.monotonic() - t0, f"timeout after {timeout_s} s")
        except (OSError, ValueError, EOFError) as e:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            status = self.close()
            if status is not None and status >= 0:  # TLC called System.exit(status)
                return ServerReply(status, "", False, time.monotonic() - t0)
            return ServerReply(None, f"TLC server died: {type(e).__name__}: {e}", False, time.monotonic() - t0,
                               str(e))
        if recycle:  # the server ends after this run: wait for it, the next request starts a fresh one
            proc.wait()
            self.close()
        return ServerReply(code, "", False, time.monotonic() - t0)


def _close_all() -> None:
    """Stop this process's servers (not those whose handles a forked child inherited)."""
    for key, server in list(_SERVERS.items()):
        if key[0] == os.getpid():
            server.close()


atexit.register(_close_all)
_FINALIZED: set[int] = set()
_KEEPERS: dict[int, ThreadPoolExecutor] = {}


def _in_keeper(fn):
    """``fn()`` called in this process's keeper thread, which lives as long as the process:
    a confined server's ``--die-with-parent`` follows the thread that started it, and a
    worker thread that started one may end while others still use it."""
    with _LOCK:
        if os.getpid() not in _KEEPERS:
            _KEEPERS[os.getpid()] = ThreadPoolExecutor(max_workers=1, thread_name_prefix="alias-tool-servers")
        keeper = _KEEPERS[os.getpid()]
    return keeper.submit(fn).result()


def _close_at_exit() -> None:
    """Register :func:`_close_all` with this process's multiprocessing finalizers, once per
    process: a pool worker ends with ``os._exit``, which skips ``atexit``, and a forked
    worker starts with its parent's finalizers cleared, so one registered at import would
    never run there (the server would keep its folder under the temporary directory)."""
    if os.getpid() not in _FINALIZED:
        _FINALIZED.add(os.getpid())
        multiprocessing.util.Finalize(None, _close_all, exitpriority=10)


def server_for(kind: type[_JvmServer], key: tuple, jvm_args: list[str], classes: Path, confine_as=None,
               readable: tuple[str, ...] = ()) -> tuple[_JvmServer, threading.Lock]:
    """This process's server of class ``kind`` (:class:`SanyServer`, :class:`TlcServer`)
    for ``key`` (a forked worker never uses its parent's), and the lock that serializes its
    requests; with ``confine_as`` (a ``ToolConfig`` whose runs are confined) the server is
    confined and may read ``readable`` (the key must then name them)."""
    full = (os.getpid(), kind.__name__) + key
    with _LOCK:
        _close_at_exit()
        if full not in _SERVERS:
            _SERVERS[full] = kind(jvm_args, classes, confine_as, readable)
            _SERVERS[full].lock = threading.Lock()  # type: ignore[attr-defined]
        server = _SERVERS[full]
    return server, server.lock  # type: ignore[attr-defined]
