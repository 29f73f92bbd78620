"""SQLModel definitions of every table in the ALIAS store (``data/alias.duckdb``).

Each stage writes its tables as Parquet (its DVC outputs); the ``load`` stage creates
these tables in DuckDB from the SQLModel metadata and fills them from the Parquet files.
List-valued columns are stored as JSON text. Table and column names are the stable
interface that the SQL views in ``sql/`` read.
"""

from __future__ import annotations

from typing import Optional

from sqlmodel import Field, SQLModel


class Candidate(SQLModel, table=True):
    """One (module, model) pair from a corpus manifest; ``status`` task | excluded."""

    __tablename__ = "candidates"
    model_module_path: str = Field(primary_key=True)
    cfg_path: str = Field(primary_key=True)
    folder: str
    model_module: str
    system_module: str
    system_module_path: str
    wrapper_module: Optional[str] = None
    mode: str
    manifest_result: Optional[str] = None
    manifest_runtime_s: Optional[float] = None
    expected_distinct_states: Optional[int] = None
    expected_states_generated: Optional[int] = None
    expected_depth: Optional[int] = None
    task_id: str
    status: str
    reason: Optional[str] = None
    detail: Optional[str] = None


class Task(SQLModel, table=True):
    """A task: system module + model (cfg, wrapper) + description (original condition)."""

    __tablename__ = "tasks"
    task_id: str = Field(primary_key=True)
    folder: str
    system_module: str
    system_module_path: str
    wrapper_module: Optional[str] = None
    model_module: str
    cfg_path: str
    cfg_text: str
    expected_distinct_states: Optional[int] = None
    expected_states_generated: Optional[int] = None
    expected_depth: Optional[int] = None
    manifest_runtime_s: Optional[float] = None
    pluscal: bool = False
    author_modules: str = "[]"
    library_modules: str = "[]"
    description: str = ""
    description_source: str = "none"
    description_fields: Optional[str] = None


class Module(SQLModel, table=True):
    """A module a task needs; role system | wrapper | utility | library."""

    __tablename__ = "modules"
    task_id: str = Field(primary_key=True)
    module: str = Field(primary_key=True)
    role: str
    path: str
    text: str
    sha256: str


class ModuleRole(SQLModel, table=True):
    """Corpus-wide label of every module: system | wrapper | utility | other."""

    __tablename__ = "module_roles"
    path: str = Field(primary_key=True)
    folder: str
    module: str
    role: str
    has_model: bool
    pluscal: bool


class RenamedTask(SQLModel, table=True):
    """The renamed (``random``) condition of a task."""

    __tablename__ = "renamed_tasks"
    task_id: str = Field(primary_key=True)
    condition: str = "random"
    status: str
    error: Optional[str] = None
    system_module: Optional[str] = None
    model_module: Optional[str] = None
    wrapper_module: Optional[str] = None
    cfg_text: Optional[str] = None
    description: Optional[str] = None
    n_renamed: int = 0
    n_leftover: int = 0
    n_kept_english: Optional[int] = None
    text_similarity: Optional[float] = None


class RenamedModule(SQLModel, table=True):
    """One renamed author module of a task (``module`` is the new name)."""

    __tablename__ = "renamed_modules"
    task_id: str = Field(primary_key=True)
    module: str = Field(primary_key=True)
    original_module: str
    role: str
    path: str
    text: str
    sha256: str


class LeftoverName(SQLModel, table=True):
    """An original name still in a renamed copy (:mod:`alias.rename.comments`): ``place``
    module_code | module_comment | module_string | cfg | cfg_comment | description,
    ``file`` (the renamed module's file, ``cfg`` or ``description``), ``n`` occurrences
    from ``first_line``; ``kept`` the reason it stays on purpose (english_word,
    string_value, description_rule), NULL for a leftover."""

    __tablename__ = "leftover_names"
    task_id: str = Field(primary_key=True)
    place: str = Field(primary_key=True)
    file: str = Field(primary_key=True)
    name: str = Field(primary_key=True)
    kept: Optional[str] = None
    n: int
    first_line: Optional[int] = None


class RenameMapRow(SQLModel, table=True):
    """One renamed identifier of a task: where it is defined, its kind, old and new name."""

    __tablename__ = "rename_map"
    task_id: str = Field(primary_key=True)
    old: str = Field(primary_key=True)
    new: str
    module: str
    kind: str


class TlcRun(SQLModel, table=True):
    """One SANY or TLC invocation; ``run_key`` hashes everything that determines it;
    ``log_path`` the run's normalized, gzipped log (:func:`alias.tla.tools.stable_log`).
    Wall times go to the verify stage's timings file (``paths.work``), not the table."""

    __tablename__ = "tlc_runs"
    task_id: str = Field(primary_key=True)
    condition: str = Field(primary_key=True)
    tool: str = Field(primary_key=True)
    run_key: str
    main_module: str
    kind: str
    exit_code: Optional[int] = None
    ok_exit: Optional[bool] = None
    ok_strict: Optional[bool] = None
    distinct_states: Optional[int] = None
    states_generated: Optional[int] = None
    depth: Optional[int] = None
    tool_version: str = ""
    flags: str = ""
    log_path: str = ""
    error_message: Optional[str] = None


class Membership(SQLModel, table=True):
    """Test-set membership of every task, with the reason code of each exclusion."""

    __tablename__ = "test_set"
    task_id: str = Field(primary_key=True)
    in_test_set: bool
    reason: Optional[str] = None
    detail: Optional[str] = None
    original_kind: Optional[str] = None
    original_distinct_states: Optional[int] = None
    original_states_generated: Optional[int] = None
    original_depth: Optional[int] = None
    renamed_kind: Optional[str] = None
    renamed_distinct_states: Optional[int] = None
    renamed_depth: Optional[int] = None
    manifest_distinct_states: Optional[int] = None
    manifest_match: Optional[bool] = None
    manifest_note: Optional[str] = None


class Identifier(SQLModel, table=True):
    """A renamed identifier with its Appendix C category (domain | convention | abbreviation)."""

    __tablename__ = "identifiers"
    task_id: str = Field(primary_key=True)
    old: str = Field(primary_key=True)
    new: str
    module: str
    kind: str
    category: str
    parts: str


class RequiredName(SQLModel, table=True):
    """A name the task's cfg requires of the system module; ``hidden`` when the
    description never mentions it (Methods, "Hidden required names")."""

    __tablename__ = "required_names"
    task_id: str = Field(primary_key=True)
    name: str = Field(primary_key=True)
    cfg_kind: str
    new_name: Optional[str] = None
    category: Optional[str] = None
    mentioned: bool
    mentioned_renamed: Optional[bool] = None
    hidden: bool


class ControlEligibility(SQLModel, table=True):
    """Whether a test-set task is eligible for the behavior-based grade (Appendix J)."""

    __tablename__ = "control_eligibility"
    task_id: str = Field(primary_key=True)
    eligible: bool
    reason: Optional[str] = None


class ControlSample(SQLModel, table=True):
    """One grader control (Appendix J): ``kind`` self | renamed | oprenamed | mutant |
    build_error | ``equiv_<class>`` (an equivalence control, issue 33); ``valid`` false for
    an operator-renamed copy that fails SANY/TLC, a mutant whose reachable state count
    equals the reference's, or an equivalence variant TLC does not confirm under its known
    mapping (not graded). Equivalence controls: ``equiv_class``, ``variant_id``,
    ``known_mapping`` (JSON: R leaf -> G leaf, constants), ``detail`` (JSON: description,
    confirmed, reason); a class that makes no variant has one row, ``sample_idx`` -1, its
    reasons in ``detail``."""

    __tablename__ = "control_samples"
    task_id: str = Field(primary_key=True)
    kind: str = Field(primary_key=True)
    sample_idx: int = Field(primary_key=True)
    model: str
    valid: bool
    detail: Optional[str] = None
    mutant_kind: Optional[str] = None
    mutant_id: Optional[str] = None
    reference_states: Optional[int] = None
    control_states: Optional[int] = None
    equiv_class: Optional[str] = None
    variant_id: Optional[str] = None
    known_mapping: Optional[str] = None


class Sample(SQLModel, table=True):
    """One output to grade: raw text per (task, condition, model, sample index).

    Filled by the ``generate`` stages (``data/samples/<key>/samples.parquet``, every
    column) and by the grader controls (key and ``text`` only; the other columns are
    NULL). ``model_key``: the ``params.generate.models`` key; ``backend``: anthropic |
    openai | local | replay. ``extracted_module``/``extraction`` (JSON): what output
    extraction made of ``text``; ``hit_token_limit``: the stop reason is a token limit
    (NULL when the source does not say); ``has_closing_line``: the extracted module has
    its ``====`` line; ``truncated`` = hit_token_limit OR NOT has_closing_line (Appendix
    N). ``settings`` (JSON): sampling settings as sent; ``response_model``,
    ``input_tokens``/``output_tokens``, ``stop_reason``, ``batch_id``, ``custom_id``: as
    the provider or local model reported them; ``source_line``/``extra`` (JSON): the line
    and further fields of a replayed record; ``source``: where the output comes from, as the
    reports say it (embedded fixture, local model, provider model, released outputs: the
    model entry's ``label``, else its backend's kind)."""

    __tablename__ = "samples"
    task_id: str = Field(primary_key=True)
    condition: str = Field(primary_key=True)
    model: str = Field(primary_key=True)
    sample_idx: int = Field(primary_key=True)
    text: str
    model_key: Optional[str] = None
    backend: Optional[str] = None
    prompt_kind: Optional[str] = None
    prompt_version: Optional[str] = None
    settings: Optional[str] = None
    response_model: Optional[str] = None
    input_tokens: Optional[int] = None
    output_tokens: Optional[int] = None
    stop_reason: Optional[str] = None
    hit_token_limit: Optional[bool] = None
    has_closing_line: Optional[bool] = None
    truncated: Optional[bool] = None
    extracted_module: Optional[str] = None
    extraction: Optional[str] = None
    batch_id: Optional[str] = None
    custom_id: Optional[str] = None
    source_line: Optional[int] = None
    extra: Optional[str] = None
    source: Optional[str] = None


class Verdict(SQLModel, table=True):
    """One grade of one sample: ``grade`` parse | name | behavior (Methods, Appendix H).

    ``mapping`` (JSON) is the variable/constant/label map the behavior grade used;
    ``run_keys`` (JSON list) every SANY/TLC run; ``extraction`` (JSON) what output extraction did; ``distinct_states`` the
    distinct states of the grade's TLC run (name: the model check with the task's cfg;
    behavior: the forward refinement check of the map used); ``error_text`` the SANY
    errors or TLC error message that made the grade fail (NULL when it passed);
    ``detail`` (JSON) the cfg changes (name, Appendix H) or the map attempts (behavior)."""

    __tablename__ = "verdicts"
    task_id: str = Field(primary_key=True)
    condition: str = Field(primary_key=True)
    model: str = Field(primary_key=True)
    sample_idx: int = Field(primary_key=True)
    grade: str = Field(primary_key=True)
    passed: Optional[bool] = None
    reason: Optional[str] = None
    sany_exit_ok: Optional[bool] = None
    tlc_kind: Optional[str] = None
    method: Optional[str] = None
    mapping: Optional[str] = None
    maps_tried: Optional[int] = None
    extraction: Optional[str] = None
    truncated: Optional[bool] = None
    run_keys: Optional[str] = None
    detail: Optional[str] = None
    distinct_states: Optional[int] = None
    error_text: Optional[str] = None


# ----------------------------------------------------------------- statistics inputs (issue 5)
class Continuation(SQLModel, table=True):
    """One file-continuation sample (Appendix L): the model continued the first
    ``prefix_lines`` lines of a file (``condition`` original, or ``random`` for the renamed
    copy); ``longest_run`` is the longest token run it shares with ``reference_remainder``
    (:func:`alias.generate.continuation.longest_shared_token_run`); NULL when the sample
    failed."""

    __tablename__ = "continuations"
    task_id: str = Field(primary_key=True)
    condition: str = Field(primary_key=True)
    model: str = Field(primary_key=True)
    sample_idx: int = Field(primary_key=True)
    prefix_lines: int
    continuation: Optional[str] = None
    reference_remainder: str
    longest_run: Optional[int] = None


class ExposureSplit(SQLModel, table=True):
    """Experiment 2 split (Methods, "Fine-tuned models"): each test-set task's half,
    ``A`` or ``B``; the copy trained on a half has seen its tasks."""

    __tablename__ = "split"
    task_id: str = Field(primary_key=True)
    half: str


class LogLik(SQLModel, table=True):
    """Mean token log-likelihood of a task's reference specification given its description
    (Methods, "Log-likelihood"), per condition and fine-tuned model: over all reference
    tokens (``mean_loglik``), over tokens outside renamed identifiers (``outside_loglik``)
    and over the tokens of renamed identifiers alone (``identifier_loglik``, Appendix T);
    nats per token. Filled from the exposure stage's ``loglik.parquet``: ``n_tokens``/``n_outside``/``n_identifier``
    the tokens scored, ``n_reference_tokens`` the reference's tokens, ``truncated`` the
    reference was cut at ``exposure.loglik.max_length``; ``arm``/``half`` the adapter's
    (NULL for the base model) and ``seen`` whether the adapter trained on the task."""

    __tablename__ = "loglik"
    task_id: str = Field(primary_key=True)
    condition: str = Field(primary_key=True)
    model: str = Field(primary_key=True)
    mean_loglik: Optional[float] = None
    outside_loglik: Optional[float] = None
    identifier_loglik: Optional[float] = None
    n_tokens: Optional[int] = None
    n_outside: Optional[int] = None
    n_identifier: Optional[int] = None
    n_reference_tokens: Optional[int] = None
    truncated: Optional[bool] = None
    arm: Optional[str] = None
    half: Optional[str] = None
    seen: Optional[bool] = None


class ExposureArm(SQLModel, table=True):
    """Which fine-tuned model trained on which half, per model family and exposure arm
    (``task-pair`` or ``spec-only``; Table 2, Appendices F, O). Filled by ``load`` from the
    exposure stage's ``exposure_arms.parquet`` (its own adapters; ``family`` is the base
    model's name) and from ``params.report.exposure`` (models from elsewhere, e.g. replayed
    outputs); a (family, arm, half) given by both is an error."""

    __tablename__ = "exposure_arms"
    family: str = Field(primary_key=True)
    arm: str = Field(primary_key=True)
    half: str = Field(primary_key=True)
    model: str


class MeaningfulProposal(SQLModel, table=True):
    """One proposed meaningful name map per test-set task (Appendix R): the reply, the
    parsed map (JSON, old -> new) and its problems (JSON list of {kind, name, detail})."""

    __tablename__ = "meaningful_proposals"
    task_id: str = Field(primary_key=True)
    proposer: str
    model: str
    response_model: Optional[str] = None
    view: str
    prompt_version: str
    prompt_sha256: Optional[str] = None
    n_identifiers: Optional[int] = None
    reply_status: str
    reply: Optional[str] = None
    mapping: str = "{}"
    problems: str = "[]"
    valid: bool = False


class MeaningfulTask(SQLModel, table=True):
    """Whether a task's meaningful copy passed SANY + TLC like its original (Appendix R);
    ``reason`` says why not (no_reply, invalid_map, apply_error, sany_meaningful, ...)."""

    __tablename__ = "meaningful_tasks"
    task_id: str = Field(primary_key=True)
    verified: bool
    reason: Optional[str] = None
    detail: Optional[str] = None
    applied: bool = False
    system_module: Optional[str] = None
    model_module: Optional[str] = None
    wrapper_module: Optional[str] = None
    cfg_text: Optional[str] = None
    description: Optional[str] = None
    n_renamed: Optional[int] = None
    text_similarity: Optional[float] = None
    original_kind: Optional[str] = None
    original_distinct_states: Optional[int] = None
    original_depth: Optional[int] = None
    meaningful_kind: Optional[str] = None
    meaningful_distinct_states: Optional[int] = None
    meaningful_depth: Optional[int] = None


class MeaningfulMapRow(SQLModel, table=True):
    """One name of an applied meaningful map (the shape of ``rename_map``)."""

    __tablename__ = "meaningful_map"
    task_id: str = Field(primary_key=True)
    old: str = Field(primary_key=True)
    new: str
    module: str
    kind: str


class MeaningfulModule(SQLModel, table=True):
    """One author module of a verified meaningful copy (``module`` is the new name)."""

    __tablename__ = "meaningful_modules"
    task_id: str = Field(primary_key=True)
    module: str = Field(primary_key=True)
    original_module: str
    role: str
    path: str
    text: str
    sha256: str


class TrainingStep(SQLModel, table=True):
    """One optimizer step of one LoRA adapter (Appendix E; exposure stage
    ``training_log.parquet``): the example's
    task, its loss (nats per supervised token), learning rate, tokens, supervised tokens and
    the gradient norm before clipping."""

    __tablename__ = "training_log"
    adapter: str = Field(primary_key=True)
    step: int = Field(primary_key=True)
    epoch: int
    task_id: str
    loss: Optional[float] = None
    lr: Optional[float] = None
    tokens: Optional[int] = None
    loss_tokens: Optional[int] = None
    grad_norm: Optional[float] = None


class ExposureAdapter(SQLModel, table=True):
    """One LoRA adapter of the exposure stage (``adapters.parquet``): name, arm
    (``task_pair`` | ``spec_only``), half, the ``model`` name of its samples and
    log-likelihoods, training examples and steps, warm-up steps, device, dtype;
    ``skipped``, ``target_modules`` and ``params`` are JSON. (Throughput and wall times are
    machine facts: the stage writes them to its timings file, ``paths.work``.)"""

    __tablename__ = "exposure_adapters"
    adapter: str = Field(primary_key=True)
    arm: str
    half: str
    model: str
    path: Optional[str] = None
    base_model: Optional[str] = None
    examples: Optional[int] = None
    skipped: Optional[str] = None
    steps: Optional[int] = None
    warmup_steps: Optional[int] = None
    device: Optional[str] = None
    dtype: Optional[str] = None
    target_modules: Optional[str] = None
    params: Optional[str] = None


class ExternalVerdict(SQLModel, table=True):
    """Another benchmark's own verdict on one released output (``source`` ``tla-bench``:
    TLA+-Bench's ``outputs/verdicts/<regime>/<model>.jsonl``), written by the
    ``generate_replay`` stage beside the outputs it replays: ``sany_pass``, ``tlc_pass``
    (NULL where the benchmark ran no TLC), ``label``, ``evidence`` (cut to 300 characters
    by the benchmark), ``gen_module`` (the module name the benchmark read), ``sample_model``
    (the ``model`` of the samples it judges: ``<replay key>/<model>``, one per regime)."""

    __tablename__ = "external_verdicts"
    source: str = Field(primary_key=True)
    regime: str = Field(primary_key=True)
    model: str = Field(primary_key=True)
    task_id: str = Field(primary_key=True)
    sany_pass: Optional[bool] = None
    tlc_pass: Optional[bool] = None
    label: Optional[str] = None
    evidence: Optional[str] = None
    gen_module: Optional[str] = None
    sample_model: Optional[str] = None


class StoreSetting(SQLModel, table=True):
    """The settings a store was built with (written by ``load``): ``name`` ``params``,
    ``value`` the merged ``params.yaml`` as JSON; ``base_from_snapshot`` and
    ``base_from_store``: the folder the settings' relative paths start from (where the
    pipeline ran), relative to the snapshot folder and to the DuckDB file's folder.
    ``grade-file`` and ``alias.grade_output`` grade against a store with these settings."""

    __tablename__ = "store_settings"
    name: str = Field(primary_key=True)
    value: str
    base_from_snapshot: str
    base_from_store: str


class Adjudication(SQLModel, table=True):
    """A person's reading of one output where the grades disagree (issue 33, the TLA+-Bench
    adjudication; file ``paths.adjudications``, a CSV tracked by git): ``model`` the
    samples' model (``<replay key>/<release model>``), ``task_id``; ``judgment``
    ``real_difference`` (the behaviors differ: ``evidence`` gives TLC's counterexample or
    the state-dump evidence), ``grader_limit`` (they match and the grade cannot show it:
    ``category`` names the limit) or ``behavior_correct`` (the behavior grade is right where
    the name grade is not); ``note``: one or two sentences a TLA+ engineer can check."""

    __tablename__ = "adjudications"
    model: str = Field(primary_key=True)
    task_id: str = Field(primary_key=True)
    judgment: str
    category: Optional[str] = None
    evidence: Optional[str] = None
    note: Optional[str] = None


#: The Parquet file(s) that fill each table: ``(paths key, file name or glob pattern)``
#: pairs, the key naming a folder of :class:`alias.config.Paths` (``params.yaml``
#: ``paths:``). A file may lack a column that is nullable in the table: it is loaded as
#: NULL. A table whose files are all absent is created empty (the optional inputs of
#: later stages), so the views exist and the reports say "no data".
TABLE_SOURCES: dict[str, tuple[type[SQLModel], tuple[tuple[str, str], ...]]] = {
    "candidates": (Candidate, (("ingest", "candidates.parquet"),)),
    "tasks": (Task, (("ingest", "tasks.parquet"),)),
    "modules": (Module, (("ingest", "modules.parquet"),)),
    "module_roles": (ModuleRole, (("ingest", "module_roles.parquet"),)),
    "renamed_tasks": (RenamedTask, (("rename", "renamed_tasks.parquet"),)),
    "renamed_modules": (RenamedModule, (("rename", "renamed_modules.parquet"),)),
    "rename_map": (RenameMapRow, (("rename", "rename_map.parquet"),)),
    "leftover_names": (LeftoverName, (("rename", "leftover_names.parquet"),)),
    "tlc_runs": (TlcRun, (("verify", "tlc_runs.parquet"),)),
    "test_set": (Membership, (("verify", "test_set.parquet"),)),
    "identifiers": (Identifier, (("identifiers", "identifiers.parquet"),)),
    "required_names": (RequiredName, (("identifiers", "required_names.parquet"),)),
    "control_eligibility": (ControlEligibility, (("controls", "*/eligibility.parquet"),)),
    "control_samples": (ControlSample, (("controls", "*/control_samples.parquet"),)),
    "samples": (Sample, (("controls", "*/samples.parquet"), ("samples", "*/samples.parquet"),
                         ("exposure", "samples.parquet"))),
    "verdicts": (Verdict, (("controls", "*/verdicts.parquet"), ("grades", "verdicts.parquet"))),
    "continuations": (Continuation, (("continuation", "continuations.parquet"),)),
    "split": (ExposureSplit, (("exposure", "split.parquet"),)),
    "loglik": (LogLik, (("exposure", "loglik.parquet"),)),
    "meaningful_proposals": (MeaningfulProposal, (("meaningful", "proposals.parquet"),)),
    "meaningful_tasks": (MeaningfulTask, (("meaningful", "meaningful_tasks.parquet"),)),
    "meaningful_map": (MeaningfulMapRow, (("meaningful", "meaningful_map.parquet"),)),
    "meaningful_modules": (MeaningfulModule, (("meaningful", "meaningful_modules.parquet"),)),
    # plus the rows of params report.exposure (the load stage passes them to build_store)
    "exposure_arms": (ExposureArm, (("exposure", "exposure_arms.parquet"),)),
    "training_log": (TrainingStep, (("exposure", "training_log.parquet"),)),
    "exposure_adapters": (ExposureAdapter, (("exposure", "adapters.parquet"),)),
    "external_verdicts": (ExternalVerdict, (("samples", "*/external_verdicts.parquet"),)),
    # the rows of the load stage's own settings (alias.store.settings)
    "store_settings": (StoreSetting, ()),
    # the rows of paths.adjudications (a CSV; the load stage passes them to build_store)
    "adjudications": (Adjudication, ()),
}
