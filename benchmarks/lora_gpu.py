"""One real LoRA run on a GPU through ``alias.exposure.lora.train_lora`` (issue 6, Appendix E).

Prints (and writes as JSON to ``--out``) training tokens per second for:

1. the tiny model of ``alias.generate.tiny`` (bf16 autocast, gradient checkpointing on
   CUDA, the Appendix E LoRA settings), then generation with the saved adapter through
   ``alias.generate.local.generate_local`` on the same device;
2. a randomly initialised model of the Qwen2.5-Coder-14B-Instruct shape (48 layers, width
   5,120, 40 query / 8 key-value heads, vocabulary 152,064; no hub access, so the
   weights are random, which does not change the arithmetic) with sequences of
   ``--seq-len`` tokens (2,048, the paper's cut), ``--steps`` LoRA steps. ``--layers``
   shrinks the depth when the device's time is short (tokens/s then scales about as
   48 / layers).

Usage (GPU machine)::

    PYTHONPATH=. python benchmarks/lora_gpu.py --out lora_gpu.json

On CPU only part 1 runs (with ``--tiny-only``); it is the check the device run repeats.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import tempfile
import time
from pathlib import Path

from alias.config import load_config

REPO = Path(__file__).resolve().parents[1]


def _appendix_e(**over):
    """The Appendix E LoRA settings: ``params.yaml`` ``exposure.lora`` with the paper's
    learning rate and warm-up (the embedded default lowers them for its 9-step runs)."""
    return dataclasses.replace(load_config(REPO / "params.yaml").exposure.lora,
                               **({"lr": 2e-4, "warmup_steps": 100} | over))


def _examples(tokenizer, n: int, seq_len: int, texts: list[str]) -> list[dict]:
    """``n`` task-pair-shaped examples whose prompt plus completion fill about ``seq_len`` tokens."""
    corpus = "\n".join(texts)
    ids = tokenizer(corpus, add_special_tokens=False)["input_ids"]
    out = []
    for i in range(n):
        start = (i * 997) % max(1, len(ids) - seq_len)
        chunk = ids[start:start + seq_len - 64]
        while len(chunk) < seq_len - 64:  # a short corpus repeats
            chunk = chunk + ids[:seq_len - 64 - len(chunk)]
        out.append({"task_id": f"bench{i}", "prompt": "Write the TLA+ specification described below.\n" * 4,
                    "completion": tokenizer.decode(chunk)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="lora_gpu.json")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--seq-len", type=int, default=2048)
    ap.add_argument("--layers", type=int, default=48)
    ap.add_argument("--tiny-only", action="store_true")
    args = ap.parse_args()

    import torch

    from alias.exposure.lora import train_lora
    from alias.generate.local import generate_local
    from alias.generate.tiny import build_tiny_model

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    result: dict = {"device": torch.cuda.get_device_name(0) if dev == "cuda" else "cpu",
                    "torch": torch.__version__}
    out = Path(args.out)

    def dump() -> None:
        out.write_text(json.dumps(result, indent=1, default=str))
        print(json.dumps(result, indent=1, default=str), flush=True)

    work = Path(tempfile.mkdtemp(prefix="alias-lora-"))
    # the embedded corpus's modules, read directly (no tree-sitter needed on the GPU machine)
    texts = [p.read_text() for p in sorted((Path(__file__).resolve().parents[1] / "alias/corpus/embedded").rglob("*.tla"))]
    t0 = time.monotonic()
    tiny = build_tiny_model(texts, work / "tiny", train_steps=20)
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(tiny, local_files_only=True)
    ex = _examples(tok, 8, min(args.seq_len, 1024), texts)
    run = train_lora(tiny, ex, work / "tiny-adapter", _appendix_e(epochs=1), device=dev)
    result["tiny"] = {"tokens_per_s": round(run.tokens_per_s, 1), "steps": run.n_steps, "wall_s": round(run.wall_s, 2),
                      "dtype": run.dtype, "device": run.device, "targets": run.target_modules,
                      "loss_first_last": [float(run.log.loss.iloc[0]), float(run.log.loss.iloc[-1])],
                      "build_s": round(time.monotonic() - t0, 1)}
    reqs = [{"task_id": "t", "condition": "original", "model": "tiny-A", "sample_idx": i,
             "prompt": "---- MODULE Counter ----"} for i in range(4)]
    g0 = time.monotonic()
    samples = generate_local(tiny, reqs, max_new_tokens=64, adapter_dir=run.adapter_dir, device=dev, batch_size=4)
    result["tiny"]["generate_s"] = round(time.monotonic() - g0, 2)
    result["tiny"]["generated_tokens"] = [s.output_tokens for s in samples]
    dump()
    if args.tiny_only or dev != "cuda":
        return

    from transformers import AutoModelForCausalLM, Qwen2Config

    cfg = Qwen2Config(hidden_size=5120, intermediate_size=13824, num_hidden_layers=args.layers,
                      num_attention_heads=40, num_key_value_heads=8, vocab_size=152064,
                      max_position_embeddings=32768, rope_theta=1_000_000.0, tie_word_embeddings=False)
    t1 = time.monotonic()
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
    n_params = sum(p.numel() for p in model.parameters())
    big = work / "qwen14b-shape"
    model.save_pretrained(big, safe_serialization=True)
    del model
    torch.cuda.empty_cache()
    for f in Path(tiny).iterdir():  # the tiny tokenizer: ids < 2,000 are valid for this vocabulary
        if "token" in f.name or f.name == "special_tokens_map.json":
            shutil.copy(f, big / f.name)
    result["qwen14b_shape"] = {"layers": args.layers, "params": n_params, "init_save_s": round(time.monotonic() - t1, 1)}
    dump()
    ex = _examples(tok, args.steps, args.seq_len, texts)
    t2 = time.monotonic()
    run = train_lora(big, ex, work / "big-adapter", _appendix_e(epochs=1), device="cuda")
    result["qwen14b_shape"].update({
        "tokens_per_s": round(run.tokens_per_s, 1), "steps": run.n_steps, "wall_s": round(run.wall_s, 2),
        "tokens_per_step": [int(t) for t in run.log.tokens], "dtype": run.dtype,
        "targets": run.target_modules, "load_and_train_s": round(time.monotonic() - t2, 1),
        "max_memory_gib": round(torch.cuda.max_memory_allocated() / 2**30, 1),
        "loss_first_last": [float(run.log.loss.iloc[0]), float(run.log.loss.iloc[-1])]})
    dump()


if __name__ == "__main__":
    main()
