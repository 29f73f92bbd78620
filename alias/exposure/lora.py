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

    lora_target_modules(model) -> list[str]
    causal_lm_loss(logits, labels) -> (loss, n_predicted)
    train_lora(model_dir, examples, out_dir, settings: alias.config.LoraConfig, *, name=None,
               device=None, progress=None) -> LoraRun
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

from alias.config import LoraConfig
from alias.store.db import columns
from alias.store.models import TrainingStep
from alias.exposure.trainsets import IGNORE_INDEX, epoch_orders, tokenize_example

__all__ = ["LoraRun", "lora_target_modules", "causal_lm_loss", "train_lora", "TRAINING_LOG_COLUMNS"]

#: Columns of the ``training_log`` table (one row per optimizer step).
TRAINING_LOG_COLUMNS = columns(TrainingStep)

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


def _precision(prec: str, device) -> Any:
    import torch

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


def _encode(tokenizer, examples: Sequence[Mapping[str, Any]], max_length: int) -> tuple[list, list[str]]:
    """``(task_id, encoding)`` of every example with a specification token inside
    ``max_length``, and the task ids of the others (their prompt fills the window)."""
    encoded, skipped = [], []
    for ex in examples:
        enc = tokenize_example(tokenizer, ex, max_length=max_length)
        # labels from position 1 on are predicted; a prompt that fills the window leaves none
        if sum(1 for x in enc["labels"][1:] if x != IGNORE_INDEX) == 0:
            skipped.append(ex["task_id"])
            continue
        encoded.append((ex["task_id"], enc))
    if not encoded:
        raise ValueError("no example has a specification token within max_length")
    return encoded, skipped


def _peft_model(mdir: Path, p: LoraConfig, dev, dtype) -> tuple[Any, list[str], bool]:
    """The base model with LoRA adapters on the target modules (adapter weights float32)."""
    import torch
    from peft import LoraConfig as PeftLoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(p.seed)
    model = AutoModelForCausalLM.from_pretrained(mdir, dtype=dtype, local_files_only=True)
    targets = list(p.target_modules) if p.target_modules else lora_target_modules(model)
    use_gc = p.gradient_checkpointing == "on" or (p.gradient_checkpointing == "auto" and dev.type == "cuda")
    if use_gc:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()
    model.config.use_cache = False
    cfg = PeftLoraConfig(r=p.r, lora_alpha=p.alpha, lora_dropout=p.dropout, target_modules=targets, bias="none",
                         task_type="CAUSAL_LM")
    model = get_peft_model(model, cfg)
    model.to(dev)
    model.train()
    for q in model.parameters():  # adapters in float32 whatever the base dtype
        if q.requires_grad:
            q.data = q.data.float()
    return model, targets, use_gc


def _train_steps(model, encoded: list, p: LoraConfig, dev, dtype, name: str,
                 progress: Callable[[], None] | None) -> tuple[list[dict], int, int, float]:
    """The training loop: ``(log rows, warm-up steps, tokens, wall seconds)``."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    trainable = [q for q in model.parameters() if q.requires_grad]
    orders = epoch_orders(len(encoded), p.epochs, seed=p.shuffle_seed)
    total = p.epochs * len(encoded)
    warmup = min(p.warmup_steps, total // 10)
    opt = torch.optim.AdamW(trainable, lr=p.lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=p.weight_decay)
    sched = get_linear_schedule_with_warmup(opt, num_warmup_steps=warmup, num_training_steps=total)
    use_amp = dev.type == "cuda" and dtype != torch.float32
    scaler = torch.amp.GradScaler("cuda") if (use_amp and dtype == torch.float16) else None
    rows: list[dict[str, Any]] = []
    n_tokens, step = 0, 0
    torch.manual_seed(p.seed)
    t0 = time.monotonic()
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
            (scaler.scale(loss) if scaler is not None else loss).backward()
            if scaler is not None:
                scaler.unscale_(opt)
            gnorm = torch.nn.utils.clip_grad_norm_(trainable, p.max_grad_norm)
            if scaler is not None:
                scaler.step(opt)
                scaler.update()
            else:
                opt.step()
            sched.step()
            step += 1
            n_tokens += ids.shape[1]
            rows.append({"adapter": name, "step": step, "epoch": epoch, "task_id": task_id, "loss": float(loss.detach()),
                         "lr": float(lr_now), "tokens": int(ids.shape[1]), "loss_tokens": int(n_pred),
                         "grad_norm": float(gnorm)})
            if progress is not None:
                progress()
    if dev.type == "cuda":
        torch.cuda.synchronize()
    return rows, warmup, n_tokens, time.monotonic() - t0


def train_lora(model_dir: str | Path, examples: Sequence[Mapping[str, Any]], out_dir: str | Path,
               settings: LoraConfig, *, name: str | None = None, device: str | None = None,
               progress: Callable[[], None] | None = None) -> LoraRun:
    """Fine-tune a LoRA adapter on ``examples`` and save it to ``out_dir`` (Appendix E).

    Args:
        model_dir: a local base-model directory (no hub downloads).
        examples: training examples in their shuffled order
            (:func:`alias.exposure.trainsets.build_training_set`).
        out_dir: the adapter directory (created; an existing adapter there is replaced).
        settings: the LoRA settings (``params.yaml`` ``exposure.lora``, checked when read).
        name: the adapter name in the log (default: ``out_dir``'s name).
        device: ``"cpu"``, ``"cuda"``...; default ``cuda`` when available.
        progress: called after every step.

    Returns:
        :class:`LoraRun`; ``log`` has one row per step: ``step`` 1..n, ``epoch`` 1..epochs,
        ``task_id``, ``loss`` (mean over the specification tokens of that example), ``lr``
        (the rate that step used), ``tokens`` (sequence length), ``loss_tokens``,
        ``grad_norm`` (before clipping).

    Raises:
        ValueError: no examples, precision that needs a GPU, no attention projection
            found, or no example with a specification token inside ``max_length``.
        FileNotFoundError: ``model_dir`` is not a local directory.
    """
    import torch
    from transformers import AutoTokenizer

    if not examples:
        raise ValueError("no training examples")
    mdir = Path(model_dir).expanduser()
    if not mdir.is_dir():
        raise FileNotFoundError(f"model_dir {str(model_dir)!r} is not a local directory (no hub downloads here)")
    out = Path(out_dir)
    name = name or out.name
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    dtype = _precision(settings.precision, dev)
    encoded, skipped = _encode(AutoTokenizer.from_pretrained(mdir, local_files_only=True), examples,
                               settings.max_length)
    model, targets, use_gc = _peft_model(mdir, settings, dev, dtype)
    rows, warmup, n_tokens, wall = _train_steps(model, encoded, settings, dev, dtype, name, progress)
    tps = n_tokens / wall if wall > 0 else math.inf
    meta = {"params": settings.as_dict(), "target_modules": targets, "warmup_steps_used": warmup,
            "n_steps": len(rows), "examples": len(encoded), "skipped": skipped, "device": str(dev),
            "dtype": str(dtype).replace("torch.", ""), "gradient_checkpointing": bool(use_gc),
            "versions": _versions()}
    _save_adapter(model, out, meta)
    return LoraRun(adapter_dir=out, log=pd.DataFrame(rows, columns=TRAINING_LOG_COLUMNS), tokens_per_s=tps,
                   wall_s=wall, n_steps=len(rows), warmup_steps=warmup, target_modules=targets,
                   params=settings.as_dict(), device=str(dev), dtype=meta["dtype"], skipped=skipped)


def _versions() -> dict[str, str]:
    import peft
    import torch
    import transformers

    return {"peft": peft.__version__, "torch": torch.__version__, "transformers": transformers.__version__}


def _save_adapter(model, out: Path, meta: dict[str, Any]) -> None:
    """Save the PEFT adapter and ``alias_training.json`` (the settings, what the run did and
    the library versions; no wall times or paths, so the same run writes the same bytes)."""
    if out.exists():
        for f in ("adapter_model.safetensors", "adapter_model.bin", "adapter_config.json", "alias_training.json"):
            (out / f).unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    _sort_target_modules(out / "adapter_config.json")
    (out / "alias_training.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _sort_target_modules(config: Path) -> None:
    """PEFT writes ``target_modules`` from a Python set, in an order that changes with the
    interpreter's string hashing (``PYTHONHASHSEED``): sort it so that the same adapter is
    the same bytes. PEFT reads the list back as a set, so nothing else changes."""
    if not config.is_file():
        return
    data = json.loads(config.read_text(encoding="utf-8"))
    if isinstance(data.get("target_modules"), list):
        data["target_modules"] = sorted(data["target_modules"])
        config.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
