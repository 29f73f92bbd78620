"""The ``tlabench`` grade: TLA+-Bench's own grading procedure, reproduced so that a user can
check a published number with this tool (a compatibility grade, cached and journaled like
``name``, in the same verdict table).

The procedure, as the benchmark publishes it (``code/analysis/grading.py``,
``code/validator.py``): the output keeps its own module name (the first
``---- MODULE X`` header with three or more dashes; else the gold module's name) and is
written, raw (no fence stripping), into a fresh folder that holds every gold module under
its module name (the task's own left out) and the modules they import; library modules
(TLAPS, Community Modules) resolve through the TLA-Library path. SANY on it: exit 0 is a
parse pass. The task's ``.cfg`` is copied as ``<module>.cfg`` and TLC runs with it and no
other option (this runner adds only ``-workers``, ``-cleanup``, ``-nowarning`` and a
``-metadir`` in the run folder, which change no verdict): a TLC pass is exit 0 and no
output line starting with ``Error:``. A task without a cfg fails TLC (``no_cfg``). Time
limits: ``grade.tlabench_sany_timeout_s`` (60) and ``grade.tlabench_tlc_timeout_s`` (300).

Order (``CompatGrader.tlc_first``, on by default): the benchmark runs SANY, then TLC if
SANY passed. TLC parses the same files with the same SANY first, so where a cfg exists
TLC runs first, and SANY runs only when TLC's own front end did not pass
(:attr:`~alias.tla.tools.TlcResult.front_end_passed` false: a parse or semantic error, a
crash, a timeout), or when the TLC run took longer than SANY's own limit (its front end
alone might have, and the benchmark's SANY would then time out); SANY's verdict then
decides, as in the benchmark, and TLC's counts are dropped. Where TLC stopped in its
front end with a parse failure or SANY's own ``Semantic errors:`` report, SANY's verdict
is read from that report (:func:`~alias.tla.tools.sany_from_tlc`: the same SANY on the
same files; the exit code SANY gives for that kind is probed once per jar) and no SANY
runs; any other front-end failure (a crash, a timeout, a load-time error that reads like
a semantic one) still gets its SANY run.
Both orders give the same fields (``tests/test_tlabench_grade.py`` compares them on both
jars); TLC first saves a SANY run per output that TLC's front end decides.

Staging (:func:`loadable_files`): of the ~100 staged modules, a run's folder gets those
SANY could load for this output -- every module whose name occurs as a word in the output,
in a module so taken, in a library module or in one of the jar's standard modules (SANY
resolves a name in the run's folder before the library path and the jar) -- and every
file that is not a module. A module left out can be loaded by no module of the run, so
the verdict is the full folder's (``benchmarks/grade.py`` compares every output with the
naive procedure, which stages them all); writing 100 files per run was a fifth of the
grade's time.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from alias.corpus.tlabench import staging_pool
from alias.grade.cache import ToolRunner
from alias.tla.tools import SanyResult, sany_from_tlc

__all__ = ["CompatGrader", "generated_module", "loadable_files"]

_HEADER = re.compile(r"-{3,}\s*MODULE\s+(\w+)")
_WORD = re.compile(r"\w+")


@functools.lru_cache(maxsize=8)
def _outside_words(library: tuple[str, ...], jar: str) -> frozenset[str]:
    """Every word of the library folders' modules and of the jar's standard modules: the
    names a module loaded from outside the run's folder may resolve inside it."""
    words: set[str] = set()
    for d in library:
        for p in sorted(Path(d).glob("*.tla")):
            words |= set(_WORD.findall(p.read_text(encoding="utf-8", errors="replace")))
    if Path(jar).is_file():
        with zipfile.ZipFile(jar) as z:
            for name in z.namelist():
                if name.endswith(".tla"):
                    words |= set(_WORD.findall(z.read(name).decode("utf-8", "replace")))
    return frozenset(words)


def loadable_files(files: dict[str, str], root: str, outside: frozenset[str] = frozenset()) -> dict[str, str]:
    """The files of ``files`` (``"<Module>.tla" -> text``) SANY can load when it parses
    module ``root``: the root, every file that is not a ``.tla`` module, and every module
    whose name is a word of ``outside`` (:func:`_outside_words`) or of a module already
    taken, transitively (a superset: a name in a comment counts too)."""
    modules = {n[:-4]: n for n in files if n.endswith(".tla")}
    keep = {n for n in files if not n.endswith(".tla")} | {f"{root}.tla"}
    todo, seen = set(outside) | {root}, set()
    while todo:
        word = todo.pop()
        seen.add(word)
        name = modules.get(word)
        if name is not None:
            keep.add(name)
            todo |= set(_WORD.findall(files[name])) - seen
    return {n: files[n] for n in files if n in keep}


def generated_module(text: str, gold_module: str) -> str:
    """The module name the benchmark reads from an output: its first ``---- MODULE X``
    header (three or more dashes), else the gold module's name."""
    m = _HEADER.search(text or "")
    return m.group(1) if m else gold_module


@dataclass
class CompatGrader:
    """The benchmark's grader: ``files`` (every gold module and dependency, by file name),
    ``gold`` (per spec id: gold module, cfg text or None, gold file) and the two time
    limits; ``tlc_first`` and ``sany_from_tlc`` (the module's "Order", both on by default;
    neither changes a verdict). Picklable, so it travels to the workers that grade (no
    shared file system); :meth:`from_release` reads a release folder (``corpus.path`` of a
    ``tlabench`` corpus)."""

    files: dict[str, str]
    gold: dict[str, tuple[str, str | None, str]]
    sany_timeout_s: float
    tlc_timeout_s: float
    tlc_first: bool = True
    sany_from_tlc: bool = True

    @classmethod
    def from_release(cls, release: str, sany_timeout_s: float, tlc_timeout_s: float) -> "CompatGrader":
        files, gold = staging_pool(release)
        return cls(files, gold, sany_timeout_s, tlc_timeout_s)

    @functools.cached_property
    def pool_key(self) -> str:
        """sha256 of the staged files and the gold table (part of a verdict's signature)."""
        return hashlib.sha256(json.dumps([sorted(self.files.items()), sorted(self.gold.items())]).encode()).hexdigest()

    @staticmethod
    def _runner(runner: ToolRunner, timeout_s: float) -> ToolRunner:
        child = ToolRunner(dataclasses.replace(runner.config, timeout_s=timeout_s), runner.cache_dir)
        child.calls = runner.calls  # the calls land in the caller's list
        return child

    def grade(self, task_id: str, text: str, runner: ToolRunner) -> dict:
        """The ``tlabench`` verdict fields of one output: ``passed`` (SANY and TLC pass),
        ``sany_exit_ok``, ``tlc_kind``, ``reason`` (``sany_fail``, ``no_cfg``,
        ``tlc_fail: <kind>``, ``no_task``), ``distinct_states``, ``error_text`` and
        ``detail`` (JSON: gen_module, sany_pass, tlc_pass)."""
        if task_id not in self.gold:
            return {"passed": False, "reason": "no_task: the release has no gold file for this task"}
        gold_module, cfg_text, _file = self.gold[task_id]
        gen = generated_module(text, gold_module)
        files = {k: v for k, v in self.files.items() if k != f"{gold_module}.tla"} | {f"{gen}.tla": text}
        files = loadable_files(files, gen, _outside_words(tuple(runner.config.library), str(runner.config.jar)))
        tlc = None
        if self.tlc_first and cfg_text is not None:
            tlc = self._tlc(runner, files, gen, cfg_text)
        if tlc is None or not tlc.front_end_passed or tlc.wall_s > self.sany_timeout_s:
            sany = self._sany(runner, files, gen, tlc)
            if sany.exit_code != 0:
                return {"sany_exit_ok": False, "passed": False, "reason": f"sany_fail: {sany.kind}",
                        "error_text": "; ".join(sany.errors)[:2000],
                        "detail": json.dumps({"gen_module": gen, "sany_pass": False, "tlc_pass": None})}
        detail = {"gen_module": gen, "sany_pass": True}
        if cfg_text is None:
            return {"sany_exit_ok": True, "passed": False, "reason": "no_cfg",
                    "detail": json.dumps(detail | {"tlc_pass": False})}
        tlc = tlc or self._tlc(runner, files, gen, cfg_text)
        ok = tlc.exit_code == 0 and not tlc.error_lines
        return {"sany_exit_ok": True, "passed": ok, "tlc_kind": tlc.kind, "distinct_states": tlc.distinct_states,
                "reason": None if ok else f"tlc_fail: {tlc.kind}",
                "error_text": None if ok else ("\n".join(tlc.error_lines) or tlc.error_message or tlc.kind)[:2000],
                "detail": json.dumps(detail | {"tlc_pass": ok})}

    def _sany(self, runner: ToolRunner, files: dict[str, str], gen: str, tlc) -> SanyResult:
        """SANY's verdict on the staged ``files``: read from TLC's own front end where TLC
        stopped there within SANY's time limit (:func:`~alias.tla.tools.sany_from_tlc`),
        else a SANY run."""
        if self.sany_from_tlc and tlc is not None and tlc.wall_s <= self.sany_timeout_s:
            derived = sany_from_tlc(tlc, files, gen, runner.config)
            if derived is not None:
                return derived
        return self._runner(runner, self.sany_timeout_s).sany(files, gen, purpose="tlabench_sany")

    def _tlc(self, runner: ToolRunner, files: dict[str, str], gen: str, cfg_text: str):
        """TLC on the staged ``files`` with the task's cfg copied as ``<gen>.cfg``."""
        return self._runner(runner, self.tlc_timeout_s).tlc(files | {f"{gen}.cfg": cfg_text}, gen, cfg_text,
                                                            purpose="tlabench_tlc")
