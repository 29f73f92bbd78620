"""Released TLA+-Bench generations and verdicts: a replay source in the release's layout.

``<dir>/generations/<regime>/<model>/<spec_id>.tla`` holds one generation per task (the
benchmark's outputs byte-exact: Markdown fences, Unicode, truncation included);
``<dir>/verdicts/<regime>/<model>.jsonl`` the benchmark's own verdict on each (``sany_pass``,
``tlc_pass``, ``label``, ``evidence``). ``dir`` is the release's ``outputs/`` folder, so the
same entry reads a full checkout of the TLA+-Bench release (any model folder, regime
``default`` or ``cfgaware``).

:func:`generation_records` gives one replay record per file (condition ``original``,
``sample_idx`` 0): an empty or truncated file is kept (it is graded and fails), and a task
the verdicts list but whose file the release lacks is reported, not invented.
:func:`external_verdict_rows` gives the rows of the store's ``external_verdicts`` table.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Iterable

from alias.errors import AliasError

__all__ = ["generation_records", "external_verdict_rows", "models_of", "SOURCE"]

#: The ``source`` of the verdicts (the ``external_verdicts`` table).
SOURCE = "tla-bench"


def models_of(outputs: Path, regime: str) -> list[str]:
    """The model folders of a regime, sorted."""
    d = outputs / "generations" / regime
    if not d.is_dir():
        raise AliasError(f"{d}: no generations folder (a TLA+-Bench release has outputs/generations/<regime>/)")
    return sorted(p.name for p in d.iterdir() if p.is_dir())


def generation_records(outputs: str | Path, regime: str, models: Iterable[str] = ()) -> tuple[list[dict], dict]:
    """One record per generation file of ``models`` (all model folders when empty):
    ``task_id`` (the spec id), ``condition`` original, ``model``, ``sample_idx`` 0,
    ``text``, and ``extra`` (regime, file, sha256, bytes). Returns the records and, per
    model, the spec ids its verdict file lists but the release has no file for."""
    outputs = Path(outputs)
    records, lacking = [], {}
    for model in list(models) or models_of(outputs, regime):
        folder = outputs / "generations" / regime / model
        if not folder.is_dir():
            raise AliasError(f"{folder}: no such model folder")
        for f in sorted(folder.glob("*.tla"), key=lambda p: (len(p.stem), p.stem)):
            data = f.read_bytes()
            records.append({"task_id": f.stem, "condition": "original", "model": model, "sample_idx": 0,
                            "text": data.decode("utf-8", errors="replace"),
                            "extra": json.dumps({"regime": regime, "file": f"generations/{regime}/{model}/{f.name}",
                                                 "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)},
                                                sort_keys=True)})
        have = {r["task_id"] for r in records if r["model"] == model}
        listed = {r["task_id"] for r in external_verdict_rows(outputs, regime, [model])}
        lacking[model] = sorted(listed - have, key=lambda s: (len(s), s))
    return records, lacking


def external_verdict_rows(outputs: str | Path, regime: str, models: Iterable[str] = ()) -> list[dict]:
    """The benchmark's verdicts (``<outputs>/verdicts/<regime>/<model>.jsonl``) as rows of
    ``external_verdicts``: source, regime, model, task_id, sany_pass, tlc_pass (``None``
    where the benchmark records none: TLC did not run), label, evidence, gen_module.
    Raises :class:`AliasError` naming the line of a malformed record."""
    outputs = Path(outputs)
    rows = []
    for model in list(models) or models_of(outputs, regime):
        f = outputs / "verdicts" / regime / f"{model}.jsonl"
        if not f.is_file():
            continue
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
                rows.append({"source": SOURCE, "regime": regime, "model": model, "task_id": str(r["spec_id"]),
                             "sany_pass": r.get("sany_pass"), "tlc_pass": r.get("tlc_pass"), "label": r.get("label"),
                             "evidence": r.get("evidence"), "gen_module": r.get("gen_module")})
            except (ValueError, KeyError, TypeError) as e:
                raise AliasError(f"{f}:{i}: not a verdict record ({e})") from None
    return rows
