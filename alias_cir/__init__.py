"""ALIAS's Inspect extension: the names ``inspect eval`` and ``inspect view`` know.

Inspect namespaces the tasks and scorers of an extension package by the top-level package
that defines them, so they are defined here (the entry point ``alias_cir`` of the group
``inspect_ai`` in ``pyproject.toml``); the code behind them is :mod:`alias.inspect`.

Tasks (one per condition of the study; parameters with ``-T``)::

    inspect eval alias_cir/renamed --model mockllm/model --limit 3
    inspect eval alias_cir/original -T store=data -T task_ids=Clock.Clock.Clock --epochs 5
    inspect eval alias_cir/test_set -T condition=meaningful -T prompt=finetuned

``store`` (default: ``paths.store`` of the settings), ``params`` (comma-separated settings
files, default ``params.yaml``; in a pipeline folder ``../../params.yaml,params.yaml``),
``task_ids`` (comma-separated, default all), ``epochs`` (samples per task, default
``generate.n_samples``), ``prompt`` (``frontier``, Appendix A, default; ``finetuned``,
Appendix E), ``grades`` (comma-separated registered grades, default ``grade.grades``).

Scorers: one per registered grade (``alias_cir/parse``, ``alias_cir/name``,
``alias_cir/behavior``, ``alias_cir/tlabench``) and ``alias_cir/grade`` (any registered
grade by name, ``grade=...``).
"""

from __future__ import annotations

from inspect_ai import Epochs, Task, task
from inspect_ai.scorer import Scorer, accuracy, scorer, stderr
try:  # Inspect prints it as one line; not exported publicly (constraints.txt pins inspect_ai)
    from inspect_ai._util.error import PrerequisiteError
except ImportError:  # moved in another version: a plain error, which Inspect prints with its traceback
    PrerequisiteError = RuntimeError
from inspect_ai.solver import generate

from alias.errors import AliasError
from alias.grade.registry import grade_names, make_grades
from alias.inspect.dataset import CONDITION_OF_TASK, settings, test_set_dataset
from alias.inspect.offline import mock_counts_offline
from alias.inspect.scoring import score_state

try:
    from inspect_ai._util.package import get_installed_package_name
except ImportError:  # pragma: no cover - another Inspect: trust its namespacing
    get_installed_package_name = None


def _registered_as(name: str) -> str:
    """The name to register so that Inspect knows the object as ``alias_cir/<name>``.
    Inspect prefixes the namespace itself when it finds this package installed, not when
    other metadata shadows the install (the ``alias_cir.egg-info`` an editable install
    leaves in the repository root, when that root is on ``sys.path``)."""
    found = get_installed_package_name(_registered_as) if get_installed_package_name else __name__
    return name if found == __name__ else f"{__name__}/{name}"


def _grade_scorer(grade: str) -> Scorer:
    async def score(state, target):
        return await score_state(grade, state, target)

    return score


@scorer(metrics=[accuracy(), stderr()], name=_registered_as("grade"))
def grade(grade: str = "behavior") -> Scorer:
    """Any registered grade (``alias.grade.registry``) by name."""
    make_grades([grade])  # an unknown name stops here, naming the registered ones
    return _grade_scorer(grade)


def _named_scorer(name: str):
    def factory() -> Scorer:
        return _grade_scorer(name)

    factory.__name__ = factory.__qualname__ = name
    factory.__doc__ = f"The ALIAS grade {name!r} (alias.grade.registry) as an Inspect scorer."
    return scorer(metrics=[accuracy(), stderr()], name=_registered_as(name))(factory)


mock_counts_offline()  # `--model mockllm/model` without network (alias.inspect.offline)

#: The grades registered when Inspect loaded this package: each is a scorer of its own name.
_NAMED = grade_names()
for _name in _NAMED:
    globals()[_name] = _named_scorer(_name)


def _task(condition: str, store: str, params: str, task_ids: str, epochs: int, prompt: str, grades: str) -> Task:
    """The Inspect task of ``condition``; a bad ``-T`` argument (a store, settings file,
    condition, task id or grade that does not exist) is Inspect's one-line prerequisite
    error, not a traceback."""
    try:
        return _build_task(condition, store, params, task_ids, epochs, prompt, grades)
    except AliasError as e:
        raise PrerequisiteError(f"alias_cir: {e}") from None


def _build_task(condition: str, store: str, params: str, task_ids: str, epochs: int, prompt: str,
                grades: str) -> Task:
    where = settings(store, params)
    config = where.config()
    wanted = [g.strip() for g in grades.split(",") if g.strip()] or list(config.grade.grades)
    make_grades(wanted)
    ids = [t.strip() for t in task_ids.split(",") if t.strip()]
    scorers = [globals()[g]() if g in _NAMED else grade(g) for g in wanted]
    return Task(dataset=test_set_dataset(where, condition, prompt, ids), solver=generate(), scorer=scorers,
                epochs=Epochs(epochs or config.generate.n_samples),
                metadata={"condition": condition, "store": str(where.store)})


@task(name=_registered_as("original"))
def original(store: str = "", params: str = "params.yaml", task_ids: str = "", epochs: int = 0,
             prompt: str = "frontier", grades: str = "") -> Task:
    """The original condition: the task's own description and names."""
    return _task(CONDITION_OF_TASK["original"], store, params, task_ids, epochs, prompt, grades)


@task(name=_registered_as("renamed"))
def renamed(store: str = "", params: str = "params.yaml", task_ids: str = "", epochs: int = 0,
            prompt: str = "frontier", grades: str = "") -> Task:
    """The CIR condition (the store's ``random``): every identifier consistently renamed."""
    return _task(CONDITION_OF_TASK["renamed"], store, params, task_ids, epochs, prompt, grades)


@task(name=_registered_as("meaningful"))
def meaningful(store: str = "", params: str = "params.yaml", task_ids: str = "", epochs: int = 0,
               prompt: str = "frontier", grades: str = "") -> Task:
    """The meaningful-names condition (Appendix R), on the tasks whose copy verified."""
    return _task(CONDITION_OF_TASK["meaningful"], store, params, task_ids, epochs, prompt, grades)


@task(name=_registered_as("test_set"))
def test_set(condition: str = "original", store: str = "", params: str = "params.yaml", task_ids: str = "",
             epochs: int = 0, prompt: str = "frontier", grades: str = "") -> Task:
    """Any condition the store has, by its store name (original, random, meaningful)."""
    return _task(condition, store, params, task_ids, epochs, prompt, grades)
