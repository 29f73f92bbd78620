"""alias.generate.replay: released outputs (JSONL / Parquet) -> samples table + errors."""
from __future__ import annotations

import gzip
import json

import pandas as pd
import pytest

from alias.generate.replay import OUTPUT_COLUMNS, ReplayFileError, format_errors, replay

TASKS = {"Clock", "Peterson", "TokenRing"}
MODELS = ("opus", "gpt5", "qwen-A")
CONDS = ("original", "random")


def _records() -> list[dict]:
    """3 models x 2 conditions x 5 samples (30 records), on two tasks."""
    out = []
    for m in MODELS:
        for c in CONDS:
            for k in range(5):
                task = "Clock" if k % 2 == 0 else "Peterson"
                out.append({"task_id": task, "condition": c, "model": m, "sample_idx": k,
                            "text": f"---- MODULE {task} ----\n\\* {m} {c} {k}\n====\n",
                            "stop_reason": "end_turn", "output_tokens": 10 + k})
    return out


def _write_jsonl(path, lines: list) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for x in lines:
            f.write((x if isinstance(x, str) else json.dumps(x)) + "\n")


def _keys(df: pd.DataFrame) -> set[tuple]:
    return set(zip(df.task_id, df.condition, df.model, df.sample_idx))


def _expected_keys() -> set[tuple]:
    return {(r["task_id"], r["condition"], r["model"], r["sample_idx"]) for r in _records()}


def test_jsonl_clean_file_lands_exactly(tmp_path):
    p = tmp_path / "out.jsonl"
    _write_jsonl(p, _records())
    df, errors = replay(p, TASKS)
    assert errors == []
    assert len(df) == 30 and list(df.columns) == OUTPUT_COLUMNS
    assert _keys(df) == _expected_keys()
    assert df["sample_idx"].dtype == "int64"
    assert list(df["line"]) == list(range(1, 31))
    first = df.iloc[0]
    assert json.loads(first["extra"]) == {"output_tokens": 10, "stop_reason": "end_turn"}
    assert first["text"].startswith("---- MODULE Clock ----\n")


def test_jsonl_bad_lines_reported_good_lines_land(tmp_path):
    recs = _records()
    lines: list = list(recs)
    bad = {
        'this is {not json': "json",
        '[1, 2, 3]': "not_object",
        json.dumps({"task_id": "Clock", "condition": "original", "model": "opus", "sample_idx": 7}): "missing_field",
        json.dumps({"task_id": "Clock", "condition": "original", "model": "opus", "sample_idx": -1, "text": ""}): "bad_field",
        json.dumps({"task_id": "Clock", "condition": "original", "model": "opus", "sample_idx": "8", "text": ""}): "bad_field",
        json.dumps({"task_id": "Clock", "condition": "original", "model": "opus", "sample_idx": True, "text": ""}): "bad_field",
        json.dumps({"task_id": "Clock", "condition": "original", "model": "opus", "sample_idx": 9, "text": 5}): "bad_field",
        json.dumps({"task_id": "", "condition": "original", "model": "opus", "sample_idx": 9, "text": ""}): "bad_field",
        json.dumps({"task_id": "Nope", "condition": "original", "model": "opus", "sample_idx": 0, "text": "x"}): "unknown_task",
        json.dumps({"task_id": "Clock", "condition": "renamed", "model": "opus", "sample_idx": 0, "text": "x"}): "bad_condition",
        json.dumps(recs[3] | {"text": "second copy"}): "duplicate",
    }
    # interleave: bad line i goes after good record 2*i+1; plus one blank line
    for i, b in enumerate(bad):
        lines.insert(2 * i + 1 + i, b)
    lines.insert(5, "   ")
    p = tmp_path / "mixed.jsonl"
    _write_jsonl(p, lines)
    df, errors = replay(p, TASKS)

    assert _keys(df) == _expected_keys() and len(df) == 30  # every good line lands
    line_of = {x: n for n, x in enumerate(lines, start=1) if isinstance(x, str)}
    got = {e.line: e.kind for e in errors}
    assert got == {line_of[b]: kind for b, kind in bad.items()}
    assert len(errors) == len(bad)
    # the good records keep their own line numbers
    for n, x in enumerate(lines, start=1):
        if isinstance(x, dict):
            row = df[(df.model == x["model"]) & (df.condition == x["condition"]) & (df.sample_idx == x["sample_idx"])]
            assert list(row["line"]) == [n]

    malformed = next(e for e in errors if e.kind == "json")
    assert f"line {malformed.line}" in str(malformed) and "malformed JSON" in malformed.message
    dup = next(e for e in errors if e.kind == "duplicate")
    first_line = lines.index(recs[3]) + 1
    assert str(first_line) in dup.message and str(dup.line) in dup.message
    assert dup.key == (recs[3]["task_id"], recs[3]["condition"], recs[3]["model"], recs[3]["sample_idx"])
    kept = df[df.line == first_line]
    assert kept["text"].item() == recs[3]["text"]  # the first copy is kept
    unk = next(e for e in errors if e.kind == "unknown_task")
    assert "'Nope'" in unk.message
    cond = next(e for e in errors if e.kind == "bad_condition")
    assert "'renamed'" in cond.message
    text = format_errors(errors, p)
    assert text.count("\n") == len(errors) - 1 and f"{p}:{malformed.line}: json:" in text


def test_jsonl_encoding_gzip_and_conditions(tmp_path):
    recs = _records()[3:7]  # two "original", two "random"
    p = tmp_path / "out.jsonl.gz"
    with gzip.open(p, "wb") as f:
        f.write((json.dumps(recs[0]) + "\n").encode())
        f.write(b'{"task_id": "Clock", "text": "\xff\xfe"}\n')
        for r in recs[1:]:
            f.write((json.dumps(r) + "\n").encode())
    df, errors = replay(p, TASKS)
    assert len(df) == 4 and [(e.line, e.kind) for e in errors] == [(2, "encoding")]
    # a narrower condition set rejects the others; None skips the task check
    df2, errors2 = replay(p, None, conditions={"original"})
    assert set(df2.condition) == {"original"}
    assert {e.kind for e in errors2} == {"encoding", "bad_condition"}


def test_meaningful_condition_and_integral_float_index(tmp_path):
    p = tmp_path / "m.jsonl"
    _write_jsonl(p, [{"task_id": "Clock", "condition": "meaningful", "model": "opus", "sample_idx": 2.0, "text": ""},
                     {"task_id": "Clock", "condition": "meaningful", "model": "opus", "sample_idx": 2.5, "text": ""}])
    df, errors = replay(p, TASKS)
    assert list(df.sample_idx) == [2] and [e.kind for e in errors] == ["bad_field"]


def test_parquet_clean_and_bad_rows(tmp_path):
    recs = _records()
    p = tmp_path / "out.parquet"
    pd.DataFrame(recs).to_parquet(p, index=False)
    df, errors = replay(p, TASKS)
    assert errors == [] and len(df) == 30 and _keys(df) == _expected_keys()
    assert json.loads(df.iloc[4]["extra"]) == {"output_tokens": 14, "stop_reason": "end_turn"}

    bad_rows = [
        {"task_id": "Nope", "condition": "original", "model": "opus", "sample_idx": 0, "text": "x",
         "stop_reason": None, "output_tokens": 1},
        {"task_id": "Clock", "condition": "renamed", "model": "opus", "sample_idx": 0, "text": "x",
         "stop_reason": None, "output_tokens": 1},
        recs[0] | {"text": "dup"},
        {"task_id": "Clock", "condition": "original", "model": "opus", "sample_idx": -3, "text": "x",
         "stop_reason": None, "output_tokens": 1},
        {"task_id": "Clock", "condition": "original", "model": "opus", "sample_idx": 11, "text": None,
         "stop_reason": None, "output_tokens": 1},
    ]
    p2 = tmp_path / "bad.pq"
    pd.DataFrame(recs + bad_rows).to_parquet(p2, index=False)
    df2, errors2 = replay(p2, TASKS)
    assert len(df2) == 30 and _keys(df2) == _expected_keys()
    assert [(e.line, e.kind) for e in errors2] == [
        (31, "unknown_task"), (32, "bad_condition"), (33, "duplicate"), (34, "bad_field"), (35, "missing_field")]
    assert "line 1" in errors2[2].message and "line 33" in errors2[2].message


def test_parquet_missing_column_and_bad_files(tmp_path):
    p = tmp_path / "nocol.parquet"
    pd.DataFrame(_records()).drop(columns=["text"]).to_parquet(p, index=False)
    df, errors = replay(p, TASKS)
    assert df.empty and list(df.columns) == OUTPUT_COLUMNS
    assert [(e.line, e.kind) for e in errors] == [(None, "columns")] and "text" in errors[0].message

    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not parquet at all")
    with pytest.raises(ReplayFileError, match="Parquet"):
        replay(junk, TASKS)
    other = tmp_path / "out.csv"
    other.write_text("a,b\n")
    with pytest.raises(ReplayFileError, match="unknown format"):
        replay(other, TASKS)
    with pytest.raises(ReplayFileError, match="no such file"):
        replay(tmp_path / "missing.jsonl", TASKS)
