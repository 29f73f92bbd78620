"""No original name is left in the renamed copies of the real corpora, comments, cfg and
descriptions included (issue 35): every task of the TLA+ Examples (as the Examples
pipeline ingests them) and of TLA+-Bench's release renamed as the rename stage renames
it, and the leftover scan (alias.rename.comments.leftover_rows) run on each copy."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from alias.corpus.ingest import ingest
from alias.corpus.tlabench import ingest_tlabench
from alias.rename.corpus import rename_corpus

pytestmark = pytest.mark.corpus

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
LIBRARY = (str(SHARED / "deps" / "community-modules"), str(SHARED / "deps" / "tlaps-library"))
SEED = 20261129  # params.yaml rename.seed


def _renamed(tables: dict, tmp: Path) -> tuple[list[dict], pd.DataFrame]:
    out = rename_corpus(tables["tasks"], tables["modules"], SEED, tmp)
    return out.tasks, pd.DataFrame(out.leftovers)


def _check(tasks: list[dict], rows: pd.DataFrame, n_tasks: int) -> None:
    assert len(tasks) == n_tasks and all(t["status"] == "ok" for t in tasks), \
        [(t["task_id"], t["error"]) for t in tasks if t["status"] != "ok"]
    assert sum(t["n_leftover"] for t in tasks) == 0
    assert rows.kept.notna().all(), rows[rows.kept.isna()].head(10).to_dict("records")
    # comments were renamed: only English words, strings and the description rule are kept
    assert set(rows.kept) <= {"english_word", "string_value", "description_rule"}


def test_examples_tasks_carry_no_original_name(tmp_path):
    if not (SHARED / "tlaplus-examples").is_dir():
        pytest.skip("no ../shared/corpus/tlaplus-examples")
    tables = ingest(SHARED / "tlaplus-examples", SHARED / "tlabench" / "TLA_Description.json", list(LIBRARY), 300)
    tasks, rows = _renamed(tables, tmp_path)
    _check(tasks, rows, 119)


def test_tlabench_tasks_carry_no_original_name(tmp_path):
    if not (SHARED / "tlabench-release").is_dir():
        pytest.skip("no ../shared/corpus/tlabench-release")
    library = LIBRARY + (str(SHARED / "tlaplus-examples" / "specifications" / "locks_auxiliary_vars"),)
    tasks, rows = _renamed(ingest_tlabench(SHARED / "tlabench-release", None, library), tmp_path)
    _check(tasks, rows, 95)
