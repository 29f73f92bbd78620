"""A tiny causal language model built locally, for tests of the local backend.

Nothing here touches the Hugging Face hub: the tokenizer is trained from the given
texts with the ``tokenizers`` library and the model is a freshly initialized
two-layer Llama (``transformers.LlamaForCausalLM``), optionally trained a few steps
on the same texts so that its outputs are not pure noise. Llama names its attention
projections ``q_proj``/``k_proj``/``v_proj``/``o_proj``, the modules the paper's LoRA
adapters target (Appendix E), so the same LoRA code runs on the tiny model.

Public API::

    build_tiny_model(texts, out_dir, *, seed=0, vocab_size=2000, hidden=64, layers=2,
                     heads=2, train_steps=60, seq_len=128, lr=3e-3) -> Path
    embedded_texts() -> list[str]     # the embedded corpus as fine-tuning texts

The directory holds ``config.json``, ``generation_config.json``, the weights and the
tokenizer files; load it with ``AutoModelForCausalLM.from_pretrained(out_dir)`` and
``AutoTokenizer.from_pretrained(out_dir)`` (or ``alias.generate.local.load_model``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterable
from alias.corpus.ingest import EMBEDDED_CORPUS, render_description

__all__ = ["build_tiny_model", "train_tokenizer", "embedded_texts", "BOS", "EOS", "PAD"]

BOS, EOS, PAD = "<s>", "</s>", "<pad>"
_SPECIALS = [PAD, BOS, EOS]  # ids 0, 1, 2


def train_tokenizer(texts: Iterable[str], *, vocab_size: int = 2000):
    """A byte-level BPE tokenizer trained on ``texts``, wrapped as a
    ``transformers.PreTrainedTokenizerFast`` with ``<pad>``=0, ``<s>``=1, ``</s>``=2.

    Encoding adds ``<s>`` in front (like Llama); padding is on the left. The vocabulary
    may be smaller than ``vocab_size`` when the texts offer fewer merges.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(_SPECIALS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(list(texts), trainer=trainer)
    bos_id = tok.token_to_id(BOS)
    tok.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", pair=f"{BOS} $A {BOS} $B", special_tokens=[(BOS, bos_id)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token=BOS, eos_token=EOS, pad_token=PAD,
        padding_side="left", model_max_length=4096,
    )


def embedded_texts() -> list[str]:
    """Fine-tuning texts from the embedded corpus: every ``.tla`` module, and every
    description rendered as in ingest, each on its own (no pairing is needed here)."""

    root = Path(EMBEDDED_CORPUS)
    texts = [p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.tla"))]
    desc = root / "descriptions.json"
    if desc.exists():
        for rec in json.loads(desc.read_text(encoding="utf-8")):
            fields = rec.get("description") if isinstance(rec, dict) else None
            if isinstance(fields, dict):
                texts.append(render_description(fields))
    return texts


def _training_chunks(ids: list[list[int]], seq_len: int, eos_id: int) -> list[list[int]]:
    stream: list[int] = []
    for seq in ids:
        stream.extend(seq + [eos_id])
    return [stream[i : i + seq_len] for i in range(0, max(len(stream) - seq_len, 1), seq_len // 2)]


def _train(model, tokenizer, texts: list[str], *, seed: int, train_steps: int, seq_len: int,
           batch_size: int, lr: float) -> None:
    """``train_steps`` AdamW steps of next-token prediction on ``seq_len`` windows of the
    concatenated ``texts``, batches drawn with a generator seeded by ``seed``, one thread."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    ids = [tokenizer(t, add_special_tokens=True)["input_ids"] for t in texts]
    chunks = [c for c in _training_chunks(ids, seq_len, tokenizer.eos_token_id) if len(c) == seq_len]
    if not chunks:  # very short texts: one padded-free window of what there is
        chunks = _training_chunks(ids, seq_len, tokenizer.eos_token_id)[:1]
    data = torch.tensor(chunks, dtype=torch.long)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: one thread is faster than contended ones
    try:
        for _ in range(train_steps):
            idx = torch.randint(len(data), (min(batch_size, len(data)),), generator=gen)
            batch = data[idx]
            loss = model(input_ids=batch, labels=batch).loss
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
    finally:
        torch.set_num_threads(threads)
    model.eval()


def build_tiny_model(
    texts: Iterable[str],
    out_dir: str | os.PathLike[str],
    *,
    seed: int = 0,
    vocab_size: int = 2000,
    hidden: int = 64,
    layers: int = 2,
    heads: int = 2,
    train_steps: int = 60,
    seq_len: int = 128,
    batch_size: int = 4,
    lr: float = 3e-3,
) -> Path:
    """Build a tiny Llama and its tokenizer from ``texts`` and save both to ``out_dir``.

    The tokenizer is byte-level BPE (``train_tokenizer``); the model has ``layers``
    decoder layers of width ``hidden`` with ``heads`` attention heads (q/k/v/o
    projections named as in Llama), tied embeddings, and weights drawn with
    ``torch.manual_seed(seed)``. ``train_steps`` AdamW steps of next-token prediction on
    windows of the concatenated texts follow (0 keeps the random weights); on 2 CPU cores
    the default takes a few seconds. Same texts and arguments give the same files.

    Returns ``out_dir`` as a ``Path``.
    """
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    texts = [t for t in texts if t]
    if not texts:
        raise ValueError("build_tiny_model needs at least one non-empty text")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)

    tokenizer = train_tokenizer(texts, vocab_size=vocab_size)
    cfg = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=4096,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg)

    if train_steps > 0:
        _train(model, tokenizer, texts, seed=seed, train_steps=train_steps, seq_len=seq_len,
               batch_size=batch_size, lr=lr)

    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
