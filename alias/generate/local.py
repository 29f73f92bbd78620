"""Local generation with Hugging Face Transformers (Experiment 2 and Appendix F).

The fine-tuned models write five samples per task and condition "with temperature 0.7,
top-p 0.95 and at most 1,024 new tokens per sample" (Methods, Experiment 2), and
"generation stops at the closing line of the module" (Appendix F). This module does
that for a model directory on disk, with an optional LoRA adapter (PEFT).

Public API::

    generate_local(model_dir, requests, *, temperature=0.7, top_p=0.95,
                   max_new_tokens=1024, batch_size=8, stop_at_module_end=True,
                   adapter_dir=None, seed=0, device=None, dtype=None,
                   prompt_separator="\\n") -> list[LocalResult]
    load_model(model_dir, *, adapter_dir=None, device=None, dtype=None) -> (model, tokenizer)
    sample_seed(seed, task_id, condition, model, sample_idx) -> int
    StopTracker                  # the stopping criterion (EOS, closing line, token limit)
    closing_line_reached(text, prefix='')  # does ``text`` close a module?

Requests are ``types.SampleRequest`` objects or mappings with the same keys
(``task_id``, ``condition``, ``model``, ``sample_idx``, ``prompt``; optional
``max_tokens``, ``temperature``, ``top_p``, ``prompt_version``). A request's own
``temperature``/``top_p``/``max_tokens``, when not ``None``, override the keyword
defaults for that sample.

Decisions, each recorded in ``LocalResult.settings``:

* **Only the settings given here apply.** A model's ``generation_config.json`` may
  carry sampling defaults (Qwen2.5-Coder-Instruct ships ``top_k=20``,
  ``repetition_penalty``...) that ``generate`` would otherwise fill in silently; the
  loaded model's generation config is replaced by one holding only its special-token
  ids, so sampling is exactly temperature + top-p.
* **Per-sample random streams.** Sampling is done by a logits processor that draws one
  uniform number per step from a ``torch.Generator`` of its own sample, seeded with
  ``sample_seed(seed, task_id, condition, model, sample_idx)`` (SHA-256 of the key).
  The draw for a sample therefore does not depend on which other samples share its
  batch, on the batch size, or on the order of the requests; samples of one prompt
  with different ``sample_idx`` use different streams. (Logits themselves can still
  differ in the last bits between batch compositions, devices and dtypes; the same
  requests with the same ``batch_size``, device and dtype give the same texts.)
  ``temperature <= 0`` means greedy decoding.
* **Top-p**: the smallest set of most likely tokens whose probability reaches
  ``top_p`` (the most likely token is always kept), renormalized.
* **Prompt**: each prompt is followed by ``prompt_separator`` (default ``"\\n"``: the
  fine-tuning prompt of Appendix E ends with ``TLA+ Specification:`` and training joins
  it to the specification with one newline, see ``prompts``), tokenized with the
  tokenizer's special tokens (BOS where the model has one), and left-padded.
* **Stopping** (first that applies, per sample): an EOS token of the model (all ids of
  its ``generation_config.eos_token_id``); with ``stop_at_module_end``, the end of the
  closing line of the first module that closes in the generated text (a line of 4+
  ``=`` that brings the depth of ``---- MODULE ... ----`` headers back to 0, nested
  modules counted, lines matched the way ``alias.tla.extract`` matches them, the
  prompt's lines setting the starting depth, and complete once its newline is
  generated); the sample's token limit. ``output_tokens`` counts the generated tokens including
  the stop token; ``hit_token_limit`` is true when the limit was reached without an
  EOS or closing line.
* **Device**: ``cuda`` when available (bfloat16 where supported, else float16),
  otherwise CPU in float32.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

__all__ = [
    "LocalResult",
    "generate_local",
    "load_model",
    "sample_seed",
    "StopTracker",
    "TopPSampler",
    "closing_line_reached",
    "STOP_EOS",
    "STOP_CLOSING_LINE",
    "STOP_TOKEN_LIMIT",
]

STOP_EOS = "eos"
STOP_CLOSING_LINE = "closing_line"
STOP_TOKEN_LIMIT = "max_new_tokens"

# Same shapes as alias.tla.extract: a header line and a closing line.
_HEADER = re.compile(r"^\s*-{4,}\s*MODULE(?:\s+(.*?))?\s*-{4,}\s*$")
_CLOSING = re.compile(r"^\s*={4,}\s*$")


def closing_line_reached(text: str, prefix: str = "") -> bool:
    """True when ``text`` closes a module: a line of 4+ ``=`` (followed by a newline)
    that brings the module nesting depth back to 0, counting the ``---- MODULE ... ----``
    headers and closing lines of ``prefix + text``. Lines that are complete within
    ``prefix`` (the prompt) only set the starting depth, so a prompt that opens a module
    lets the generated text close it, and a module closed inside the prompt does not
    count. Only complete lines (followed by ``\n``) count."""
    return _ModuleScanner(prefix).feed(text)


class _ModuleScanner:
    """Incremental form of ``closing_line_reached`` over a growing generated text."""

    __slots__ = ("prefix", "lines_done", "depth")

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self.lines_done = 0
        self.depth = 0
        self._scan(prefix, count_close=False)

    def _scan(self, full: str, count_close: bool) -> bool:
        lines = full.split("\n")[:-1]  # the last part has no newline yet
        for line in lines[self.lines_done:]:
            self.lines_done += 1
            if _HEADER.match(line):
                self.depth += 1
            elif self.depth > 0 and _CLOSING.match(line):
                self.depth -= 1
                if self.depth == 0 and count_close:
                    return True
        return False

    def feed(self, text: str) -> bool:
        """``text``: the whole generated text so far (not just the new part)."""
        return self._scan(self.prefix + text, count_close=True)


def sample_seed(seed: int, task_id: str, condition: str, model: str, sample_idx: int) -> int:
    """The seed of one sample's random stream: the first 63 bits of the SHA-256 of the
    canonical JSON ``[seed, task_id, condition, model, sample_idx]``."""
    canon = json.dumps([int(seed), task_id, condition, model, int(sample_idx)],
                       ensure_ascii=False, separators=(",", ":"))
    return int(hashlib.sha256(canon.encode("utf-8")).hexdigest()[:16], 16) & ((1 << 63) - 1)


@dataclass
class LocalResult:
    """One generated sample.

    Attributes:
        task_id, condition, model, sample_idx: the sample key (``model`` as requested).
        text: the decoded generated text (special tokens removed; prompt not included).
        output_tokens: generated tokens, the stop token included.
        input_tokens: prompt tokens (special tokens included, padding not).
        hit_token_limit: the sample reached its token limit without EOS or closing line.
        stopped_at_closing_line: generation stopped at the module's closing line.
        stop_reason: ``"eos"``, ``"closing_line"`` or ``"max_new_tokens"``.
        model_path: the resolved model directory; model_name: its ``_name_or_path``
            or, failing that, the directory name.
        adapter_dir: the resolved LoRA adapter directory or ``None``.
        settings: everything that shaped the sample (sampling, seeds, limits, device,
            dtype, batch size, prompt handling, EOS ids, transformers/peft versions).
        prompt_version: as given in the request.
        wall_s: wall time of the batch the sample was generated in.
    """

    task_id: str
    condition: str
    model: str
    sample_idx: int
    text: str
    output_tokens: int
    input_tokens: int
    hit_token_limit: bool
    stopped_at_closing_line: bool
    stop_reason: str
    model_path: str
    model_name: str
    adapter_dir: str | None
    settings: dict[str, Any] = field(default_factory=dict)
    prompt_version: str | None = None
    wall_s: float | None = None

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.task_id, self.condition, self.model, self.sample_idx)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ----------------------------------------------------------------------------------
# generation pieces


def _torch():
    import torch

    return torch


class TopPSampler:
    """A ``LogitsProcessor`` that samples one token per row itself (temperature, then
    top-p) from the row's own generator and returns scores that are ``-inf`` except at
    the chosen token, so that greedy selection in ``generate`` takes exactly that token.

    ``temperatures``/``top_ps``: one value per row; ``generators``: one CPU
    ``torch.Generator`` per row. A row with temperature ``<= 0`` takes the argmax.
    """

    def __init__(self, temperatures: Sequence[float], top_ps: Sequence[float], generators: Sequence[Any]):
        if not (len(temperatures) == len(top_ps) == len(generators)):
            raise ValueError("one temperature, top_p and generator per row")
        for p in top_ps:
            if not 0.0 < float(p) <= 1.0:
                raise ValueError(f"top_p must be in (0, 1], got {p}")
        self.temperatures = [float(t) for t in temperatures]
        self.top_ps = [float(p) for p in top_ps]
        self.generators = list(generators)

    def __call__(self, input_ids, scores):
        torch = _torch()
        n = scores.shape[0]
        if n != len(self.generators):
            raise ValueError(f"sampler set up for {len(self.generators)} rows, got {n}")
        logits = scores.float()
        # one uniform per row per step, from the row's own stream (also for greedy rows,
        # so that a row's stream never depends on its neighbours)
        u = torch.stack([torch.rand((), generator=g, dtype=torch.float64) for g in self.generators])
        u = u.to(device=logits.device, dtype=torch.float32)
        temps = torch.tensor(self.temperatures, device=logits.device, dtype=torch.float32)
        top_ps = torch.tensor(self.top_ps, device=logits.device, dtype=torch.float32)
        greedy = temps <= 0
        safe_t = torch.where(greedy, torch.ones_like(temps), temps)
        probs = torch.softmax(logits / safe_t[:, None], dim=-1)
        sorted_p, sorted_idx = torch.sort(probs, dim=-1, descending=True)
        before = torch.cumsum(sorted_p, dim=-1) - sorted_p  # mass strictly above each token
        keep = before < top_ps[:, None]
        keep[:, 0] = True
        kept = torch.where(keep, sorted_p, torch.zeros_like(sorted_p))
        cdf = torch.cumsum(kept, dim=-1)
        target = (u * cdf[:, -1])[:, None]
        pos = torch.searchsorted(cdf, target, right=True).clamp_(max=cdf.shape[-1] - 1)
        # never land on a token outside the kept set (u*total == total edge)
        n_kept = keep.sum(dim=-1, keepdim=True)
        pos = torch.minimum(pos, n_kept - 1)
        chosen = sorted_idx.gather(-1, pos).squeeze(-1)
        chosen = torch.where(greedy, torch.argmax(logits, dim=-1), chosen)
        out = torch.full_like(scores, float("-inf"))
        out.scatter_(-1, chosen[:, None], 0.0)
        return out


class StopTracker:
    """A ``StoppingCriteria`` that ends each row on its own and records why.

    Args:
        tokenizer: decodes the generated tokens (for the closing line).
        prompt_len: length of the (padded) prompt part of ``input_ids``.
        limits: the token limit of each row.
        eos_ids: token ids that end a sample.
        stop_at_module_end: stop a row at the closing line of its first top-level module.
        prompts: each row's prompt text; its complete lines set the starting module
            depth (see ``closing_line_reached``). ``None``: no prompt context.

    After generation, ``reasons[i]`` is ``"eos"``, ``"closing_line"``,
    ``"max_new_tokens"`` or ``None`` (still running), and ``lengths[i]`` the number of
    generated tokens of row ``i`` up to and including the token that stopped it.
    """

    def __init__(self, tokenizer, prompt_len: int, limits: Sequence[int], eos_ids: Sequence[int],
                 stop_at_module_end: bool = True, prompts: Sequence[str] | None = None):
        self.tokenizer = tokenizer
        self.prompt_len = int(prompt_len)
        self.limits = [int(x) for x in limits]
        self.eos_ids = {int(x) for x in eos_ids}
        self.stop_at_module_end = stop_at_module_end
        n = len(self.limits)
        self.reasons: list[str | None] = [None] * n
        self.lengths = [0] * n
        if prompts is not None and len(prompts) != n:
            raise ValueError("one prompt per row")
        self._scanners = [_ModuleScanner(prompts[i] if prompts is not None else "") for i in range(n)]

    @property
    def done(self) -> list[bool]:
        return [r is not None for r in self.reasons]

    def __call__(self, input_ids, scores=None, **kwargs):
        torch = _torch()
        gen = input_ids[:, self.prompt_len:]
        n_gen = gen.shape[1]
        if n_gen > 0:
            last = gen[:, -1].tolist()
            for i, tok in enumerate(last):
                if self.reasons[i] is not None:
                    continue
                reason = None
                if tok in self.eos_ids:
                    reason = STOP_EOS
                elif self.stop_at_module_end and "\n" in self.tokenizer.decode([tok]):
                    text = self.tokenizer.decode(gen[i].tolist(), skip_special_tokens=True)
                    if self._scanners[i].feed(text):
                        reason = STOP_CLOSING_LINE
                if reason is None and n_gen >= self.limits[i]:
                    reason = STOP_TOKEN_LIMIT
                if reason is not None:
                    self.reasons[i] = reason
                    self.lengths[i] = n_gen
        return torch.tensor(self.done, dtype=torch.bool, device=input_ids.device)


# ----------------------------------------------------------------------------------
# loading


def _pick_device(device: str | None) -> str:
    if device:
        return str(device)
    torch = _torch()
    return "cuda" if torch.cuda.is_available() else "cpu"


def _pick_dtype(device: str, dtype: Any):
    torch = _torch()
    if dtype is not None and not isinstance(dtype, str):
        return dtype
    if isinstance(dtype, str) and dtype != "auto":
        return getattr(torch, dtype)
    if device.startswith("cuda"):
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32


def _local_dir(path: str | os.PathLike[str], what: str) -> Path:
    p = Path(path).expanduser()
    if not p.is_dir():
        raise FileNotFoundError(f"{what} {str(path)!r} is not a local directory (no hub downloads here)")
    return p.resolve()


def load_model(model_dir: str | os.PathLike[str], *, adapter_dir: str | os.PathLike[str] | None = None,
               device: str | None = None, dtype: Any = None):
    """Load a causal LM and its tokenizer from local directories, for inference.

    ``adapter_dir``: a PEFT LoRA adapter (``PeftModel.from_pretrained``), not merged.
    The tokenizer pads on the left (its pad token is its EOS token when it has none).
    The model's generation config is reduced to its special-token ids (module docstring).
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    mdir = _local_dir(model_dir, "model_dir")
    dev = _pick_device(device)
    dt = _pick_dtype(dev, dtype)
    tokenizer = AutoTokenizer.from_pretrained(mdir, local_files_only=True)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(mdir, dtype=dt, local_files_only=True)
    gc = model.generation_config
    eos = gc.eos_token_id if gc.eos_token_id is not None else tokenizer.eos_token_id
    pad = gc.pad_token_id if gc.pad_token_id is not None else tokenizer.pad_token_id
    model.generation_config = GenerationConfig(
        bos_token_id=gc.bos_token_id if gc.bos_token_id is not None else tokenizer.bos_token_id,
        eos_token_id=eos,
        pad_token_id=pad,
    )
    if adapter_dir is not None:
        from peft import PeftModel

        adir = _local_dir(adapter_dir, "adapter_dir")
        model = PeftModel.from_pretrained(model, str(adir), is_trainable=False)
    model.to(dev)
    model.eval()
    return model, tokenizer


# ----------------------------------------------------------------------------------
# generation


_REQ_FIELDS = ("task_id", "condition", "model", "sample_idx", "prompt")


def _req_get(req: Any, name: str, default: Any = None) -> Any:
    if isinstance(req, Mapping):
        return req.get(name, default)
    return getattr(req, name, default)


def _eos_ids(model, tokenizer) -> list[int]:
    eos = model.generation_config.eos_token_id
    if eos is None:
        eos = tokenizer.eos_token_id
    if eos is None:
        return []
    return [int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos])]


def generate_local(
    model_dir: str | os.PathLike[str],
    requests: Sequence[Any],
    *,
    temperature: float = 0.7,
    top_p: float = 0.95,
    max_new_tokens: int = 1024,
    batch_size: int = 8,
    stop_at_module_end: bool = True,
    adapter_dir: str | os.PathLike[str] | None = None,
    seed: int = 0,
    device: str | None = None,
    dtype: Any = None,
    prompt_separator: str = "\n",
    add_special_tokens: bool = True,
    model_and_tokenizer: tuple[Any, Any] | None = None,
) -> list[LocalResult]:
    """Generate one sample per request with a local model; results in request order.

    See the module docstring for the sampling, seeding, stopping and device rules.
    ``model_and_tokenizer``: an already loaded pair from ``load_model`` (saves reloading
    across calls; ``model_dir``/``adapter_dir`` are then only recorded).

    Raises ``ValueError`` on a malformed request or duplicate sample key, and
    ``FileNotFoundError`` when ``model_dir``/``adapter_dir`` is not a local directory.
    """
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    reqs = _checked_requests(requests, temperature, top_p, max_new_tokens, seed)
    if not reqs:
        return []
    if model_and_tokenizer is None:
        model_and_tokenizer = load_model(model_dir, adapter_dir=adapter_dir, device=device, dtype=dtype)
        _local_dir(model_dir, "model_dir")
    model, tokenizer = model_and_tokenizer
    run = _Run(model, tokenizer, stop_at_module_end, prompt_separator, add_special_tokens, batch_size, seed,
               Path(model_dir).as_posix(), Path(adapter_dir).as_posix() if adapter_dir is not None else None)
    texts = [r["prompt"] + prompt_separator for r in reqs]
    enc_lens = [len(tokenizer(t, add_special_tokens=add_special_tokens)["input_ids"]) for t in texts]
    # Long prompts with long limits first (least padding; deterministic given the list).
    order = sorted(range(len(reqs)), key=lambda i: (-reqs[i]["max_new_tokens"], -enc_lens[i], i))
    results: list[LocalResult | None] = [None] * len(reqs)
    for b0 in range(0, len(order), batch_size):
        idx = order[b0:b0 + batch_size]
        for i, res in zip(idx, run.batch([reqs[i] for i in idx], [texts[i] for i in idx])):
            results[i] = res
    return [r for r in results if r is not None]


def _checked_requests(requests: Sequence[Any], temperature: float, top_p: float, max_new_tokens: int,
                      seed: int) -> list[dict[str, Any]]:
    """The requests as dicts with their sampling settings and per-sample seed; raises
    ``ValueError`` on a malformed request or a duplicate sample key."""
    reqs, seen = [], set()
    for i, r in enumerate(requests):
        vals = {k: _req_get(r, k) for k in _REQ_FIELDS}
        for k in ("task_id", "condition", "model", "prompt"):
            if not isinstance(vals[k], str) or (k != "prompt" and not vals[k]):
                raise ValueError(f"request {i}: {k} must be a non-empty string")
        si = vals["sample_idx"]
        if not isinstance(si, int) or isinstance(si, bool) or si < 0:
            raise ValueError(f"request {i}: sample_idx must be a non-negative int, got {si!r}")
        key = (vals["task_id"], vals["condition"], vals["model"], si)
        if key in seen:
            raise ValueError(f"request {i}: duplicate sample key {key}")
        seen.add(key)
        t, p, m = _req_get(r, "temperature"), _req_get(r, "top_p"), _req_get(r, "max_tokens")
        vals["temperature"] = float(temperature if t is None else t)
        vals["top_p"] = float(top_p if p is None else p)
        vals["max_new_tokens"] = int(max_new_tokens if m is None else m)
        if vals["max_new_tokens"] < 1:
            raise ValueError(f"request {i}: max_new_tokens must be >= 1")
        if not 0.0 < vals["top_p"] <= 1.0:
            raise ValueError(f"request {i}: top_p must be in (0, 1]")
        vals["prompt_version"] = _req_get(r, "prompt_version")
        vals["seed"] = sample_seed(seed, *key)
        reqs.append(vals)
    return reqs


class _Run:
    """One ``generate_local`` call's model, tokenizer and fixed settings; :meth:`batch`
    generates one padded batch."""

    def __init__(self, model, tokenizer, stop_at_module_end: bool, prompt_separator: str, add_special_tokens: bool,
                 batch_size: int, seed: int, model_path: str, adapter_path: str | None):
        import peft
        import transformers

        torch = _torch()
        self.model, self.tokenizer = model, tokenizer
        self.dev = next(model.parameters()).device
        self.eos_ids = _eos_ids(model, tokenizer)
        if tokenizer.pad_token_id is None:  # a tokenizer passed in without load_model
            tokenizer.pad_token = tokenizer.eos_token
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (
            self.eos_ids[0] if self.eos_ids else 0)
        name = getattr(getattr(model, "config", None), "_name_or_path", None) or model_path
        self.model_name = Path(str(name)).name if Path(str(name)).is_absolute() else str(name)
        self.model_path, self.adapter_path = model_path, adapter_path
        self.stop, self.add_special = stop_at_module_end, add_special_tokens
        self.base_settings = {
            "seed": int(seed), "sampler": "alias.generate.local.TopPSampler/v1",
            "stop_at_module_end": bool(stop_at_module_end), "eos_token_ids": self.eos_ids,
            "prompt_separator": prompt_separator, "add_special_tokens": bool(add_special_tokens),
            "batch_size": int(batch_size), "device": str(self.dev),
            "dtype": str(next(model.parameters()).dtype).replace("torch.", ""),
            "transformers": transformers.__version__, "torch": torch.__version__,
            "peft": peft.__version__ if adapter_path else None}

    def batch(self, reqs: list[dict], texts: list[str]) -> list[LocalResult]:
        from transformers import GenerationConfig, LogitsProcessorList, StoppingCriteriaList

        torch = _torch()
        t0 = time.monotonic()
        enc = self.tokenizer(texts, return_tensors="pt", padding=True, padding_side="left",
                             add_special_tokens=self.add_special)
        prompt_len = enc["input_ids"].shape[1]
        limits = [r["max_new_tokens"] for r in reqs]
        sampler = TopPSampler([r["temperature"] for r in reqs], [r["top_p"] for r in reqs],
                              [torch.Generator(device="cpu").manual_seed(r["seed"]) for r in reqs])
        tracker = StopTracker(self.tokenizer, prompt_len, limits, self.eos_ids, self.stop, prompts=texts)
        gcfg = GenerationConfig(max_new_tokens=max(limits), do_sample=False, num_beams=1, pad_token_id=self.pad_id,
                                eos_token_id=self.eos_ids or None, bos_token_id=self.model.generation_config.bos_token_id)
        with torch.inference_mode():
            out = self.model.generate(input_ids=enc["input_ids"].to(self.dev),
                                      attention_mask=enc["attention_mask"].to(self.dev), generation_config=gcfg,
                                      logits_processor=LogitsProcessorList([sampler]),
                                      stopping_criteria=StoppingCriteriaList([tracker]))
        wall = round(time.monotonic() - t0, 3)
        gen = out[:, prompt_len:].tolist()
        return [self._result(r, row, gen[row], tracker, enc, wall) for row, r in enumerate(reqs)]

    def _result(self, r: dict, row: int, gen: list[int], tracker: "StopTracker", enc, wall: float) -> LocalResult:
        reason, n = tracker.reasons[row], tracker.lengths[row]
        if reason is None:  # generate ended without our criterion firing (should not happen)
            n = len(gen)
            reason = STOP_TOKEN_LIMIT if n >= r["max_new_tokens"] else STOP_EOS
        settings = {"temperature": r["temperature"], "top_p": r["top_p"], "max_new_tokens": r["max_new_tokens"],
                    "sample_seed": r["seed"]} | self.base_settings
        return LocalResult(
            task_id=r["task_id"], condition=r["condition"], model=r["model"], sample_idx=r["sample_idx"],
            text=self.tokenizer.decode(gen[:n], skip_special_tokens=True), output_tokens=n,
            input_tokens=int(enc["attention_mask"][row].sum()), hit_token_limit=(reason == STOP_TOKEN_LIMIT),
            stopped_at_closing_line=(reason == STOP_CLOSING_LINE), stop_reason=reason, model_path=self.model_path,
            model_name=self.model_name, adapter_dir=self.adapter_path, settings=settings,
            prompt_version=r["prompt_version"], wall_s=wall)
