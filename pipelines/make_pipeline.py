"""Write ``pipelines/<name>/dvc.yaml`` from the repository's ``dvc.yaml``.

A pipeline folder holds a ``params.yaml`` with only what differs from the repository's
(its stages read both: ``--params ../../params.yaml --params params.yaml``) and a
``dvc.yaml`` made by this script from the root one: the listed stages, their code deps one
level up (``../../alias/...``), the data deps of the stages the folder has, and each
params key declared in the file(s) that set it. ``tests/test_architecture.py`` checks
that every pipeline's ``dvc.yaml`` is what this script writes, so rerun it after changing
the root ``dvc.yaml``::

    python pipelines/make_pipeline.py tlabench ingest,rename,verify,identifiers,controls,generate_replay,grade,load,report
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
#: The ``paths`` key of each stage's output folder.
PRODUCES = {"ingest": "ingest", "rename": "rename", "verify": "verify", "identifiers": "identifiers",
            "controls": "controls", "meaningful": "meaningful", "tiny_model": "tiny_model",
            "generate_local": "samples", "generate_provider": "samples", "generate_replay": "samples",
            "continuation": "continuation", "exposure": "exposure", "grade": "grades", "load": "snapshot"}
_FLAGS = " --params ../../params.yaml --params params.yaml"


def _has(tree: dict, dotted: str) -> bool:
    for part in dotted.split("."):
        if not isinstance(tree, dict) or part not in tree:
            return False
        tree = tree[part]
    return True


def _params(keys: list[str], profile: dict, base: dict) -> list:
    own = [k for k in keys if _has(profile, k.replace(".${key}", ""))]
    inherited = [k for k in keys if "${key}" not in k and _has(base, k)]
    return own + ([{"../../params.yaml": inherited}] if inherited else [])


def _stage(body: dict, have: set[str], profile: dict, base: dict) -> dict:
    out = dict(body)
    out["cmd"] = body["cmd"] + _FLAGS
    deps = []
    for d in body.get("deps", []):
        m = re.fullmatch(r"\$\{paths\.(\w+)\}(/.*)?", d)
        if m is None and not d.startswith("${item"):
            deps.append("../../" + d)
        elif m is None or m.group(1) in have:
            deps.append(d)
    out["deps"] = deps
    out["params"] = _params(body.get("params", []), profile, base)
    return out


def pipeline_yaml(name: str, keep: list[str]) -> str:
    """The text of ``pipelines/<name>/dvc.yaml`` for the stages ``keep``."""
    root = yaml.safe_load((REPO / "dvc.yaml").read_text())
    profile = yaml.safe_load((REPO / "pipelines" / name / "params.yaml").read_text())
    base = yaml.safe_load((REPO / "params.yaml").read_text())
    have = {PRODUCES[k] for k in keep if k in PRODUCES} | {"sql", "store", "reports"}
    stages = {}
    for st in keep:
        s = root["stages"][st]
        body = _stage(s.get("do", s), have, profile, base)
        stages[st] = {"foreach": s["foreach"], "do": body} if "do" in s else body
    header = (f"# The {name} pipeline: `cd pipelines/{name} && dvc repro` (README). Written by\n"
              f"# `python pipelines/make_pipeline.py {name} {','.join(keep)}`\n"
              "# from the repository's dvc.yaml; do not edit by hand.\n")
    return header + yaml.safe_dump({"stages": stages}, sort_keys=False, width=120)


def stages_of(name: str) -> list[str]:
    """The stages a pipeline folder's ``dvc.yaml`` was written with (from its header)."""
    head = (REPO / "pipelines" / name / "dvc.yaml").read_text().splitlines()[1]
    return head.split("make_pipeline.py ")[1].split()[1].rstrip("`").split(",")


if __name__ == "__main__":
    name, keep = sys.argv[1], sys.argv[2].split(",")
    (REPO / "pipelines" / name / "dvc.yaml").write_text(pipeline_yaml(name, keep))
