"""Grading a ``samples`` table into a ``verdicts`` table, resumably.

A sample is one row ``(task_id, condition, model, sample_idx, text)``; ``text`` is the
raw model output (or, for the grader controls, a module).  Each sample gets one verdict
row per ``grade`` asked for, each grade a class of the registry
:mod:`alias.grade.registry`: by default the paper's three, ``parse`` (strict SANY; the
exit-code verdict in ``sany_exit_ok``), ``name`` (Methods "Name-based grade") and
``behavior`` (Methods "Behavior-based grade"); ``tlabench`` (TLA+-Bench's procedure) and
any registered grade on request.  A sample whose task has no reference in its condition,
or whose text yields no module, gets failing verdicts with the reason.

Resuming: every finished sample's verdicts are appended as one JSON line to a journal
(``journal.jsonl``, flushed and fsynced) before the next sample starts.  A new run reads
the journal, skips the samples it already holds under the same signature (sample,
reference, grader code, jar and tool limits: :func:`signature`; a torn last line from a
killed process is ignored) and, at the end, writes ``verdicts.parquet`` with exactly one row per
``(sample, grade)``.  Tool results are cached by run key
(:class:`alias.grade.cache.ToolRunner`), so even a sample cut off mid-way costs no
repeated TLC work.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import pandas as pd

from alias.corpus.testset import Reference
from alias.grade.behavior import OutputSide
from alias.grade.cache import ToolRunner
from alias.grade.registry import PAPER_GRADES, Grade, SampleWork, grade_names, grade_signature, make_grades
from alias.store.db import columns, write_table
from alias.store.models import Verdict
from alias.tla.executor import Executor, LocalExecutor
from alias.tla.tools import ToolConfig, tlc_run_key
from alias.tla.tlc_output import stable_log

SAMPLE_KEY = ["task_id", "condition", "model", "sample_idx"]
#: The paper's three grades, the default; every registered grade: :func:`~alias.grade.registry.grade_names`.
GRADES = PAPER_GRADES
#: Columns of a verdict row: the store's ``verdicts`` table, plus the run diagnostics that
#: only the journal keeps (they differ between machines and runs).
DIAGNOSTICS = ("tool_runs", "cached_runs", "wall_s")
VERDICT_COLUMNS = columns(Verdict) + list(DIAGNOSTICS)
_COLUMN_SET = frozenset(VERDICT_COLUMNS) - {"task_id", "condition", "model", "sample_idx", "grade"}
#: The grader's source (relative to the package): files and folders whose code decides a
#: verdict. :func:`grader_code_version` hashes them; ``tests/test_architecture.py`` checks
#: that they cover the import closure of this module.
GRADER_SOURCES = ("__init__.py", "errors.py", "config.py", "grade", "tla", "store", "corpus/__init__.py", "corpus/testset.py",
                  "corpus/tlabench.py", "corpus/ingest.py", "rename/__init__.py", "rename/cir.py", "rename/names.py")
#: Modules under :data:`GRADER_SOURCES` that only make the controls (which samples exist, not
#: how one is graded): left out of the hash, so a changed mutant or hard-negative generator
#: regrades only the samples whose text changed. ``tests/test_architecture.py`` checks that
#: none is in the grader's import closure.
CONTROL_GENERATORS = ("grade/controls.py", "grade/equivalence", "grade/fixture.py", "grade/hardneg.py",
                      "grade/mutants.py", "grade/relabel.py")


def _key(row: dict) -> tuple:
    return (row["task_id"], row["condition"], row["model"], int(row["sample_idx"]))


def tool_settings(config: ToolConfig) -> str:
    """The tool settings a verdict depends on, as one string: the run key TLC would give an
    empty module under ``config`` (the jar's version, the library folders' digest, Java
    properties, TLC's seed and fingerprint polynomial, the graph overrides) and the limits
    (``timeout_s`` seconds, ``memory_mb`` MiB). Part of each journal signature, so that a
    verdict journaled under another jar or limit is graded again, not reused. Raises
    :class:`~alias.tla.tools.ToolError` where the graph overrides are asked for but cannot
    be built (as any TLC run would)."""
    probe = tlc_run_key({"Probe.tla": ""}, "Probe", "", config)
    return f"{probe}:{config.timeout_s:g}s:{config.memory_mb}MiB"


def signature(sample: dict, ref: Reference | None, max_maps: int, side: OutputSide | None,
              grades: Iterable[str | Grade] | Mapping[str, Grade] = GRADES, tools: str = "") -> str:
    """sha256 of everything a sample's verdicts depend on (its text, the reference's
    files and cfg, the output side, ``max_maps``, the grades and their settings
    (``signature()`` of each), the grader's code, the tool settings ``tools`` from
    :func:`tool_settings`): a journal entry is reused only when its signature matches, so a
    changed sample, reference, jar or time limit is graded again."""
    graded = resolve_grades(grades)
    payload = {"text": sample.get("text") or "", "max_maps": max_maps, "grades": list(graded),
               "settings": {n: grade_signature(g) for n, g in graded.items()},
               "code": grader_code_version(), "tools": tools,
               "ref": None if ref is None else [ref.task_id, ref.condition, ref.cfg_text,
                                                 sorted((k, hashlib.sha256(v.encode()).hexdigest())
                                                        for k, v in ref.files.items())],
               "side": None if side is None else [side.system, side.wrapper, sorted(side.modules.items())]}
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()


_CODE_VERSION: str | None = None


def grader_source_files(root: Path | None = None) -> list[Path]:
    """The ``.py`` and ``.java`` files (the SANY server) of :data:`GRADER_SOURCES` under the
    package folder ``root``, but those of :data:`CONTROL_GENERATORS`, sorted."""
    root = Path(__file__).resolve().parents[1] if root is None else root

    def expand(rels) -> set[Path]:
        files: set[Path] = set()
        for rel in rels:
            p = root / rel
            files |= {f for f in p.rglob("*") if f.suffix in (".py", ".java")} if p.is_dir() else {p}
        return files

    return sorted(expand(GRADER_SOURCES) - expand(CONTROL_GENERATORS))


def grader_code_version() -> str:
    """sha256 of the grader's source (:data:`GRADER_SOURCES`, each file by its path
    relative to the package and its bytes): a journal written by other grader code is
    not reused."""
    global _CODE_VERSION
    if _CODE_VERSION is None:
        root = Path(__file__).resolve().parents[1]
        h = hashlib.sha256()
        for f in grader_source_files(root):
            h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())
        _CODE_VERSION = h.hexdigest()
    return _CODE_VERSION


grader_code_version()  # fixed at import: verdicts are labelled with the code that computed them


def read_journal(path: Path) -> dict[tuple, tuple[str, list[dict]]]:
    """``(signature, verdict rows)`` per sample key from a journal; torn or corrupt
    lines are skipped; a later line for the same key wins."""
    out: dict[tuple, tuple[str, list[dict]]] = {}
    if not path.exists():
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                rec = json.loads(line)
                out[tuple(rec["key"])] = (rec.get("sig", ""), rec["verdicts"])
            except (ValueError, KeyError, TypeError):
                continue
    return out


def needs_grading(entry: tuple[str, list[dict]] | None, sig: str, retry_timeouts: bool = False) -> bool:
    """Whether a sample must be graded given its journal entry ``(signature, rows)``: no
    entry, another signature, or (with ``retry_timeouts``) a verdict that hit a time limit:
    its reason is a timeout, or one of its map attempts timed out (the right map timing
    out on a loaded machine, then a wrong one failing, reads as a property violation)."""
    if entry is None or entry[0] != sig:
        return True
    return retry_timeouts and any("timeout" in str(r.get("reason") or "") or _attempt_timed_out(r)
                                  for r in entry[1])


def _attempt_timed_out(row: dict) -> bool:
    try:
        attempts = json.loads(row.get("detail") or "{}").get("attempts") or []
    except (TypeError, ValueError, AttributeError):
        return False
    return any(re.search(r": (forward|reverse) timeout:", str(a)) for a in attempts)


class Journal:
    """Append-only JSONL journal of finished samples (thread-safe, fsync per line)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        # a torn last line (killed mid-write) would glue onto the next record: cut it
        if self.path.exists():
            data = self.path.read_bytes()
            if data and not data.endswith(b"\n"):
                cut = data.rfind(b"\n") + 1
                with open(self.path, "r+b") as f:
                    f.truncate(cut)

    def append(self, key: tuple, sig: str, rows: list[dict]) -> None:
        line = json.dumps({"key": list(key), "sig": sig, "verdicts": rows}, default=str) + "\n"
        with self._lock, open(self.path, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())


def grade_sample(sample: dict, ref: Reference | None, runner: ToolRunner, *,
                 max_maps: int = 60, output: OutputSide | None = None,
                 graders: dict | None = None, grades: Iterable[str | Grade] | Mapping[str, Grade] = GRADES
                 ) -> list[dict]:
    """The verdict rows of one sample, one per grade in ``grades`` (names of
    :mod:`alias.grade.registry`, or configured grade instances; rows in registry order; see
    the module docstring; ``parse`` and ``name`` come from the same SANY/TLC runs).

    ``output``: grade this output side by behavior instead of the module extracted from
    ``sample['text']`` (the grader controls pass renamed copies with their modules).
    ``graders``: a cache ``task/condition -> BehaviorGrader`` shared across samples.
    """
    t0 = time.monotonic()
    base = {k: sample[k] for k in SAMPLE_KEY}
    base["sample_idx"] = int(base["sample_idx"])
    work = SampleWork(sample, ref, runner, max_maps=max_maps, side=output, graders=graders)
    rows = []
    for name, grade in resolve_grades(grades).items():
        try:
            fields = grade.grade(work)
        except Exception as e:  # one bad sample never stops the run
            fields = {"passed": False, "reason": f"grader_error: {type(e).__name__}: {e}"}
        rows.append(_stable({c: None for c in VERDICT_COLUMNS} | base | {"grade": name} | _known(fields)))
    return [r | {"wall_s": round(time.monotonic() - t0, 3)} for r in rows]


def resolve_grades(grades: Iterable[str | Grade] | Mapping[str, Grade]) -> dict[str, Grade]:
    """``name -> grade instance`` for names (default instances, :func:`make_grades`),
    instances or a mapping of them, in registry order."""
    if isinstance(grades, Mapping):
        made = dict(grades)
    else:
        grades = list(grades)
        names = [g for g in grades if isinstance(g, str)]
        made = (make_grades(names) if names else {}) | {g.name: g for g in grades if not isinstance(g, str)}
    order = {n: i for i, n in enumerate(grade_names())}
    return dict(sorted(made.items(), key=lambda kv: order.get(kv[0], len(order))))


def _known(fields: dict) -> dict:
    """A grade's fields restricted to the verdict columns (a toy grade may return more)."""
    return {k: v for k, v in fields.items() if k in _COLUMN_SET}


def _stable(row: dict) -> dict:
    """``row`` with the tools' text (``error_text``, ``reason``, ``detail``) normalized by
    :func:`~alias.tla.tlc_output.stable_log`: no date, wall time or temp folder reaches the
    verdicts table (same inputs -> same bytes)."""
    return row | {k: stable_log(row[k]) for k in ("error_text", "reason", "detail") if isinstance(row.get(k), str)}


@dataclass(frozen=True)
class GradeContext:
    """What every grading job shares: the tool settings, the tool-run cache folder (``None``
    where the worker has no shared one), ``max_maps``, the configured grades (name ->
    instance of :mod:`alias.grade.registry`) and the grading run's ``run_id`` (a worker
    shares behavior graders within one run only)."""

    tools: ToolConfig
    cache_dir: Path | None
    max_maps: int
    grades: Mapping[str, Grade] = field(default_factory=dict)
    run_id: str = ""


@dataclass(frozen=True)
class GradeJob:
    """One sample to grade: the sample, its reference, its output side (controls) and the
    names of its grades (instances in :attr:`GradeContext.grades`)."""

    sample: dict
    ref: Reference | None
    side: OutputSide | None
    grades: tuple[str, ...]


#: Behavior graders of this worker process, by reference content (a grader holds the
#: reference's TLC results: its initial values, its state graph); the most recent
#: :data:`_GRADERS_KEPT` references are kept.
_GRADERS: OrderedDict[str, dict] = OrderedDict()
_GRADERS_KEPT = 64
_GRADERS_LOCK = threading.Lock()


def _graders_for(run_id: str, ref: Reference | None) -> dict:
    key = run_id + ":" + ("" if ref is None else hashlib.sha256(json.dumps(
        [ref.task_id, ref.condition, ref.cfg_text, sorted(ref.files.items())]).encode()).hexdigest())
    with _GRADERS_LOCK:
        graders = _GRADERS.setdefault(key, {})
        _GRADERS.move_to_end(key)
        while len(_GRADERS) > _GRADERS_KEPT:
            _GRADERS.popitem(last=False)
    return graders


def grade_job(ctx: GradeContext, job: GradeJob) -> list[dict]:
    """Grade one job in a worker (a thread or process of the local pool, or a Dask worker):
    the verdict rows of :func:`grade_sample`."""
    return grade_sample(job.sample, job.ref, ToolRunner(ctx.tools, ctx.cache_dir), max_maps=ctx.max_maps,
                        output=job.side, graders=_graders_for(ctx.run_id, job.ref),
                        grades={n: ctx.grades[n] for n in job.grades})


def grade_samples(samples: Iterable[dict], refs: dict[tuple[str, str], Reference], runner: ToolRunner,
                  out_dir: Path, *, journal: Path | None = None, parallel: int = 1, max_maps: int = 60,
                  outputs: dict[tuple, OutputSide] | None = None,
                  reference_for: Callable[[dict], Reference | None] | None = None,
                  grades_for: Callable[[dict], tuple[str, ...]] | None = None,
                  progress=None, retry_timeouts: bool = False,
                  grades: Iterable[str | Grade] | Mapping[str, Grade] = GRADES,
                  executor: Executor | None = None) -> pd.DataFrame:
    """Grade every sample not yet in the ``journal`` (default ``out_dir/journal.jsonl``);
    write ``out_dir/verdicts.parquet`` (one row per sample and grade, sorted by key, the
    columns of :class:`~alias.store.models.Verdict`) and return it with the run's
    diagnostics per row (``tool_runs`` new, ``cached_runs`` from the cache, ``wall_s``
    seconds), which stay in the journal only: they differ between machines and runs.

    ``refs``: ``(task_id, condition) -> Reference``; ``reference_for(sample)`` overrides
    the lookup (the controls grade renamed copies against the original reference).
    ``outputs``: sample key -> :class:`OutputSide` for samples graded as whole module sets.
    ``grades``: names of registered grades or configured instances
    (:func:`~alias.grade.registry.make_grades`; default the paper's three);
    ``grades_for(sample)``: the names of the grades to give a sample (default all of
    ``grades``; a name not in ``grades`` gets the grade's default instance)).
    ``executor``: where the samples are graded (default: a local pool of ``parallel``
    processes; :func:`alias.tla.executor.make_executor` for a Dask cluster); ``runner``
    gives the tool settings and the cache folder. Only this process writes the journal.
    ``retry_timeouts``: grade again a journaled sample one of whose verdicts hit a time
    limit (reason containing ``timeout``; timeouts are never cached) -- for measurement
    runs on a machine that was busy; off by default, since an output with an infinite state
    space would then cost the full limit on every rerun.
    """
    out_dir = Path(out_dir)
    journal = Journal(Path(journal) if journal is not None else out_dir / "journal.jsonl")
    done = read_journal(journal.path)
    samples = [dict(s) for s in samples]

    def ref_of(s: dict) -> Reference | None:
        return reference_for(s) if reference_for else refs.get((s["task_id"], s["condition"]))

    configured = resolve_grades(grades)
    jobs = {_key(s): GradeJob(s, ref_of(s), (outputs or {}).get(_key(s)),
                              tuple(grades_for(s)) if grades_for else tuple(configured)) for s in samples}
    missing = {n for j in jobs.values() for n in j.grades} - set(configured)
    configured = resolve_grades(list(configured.values()) + sorted(missing))
    tools = tool_settings(runner.config)
    sigs = {k: signature(j.sample, j.ref, max_maps, j.side, {n: configured[n] for n in j.grades}, tools)
            for k, j in jobs.items()}
    todo = [k for k in jobs if needs_grading(done.get(k), sigs[k], retry_timeouts)]
    cache = runner.cache_dir if executor is None or executor.shares_files else None
    ctx = GradeContext(runner.config, cache, max_maps, configured, run_id=uuid.uuid4().hex)
    pool = executor or LocalExecutor(max(1, parallel))
    try:
        for i, rows in pool.run(grade_job, ctx, [jobs[k] for k in todo], keys=[sigs[k] for k in todo]):
            key = todo[i]
            journal.append(key, sigs[key], rows)
            done[key] = (sigs[key], rows)
            if progress is not None:
                progress()
    finally:
        if executor is None:
            pool.close()
    wanted = {_key(s) for s in samples}
    rows = {(k, r["grade"]): r for k, (_sig, rs) in done.items() if k in wanted for r in rs}
    ordered = [rows[k] for k in sorted(rows, key=lambda k: (k[0], k[1]))]
    df = write_table(ordered, Verdict, out_dir / "verdicts.parquet")
    for c in DIAGNOSTICS:
        df[c] = pd.array([r.get(c) for r in ordered], dtype="Float64" if c == "wall_s" else "Int64")
    return df


def samples_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """A ``samples`` DataFrame with the key columns and ``text``."""
    df = pd.DataFrame(rows, columns=SAMPLE_KEY + ["text"])
    df["sample_idx"] = df["sample_idx"].astype("int64")
    return df
