"""The DVC stages of ``dvc.yaml``, one module per stage with the stage's own name
(``alias/stages/<name>.py``, each a short ``run(config, paths)``); the CLI builds one
command per stage from :data:`alias.stages.registry.STAGES`.

This package file stays empty on purpose: running one stage must not import the others
(the dependency test follows every import of a stage's module).
"""
