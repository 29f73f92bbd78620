"""``alias-cir export``: a store's test set as a Hugging Face ``datasets`` dataset and its
verdicts as Inspect eval logs (the ``inspect`` extra).

``<out>/dataset/``
    One Parquet file per condition under ``data/`` (``<condition>-<digest>.parquet``, a split each: ``original``, ``random``,
    ``meaningful``), written with :mod:`datasets`, and ``README.md``, the dataset card:
    the licence of each corpus the rows come from, the fields, the rows per condition.
    ``datasets.load_dataset("<out>/dataset")`` loads it.
``<out>/logs/``
    One Inspect log (``.eval``) per model and condition of the store's ``samples`` (the
    grader controls left out): per sample the output, the prompt, the reference and each
    grade's verdict as a score (value ``C``/``I``, the verdict's fields as metadata: TLC's
    result kind and error text, the distinct states, the mapping, the cfg changes), so that
    ``inspect view --log-dir <out>/logs`` browses ALIAS's results and
    :func:`inspect_ai.log.read_eval_log` reads them.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
from inspect_ai.log import (EvalConfig, EvalDataset, EvalLog, EvalMetric, EvalResults, EvalSample, EvalScore, EvalSpec,
                            EvalStats, write_eval_log)
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import CORRECT, INCORRECT, Score

from alias.api import readable_verdict
from alias.config import Config
from alias.corpus.testset import TestSet, has_description
from alias.generate.samples import condition_prompts
from alias.store.db import query

__all__ = ["export_dataset", "export_logs", "licence_of", "FIELDS"]

#: The dataset's fields and what each holds (the card lists them).
FIELDS = {
    "task_id": "the task: one system module of the corpus and its model (cfg)",
    "condition": "original | random (consistent identifier renaming, CIR) | meaningful (Appendix R)",
    "prompt": "the Appendix A prompt the generate stages send for this condition (one user message)",
    "description": "the natural-language description of the system, in the names of this condition",
    "reference_module": "the name of the reference system module in this condition",
    "reference": "the reference system module (TLA+) in this condition",
    "cfg": "the TLC configuration of the task in this condition",
    "renamed_names": "each renamed identifier: original name, name in this condition, kind (empty for original)",
    "hidden_names": "names the grade needs (cfg operators, invariants) that the description does not state, in "
                    "this condition's names (empty for meaningful)",
}


def _paragraph(path: Path, word: str = "icen") -> str | None:
    """The paragraph of ``path`` that mentions a licence, on one line."""
    if not path.is_file():
        return None
    for para in re.split(r"\n\s*\n", path.read_text(encoding="utf-8", errors="replace")):
        if word in para:
            return " ".join(para.split())
    return None


def licence_of(folder: str | Path) -> str:
    """The licence a corpus folder states: the paragraph of its ``SOURCE.md`` (else
    ``LICENSE.md``, ``LICENSE``) that names one; else ``unknown``."""
    root = Path(folder)
    root = root if root.is_dir() else root.parent
    for name in ("SOURCE.md", "LICENSE.md", "LICENSE"):
        text = _paragraph(root / name) or (_paragraph(root / name, "MIT") if name != "SOURCE.md" else None)
        if text:
            return text
    return f"unknown: {root} names no licence (SOURCE.md, LICENSE.md)"


def _names(store: Path) -> tuple[dict, dict]:
    renamed = query("SELECT task_id, old, new, kind FROM rename_map ORDER BY task_id, old", store)
    hidden = query("SELECT task_id, name, new_name FROM required_names WHERE hidden ORDER BY task_id, name", store)
    by_task: dict[str, list[dict]] = {}
    for r in renamed.itertuples():
        by_task.setdefault(r.task_id, []).append({"original": r.old, "renamed": r.new, "kind": r.kind})
    hid: dict[tuple[str, str], list[str]] = {}
    for r in hidden.itertuples():
        hid.setdefault((r.task_id, "original"), []).append(r.name)
        hid.setdefault((r.task_id, "random"), []).append(r.new_name if isinstance(r.new_name, str) else r.name)
    return by_task, hid


def dataset_rows(store: Path) -> dict[str, list[dict]]:
    """The test set's rows per condition (the fields of :data:`FIELDS`)."""
    testset = TestSet.from_store(store)
    table = testset.conditions_table()
    table = table[table.description.map(has_description)]
    refs = testset.references()
    renamed, hidden = _names(store)
    desc = {(t.task_id, c): d for t in table.itertuples()
            for c, d in (("original", t.description), ("random", t.random_description),
                         ("meaningful", t.meaningful_description))}
    out: dict[str, list[dict]] = {}
    for task_id, cond, prompt in condition_prompts(table, ["original", "random", "meaningful"], "frontier"):
        ref = refs.get((task_id, cond))
        if ref is None:
            continue
        out.setdefault(cond, []).append({
            "task_id": task_id, "condition": cond, "prompt": prompt, "description": desc[(task_id, cond)],
            "reference_module": ref.system_module, "reference": ref.system_text, "cfg": ref.cfg_text,
            "renamed_names": renamed.get(task_id, []) if cond == "random" else [],
            "hidden_names": hidden.get((task_id, cond), [])})
    return out


#: Licence names a card's metadata can give (Hugging Face's identifiers), by the words a
#: corpus's licence paragraph uses; a corpus naming none of these, or corpora naming
#: different ones, give ``other``.
LICENCE_IDS = {"MIT": "mit", "CC BY 4.0": "cc-by-4.0", "CC-BY-4.0": "cc-by-4.0", "Apache-2.0": "apache-2.0",
               "Apache License 2.0": "apache-2.0"}


def card_licence(texts: list[str]) -> str:
    """The card's ``license:`` value for the corpora's licence paragraphs ``texts``."""
    ids = {next((v for k, v in LICENCE_IDS.items() if k in t), "other") for t in texts}
    return ids.pop() if len(ids) == 1 else "other"


def _licences(config: Config) -> list[tuple[str, str, str]]:
    """(what, file or folder name, licence text) per corpus the rows come from."""
    corpora = [("corpus", config.corpus.path)] + ([("descriptions", config.corpus.descriptions)]
                                                 if str(config.corpus.descriptions or "") else [])
    return [(what, Path(str(p)).name, licence_of(p)) for what, p in corpora]


def _card(rows: dict[str, list[dict]], files: dict[str, str], config: Config, store: Path, n_tasks: int) -> str:
    licences = _licences(config)
    splits = "".join(f"  - split: {c}\n    path: {files[c]}\n" for c in rows)
    named = "".join(f"- **{what}** (`{name}`): "
                    + ("the same as the corpus" if i and text == licences[0][2] else text) + "\n"
                    for i, (what, name, text) in enumerate(licences))
    return (f"---\nlicense: {card_licence([t for _, _, t in licences])}\npretty_name: ALIAS renamed TLA+ test set\n"
            f"configs:\n- config_name: default\n  data_files:\n{splits}---\n\n"
            f"# ALIAS test set: `{Path(str(config.corpus.path)).name}` (corpus layout `{config.corpus.kind}`)\n\n"
            "The tasks of an ALIAS store (SANY and TLC confirmed every reference and its renamed copy), one split per "
            f"condition, exported by `alias-cir export` from `{store.name}`.\n\n## Licences\n\n" + named
            + "\n## Fields\n\n" + "".join(f"- `{k}`: {v}\n" for k, v in FIELDS.items())
            + f"\n## Rows per condition\n\nThe store's test set has {n_tasks} tasks; a task without a description "
            "cannot be posed and is left out; `meaningful` holds the tasks whose meaningful copy verified.\n\n"
            + "".join(f"- {c}: {len(r)}\n" for c, r in rows.items()))


def export_dataset(store: Path, out: Path, config: Config) -> dict[str, int]:
    """Write the dataset folder ``out`` (module docstring); returns rows per condition."""
    from datasets import Dataset, Features, Sequence, Value

    rows = dataset_rows(store)
    features = Features({k: Value("string") for k in FIELDS if k not in ("renamed_names", "hidden_names")}
                        | {"renamed_names": [{"original": Value("string"), "renamed": Value("string"),
                                              "kind": Value("string")}],
                           "hidden_names": Sequence(Value("string"))})
    if (out / "data").is_dir():
        shutil.rmtree(out / "data")
    (out / "data").mkdir(parents=True)
    files = {}
    for cond, rs in rows.items():
        tmp = out / "data" / f"{cond}.tmp"
        Dataset.from_list(rs, features=features).to_parquet(str(tmp))
        # the content's digest in the name: datasets caches a local folder by the card's file names
        files[cond] = f"data/{cond}-{hashlib.sha256(tmp.read_bytes()).hexdigest()[:12]}.parquet"
        tmp.rename(out / files[cond])
    n_tasks = len(TestSet.from_store(store).task_ids())
    (out / "README.md").write_text(_card(rows, files, config, store, n_tasks), encoding="utf-8")
    return {c: len(r) for c, r in rows.items()}


def _sample(row: Any, verdicts: pd.DataFrame, ref_text: str, prompt: str) -> EvalSample:
    scores = {}
    for v in verdicts.to_dict("records"):
        v = {k: (None if not isinstance(x, (list, dict, str)) and pd.isna(x) else x) for k, x in v.items()}
        verdict = readable_verdict(v)
        why = "; ".join(str(x) for x in (verdict.get("reason"), verdict.get("error_text")) if x)
        scores[v["grade"]] = Score(value=CORRECT if verdict.get("passed") else INCORRECT,
                                   explanation=why or "passed", metadata=verdict)
    return EvalSample(id=row.task_id, epoch=int(row.sample_idx) + 1, input=prompt, target=ref_text,
                      output=ModelOutput.from_content(str(row.model), row.text if isinstance(row.text, str) else ""),
                      scores=scores, metadata={"task_id": row.task_id, "condition": row.condition,
                                               "model": row.model, "source": row.source})


def _log(model: str, cond: str, samples: list[EvalSample], created: str, store: Path) -> EvalLog:
    grades = sorted({g for s in samples for g in s.scores})
    metrics = [EvalScore(name=g, scorer=g, metrics={"accuracy": EvalMetric(name="accuracy", value=sum(
        s.scores[g].value == CORRECT for s in samples if g in s.scores) / max(1, sum(g in s.scores for s in samples)))})
               for g in grades]
    spec = EvalSpec(created=created, task=f"alias_cir/{'renamed' if cond == 'random' else cond}", model=model,
                    dataset=EvalDataset(name=f"alias_cir_{cond}", location=str(store), samples=len(samples)),
                    config=EvalConfig(), task_args={"condition": cond}, metadata={"exported_by": "alias-cir export"})
    return EvalLog(eval=spec, status="success", samples=samples, stats=EvalStats(started_at=created, completed_at=created),
                   results=EvalResults(total_samples=len(samples), completed_samples=len(samples), scores=metrics))


def export_logs(store: Path, out: Path) -> list[Path]:
    """Write one Inspect log per model and condition of the store's samples (controls left
    out) under ``out``; returns the files."""
    samples = query("SELECT * FROM samples WHERE model NOT LIKE 'control:%' ORDER BY ALL", store)
    verdicts = query("SELECT * FROM verdicts WHERE model NOT LIKE 'control:%'", store)
    by_key = dict(tuple(verdicts.groupby(["task_id", "condition", "model", "sample_idx"])))
    testset = TestSet.from_store(store)
    refs = testset.references()
    table = testset.conditions_table()
    prompts = {(t, c): p for t, c, p in condition_prompts(table[table.description.map(has_description)],
                                                          ["original", "random", "meaningful"], "frontier")}
    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for (model, cond), grp in samples.groupby(["model", "condition"], sort=True):
        evs = [_sample(r, by_key.get((r.task_id, r.condition, r.model, r.sample_idx), verdicts.iloc[:0]),
                       refs[(r.task_id, cond)].system_text if (r.task_id, cond) in refs else "",
                       prompts.get((r.task_id, cond), "")) for r in grp.itertuples()]
        path = out / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', model)}__{cond}.eval"
        write_eval_log(_log(model, cond, evs, created, store), str(path))
        files.append(path)
    return files
