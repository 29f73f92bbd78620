"""Write the committed replay fixture ``data/replay/embedded_outputs.jsonl``.

Usage (after ``dvc repro`` or ``dvc pull`` has written the ingest, rename and verify
tables of the embedded default)::

    python -m alias.grade.fixture [--params params.yaml]

It reads the folders of ``params.yaml`` ``paths`` and writes the ``path`` of the
``generate.replay.fixture`` entry.

The file stands in for released model outputs (the ``replay`` backend) so that the
graders and the statistics get real variety offline. For each test-set task, two
fixture models (``fixture-a``, ``fixture-b``) x conditions ``original`` and ``random`` x
five samples, each built from the reference of that condition (the renamed
specification for ``random``) as one of these variants, drawn with a seeded RNG:

``fenced``     the reference in a markdown ```tla fence between two lines of prose
               (every grade passes);
``renamed``    the reference with its variables and constants renamed (``x`` -> ``x_r``):
               the behavior grade can map them back, the name grade fails where the cfg
               names a constant;
``mutant``     a mutant of the reference (:func:`alias.grade.mutants.generate_mutants`,
               one of the first two of a seeded order);
``syntax``     the reference with a broken definition added before its closing line
               (SANY rejects it);
``truncated``  the first ~60% of the reference's lines in an unclosed fence, no closing
               line, ``stop_reason`` ``max_tokens``;
``prose``      a refusal without any module (extraction fails).

``fixture-a`` draws mostly ``fenced`` on ``original`` and much less on ``random`` (a
model that does better on the names it has seen); ``fixture-b`` uses one mixture for
both conditions. Each record carries ``variant`` and ``stop_reason`` (kept in the
samples table's ``extra`` / ``stop_reason``). Same inputs and seed -> same bytes.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from alias.config import load_config
from alias.corpus.testset import Reference, TestSet
from alias.grade.mutants import generate_mutants
from alias.rename.cir import rename_names
from alias.tla.cfg import parse_cfg

SEED = 20261129
MODELS = ("fixture-a", "fixture-b")
CONDITIONS = ("original", "random")
N_SAMPLES = 5
VARIANTS = ("fenced", "renamed", "mutant", "syntax", "truncated", "prose")
#: Variant weights per (model, condition), in the order of :data:`VARIANTS`.
WEIGHTS = {
    ("fixture-a", "original"): (0.65, 0.10, 0.10, 0.05, 0.05, 0.05),
    ("fixture-a", "random"): (0.20, 0.15, 0.25, 0.15, 0.15, 0.10),
    ("fixture-b", "original"): (0.40, 0.15, 0.20, 0.10, 0.10, 0.05),
    ("fixture-b", "random"): (0.40, 0.15, 0.20, 0.10, 0.10, 0.05),
}


def _fenced(module: str, closed: bool = True) -> str:
    body = module.rstrip("\n")
    tail = "\n```\n\nThe invariants above hold in every reachable state.\n" if closed else "\n"
    return "Here is the TLA+ specification of the system.\n\n```tla\n" + body + tail


def _renamed(ref: Reference) -> str | None:
    names = list(ref.variables) + list(ref.constants)
    if not names:
        return None
    mapping = {n: f"{n}_r" for n in names}
    author = {m: ref.files[f"{m}.tla"] for m in ref.author_modules}
    libs = {k[:-4]: v for k, v in ref.files.items() if k[:-4] not in author}
    try:
        mods = rename_names({ref.system_module: author[ref.system_module]}, mapping,
                            author={ref.system_module}, library_modules=libs | {
                                m: t for m, t in author.items() if m != ref.system_module})
    except Exception:  # a capture: fall back to the reference itself
        return None
    return mods.get(ref.system_module)


def _mutants(ref: Reference, rng: random.Random) -> list[str]:
    cfg = parse_cfg(ref.cfg_text)
    try:
        muts = generate_mutants(ref.system_text, init=cfg.init or "Init", next=cfg.next or "Next",
                                spec=cfg.specification or "Spec", cfg=ref.cfg_text)
    except Exception:
        return []
    order = list(range(len(muts)))
    rng.shuffle(order)
    return [muts[i].text for i in order[:2]]


def _syntax_error(module: str) -> str:
    lines = module.rstrip("\n").split("\n")
    close = max(i for i, line in enumerate(lines) if line.strip().startswith("===="))
    lines.insert(close, "Broken == (1 + \n")
    return "\n".join(lines) + "\n"


def _truncated(module: str) -> str:
    lines = module.rstrip("\n").split("\n")
    return _fenced("\n".join(lines[: max(2, int(len(lines) * 0.6))]), closed=False)


PROSE = ("I cannot write a complete specification from this description alone; "
         "please give the constants and the intended invariants.\n")


def build_records(refs: dict[tuple[str, str], Reference], seed: int = SEED) -> list[dict]:
    """The fixture records (module docstring) for every task with both references."""
    tasks = sorted(t for t, c in refs if c == "original" and (t, "random") in refs)
    out = []
    for task in tasks:
        for cond in CONDITIONS:
            ref = refs[(task, cond)]
            rng = random.Random(f"{seed}:{task}:{cond}")
            texts = {"fenced": _fenced(ref.system_text), "syntax": _fenced(_syntax_error(ref.system_text)),
                     "truncated": _truncated(ref.system_text), "prose": PROSE}
            ren = _renamed(ref)
            muts = _mutants(ref, rng)
            for model in MODELS:
                mrng = random.Random(f"{seed}:{task}:{cond}:{model}")
                for k in range(N_SAMPLES):
                    variant = mrng.choices(VARIANTS, weights=WEIGHTS[(model, cond)])[0]
                    if variant == "renamed" and ren is None or variant == "mutant" and not muts:
                        variant = "fenced"
                    if variant == "renamed":
                        text = _fenced(ren)
                    elif variant == "mutant":
                        text = _fenced(mrng.choice(muts))
                    else:
                        text = texts[variant]
                    out.append({"task_id": task, "condition": cond, "model": model, "sample_idx": k,
                                "text": text, "variant": variant,
                                "stop_reason": "max_tokens" if variant == "truncated" else "end_turn"})
    return out


def write_fixture(refs: dict[tuple[str, str], Reference], out: Path, seed: int = SEED) -> int:
    """Write the fixture records of ``refs`` (:meth:`TestSet.references`) to ``out``;
    returns the record count."""
    recs = build_records(refs, seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
    return len(recs)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m alias.grade.fixture", description=__doc__.split("\n")[0])
    ap.add_argument("--params", type=Path, default=Path("params.yaml"), help="DVC parameters file")
    ap.add_argument("--seed", type=int, default=SEED)
    a = ap.parse_args(argv)
    config = load_config(a.params)
    out = Path(config.generate.entry("fixture").path)
    n = write_fixture(TestSet.load(config.paths).references(), out, a.seed)
    print(f"wrote {n} records to {out}")


if __name__ == "__main__":  # pragma: no cover
    main()
