"""LoRA fine-tuning of the exposure models (paper, Appendix E; Appendix F for Gemma).

Appendix E: "LoRA ... (rank 16, alpha=32, dropout 0.05) on the query, key, value and
output projections. Training runs for three epochs with batch size 1, the AdamW optimizer,
learning rate 2e-4 with 100 warm-up steps and a linear decay, gradient clipping at 1.0,
sequences truncated to 2,048 tokens, fp16 weights, gradient checkpointing and seed 0 ...
The loss covers only the specification tokens". Appendix F: "LoRA on the attention
projections of the text layers and bfloat16 weights".

A small explicit training loop (batch size 1 needs no padding or collator), built on
``transformers`` (model, scheduler) and ``peft`` (adapter):

* **Schedule**: ``transformers.get_linear_schedule_with_warmup``, the Trainer's linear
  schedule: warm-up from 0 over ``warmup_steps``, then linear decay to 0 at the last step.
  The warm-up is capped at a tenth of the total steps (``total_steps // 10``) so that tiny
  runs still train; the paper's runs (292 + 55 or 56 examples x 3 epochs, about 1,040
  steps) keep the full 100.
* **Optimizer**: ``torch.optim.AdamW`` over the adapter weights only (betas 0.9/0.999,
  eps 1e-8, weight decay 0, the Trainer's defaults); gradient norm clipped at 1.0.
* **Loss**: :func:`causal_lm_loss`, mean cross-entropy of the next-token predictions whose
  label is not ``-100`` (the specification tokens, see
  :func:`alias.exposure.trainsets.tokenize_example`).
* **Order**: :func:`alias.exposure.trainsets.epoch_orders` (one permutation per epoch).
* **Device and precision**: on a GPU the base weights load in bfloat16 where the GPU
  supports it, else float16 (the paper's fp16), the forward pass runs under autocast of that
  dtype (float16 with a gradient scaler), the adapter weights stay float32 and gradient
  checkpointing is on; on the CPU everything is float32 and checkpointing is off.
* **Seeds**: ``torch.manual_seed(seed)`` before the adapter is created (its random A
  matrices) and before training (dropout), so a CPU run repeats exactly.
* **Targets**: :func:`lora_target_modules` resolves the attention projections per
  architecture (``q_proj``/``k_proj``/``v_proj``/``o_proj`` for Llama, Qwen2 and Gemma;
  fused ``qkv_proj``, ``query_key_value`` or ``c_attn`` where a model has those) and keeps
  only the text layers (no vision or audio tower modules).

Public API::

    DEFAULT_LORA_PARAMS                           # the Appendix E settings
    lora_params(overrides=None) -> dict
    lora_target_modules(model) -> list[str]
    causal_lm_loss(logits, labels) -> (loss, n_predicted)
    train_lora(model_dir, examples, out_dir, params=None, *, name=None, device=None,
               progress=None) -> LoraRun
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import pandas as pd

from alias.exposure.trainsets import IGNORE_INDEX, epoch_orders, tokenize_example

__all__ = ["DEFAULT_LORA_PARAMS", "LoraRun", "lora_params", "lora_target_modules", "causal_lm_loss",
           "train_lora", "TRAINING_LOG_COLUMNS"]

#: Appendix E settings. ``target_modules: null`` = resolved per architecture;
#: ``precision: auto`` = bf16/fp16 on a GPU, fp32 on the CPU; ``gradient_checkpointing:
#: auto`` = on a GPU only.
DEFAULT_LORA_PARAMS: dict[str, Any] = {
    "r": 16,
    "alpha": 32,
    "dropout": 0.05,
    "target_modules": None,
    "epochs": 3,
    "batch_size": 1,
    "lr": 2e-4,
    "warmup_steps": 100,
    "weight_decay": 0.0,
    "max_grad_norm": 1.0,
    "max_length": 2048,
    "precision": "auto",
    "gradient_checkpointing": "auto",
    "seed": 0,
    "shuffle_seed": 0,
}

#: Columns of the ``training_log`` table (one row per optimizer step).
TRAINING_LOG_COLUMNS = ["adapter", "step", "epoch", "task_id", "loss", "lr", "tokens", "loss_tokens",
                        "grad_norm"]

# Attention projections by naming family: (q/k/v/o style, fused styles).
_PROJ_SETS = (
    ("q_proj", "k_proj", "v_proj", "o_proj"),  # Llama, Qwen2, Mistral, Gemma 1-4
    ("qkv_proj", "o_proj"),                     # Phi-3
    ("query_key_value", "dense"),               # Falcon, GPT-NeoX
    ("c_attn", "c_proj"),                       # GPT-2
)
# Path parts that mark a non-text tower of a multimodal model.
_NON_TEXT = re.compile(r"(^|\.)(vision|visual|vision_tower|vision_model|audio|audio_tower|audio_model|"
                       r"image|multi_modal_projector|mm_projector|embed_vision|embed_audio)[^.]*(\.|$)")
_ATTN_PARENT = re.compile(r"(attn|attention)", re.IGNORECASE)


def lora_params(overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """:data:`DEFAULT_LORA_PARAMS` updated with ``overrides``; ``ValueError`` on an unknown
    key or a value out of range (rank, epochs, batch size 1, lr, lengths, dropout)."""
    p = dict(DEFAULT_LORA_PARAMS)
    for k, v in (overrides or {}).items():
        if k not in p:
            raise ValueError(f"unknown LoRA setting {k!r}; known: {sorted(p)}")
        p[k] = v
    if int(p["r"]) < 1 or int(p["epochs"]) < 1 or int(p["max_length"]) < 2:
        raise ValueError("r, epochs must be >= 1 and max_length >= 2")
    if int(p["batch_size"]) != 1:
        raise ValueError("only batch size 1 is implemented (Appendix E)")
    if not 0.0 <= float(p["dropout"]) < 1.0 or float(p["lr"]) <= 0 or int(p["warmup_steps"]) < 0:
        raise ValueError("dropout must be in [0, 1), lr > 0, warmup_steps >= 0")
    if p["precision"] not in ("auto", "fp32", "fp16", "bf16"):
        raise ValueError(f"precision must be auto, fp32, fp16 or bf16, got {p['precision']!r}")
    return p


def lora_target_modules(model) -> list[str]:
    """Full names of the attention projections LoRA adapts, in module order.

    The first naming family of ``q_proj``/``k_proj``/``v_proj``/``o_proj``, ``qkv_proj``/
    ``o_proj``, ``query_key_value``/``dense`` or ``c_attn``/``c_proj`` that the model has
    is used; a module counts when it is a linear layer (``torch.nn.Linear`` or GPT-2's
    ``Conv1D``), its parent's name mentions attention (``self_attn``, ``attention``,
    ``attn``) and no part of its path names a vision or audio tower, so for a multimodal
    Gemma only the text layers are adapted (Appendix F).

    Raises ``ValueError`` when no such module exists (pass ``target_modules`` explicitly).
    """
    import torch

    linear_types: tuple = (torch.nn.Linear,)
    try:
        from transformers.pytorch_utils import Conv1D

        linear_types = linear_types + (Conv1D,)
    except ImportError:  # pragma: no cover - transformers always has it
        pass
    named = [(n, m) for n, m in model.named_modules() if isinstance(m, linear_types)]
    for names in _PROJ_SETS:
        out = []
        for n, _m in named:
            parent, _, leaf = n.rpartition(".")
            if leaf in names and _ATTN_PARENT.search(parent.rpartition(".")[2] or parent) \
                    and not _NON_TEXT.search(n):
                out.append(n)
        if out:
            return out
    raise ValueError("no attention projection found (q_proj/k_proj/v_proj/o_proj, qkv_proj, "
                     "query_key_value, c_attn); set exposure.lora.target_modules")


def causal_lm_loss(logits, labels):
    """Mean next-token cross-entropy over the labelled positions.

    ``logits``: (1, T, V); ``labels``: (1, T) with ``-100`` where no loss applies. Position
    ``t`` predicts ``labels[t + 1]``. Returns ``(loss, n)``, ``n`` the number of predicted
    labels (a 0 loss with ``n == 0`` when nothing is labelled). The computation is in
    float32 whatever the logits' dtype.
    """
    import torch

    shift_logits = logits[:, :-1, :].float()
    shift_labels = labels[:, 1:]
    n = int((shift_labels != IGNORE_INDEX).sum())
    if n == 0:
        return shift_logits.sum() * 0.0, 0
    loss = torch.nn.functional.cross_entropy(
        shift_logits.reshape(-1, shift_logits.shape[-1]), shift_labels.reshape(-1),
        ignore_index=IGNORE_INDEX, reduction="sum") / n
    return loss, n


@dataclass
class LoraRun:
    """The result of :func:`train_lora`.

    ``adapter_dir``: where the PEFT adapter was saved (``adapter_config.json`` and the
    weights, plus ``alias_training.json`` with the settings); ``log``: the ``training_log``
    rows (:data:`TRAINING_LOG_COLUMNS`), one per optimizer step; ``tokens_per_s``: input
    tokens (prompt and specification) processed per second of training; ``wall_s``: training
    time in seconds (model loading excluded); ``n_steps``; ``warmup_steps``: after the cap;
    ``target_modules``; ``params``: the settings used; ``skipped``: examples left out
    because their prompt fills the token window (no specification token to learn).
    """

    adapter_dir: Path
    log: pd.DataFrame
    tokens_per_s: float
    wall_s: float
    n_steps: int
    warmup_steps: int
    target_modules: list[str]
    params: dict[str, Any]
    device: str
    dtype: str
    skipped: list[str] = field(default_factory=list)


def _precision(params: Mapping[str, Any], device) -> Any:
    import torch

    prec = params["precision"]
    if device.type != "cuda":
        if prec in ("fp16", "bf16"):
            raise ValueError(f"precision {prec} needs a GPU; use fp32 or auto on the CPU")
        return torch.float32
    if prec == "fp32":
        return torch.float32
    if prec == "fp16":
        return torch.float16
    if prec == "bf16" or torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float16


def train_lora(model_dir: str | Path, examples: Sequence[Mapping[str, Any]], out_dir: str | Path,
               params: Mapping[str, Any] | None = None, *, name: str | None = None,
               device: str | None = None, progress: Callable[[], None] | None = None) -> LoraRun:
    """Fine-tune a LoRA adapter on ``examples`` and save it to ``out_dir`` (Appendix E).

    Args:
        model_dir: a local base-model directory (no hub downloads).
        examples: training examples in their shuffled order
            (:func:`alias.exposure.trainsets.build_training_set`).
        out_dir: the adapter directory (created; an existing adapter there is replaced).
        params: overrides of :data:`DEFAULT_LORA_PARAMS` (see :func:`lora_params`).
        name: the adapter name in the log (default: ``out_dir``'s name).
        device: ``"cpu"``, ``"cuda"``...; default ``cuda`` when available.
        progress: called after every step.

    Returns:
        :class:`LoraRun`; ``log`` has one row per step: ``step`` 1..n, ``epoch`` 1..epochs,
        ``task_id``, ``loss`` (mean over the specification tokens of that example), ``lr``
        (the rate that step used), ``tokens`` (sequence length), ``loss_tokens``,
        ``grad_norm`` (before clipping).

    Raises:
        ValueError: no examples, bad settings, no attention projection found, or no
            example with a specification token inside ``max_length``.
        FileNotFoundError: ``model_dir`` is not a local directory.
    """
    import peft
    import torch
    import transformers
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer, get_linear_schedule_with_warmup

    p = lora_params(params)
    if not examples:
        raise ValueError("no training examples")
    mdir = Path(model_dir).expanduser()
    if not mdir.is_dir():
        raise FileNotFoundError(f"model_dir {str(model_dir)!r} is not a local directory (no hub downloads here)")
    mdir = mdir.resolve()
    out = Path(out_dir)
    name = name or out.name
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    dtype = _precision(p, dev)

    tokenizer = AutoTokenizer.from_pretrained(mdir, local_files_only=True)
    encoded, skipped = [], []
    for ex in examples:
        enc = tokenize_example(tokenizer, ex, max_length=int(p["max_length"]))
        # labels from position 1 on are predicted; a prompt that fills the window leaves none
        if sum(1 for x in enc["labels"][1:] if x != IGNORE_INDEX) == 0:
            skipped.append(ex["task_id"])
            continue
        encoded.append((ex["task_id"], enc))
    if not encoded:
        raise ValueError("no example has a specification token within max_length")

    torch.manual_seed(int(p["seed"]))
    model = AutoModelForCausalLM.from_pretrained(mdir, dtype=dtype, local_files_only=True)
    targets = list(p["target_modules"]) if p["target_modules"] else lora_target_modules(model)
    use_gc = (p["gradient_checkpointing"] is True) or (p["gradient_checkpointing"] == "auto" and dev.type == "cuda")
    if use_gc:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()
    model.config.use_cache = False
    cfg = LoraConfig(r=int(p["r"]), lora_alpha=int(p["alpha"]), lora_dropout=float(p["dropout"]),
                     target_modules=targets, bias="none", task_type="CAUSAL_LM")
    model = get_peft_model(model, cfg)
    model.to(dev)
    model.train()
    trainable = [q for q in model.parameters() if q.requires_grad]
    for q in trainable:  # adapters in float32 whatever the base dtype
        q.data = q.data.float()

    epochs = int(p["epochs"])
    orders = epoch_orders(len(encoded), epochs, seed=int(p["shuffle_seed"]))
    total = epochs * len(encoded)
    warmup = min(int(p["warmup_steps"]), total // 10)
    opt = torch.optim.AdamW(trainable, lr=float(p["lr"]), betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=float(p["weight_decay"]))
    sched = get_linear_schedule_with_warmup(opt, num_warmup_steps=warmup, num_training_steps=total)
    use_amp = dev.type == "cuda" and dtype != torch.float32
    scaler = torch.amp.GradScaler("cuda") if (use_amp and dtype == torch.float16) else None

    rows: list[dict[str, Any]] = []
    n_tokens = 0
    torch.manual_seed(int(p["seed"]))
    t0 = time.monotonic()
    step = 0
    for epoch, order in enumerate(orders, start=1):
        for i in order:
            task_id, enc = encoded[i]
            ids = torch.tensor([enc["input_ids"]], device=dev)
            labels = torch.tensor([enc["labels"]], device=dev)
            lr_now = opt.param_groups[0]["lr"]
            with torch.autocast(device_type=dev.type, dtype=dtype, enabled=use_amp):
                logits = model(input_ids=ids).logits
            loss, n_pred = causal_lm_loss(logits, labels)
            opt.zero_grad(set_to_none=True)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.unscale_(opt)
            else:
                loss.backward()
            gnorm = torch.nn.utils.clip_grad_norm_(trainable, float(p["max_grad_norm"]))
            if scaler is not None:
                scaler.step(opt)
                scaler.update()
            else:
                opt.step()
            sched.step()
            step += 1
            n_tokens += ids.shape[1]
            rows.append({"adapter": name, "step": step, "epoch": epoch, "task_id": task_id,
                         "loss": float(loss.detach()), "lr": float(lr_now), "tokens": int(ids.shape[1]),
                         "loss_tokens": int(n_pred), "grad_norm": float(gnorm)})
            if progress is not None:
                progress()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    wall = time.monotonic() - t0

    if out.exists():
        for f in ("adapter_model.safetensors", "adapter_model.bin", "adapter_config.json", "alias_training.json"):
            (out / f).unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    tps = n_tokens / wall if wall > 0 else math.inf
    meta = {"params": {k: (list(v) if isinstance(v, tuple) else v) for k, v in p.items()},
            "target_modules": targets, "warmup_steps_used": warmup, "n_steps": step,
            "examples": len(encoded), "skipped": skipped, "device": str(dev),
            "dtype": str(dtype).replace("torch.", ""), "gradient_checkpointing": bool(use_gc),
            "tokens": n_tokens, "wall_s": round(wall, 3), "tokens_per_s": round(tps, 2),
            "base_model": str(mdir), "transformers": transformers.__version__,
            "peft": peft.__version__, "torch": torch.__version__}
    (out / "alias_training.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    log = pd.DataFrame(rows, columns=TRAINING_LOG_COLUMNS)
    return LoraRun(adapter_dir=out, log=log, tokens_per_s=tps, wall_s=wall, n_steps=step, warmup_steps=warmup,
                   target_modules=targets, params=p, device=str(dev), dtype=meta["dtype"], skipped=skipped)
