"""ALIAS inside Inspect (``inspect_ai``, the ``inspect`` extra): the renamed benchmark as
Inspect tasks, ALIAS's grades as Inspect scorers, and the store's verdicts as Inspect logs.

:mod:`alias.inspect.dataset`
    The test set of a built store as Inspect samples, one task per condition, with the
    prompts of the generate stages (:func:`alias.generate.samples.condition_prompts`).
:mod:`alias.inspect.scoring`
    Every registered grade (:mod:`alias.grade.registry`) as a scorer: the verdict of the
    grade stage, with its tool-run cache and journal, as the score's value and metadata.
:mod:`alias.inspect.offline`
    Inspect's ``mockllm/model`` without network: its token counts estimated where
    tiktoken cannot fetch its encoding (installed when Inspect loads :mod:`alias_cir`).
:mod:`alias.inspect.export`
    ``alias-cir export``: the test set as a Hugging Face ``datasets`` dataset with a card,
    and the verdicts as Inspect eval logs (one per model and condition).

The registered names (``inspect eval alias_cir/renamed``, scorers ``alias_cir/behavior``)
live in the top-level package :mod:`alias_cir`, which the ``inspect_ai`` entry point names:
Inspect namespaces an extension's objects by the top-level package that defines them.
Reading Inspect logs back into samples is the replay layout ``inspect``
(:mod:`alias.generate.inspect_logs`).
"""
