"""A durable cache of SANY and TLC results, keyed by ``run_key`` (DESIGN "Keys").

Every tool invocation of the graders goes through :class:`ToolRunner`: a run whose key
(file contents, main module, cfg text, flags, tool version, library path) is already in
the cache directory is answered from it, so grading the same output twice, or resuming a
killed grading run, does no TLC work.  A timeout or crash is never cached (it depends on
the machine, not on the inputs).  Each entry is one JSON file written atomically
(``os.replace``), so a killed process leaves either a whole entry or none.

Every call is also appended to :attr:`ToolRunner.calls` (tool, key, kind, cached,
wall seconds), which the graders copy into their verdict rows.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from alias.tla.tlc_output import parse_tlc_output
from alias.tla.tools import (SanyResult, TlcResult, ToolConfig, error_lines, run_sany, run_tlc, sany_run_key,
                             tlc_run_key, write_atomic)

#: TLC output kept in a cache entry (characters from the end; the verdict needs the end).
OUTPUT_KEEP = 20_000
_UNCACHED = {"timeout", "crash"}
#: the mark :func:`alias.tla.folders.read_capped` leaves where it cut a long output
_CUT = "bytes of output cut ...]"


def _reparsed(entry: dict) -> TlcResult:
    """A cached TLC entry as a :class:`TlcResult`. An entry that kept its whole output
    (under :data:`OUTPUT_KEEP` characters, nothing cut by the run) is classified again by
    today's parser, so a parser fix reaches cached runs (same fields as a fresh run); a
    longer one keeps what it stored (entries written before ``error_lines`` existed get
    them from the output they kept)."""
    d = {k: v for k, v in entry.items() if k != "tool"}
    d["flags"] = tuple(d.get("flags") or ())
    output = d.get("output") or ""
    if len(output) < OUTPUT_KEEP and _CUT not in output:
        o = parse_tlc_output(output, d.get("exit_code"), False)
        d.update(kind=o.kind, distinct_states=o.distinct_states, states_generated=o.states_generated,
                 depth=o.depth, error_message=o.error_message, front_end_passed=o.front_end_passed,
                 error_lines=error_lines(output))
    else:
        d["error_lines"] = tuple(d["error_lines"]) if "error_lines" in d else error_lines(output)
    return TlcResult(**d)


@dataclass
class Call:
    """One tool call made through a :class:`ToolRunner`."""

    tool: str          # 'sany' | 'tlc'
    run_key: str
    kind: str
    cached: bool
    wall_s: float
    purpose: str = ""  # e.g. 'name', 'forward', 'reverse', 'init_dump'


class ToolRunner:
    """Cached SANY/TLC runs for one grading session.

    ``cache_dir``: directory of JSON entries (created); ``None`` disables caching.
    ``config``: :class:`~alias.tla.tools.ToolConfig`.  Thread-safe: give each worker thread its
    own :meth:`child`.
    """

    def __init__(self, config: ToolConfig, cache_dir: Path | str | None):
        self.config = config
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        if self.cache_dir is not None:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
        self.calls: list[Call] = []
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ storage
    def _path(self, key: str) -> Path | None:
        return None if self.cache_dir is None else self.cache_dir / key[:2] / f"{key}.json"

    def _load(self, key: str) -> dict | None:
        p = self._path(key)
        if p is None or not p.exists():
            return None
        try:
            return json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # a damaged entry is recomputed

    def _store(self, key: str, data: dict) -> None:
        p = self._path(key)
        if p is None:
            return
        write_atomic(p, json.dumps(data))

    def _record(self, call: Call) -> None:
        with self._lock:
            self.calls.append(call)

    # ------------------------------------------------------------------ tools
    def sany(self, files: dict[str, str], main: str, purpose: str = "") -> SanyResult:
        """:func:`~alias.tla.tools.run_sany`, cached."""
        key = sany_run_key(files, main, self.config)
        hit = self._load(key)
        if hit is not None and hit.get("tool") == "sany":
            d = {k: v for k, v in hit.items() if k != "tool"}
            res = SanyResult(**d)
            self._record(Call("sany", key, res.kind, True, 0.0, purpose))
            return res
        res = run_sany(files, main, self.config)
        if res.kind not in _UNCACHED:
            self._store(key, {"tool": "sany", **asdict(res)})
        self._record(Call("sany", key, res.kind, False, res.wall_s, purpose))
        return res

    def tlc(self, files: dict[str, str], main: str, cfg_text: str,
            flags: tuple[str, ...] = (), purpose: str = "") -> TlcResult:
        """:func:`~alias.tla.tools.run_tlc`, cached (the output keeps its last
        :data:`OUTPUT_KEEP` characters in the cache)."""
        key = tlc_run_key(files, main, cfg_text, self.config, flags)
        hit = self._load(key)
        if hit is not None and hit.get("tool") == "tlc":
            res = _reparsed(hit)
            self._record(Call("tlc", key, res.kind, True, 0.0, purpose))
            return res
        res = run_tlc(files, main, cfg_text, self.config, extra_flags=flags)
        if res.kind not in _UNCACHED:
            d = asdict(res)
            d["output"] = (res.output or "")[-OUTPUT_KEEP:]
            self._store(key, {"tool": "tlc", **d})
        self._record(Call("tlc", key, res.kind, False, res.wall_s, purpose))
        return res

    def store_extra(self, key: str, data: dict) -> None:
        """Cache an arbitrary JSON result under ``key`` (e.g. a parsed state graph)."""
        self._store(key, {"tool": "extra", **data})

    def load_extra(self, key: str) -> dict | None:
        hit = self._load(key)
        return None if hit is None or hit.get("tool") != "extra" else hit

    def child(self) -> "ToolRunner":
        """A runner on the same cache with its own, empty :attr:`calls` (one per graded
        sample, so parallel workers do not mix their call lists)."""
        return ToolRunner(self.config, self.cache_dir)
