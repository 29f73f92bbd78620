"""Write ``pipelines/<name>/dvc.yaml`` from the repository's ``dvc.yaml``
(:func:`alias.pipelines.pipeline_yaml`, the generator ``alias-cir init-pipeline`` uses too).

A pipeline folder holds a ``params.yaml`` with only what differs from the repository's
(its stages read both: ``--params ../../params.yaml --params params.yaml``) and a
``dvc.yaml`` made from the root one. ``tests/test_architecture.py`` checks that every
pipeline's ``dvc.yaml`` is what this script writes, so rerun it after changing the root
``dvc.yaml``::

    python pipelines/make_pipeline.py tlabench check_params,ingest,rename,verify,identifiers,controls,generate_replay,grade,load,report,audit
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from alias import pipelines  # noqa: E402  (this checkout's package)


def pipeline_yaml(name: str, keep: list[str]) -> str:
    """The text of ``pipelines/<name>/dvc.yaml`` for the stages ``keep``."""
    return pipelines.pipeline_yaml(REPO, name, keep)


def stages_of(name: str) -> list[str]:
    """The stages a pipeline folder's ``dvc.yaml`` was written with (from its header)."""
    return pipelines.stages_of(REPO, name)


if __name__ == "__main__":
    name, keep = sys.argv[1], sys.argv[2].split(",")
    (REPO / "pipelines" / name / "dvc.yaml").write_text(pipeline_yaml(name, keep))
