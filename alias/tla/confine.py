"""How a SANY or TLC run on untrusted text is confined by the kernel (``tla.confine``).

Model outputs are untrusted code: with the Community Modules' Java overrides a TLA+ module
can run commands (``IOUtils!IOExec``) and read and write files (``IOUtils``, ``Json``,
``CSV``). Every SANY and TLC run -- a process, or one of the long-lived tool servers
(:mod:`alias.tla.tool_server`) with all the runs it serves -- therefore starts inside
bubblewrap (``bwrap``, Debian package ``bubblewrap``), which gives it:

* **namespaces** (``--unshare-all``): its own user, mount, PID, IPC, UTS and cgroup
  namespaces and its own **network namespace**, whose only interface is loopback: no
  connection leaves it. No capabilities (``--cap-drop ALL``), and no further user
  namespaces inside (``--disable-userns``: a nested one could mount a tmpfs of any size);
  killed with the process that started it (``--die-with-parent``).
* **a file-system view** (:func:`view`) where the only writable place is its own
  ``/tmp`` (bwrap's root and ``/dev`` are remounted read-only):
  a new **tmpfs of ``tla.disk_mb`` MiB** (``--size``), which holds the run
  folders, TLC's states (``-metadir``, the on-disk state queue and fingerprint set
  included), ``java.io.tmpdir`` and whatever a run writes; readable and nothing else: the
  system libraries (``/usr/lib``, ``/lib*``), the JDK of ``tla.java`` with the files its
  links point to (under ``/etc/java-*``), the time zone, and the files the run needs:
  ``tla2tools.jar``, the library folders, the class-data-sharing archive, the compiled
  tool servers and the Community Modules jar (:mod:`alias.tla.overrides`). No home, no
  ``.alias``, no repository, no ``/etc/passwd``, no credentials; no ``/bin`` or
  ``/usr/bin`` (no shell: the programs a run can start are the JDK's and the few helpers
  packages keep under ``/usr/lib``).
* **limits** (``prlimit`` of the confined processes before they start): at most
  ``tla.max_processes`` processes and threads (``RLIMIT_NPROC``, counted in its own user
  namespace; the kernel exempts root's processes from it, so as root a ``pids`` cgroup of
  its own with ``pids.max`` where one is writable, :func:`process_limit`), no file larger
  than the tmpfs (``RLIMIT_FSIZE``, which also bounds the output a process run writes to
  this machine's disk), no core files; plus the time limit (its whole process tree killed)
  and the JVM heap limit, as before.
* **a clean environment** (``--clearenv``; the locale and time zone variables kept, so
  output bytes stay the same).

Its tmpfs is reached from here through an open directory descriptor
(``/proc/<pid>/root/tmp``, :class:`~alias.tla.folders.BoxFolder`): input files are written
before the confined program starts (``--block-fd``) and outputs read after it ended; the
kernel frees the tmpfs with its last process and descriptor, so a killed run, worker or
stage leaves nothing on disk.

:func:`status` says whether this machine can confine (a probe run, cached per Java); where
it cannot (no ``bwrap``, or a kernel without unprivileged user namespaces)
``tla.confine: auto`` runs as before, unconfined and without the overrides, and every stage
says so in one line; ``on`` stops instead; ``off`` never confines. :func:`key` is what a
run key holds, so confined and unconfined verdicts never mix.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import secrets
import select
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .folders import BoxFolder, PREFIX
from .toolconfig import ToolConfig, ToolError

__all__ = ["MODES", "BWRAP", "BOX_TMP", "Status", "status", "active", "key", "java_path", "view",
           "Sandbox", "SandboxError", "die_with_parent", "process_limit", "pids_cgroup_root"]

#: ``tla.confine``: ``auto`` (confine where the kernel allows, else say so and run
#: unconfined), ``on`` (confine or stop), ``off`` (never).
MODES = ("auto", "on", "off")
#: The bubblewrap executable.
BWRAP = "bwrap"
#: Where the confined run's tmpfs is mounted (its only writable place).
BOX_TMP = "/tmp"
#: The version of what the confinement gives (namespaces, view, limits): part of :func:`key`.
VIEW_VERSION = 1
_NAMESPACES = ("--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL", "--die-with-parent")
_SYSTEM_LIBS = ("/usr/lib", "/usr/lib64", "/usr/lib32", "/lib", "/lib64", "/lib32")
_SYSTEM_FILES = ("/etc/localtime", "/etc/timezone", "/etc/ld.so.cache")
_ENV_KEPT = ("LANG", "LC_ALL", "LC_CTYPE", "TZ")
_READY_S = 30.0


class SandboxError(ToolError):
    """A confinement that could not be set up (bwrap ended or never got ready)."""


@dataclass(frozen=True)
class Status:
    """Whether runs can be confined here: ``available``, and ``detail`` (bwrap's version,
    or in one line why not)."""

    available: bool
    detail: str


def java_path(java: str) -> str | None:
    """The real path of the Java executable ``java`` (a name on ``PATH`` or a path);
    ``None`` when there is none."""
    found = shutil.which(java)
    return os.path.realpath(found) if found else None


@lru_cache(maxsize=None)
def _jdk_view(java: str) -> tuple[str, ...]:
    """bwrap arguments that make the JDK of ``java`` (its real path) readable: its home
    folder when outside the system libraries, and the folders its links point to outside
    it (Debian's ``/etc/java-17-openjdk``, ``/etc/ssl/certs/java``)."""
    home = Path(java).parent.parent
    outside = set()
    for folder, dirs, files in os.walk(home):
        for name in dirs + files:
            p = os.path.join(folder, name)
            if os.path.islink(p):
                target = os.path.realpath(p)
                if os.path.exists(target) and not _under(target, (str(home), *_SYSTEM_LIBS)):
                    outside.add(target if os.path.isdir(target) else os.path.dirname(target))
    roots = sorted(p for p in outside if not any(p != q and _under(p, (q,)) for q in outside))
    args = [] if _under(str(home), _SYSTEM_LIBS) else ["--ro-bind", str(home), str(home)]
    for r in roots:
        args += ["--ro-bind", r, r]
    return tuple(args)


def _under(path: str, roots) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def view(java: str, readable: tuple[str, ...] | list[str] = ()) -> list[str]:
    """The bwrap arguments of a confined run's file-system view (see the module text):
    the system libraries, the JDK of ``java`` (a real path), ``/proc``, a minimal ``/dev``,
    and the files and folders ``readable`` (each at its own path, read-only; those under
    ``/tmp`` are mounted over the run's tmpfs, which must come first: :class:`Sandbox`)."""
    args: list[str] = []
    for p in _SYSTEM_LIBS:
        if os.path.islink(p):
            args += ["--symlink", os.readlink(p), p]
        elif os.path.isdir(p):
            args += ["--ro-bind", p, p]
    args += list(_jdk_view(java))
    for p in _SYSTEM_FILES:
        if os.path.exists(p):
            args += ["--ro-bind", os.path.realpath(p), p]
    args += ["--proc", "/proc", "--dev", "/dev"]
    for p in dict.fromkeys(str(x) for x in readable if x):
        args += ["--ro-bind", p, p]
    return args


def _env_args() -> list[str]:
    out = ["--clearenv"]
    for k in _ENV_KEPT:
        if k in os.environ:
            out += ["--setenv", k, os.environ[k]]
    return out


def bwrap_command(argv: list[str], java: str, readable, disk_mb: int, workdir: str) -> list[str]:
    """The full bwrap command line that runs ``argv`` (``argv[0]`` is replaced by the real
    path ``java``) confined, in the new folder ``workdir`` of its tmpfs. bwrap's own root
    and ``/dev`` are tmpfs mounts of no set size: both are made read-only once the view is
    built, so the run's ``/tmp`` is the only place it can write."""
    return [BWRAP, *_NAMESPACES, "--size", str(int(disk_mb) * 1024 * 1024), "--tmpfs", BOX_TMP,
            *view(java, readable), "--dir", workdir, "--remount-ro", "/dev", "--remount-ro", "/",
            "--chdir", workdir, *_env_args(), "--", java, *argv[1:]]


def die_with_parent() -> None:
    """In the child, before exec: ask Linux to SIGKILL it when the thread that started it
    dies, so a killed grading or verify run leaves no tool running (no-op elsewhere)."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


_STATUS: dict[str, Status] = {}


def status(java: str = "java") -> Status:
    """Whether SANY/TLC runs can be confined on this machine with this Java: ``bwrap`` is
    installed and a confined ``java -version`` (every namespace, the view, the tmpfs)
    exits 0. Cached per process and Java."""
    if java in _STATUS:
        return _STATUS[java]
    real = java_path(java)
    if shutil.which(BWRAP) is None:
        st = Status(False, f"{BWRAP} not found (Debian: apt-get install bubblewrap)")
    elif real is None:
        st = Status(False, f"no Java {java!r}")
    else:
        st = _probe(real)
    _STATUS[java] = st
    return st


def _probe(java: str) -> Status:
    cmd = bwrap_command([java, "-version"], java, (), 16, f"{BOX_TMP}/{PREFIX}probe")
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return Status(False, f"{BWRAP} failed: {e}")
    if r.returncode != 0:
        why = (r.stderr or r.stdout).strip().splitlines()
        return Status(False, f"{BWRAP} refused ({why[0] if why else f'exit {r.returncode}'})")
    version = subprocess.run([BWRAP, "--version"], capture_output=True, text=True).stdout.strip() or BWRAP
    limit = process_limit()
    return Status(True, f"{version}; processes limited by {limit}" if limit else
                  f"{version}; processes NOT limited (root, whose processes RLIMIT_NPROC exempts, and no writable "
                  "pids cgroup)")


def process_limit() -> str | None:
    """How a confinement's processes are limited here: ``RLIMIT_NPROC`` (not root), ``a pids
    cgroup`` (root, whose processes the kernel exempts from that rlimit), or ``None``."""
    if os.geteuid() != 0:
        return "RLIMIT_NPROC"
    return "a pids cgroup" if pids_cgroup_root() is not None else None


def active(config: ToolConfig) -> bool:
    """Whether ``config``'s runs are confined: ``confine`` ``on`` or ``auto`` and
    :func:`status` available. Raises :class:`~alias.tla.toolconfig.ToolError` for an
    unknown mode, or for ``on`` where this machine cannot confine."""
    if config.confine not in MODES:
        raise ToolError(f"tla.confine: expected one of {', '.join(MODES)}, got {config.confine!r}")
    if config.confine == "off":
        return False
    st = status(config.java)
    if not st.available and config.confine == "on":
        raise ToolError(f"tla.confine: on, but SANY/TLC cannot be confined here: {st.detail}")
    return st.available


def key(config: ToolConfig) -> str | None:
    """What a run key holds about the confinement of ``config``'s runs (``None``:
    unconfined): the design's version and the limits that can change a verdict."""
    if not active(config):
        return None
    return f"bwrap-v{VIEW_VERSION}:disk_mb={int(config.disk_mb)}:max_processes={int(config.max_processes)}"


class Sandbox:
    """One confined process tree running ``argv`` (a JVM command; ``argv[0]`` is
    ``config.java``) in the new folder ``/tmp/<name>`` of its own tmpfs, started blocked:
    :attr:`folder` (that folder) and :attr:`root_fd` (the tmpfs) are open once the
    constructor returns; :meth:`release` lets the program start. Raises
    :class:`SandboxError` when bwrap ends or is not ready within 30 s."""

    def __init__(self, argv: list[str], config: ToolConfig, readable, *, name: str = "",
                 stdin=subprocess.DEVNULL, stdout=None, stderr=None):
        java = java_path(config.java)
        if java is None:
            raise FileNotFoundError(f"no Java {config.java!r}")
        self.name = name or f"{PREFIX}{secrets.token_hex(8)}"
        workdir = f"{BOX_TMP}/{self.name}"
        cmd = bwrap_command(argv, java, readable, config.disk_mb, workdir)
        block_r, self._block_w = os.pipe()
        info_r, info_w = os.pipe()
        cmd[cmd.index("--"):cmd.index("--")] = ["--info-fd", str(info_w), "--block-fd", str(block_r)]
        self.root_fd = self._pidfd = -1
        self._group: Path | None = None
        try:
            self.proc = subprocess.Popen(cmd, stdin=stdin, stdout=stdout, stderr=stderr, start_new_session=True,
                                         pass_fds=(info_w, block_r), preexec_fn=die_with_parent)
        except OSError:
            os.close(self._block_w)
            os.close(info_r)
            raise
        finally:
            os.close(info_w)
            os.close(block_r)
        try:
            pid = _child_pid(info_r)
            self._pidfd = os.pidfd_open(pid)  # the PID namespace's first process: it ends last
            fd = _wait_ready(self.proc, pid, workdir)
            self.folder = BoxFolder(fd, workdir)
            self.root_fd = os.open(f"/proc/{pid}/root{BOX_TMP}", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            self._group = _limit(pid, config)
        except Exception:
            self.close()
            raise
        finally:
            os.close(info_r)

    def release(self) -> None:
        """Let the confined program start (its input files are in place)."""
        if self._block_w >= 0:
            os.write(self._block_w, b"x")
            os.close(self._block_w)
            self._block_w = -1

    def kill(self) -> int | None:
        """SIGKILL the whole confined tree (bwrap's process group; the PID namespace dies
        with its first process) and wait until its last process has ended; the exit status
        when it had ended by itself."""
        code = self.proc.poll()
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        if self._pidfd >= 0:
            select.select([self._pidfd], [], [], 30)  # readable once it (and so all it held) exited
            os.close(self._pidfd)
            self._pidfd = -1
        if self._group is not None:
            _remove_group(self._group)
            self._group = None
        return code

    def close(self) -> None:
        """:meth:`kill`, then drop the descriptors (the kernel frees the tmpfs with the
        last one; :attr:`folder` stays readable until its own is closed)."""
        if self._block_w >= 0:
            os.close(self._block_w)
            self._block_w = -1
        self.kill()
        if self.root_fd >= 0:
            os.close(self.root_fd)
            self.root_fd = -1


def _child_pid(info_r: int) -> int:
    """The PID (in this namespace) of bwrap's first confined process, from ``--info-fd``."""
    data = b""
    deadline = time.monotonic() + _READY_S
    while time.monotonic() < deadline:
        chunk = os.read(info_r, 4096)
        if not chunk:
            break
        data += chunk
        try:
            return int(json.loads(data)["child-pid"])
        except ValueError:
            continue
    raise SandboxError(f"{BWRAP} did not start ({data[:200]!r})")


def _wait_ready(proc: subprocess.Popen, pid: int, workdir: str) -> int:
    """An open descriptor of ``workdir`` inside the confinement of ``pid``, once its view is
    set up (the folder exists only in the new tmpfs)."""
    deadline = time.monotonic() + _READY_S
    delay = 0.0005
    while time.monotonic() < deadline:
        try:
            return os.open(f"/proc/{pid}/root{workdir}", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            if proc.poll() is not None:
                raise SandboxError(f"{BWRAP} ended with status {proc.returncode} before its program started")
            time.sleep(delay)
            delay = min(delay * 2, 0.01)
    raise SandboxError(f"{BWRAP} was not ready within {_READY_S:.0f} s")


def _remove_group(group: Path) -> None:
    """Remove an emptied pids cgroup (its last tasks may take a moment to leave it)."""
    for _ in range(100):
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01)


def _limit(pid: int, config: ToolConfig) -> Path | None:
    """The rlimits of the confined processes (inherited by all they start); as root, whose
    processes the kernel exempts from ``RLIMIT_NPROC`` (user namespace or not), also a pids
    cgroup of its own (returned: remove it when they ended)."""
    disk = int(config.disk_mb) * 1024 * 1024
    resource.prlimit(pid, resource.RLIMIT_NPROC, (int(config.max_processes),) * 2)
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (disk, disk))
    resource.prlimit(pid, resource.RLIMIT_CORE, (0, 0))
    root = pids_cgroup_root() if os.geteuid() == 0 else None
    if root is None:
        return None
    group = root / f"{PREFIX}{secrets.token_hex(8)}"
    group.mkdir()
    (group / "pids.max").write_text(f"{int(config.max_processes)}\n")
    (group / "cgroup.procs").write_text(f"{pid}\n")
    return group


_PIDS_ROOT: list[Path | None] = []


def pids_cgroup_root() -> Path | None:
    """This process's folder in a writable cgroup hierarchy with the ``pids`` controller
    (cgroup v1 ``pids``, or cgroup v2 where this cgroup's ``subtree_control`` has it), in
    which a confinement gets a child cgroup with ``pids.max``; ``None`` where there is none.
    Empty ``alias-tla-*`` children left by killed processes are removed on first use."""
    if not _PIDS_ROOT:
        _PIDS_ROOT.append(_find_pids_root())
        for stale in _PIDS_ROOT[0].glob(f"{PREFIX}*") if _PIDS_ROOT[0] else ():
            try:
                stale.rmdir()  # refused while a process is in it
            except OSError:
                pass
    return _PIDS_ROOT[0]


def _find_pids_root() -> Path | None:
    try:
        lines = [line.split(":", 2) for line in Path("/proc/self/cgroup").read_text().splitlines()]
        mounts = [line.split() for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    except OSError:
        return None
    v1 = {c: path for _id, ctrls, path in lines for c in ctrls.split(",") if c}
    v2 = next((path for _id, ctrls, path in lines if ctrls == ""), None)
    for m in mounts:
        fstype, point, opts = m[m.index("-") + 1], m[4], m[-1].split(",")
        if fstype == "cgroup" and "pids" in opts and "pids" in v1:
            folder = Path(point) / v1["pids"].lstrip("/")
        elif fstype == "cgroup2" and v2 is not None:
            folder = Path(point) / v2.lstrip("/")
            if "pids" not in _read(folder / "cgroup.subtree_control").split():
                continue
        else:
            continue
        if os.access(folder, os.W_OK):
            return folder
    return None


def _read(p: Path) -> str:
    try:
        return p.read_text()
    except OSError:
        return ""
