"""Real model outputs held against another benchmark's verdicts (TLA+-Bench's release),
from the views of ``sql/16_tlabench.sql``:

``table_tlabench_agreement.md``
    our ``tlabench`` grade (the benchmark's own procedure) against the benchmark's
    ``sany_pass`` and ``tlc_pass`` per model, and every disagreement with its cause;
``table_tlabench_name_vs_tlc.md``
    the paper's ``name`` grade (the task's cfg with the Appendix H changes) against the
    benchmark's ``tlc_pass``: the 2x2 table per model and each output where they differ,
    with the cfg change that made it;
``table_tlabench_name_vs_behavior.md``
    ``name`` against ``behavior`` on these outputs (Appendix P): how many fail by name but
    pass by behavior and the reverse, each with the map or the TLC error;
``table_tlabench_pass_rates.md``
    pass rates per model and grade with 95% bootstrap CIs over tasks (Experiment 3's
    table on real outputs).

Each table says ``no data`` until TLA+-Bench outputs are replayed and graded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from alias.report.tables import to_markdown
from alias.stats import bootstrap_mean
from alias.report.adjudication import write_tables as write_adjudication
from alias.store.db import query

__all__ = ["write_tlabench_reports", "disagreement_cause", "FILES"]

FILES = ("table_tlabench_agreement.md", "table_tlabench_name_vs_tlc.md", "table_tlabench_name_vs_behavior.md",
         "table_tlabench_pass_rates.md")
_SOURCE = ("Outputs: TLA+-Bench's released generations (replayed, byte-exact), graded here; "
           "`their` = the benchmark's published verdict.\n\n")


def _text(v: Any) -> str:
    """A text cell of a view row: the string, or "" for NULL (pandas gives NaN or None)."""
    return v if isinstance(v, str) else ""


def _pct(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.1f}%)" if n else "no data"


def disagreement_cause(row: Any) -> str:
    """Why our ``tlabench`` grade and the benchmark differ on one output, from both sides'
    evidence: a library module, a time limit, a random choice, or unexplained."""
    text = " ".join(_text(x) for x in (row.our_error, row.our_reason, row.their_evidence, row.their_label))
    if "Cannot find source file" in text or "module not found" in text.lower():
        return "library module: the module an output imports resolves on one side only"
    if "timeout" in text.lower() or "resource_limit" in text:
        return "time limit: one side hit its limit"
    if "Random" in text:
        return "nondeterminism: the spec draws random values"
    return "unexplained: TLC version or a bug here (see the evidence)"


def _agreement(db) -> str:
    agg = query("SELECT * FROM v_tlabench_agreement ORDER BY model", db)
    if agg.empty:
        return "no data\n"
    rows = [{"model": r.model, "compared": int(r.compared), "sany_pass agrees": _pct(int(r.sany_agree), int(r.compared)),
             "tlc_pass agrees": _pct(int(r.tlc_agree), int(r.compared)),
             "listed, not in the release": int(r.missing_from_release), "in the release, no verdict": int(r.missing_verdict),
             "task not in our test set": int(r.without_reference)} for r in agg.itertuples()]
    dis = query("SELECT * FROM v_tlabench_disagreements ORDER BY model, task_id", db)
    listing = pd.DataFrame([{"model": r.model, "task": r.task_id, "their sany/tlc": f"{r.their_sany}/{r.their_tlc}",
                             "our sany/tlc": f"{r.our_sany}/{r.our_tlc}", "cause": disagreement_cause(r),
                             "their evidence": _text(r.their_evidence)[:120].replace("|", "/").replace("\n", " "),
                             "our reason": _text(r.our_reason)[:80]} for r in dis.itertuples()])
    lacking = query("SELECT model, string_agg(task_id, ', ' ORDER BY length(task_id), task_id) AS tasks "
                    "FROM v_tlabench_outputs WHERE in_verdicts AND NOT in_release GROUP BY model ORDER BY model", db)
    return (to_markdown(pd.DataFrame(rows)) + "\n## Disagreements\n\n"
            + (to_markdown(listing) if len(listing) else "none\n")
            + "\n## Outputs the verdicts list but the release lacks (not compared)\n\n"
            + (to_markdown(lacking) if len(lacking) else "none\n"))


def _name_vs_tlc(db) -> str:
    df = query("SELECT * FROM v_tlabench_name_vs_tlc ORDER BY model, task_id", db)
    if df.empty:
        return "no data\n"
    cells = [{"model": m, "their TLC pass, name pass": int((g.their_tlc & g.name_passed).sum()),
              "their TLC pass, name fail": int((g.their_tlc & ~g.name_passed).sum()),
              "their TLC fail, name pass": int((~g.their_tlc & g.name_passed).sum()),
              "their TLC fail, name fail": int((~g.their_tlc & ~g.name_passed).sum()), "outputs": len(g)}
             for m, g in df.groupby("model")]
    diff = df[df.their_tlc != df.name_passed]
    listing = pd.DataFrame([{"model": r.model, "task": r.task_id, "their TLC": r.their_tlc, "name": r.name_passed,
                             "cfg changes (Appendix H)": ", ".join(json.loads(_text(r.name_detail) or "{}").get("cfg_changes") or [])
                             or "none", "name reason": _text(r.name_reason)} for r in diff.itertuples()])
    return (to_markdown(pd.DataFrame(cells)) + "\n## Outputs where they differ\n\n"
            + (to_markdown(listing) if len(listing) else "none\n"))


def _name_vs_behavior(db) -> str:
    df = query("SELECT * FROM v_tlabench_name_vs_behavior ORDER BY model, task_id", db)
    if df.empty:
        return "no data\n"
    counts = [{"model": m, "both pass": int((g.name_passed & g.behavior_passed).sum()),
               "fail by name, pass by behavior": int((~g.name_passed & g.behavior_passed).sum()),
               "pass by name, fail by behavior": int((g.name_passed & ~g.behavior_passed).sum()),
               "both fail": int((~g.name_passed & ~g.behavior_passed).sum()), "outputs": len(g)}
              for m, g in df.groupby("model")]
    diff = df[df.name_passed != df.behavior_passed]
    listing = pd.DataFrame([{"model": r.model, "task": r.task_id, "name": r.name_passed, "behavior": r.behavior_passed,
                             "map (behavior)": _text(r.behavior_mapping)[:120],
                             "error of the failing grade": ((_text(r.behavior_error) or _text(r.behavior_reason))
                                                            if r.name_passed else
                                                            (_text(r.name_error) or _text(r.name_reason)))[:120]
                             .replace("|", "/").replace("\n", " ")} for r in diff.itertuples()])
    return (to_markdown(pd.DataFrame(counts)) + "\n## Outputs the two grades judge differently\n\n"
            + (to_markdown(listing) if len(listing) else "none\n"))


def _pass_rates(db, n_resamples: int, seed: int) -> str:
    df = query("SELECT * FROM v_tlabench_outputs WHERE in_release AND in_verdicts AND our_sany IS NOT NULL "
               "ORDER BY model, task_id", db)
    if df.empty:
        return "no data\n"
    measures = (("SANY, theirs", "their_sany", False), ("SANY, tlabench grade", "our_sany", False),
                ("TLC, theirs", "their_tlc", False), ("TLC, tlabench grade", "our_tlc", False),
                ("correct, name", "name_passed", True), ("correct, behavior", "behavior_passed", True))
    rows = []
    for model, g in df.groupby("model"):
        for label, col, ref_only in measures:
            sel = g[g.has_reference] if ref_only else g
            vals = sel[col].astype("boolean").fillna(False).astype(float).to_numpy()
            if len(vals) == 0:
                rows.append({"model": model, "measure": label, "tasks": 0, "pass % [95% CI]": "no data"})
                continue
            b = bootstrap_mean(vals, n_resamples=n_resamples, seed=seed, scale=100.0)
            rows.append({"model": model, "measure": label, "tasks": len(vals),
                         "pass % [95% CI]": f"{b.estimate:.1f} [{b.ci_low:.1f}, {b.ci_high:.1f}]"})
    return to_markdown(pd.DataFrame(rows))


def write_tlabench_reports(db: str | Path, out: str | Path, *, n_resamples: int, seed: int) -> dict[str, Any]:
    """Write the four TLA+-Bench tables (module docstring) under ``out``; returns
    ``files`` (name -> path) and ``metrics`` (agreement counts per model)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    note = (f"Pass rates in percent over tasks (one output per task; the outputs both sides graded), 95% "
            f"percentile bootstrap CIs from {n_resamples} resamples of tasks (seed {seed}); `name` and `behavior` "
            "on the tasks of our test set.\n\n")
    texts = {FILES[0]: "# TLA+-Bench: our tlabench grade against the benchmark's verdicts\n\n" + _SOURCE + _agreement(db),
             FILES[1]: "# TLA+-Bench: name grade against the benchmark's TLC verdict\n\n" + _SOURCE + _name_vs_tlc(db),
             FILES[2]: "# TLA+-Bench: name grade against behavior grade (Appendix P)\n\n" + _SOURCE
             + _name_vs_behavior(db),
             FILES[3]: "# TLA+-Bench: pass rates per model and grade\n\n" + _SOURCE + note
             + _pass_rates(db, n_resamples, seed)}
    files = {}
    for name, text in texts.items():
        (out / name).write_text(text)
        files[name] = str(out / name)
    readings = write_adjudication(db, out)
    files["table_tlabench_adjudication.md"] = str(out / "table_tlabench_adjudication.md")
    agg = query("SELECT * FROM v_tlabench_agreement ORDER BY model", db)
    metrics = {f"tlabench_{k}/{r.model}": int(getattr(r, k)) for r in agg.itertuples()
               for k in ("compared", "sany_agree", "tlc_agree")}
    metrics |= {f"tlabench_readings/{k}": int(v) for k, v in readings.items()}
    return {"files": files, "metrics": metrics}
