"""alias.exposure (Experiment 2, Appendices E, O, T): split, training sets, loss mask,
identifier-token mapping, LoRA on a tiny local Llama, reference log-likelihood. CPU only,
no hub."""
from __future__ import annotations

import dataclasses
import json
import random

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("peft")

from alias.exposure.effects import loglik_effects, seen_unseen_cells  # noqa: E402
from alias.exposure.lora import (  # noqa: E402
    TRAINING_LOG_COLUMNS,
    causal_lm_loss,
    lora_target_modules,
    train_lora,
)
from alias.exposure.loglik import (  # noqa: E402
    LOGLIK_COLUMNS,
    aligned_identifier_spans,
    identifier_spans,
    reference_loglik,
    score_reference,
    token_mask,
)
from alias.exposure.split import SPLIT_SEED, other_half, split_halves  # noqa: E402
from alias.exposure.trainsets import (  # noqa: E402
    IGNORE_INDEX,
    build_training_set,
    epoch_orders,
    tokenize_example,
)
from alias.generate.local import load_model  # noqa: E402
from alias.generate.prompts import build_prompt  # noqa: E402
from alias.generate.tiny import build_tiny_model, embedded_texts, train_tokenizer  # noqa: E402
from alias.config import ConfigError  # noqa: E402
from conftest import embedded_config, folders_under  # noqa: E402

SPEC = """---- MODULE Counter ----
EXTENDS Naturals
CONSTANT MaxValue
VARIABLE count
\\* count never exceeds MaxValue
Init == count = 0
Step == count < MaxValue /\\ count' = count + 1
Spec == Init /\\ [][Step]_count /\\ WF_count(Step)
Label == "count"
====
"""
DESC = "A counter that counts from zero up to a bound and then stops."


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return build_tiny_model(embedded_texts() + [SPEC, DESC], tmp_path_factory.mktemp("tiny"), train_steps=0,
                            hidden=32)


@pytest.fixture(scope="module")
def tok(tiny_dir):
    return load_model(tiny_dir, device="cpu")[1]


# ------------------------------------------------------------------------- split
def test_split_sizes_rule_and_determinism():
    ids = [f"task{i:03d}" for i in range(111)]
    s = split_halves(ids)
    assert list(s.columns) == ["task_id", "half"] and len(s) == 111
    assert (s.half == "A").sum() == 55 and (s.half == "B").sum() == 56  # the paper's sizes
    assert list(s.task_id) == sorted(ids)
    # the documented rule, recomputed
    perm = np.random.default_rng(SPLIT_SEED).permutation(111)
    assert set(s.loc[s.half == "A", "task_id"]) == {ids[i] for i in perm[:55]}
    # input order does not matter; the seed does
    shuffled = ids[:]
    random.Random(1).shuffle(shuffled)
    pd.testing.assert_frame_equal(split_halves(shuffled), s)
    assert not split_halves(ids, seed=1).equals(s)
    assert [(split_halves(ids[:n]).half == "A").sum() for n in (2, 6, 7)] == [1, 3, 3]
    assert other_half("A") == "B" and other_half("B") == "A"
    with pytest.raises(ValueError, match="duplicate"):
        split_halves(["a", "b", "a"])
    with pytest.raises(ValueError, match="at least two"):
        split_halves(["a"])


# --------------------------------------------------------------------- trainsets
def _records():
    recs = [{"task_id": f"shared{i}", "description": f"shared system {i}", "reference": f"---- MODULE S{i} ----\n===="}
            for i in range(4)]
    recs += [{"task_id": f"test{i}", "description": f"test system {i}", "reference": f"---- MODULE T{i} ----\n===="}
             for i in range(7)]
    return recs


def test_training_sets_halves_arms_and_epochs():
    recs = _records()
    split = split_halves([r["task_id"] for r in recs if r["task_id"].startswith("test")])
    by_id = {r["task_id"]: r for r in recs}
    for arm in ("task_pair", "spec_only"):
        for half in ("A", "B"):
            ex = build_training_set(recs, split, half, arm, seed=0)
            mine = set(split.loc[split.half == half, "task_id"])
            assert len(ex) == 4 + len(mine)
            assert {e["task_id"] for e in ex} == {f"shared{i}" for i in range(4)} | mine
            for e in ex:
                assert e["completion"] == by_id[e["task_id"]]["reference"]
                if e["source"] == "shared" or arm == "task_pair":
                    assert e["format"] == "pair"
                    assert e["prompt"] == build_prompt("finetuned", by_id[e["task_id"]]["description"]) + "\n"
                else:  # spec-only: the raw file, no description, no prompt
                    assert e["format"] == "spec_only" and e["prompt"] == ""
            # fixed seed: same order; the order is shuffled (not the sorted order)
            assert build_training_set(recs, split, half, arm, seed=0) == ex
            # each test task of the half appears exactly once per epoch
            orders = epoch_orders(len(ex), 3, seed=0)
            for order in orders:
                seen = [ex[i]["task_id"] for i in order]
                assert sorted(seen) == sorted(e["task_id"] for e in ex)
                assert all(seen.count(t) == 1 for t in mine)
            assert len({tuple(o) for o in orders}) > 1  # reshuffled between epochs
    with pytest.raises(ValueError, match="no record"):
        build_training_set(recs[:5], split, "A", "task_pair")
    with pytest.raises(ValueError, match="arm"):
        build_training_set(recs, split, "A", "both")


def test_tasks_without_a_description_have_no_pair():
    """Real corpus: 10 test-set tasks have neither a TLA+-Bench description nor module
    comments. A shared one is skipped (in both arms: the shared set is pairs); a split
    task without one cannot be a task-pair example (the stage leaves them out of the split)."""
    recs = _records()
    recs[0] = recs[0] | {"description": ""}      # shared0: no description
    split = split_halves([r["task_id"] for r in recs if r["task_id"].startswith("test")])
    for arm in ("task_pair", "spec_only"):
        ex = build_training_set(recs, split, "A", arm, seed=0)
        assert "shared0" not in {e["task_id"] for e in ex}
        assert len(ex) == 3 + int((split.half == "A").sum())
    a_task = split.loc[split.half == "A", "task_id"].iloc[0]
    recs2 = [r | {"description": "  "} if r["task_id"] == a_task else r for r in _records()]
    with pytest.raises(ValueError, match="no description"):
        build_training_set(recs2, split, "A", "task_pair")
    assert a_task in {e["task_id"] for e in build_training_set(recs2, split, "A", "spec_only")}


# --------------------------------------------------------------------- loss mask
def test_labels_mask_exactly_the_prompt(tok):
    ex = {"task_id": "t", "prompt": build_prompt("finetuned", DESC) + "\n", "completion": SPEC}
    enc = tokenize_example(tok, ex, max_length=2048)
    n_prompt = len(tok(ex["prompt"])["input_ids"])
    spec_ids = tok(SPEC, add_special_tokens=False)["input_ids"]
    assert enc["n_prompt"] == n_prompt
    assert enc["labels"][:n_prompt] == [IGNORE_INDEX] * n_prompt
    assert enc["labels"][n_prompt:] == spec_ids + [tok.eos_token_id]
    assert enc["input_ids"] == tok(ex["prompt"])["input_ids"] + spec_ids + [tok.eos_token_id]
    assert enc["n_loss_tokens"] == len(spec_ids) + 1 and not enc["truncated"]
    short = tokenize_example(tok, ex, max_length=n_prompt + 5)
    assert len(short["input_ids"]) == n_prompt + 5 and short["truncated"] and short["n_loss_tokens"] == 5
    only = tokenize_example(tok, {"task_id": "t", "prompt": "", "completion": SPEC})
    assert only["labels"][only["n_prompt"]:] == spec_ids + [tok.eos_token_id] and only["n_prompt"] == 1  # BOS


def test_description_positions_contribute_nothing_to_the_loss(tiny_dir, tok):
    model, _ = load_model(tiny_dir, device="cpu")
    ex = {"task_id": "t", "prompt": build_prompt("finetuned", DESC) + "\n", "completion": SPEC}
    enc = tokenize_example(tok, ex)
    ids = torch.tensor([enc["input_ids"]])
    labels = torch.tensor([enc["labels"]])
    n_prompt = enc["n_prompt"]
    with torch.no_grad():
        logits = model(input_ids=ids).logits
    logits = logits.clone().requires_grad_(True)
    loss_t, n = causal_lm_loss(logits, labels)
    loss_t.backward()
    loss = loss_t.detach()
    assert n == enc["n_loss_tokens"]
    # position t predicts token t+1: positions 0..n_prompt-2 predict prompt tokens
    g = logits.grad[0].abs().sum(-1)
    assert torch.all(g[: n_prompt - 1] == 0)
    assert torch.all(g[n_prompt - 1: -1] > 0) and g[-1] == 0
    # the loss is the mean NLL of the specification tokens, by hand
    lp = torch.log_softmax(logits.detach()[0].float(), -1)
    by_hand = -torch.stack([lp[t - 1, ids[0, t]] for t in range(n_prompt, ids.shape[1])]).mean()
    assert float(loss) == pytest.approx(float(by_hand), rel=1e-6)
    # anything at the description positions (here: noise on their predictions) leaves the loss
    noisy = logits.detach().clone()
    noisy[0, : n_prompt - 1] += torch.randn_like(noisy[0, : n_prompt - 1]) * 10
    assert float(causal_lm_loss(noisy, labels)[0]) == float(loss)
    noisy[0, n_prompt, 0] += 5.0  # ... while a specification position changes it
    assert float(causal_lm_loss(noisy, labels)[0]) != float(loss)


# ------------------------------------------------------------ identifier tokens
def test_identifier_spans_skip_comments_and_strings():
    spans = identifier_spans(SPEC, ["count", "MaxValue", "Counter", "Step"])
    words = [SPEC[s:e] for s, e in spans]
    assert words == ["Counter", "MaxValue", "count", "count", "Step", "count", "MaxValue", "count", "count",
                     "Step", "count", "count", "Step"]
    comment = SPEC.index("\\* count")
    string = SPEC.index('"count"')
    assert all(not (comment <= s < SPEC.index("\n", comment)) and s != string + 1 for s, _ in spans)
    # `count` in WF_count and ]_count is found; `counter` would not be a match of `count`
    for prefix in ("WF_count", "]_count"):
        at = SPEC.index(prefix) + len(prefix) - 5
        assert (at, at + 5) in spans
    assert identifier_spans("counter count_x xcount count", ["count"]) == [(23, 28)]


def test_aligned_spans_are_exactly_the_occurrences_cir_renamed():
    from alias.rename.cir import rename_task

    text = ("---- MODULE Shop ----\nVARIABLE stock\ni == 3\n"
            "Fill == stock' = [s \\in {1} |-> i] /\\ \\A i \\in {1} : i > 0\n"
            "Rec == [stock |-> 1].stock \\* stock in a comment\n====\n")
    res = rename_task({"Shop": text}, None, None, seed=1, salt="t")
    renamed = next(iter(res.modules.values()))
    spans = aligned_identifier_spans(text, renamed, res.mapping)
    # renamed: module name, the variable (declaration, primed use), operator i (definition,
    # its use in the function), Fill, Rec; kept: bound i, record fields, the comment
    assert [text[s:e] for s, e in spans] == ["Shop", "stock", "i", "Fill", "stock", "i", "Rec"]
    assert [renamed[s:e] for s, e in spans] == [res.mapping[text[s:e]] for s, e in spans]
    assert len(identifier_spans(text, res.mapping)) == 11  # the name-based fallback also takes bound/fields
    with pytest.raises(ValueError, match="length"):
        aligned_identifier_spans(text, renamed + " ", res.mapping)


def test_token_mask_char_level_exact_indices():
    tok = train_tokenizer(["abc"], vocab_size=3)  # no merges: one token per ASCII character
    text = "---- MODULE Ab ----\nVARIABLE xyz \\* xyz\nNext == xyz' = 1\n===="
    enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
    assert len(enc["input_ids"]) == len(text)
    mask = token_mask(enc["offset_mapping"], identifier_spans(text, ["Ab", "xyz", "Next"]))
    idx = [i for i, m in enumerate(mask) if m]
    assert idx == [12, 13, 29, 30, 31, 40, 41, 42, 43, 48, 49, 50]
    assert "".join(text[i] for i in idx) == "AbxyzNextxyz"


def test_token_mask_identifiers_split_into_several_bpe_tokens():
    tok = train_tokenizer(["Init == x + 1\nNext == x' = x\n" * 40], vocab_size=300)
    text = "Init == Qzxvbn + 1\nNext == Qzxvbn' = Init \\* Qzxvbn\n"
    enc = tok(text, add_special_tokens=False, return_offsets_mapping=True)
    pieces = [tok.decode([i]) for i in enc["input_ids"]]
    mask = token_mask(enc["offset_mapping"], identifier_spans(text, ["Qzxvbn"]))
    idx = [i for i, m in enumerate(mask) if m]
    # two code occurrences, each split over several tokens; the comment one is not counted
    groups = [[idx[0]]]
    for i in idx[1:]:
        (groups[-1].append(i) if i == groups[-1][-1] + 1 else groups.append([i]))
    assert len(groups) == 2 and all(len(g) > 1 for g in groups)
    assert ["".join(pieces[i] for i in g).strip() == "Qzxvbn" for g in groups] == [True, True]
    assert groups[0][0] == pieces.index(next(p for p in pieces if "Q" in p))
    # every unflagged token is outside both code occurrences
    code = [(m_s, m_s + 6) for m_s in (text.index("Qzxvbn"), text.index("Qzxvbn'"))]
    for i, (a, b) in enumerate(enc["offset_mapping"]):
        overlaps = any(a < e and s < b for s, e in code)
        assert mask[i] == overlaps


# --------------------------------------------------------------------------- LoRA
def test_target_modules_text_layers_only():
    class Attn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            for n in ("q_proj", "k_proj", "v_proj", "o_proj"):
                setattr(self, n, torch.nn.Linear(2, 2))

    class Layer(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.self_attn = Attn()
            self.mlp = torch.nn.Module()
            self.mlp.o_proj = torch.nn.Linear(2, 2)  # not an attention projection

    m = torch.nn.Module()
    m.model = torch.nn.Module()
    m.model.language_model = torch.nn.Module()
    m.model.language_model.layers = torch.nn.ModuleList([Layer(), Layer()])
    m.model.vision_tower = torch.nn.Module()
    m.model.vision_tower.layers = torch.nn.ModuleList([Layer()])
    got = lora_target_modules(m)
    assert got == [f"model.language_model.layers.{i}.self_attn.{p}" for i in range(2)
                   for p in ("q_proj", "k_proj", "v_proj", "o_proj")]
    with pytest.raises(ValueError, match="attention projection"):
        lora_target_modules(torch.nn.Sequential(torch.nn.Linear(2, 2)))


def _lora(**over):
    """The Appendix E LoRA settings (``params.yaml`` with the paper's lr and warm-up) with ``over``."""
    return dataclasses.replace(embedded_config().exposure.lora, **({"lr": 2e-4, "warmup_steps": 100} | over))


def test_lora_settings_are_appendix_e_and_checked():
    p = embedded_config().exposure.lora
    assert (p.r, p.alpha, p.dropout, p.epochs, p.batch_size, p.max_grad_norm, p.max_length, p.seed) == \
        (16, 32, 0.05, 3, 1, 1.0, 2048, 0)
    assert (p.lr, p.warmup_steps) == (0.002, 0)  # the embedded default's 9-step adapters (params.yaml)
    with pytest.raises(ConfigError, match="exposure.lora.rank: unknown setting"):
        embedded_config({"exposure.lora.rank": 8})
    with pytest.raises(ConfigError, match="exposure.lora.batch_size: only batch size 1"):
        embedded_config({"exposure.lora.batch_size": 2})


def test_two_step_lora_run_saves_a_loadable_adapter(tiny_dir, tok, tmp_path):
    from safetensors.torch import load_file

    exs = [{"task_id": "t1", "source": "half", "format": "pair",
            "prompt": build_prompt("finetuned", DESC) + "\n", "completion": SPEC},
           {"task_id": "t2", "source": "shared", "format": "spec_only", "prompt": "", "completion": SPEC}]
    run = train_lora(tiny_dir, exs, tmp_path / "ad", _lora(epochs=1, max_length=256), device="cpu")
    log = run.log
    assert list(log.columns) == TRAINING_LOG_COLUMNS
    assert list(log.step) == [1, 2] and list(log.epoch) == [1, 1] and sorted(log.task_id) == ["t1", "t2"]
    assert run.warmup_steps == 0 and run.n_steps == 2
    assert list(log.lr) == pytest.approx([2e-4, 1e-4])  # linear decay, no warm-up in 2 steps
    assert all(np.isfinite(log.loss)) and all(log.loss > 0) and all(log.tokens <= 256)
    assert run.tokens_per_s > 0 and run.device == "cpu" and run.dtype == "float32"
    assert len(run.target_modules) == 8
    w = load_file(str(tmp_path / "ad" / "adapter_model.safetensors"))
    b = [v for k, v in w.items() if "lora_B" in k]
    assert len(b) == 8 and all(float(v.abs().max()) > 0 for v in b)  # B starts at 0: it moved
    meta = json.loads((tmp_path / "ad" / "alias_training.json").read_text())
    assert meta["n_steps"] == 2 and meta["params"]["r"] == 16
    # PEFT writes target_modules from a set (order follows PYTHONHASHSEED): sorted, so byte-stable
    targets = json.loads((tmp_path / "ad" / "adapter_config.json").read_text())["target_modules"]
    assert targets == sorted(targets) and len(targets) == 8
    base, _ = load_model(tiny_dir, device="cpu")
    tuned, _ = load_model(tiny_dir, adapter_dir=tmp_path / "ad", device="cpu")
    ids = torch.tensor([tok(SPEC)["input_ids"][:40]])
    with torch.no_grad():
        assert not torch.allclose(base(input_ids=ids).logits, tuned(input_ids=ids).logits)
    # same inputs, same seed: the same adapter (deterministic on the CPU)
    run2 = train_lora(tiny_dir, exs, tmp_path / "ad2", _lora(epochs=1, max_length=256), device="cpu")
    assert list(run2.log.loss) == list(log.loss)


def test_training_raises_loglik_of_the_trained_reference(tiny_dir, tok, tmp_path):
    ex = [{"task_id": "t1", "source": "half", "format": "pair",
           "prompt": build_prompt("finetuned", DESC) + "\n", "completion": SPEC}]
    run = train_lora(tiny_dir, ex, tmp_path / "ad", _lora(epochs=4, lr=1e-3), device="cpu")
    assert list(run.log.epoch) == [1, 2, 3, 4] and list(run.log.task_id) == ["t1"] * 4
    items = [{"task_id": "t1", "condition": "original", "description": DESC, "reference": SPEC,
              "identifiers": ["count", "MaxValue", "Counter", "Step"]}]
    base = reference_loglik(load_model(tiny_dir, device="cpu")[0], tok, items, "tiny")
    tuned = reference_loglik(load_model(tiny_dir, adapter_dir=tmp_path / "ad", device="cpu")[0], tok, items,
                             "tiny+lora")
    assert list(base.columns) == LOGLIK_COLUMNS
    b, t = base.iloc[0], tuned.iloc[0]
    n_spec = len(tok(SPEC, add_special_tokens=False)["input_ids"])
    assert b.n_tokens == n_spec and b.n_outside + b.n_identifier == n_spec and b.n_identifier >= 13
    assert b.mean_loglik == pytest.approx((b.outside_loglik * b.n_outside + b.identifier_loglik * b.n_identifier)
                                          / n_spec)
    gain = t.mean_loglik - b.mean_loglik
    assert gain > 0 and t.outside_loglik > b.outside_loglik
    print(f"loglik gain after 4 epochs on the task: {gain:.4f} nats/token "
          f"(base {b.mean_loglik:.4f}, tuned {t.mean_loglik:.4f})")
    # the window: at most max_length tokens of prompt and reference together
    s = score_reference(load_model(tiny_dir, device="cpu")[0], tok, DESC, SPEC, ["count"], max_length=60)
    n_prompt = len(tok(build_prompt("finetuned", DESC) + "\n")["input_ids"])
    assert s["n_tokens"] == 60 - n_prompt and s["truncated"] and len(s["token_logprobs"]) == s["n_tokens"]
    none = score_reference(load_model(tiny_dir, device="cpu")[0], tok, DESC, SPEC, ["count"], max_length=n_prompt)
    assert none["n_tokens"] == 0 and none["truncated"] and np.isnan(none["mean_loglik"])


# ------------------------------------------------------------------------ effects
def test_loglik_effects_from_cells():
    split = pd.DataFrame({"task_id": ["a", "b", "c", "d"], "half": ["A", "A", "B", "B"]})
    rows = []
    # (task, condition, trained half) -> mean_loglik; columns: original A, B, random A, B
    table = {"a": (-1.0, -1.5, -1.4, -1.6), "b": (-0.8, -1.0, -1.1, -1.2),
             "c": (-1.3, -0.9, -1.4, -1.2), "d": (-1.2, -1.1, -1.3, -1.3)}
    vals = {(t, c, h): v[i] for t, v in table.items()
            for i, (c, h) in enumerate([("original", "A"), ("original", "B"), ("random", "A"), ("random", "B")])}
    for (t, c, h), v in vals.items():
        rows.append({"task_id": t, "condition": c, "arm": "task_pair", "half": h, "mean_loglik": v,
                     "outside_loglik": v, "identifier_loglik": v})
    rows.append({"task_id": "a", "condition": "original", "arm": None, "half": None, "mean_loglik": -3.0,
                 "outside_loglik": -3.0, "identifier_loglik": -3.0})
    ll = pd.DataFrame(rows)
    cells = seen_unseen_cells(ll, split)
    assert list(cells.task_id) == ["a", "b", "c", "d"]
    assert list(cells.original_seen) == [-1.0, -0.8, -0.9, -1.1]
    eff = loglik_effects(ll, split, n_resamples=200).set_index("measure").loc["mean_loglik"]
    exp_o = np.mean([0.5, 0.2, 0.4, 0.1])
    exp_r = np.mean([0.2, 0.1, 0.2, 0.0])
    assert eff.exposure_original == pytest.approx(exp_o) and eff.did == pytest.approx(exp_o - exp_r)
    assert eff.exposure_original_A == pytest.approx(0.35) and eff.exposure_original_B == pytest.approx(0.25)
    assert eff.unseen_cost == pytest.approx(np.mean([0.1, 0.2, 0.1, 0.1])) and eff.seen_higher_tasks == 4


# -------------------------------------------------------------------------- stage
def test_exposure_stage_end_to_end_on_the_embedded_corpus(tmp_path):
    """ingest and rename for real (no TLC: every renamed task enters the test set here),
    then the whole exposure stage with minimal settings."""
    from pathlib import Path

    from alias.stages import exposure, ingest, rename
    from alias.store.db import read_parquet, write_parquet

    repo = Path(__file__).resolve().parents[1]
    c = embedded_config({"exposure.device": "cpu", "exposure.tiny.train_steps": 0, "exposure.lora.epochs": 2,
                         "exposure.lora.max_length": 768, "exposure.generate.samples": 1,
                         "exposure.generate.max_new_tokens": 3, "exposure.loglik.max_length": 768})
    paths = c.paths.under(tmp_path)
    ingest.run(c, paths)
    rename.run(c, paths)
    rt = read_parquet(paths.rename / "renamed_tasks.parquet")
    write_parquet(pd.DataFrame({"task_id": rt.task_id, "in_test_set": rt.status == "ok"}),
                  paths.verify / "test_set.parquet")
    s = exposure.run(c, paths)
    n = int((rt.status == "ok").sum())
    assert s["test_set"] == n and s["half_A"] == n // 2 and s["half_B"] == n - n // 2
    out = paths.exposure
    split = read_parquet(out / "split.parquet")
    log = read_parquet(out / "training_log.parquet")
    ad = read_parquet(out / "adapters.parquet")
    assert sorted(ad.adapter) == ["tiny-spec_only-A", "tiny-spec_only-B", "tiny-task_pair-A", "tiny-task_pair-B"]
    for a in ad.itertuples():
        g = log[log.adapter == a.adapter]
        mine = set(split.loc[split.half == a.half, "task_id"])
        assert len(g) == a.steps == 2 * len(mine)  # no shared tasks: all are in the test set
        for epoch in (1, 2):  # each task of the half exactly once per epoch
            assert sorted(g.loc[g.epoch == epoch, "task_id"]) == sorted(mine)
        assert (paths.exposure_models / a.adapter / "adapter_config.json").is_file()
    samples = read_parquet(out / "samples.parquet")
    assert len(samples) == s["samples"] == 4 * 2 * n  # adapters x conditions x tasks (1 sample)
    assert set(samples.condition) == {"original", "random"} and samples.output_tokens.max() <= 3
    ll = read_parquet(out / "loglik.parquet")
    assert len(ll) == 5 * 2 * n and ll.mean_loglik.lt(0).all()
    assert (ll.n_outside + ll.n_identifier == ll.n_tokens).all() and (ll.n_identifier > 0).all()
    seen = ll[ll.arm.notna()]
    assert (seen.seen == [split.set_index("task_id").half[t] == h for t, h in zip(seen.task_id, seen.half)]).all()
    eff = read_parquet(out / "loglik_effects.parquet")
    assert set(eff.arm) == {"task_pair", "spec_only"} and (eff.n_tasks == n).all()
    # the samples have the generate stages' columns (graded by `grade`), named per adapter
    arms = read_parquet(out / "exposure_arms.parquet")
    assert sorted(zip(arms.family, arms.arm, arms.half, arms.model)) == [
        ("tiny", "spec-only", "A", "tiny+spec_only-A"), ("tiny", "spec-only", "B", "tiny+spec_only-B"),
        ("tiny", "task-pair", "A", "tiny+task_pair-A"), ("tiny", "task-pair", "B", "tiny+task_pair-B")]
    assert set(samples.model) == set(arms.model) == set(ad.model) and (samples.model_key == "exposure").all()
    assert (samples.truncated == (samples.hit_token_limit | ~samples.has_closing_line)).all()
    assert samples.extraction.notna().all() and (samples.prompt_kind == "finetuned").all()
    # `load` takes every table as written
    import shutil

    from alias.store.db import build_store, query

    root = tmp_path / "root"
    shutil.copytree(out, root / "data" / "exposure")
    shutil.copytree(paths.verify, root / "data" / "verify")
    counts = build_store(root / "alias.duckdb", folders_under(root), repo / "sql")
    assert (counts["split"], counts["loglik"], counts["samples"], counts["training_log"], counts["exposure_arms"],
            counts["exposure_adapters"]) == (n, len(ll), len(samples), len(log), 4, 4)
    paired = query("SELECT * FROM v_loglik_paired WHERE measure = 'all'", root / "alias.duckdb")
    assert len(paired) == 2 * n and paired[["original_seen", "original_unseen", "renamed_seen",
                                            "renamed_unseen"]].notna().all().all()
