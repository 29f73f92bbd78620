"""alias.generate.local on a tiny Llama built locally (alias.generate.tiny); CPU only."""
from __future__ import annotations

import json
import shutil

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from alias.generate.local import (  # noqa: E402
    STOP_CLOSING_LINE,
    STOP_EOS,
    STOP_TOKEN_LIMIT,
    StopTracker,
    TopPSampler,
    closing_line_reached,
    generate_local,
    load_model,
    sample_seed,
)
from alias.generate.prompts import build_prompt  # noqa: E402
from alias.generate.tiny import build_tiny_model, embedded_texts  # noqa: E402
from alias.generate.types import SampleRequest  # noqa: E402

MAX_NEW = 24


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    """Tiny matrices on a shared 2-core machine: one thread is much faster."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return build_tiny_model(embedded_texts(), tmp_path_factory.mktemp("tiny"), train_steps=40)


@pytest.fixture(scope="module")
def loaded(tiny_dir):
    return load_model(tiny_dir, device="cpu")


def _requests(n_samples=5):
    descs = {"Clock": "A twelve-hour clock whose minute hand moves in quarters.",
             "Buffer": "A bounded buffer shared by one producer and one consumer."}
    return [SampleRequest(task_id=t, condition="original", model="tiny", sample_idx=k,
                          prompt=build_prompt("finetuned", d), prompt_version="test")
            for t, d in descs.items() for k in range(n_samples)]


def test_generate_batches_seeds_and_counts(tiny_dir, loaded):
    reqs = _requests()
    res = generate_local(tiny_dir, reqs, max_new_tokens=MAX_NEW, batch_size=4, device="cpu")
    assert [r.key for r in res] == [q.key for q in reqs]
    tok = loaded[1]
    for q, r in zip(reqs, res):
        assert 1 <= r.output_tokens <= MAX_NEW
        assert r.stop_reason in (STOP_EOS, STOP_CLOSING_LINE, STOP_TOKEN_LIMIT)
        assert r.hit_token_limit == (r.stop_reason == STOP_TOKEN_LIMIT)
        if r.hit_token_limit:
            assert r.output_tokens == MAX_NEW
        assert r.input_tokens == len(tok(q.prompt + "\n")["input_ids"])
        assert r.settings["temperature"] == 0.7 and r.settings["top_p"] == 0.95
        assert r.settings["max_new_tokens"] == MAX_NEW and r.settings["device"] == "cpu"
        assert r.settings["sample_seed"] == sample_seed(0, *q.key)
        assert r.model_path == str(tiny_dir.resolve()) and r.adapter_dir is None
        assert r.prompt_version == "test"
        json.dumps(r.to_dict())  # serializable
    # an untrained-ish model rarely stops early: most samples run into the limit
    assert sum(r.hit_token_limit for r in res) >= 5
    # different sample indices -> different texts
    for task in ("Clock", "Buffer"):
        texts = [r.text for r in res if r.task_id == task]
        assert len(set(texts)) == 5

    # same seed -> same texts, also with the model passed in, another batch size and order
    again = generate_local(tiny_dir, reqs, max_new_tokens=MAX_NEW, batch_size=4, device="cpu")
    assert [r.text for r in again] == [r.text for r in res]
    shuffled = generate_local(tiny_dir, reqs[::-1], max_new_tokens=MAX_NEW, batch_size=3,
                              model_and_tokenizer=loaded)
    assert [r.text for r in shuffled[::-1]] == [r.text for r in res]
    # another seed -> other texts
    other = generate_local(tiny_dir, reqs[:3], max_new_tokens=MAX_NEW, seed=1, model_and_tokenizer=loaded)
    assert all(a.text != b.text for a, b in zip(other, res[:3]))


def test_greedy_matches_manual_argmax_and_ignores_model_sampling_defaults(tiny_dir, tmp_path):
    # a model directory whose generation_config would change greedy output if applied
    d = tmp_path / "nasty"
    shutil.copytree(tiny_dir, d)
    gc = json.loads((d / "generation_config.json").read_text())
    gc.update(do_sample=True, top_k=3, temperature=5.0, repetition_penalty=50.0, no_repeat_ngram_size=1)
    (d / "generation_config.json").write_text(json.dumps(gc))
    model, tok = load_model(d, device="cpu")
    prompt = build_prompt("finetuned", "A traffic light.")
    [r] = generate_local(d, [{"task_id": "T", "condition": "random", "model": "m", "sample_idx": 0,
                              "prompt": prompt}], temperature=0.0, max_new_tokens=12, stop_at_module_end=False,
                         model_and_tokenizer=(model, tok))
    ids = tok(prompt + "\n", return_tensors="pt")["input_ids"]
    out = []
    with torch.no_grad():
        for _ in range(12):
            nxt = int(model(input_ids=ids).logits[0, -1].argmax())
            out.append(nxt)
            ids = torch.cat([ids, torch.tensor([[nxt]])], dim=1)
            if nxt == tok.eos_token_id:
                break
    assert r.output_tokens == len(out)
    assert r.text == tok.decode(out, skip_special_tokens=True)
    assert len(set(out)) < len(out), "the check needs a repeated token (no_repeat_ngram_size would bite)"


def test_request_overrides_and_validation(tiny_dir, loaded):
    reqs = [{"task_id": "A", "condition": "original", "model": "m", "sample_idx": 0, "prompt": "x",
             "max_tokens": 3, "temperature": 0.0, "top_p": 0.5},
            {"task_id": "A", "condition": "original", "model": "m", "sample_idx": 1, "prompt": "x"}]
    r0, r1 = generate_local(tiny_dir, reqs, max_new_tokens=5, stop_at_module_end=False, model_and_tokenizer=loaded)
    assert r0.settings["max_new_tokens"] == 3 and r0.output_tokens <= 3
    assert r0.settings["temperature"] == 0.0 and r0.settings["top_p"] == 0.5
    assert r1.settings["max_new_tokens"] == 5 and r1.settings["temperature"] == 0.7
    with pytest.raises(ValueError, match="duplicate"):
        generate_local(tiny_dir, [reqs[1], reqs[1]], model_and_tokenizer=loaded)
    with pytest.raises(ValueError, match="sample_idx"):
        generate_local(tiny_dir, [reqs[1] | {"sample_idx": -1}], model_and_tokenizer=loaded)
    with pytest.raises(FileNotFoundError, match="local directory"):
        generate_local(tiny_dir / "nope", reqs)
    assert generate_local(tiny_dir, [], model_and_tokenizer=loaded) == []


def test_closing_line_reached():
    mod = "---- MODULE M ----\nx == 1\n"
    assert closing_line_reached(mod + "====\n")
    assert closing_line_reached(mod + "  ==========   \nrest")
    assert not closing_line_reached(mod + "====")  # the line is not complete yet
    assert not closing_line_reached(mod + "=== \n")  # three is not a closing line
    assert not closing_line_reached(mod + "==== x\n")
    assert not closing_line_reached("====\n")  # no module open
    nested = mod + "---- MODULE Inner ----\ny == 2\n====\n"
    assert not closing_line_reached(nested)
    assert closing_line_reached(nested + "====\n")
    # the prompt opens the module; the generated text closes it
    assert closing_line_reached("x == 1\n====\n", prefix="Spec:\n---- MODULE M ----\n")
    # a module closed inside the prompt does not count
    assert not closing_line_reached("x\n", prefix=mod + "====\n")


def test_stop_tracker_on_token_ids(loaded):
    _, tok = loaded
    prompt = tok("Spec:\n")["input_ids"]
    gen_text = "---- MODULE M ----\nx == 1\n=====\n(* after *)\n"
    gen = tok(gen_text, add_special_tokens=False)["input_ids"]
    expected = next(n for n in range(1, len(gen) + 1)
                    if tok.decode(gen[:n]).endswith("=====\n"))
    ids = torch.tensor([prompt + gen, prompt + gen])
    tracker = StopTracker(tok, len(prompt), limits=[100, 100], eos_ids=[tok.eos_token_id],
                          stop_at_module_end=True, prompts=["Spec:\n", "Spec:\n"])
    fired = None
    for n in range(1, len(gen) + 1):
        done = tracker(ids[:, : len(prompt) + n], None)
        assert done.dtype == torch.bool and done.shape == (2,)
        if done.all() and fired is None:
            fired = n
    assert fired == expected
    assert tracker.reasons == [STOP_CLOSING_LINE] * 2 and tracker.lengths == [expected] * 2

    # off: the same ids run to the limit; EOS wins over the limit on the same step
    eos = tok.eos_token_id
    ids2 = torch.tensor([prompt + gen[:5], prompt + gen[:4] + [eos]])
    t2 = StopTracker(tok, len(prompt), limits=[5, 5], eos_ids=[eos], stop_at_module_end=False)
    for n in range(1, 6):
        t2(ids2[:, : len(prompt) + n])
    assert t2.reasons == [STOP_TOKEN_LIMIT, STOP_EOS] and t2.lengths == [5, 5]


def test_top_p_sampler_keeps_nucleus():
    scores = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]] * 2))
    gens = [torch.Generator().manual_seed(s) for s in (1, 2)]
    sampler = TopPSampler([1.0, 0.0], [0.7, 0.7], gens)
    picks = set()
    for _ in range(200):
        out = sampler(None, scores)
        assert torch.isfinite(out).sum(dim=-1).tolist() == [1, 1]
        row0, row1 = out.argmax(dim=-1).tolist()
        picks.add(row0)
        assert row1 == 0  # greedy row
    assert picks == {0, 1}  # 0.5 + 0.3 reaches 0.7: tokens 2 and 3 are never drawn
    with pytest.raises(ValueError):
        TopPSampler([1.0], [0.0], gens[:1])


def test_generation_stops_at_closing_line(tmp_path):
    """A tiny model trained on one module repeated learns to close it quickly."""
    text = "---- MODULE M ----\nx == 1\n====\n"
    d = build_tiny_model([text * 20] * 4, tmp_path / "mod", vocab_size=300, train_steps=40, seq_len=64)
    req = {"task_id": "M", "condition": "original", "model": "m", "sample_idx": 0, "prompt": "---- MODULE M ----"}
    [stop] = generate_local(d, [req], temperature=0.0, max_new_tokens=40)
    assert stop.stopped_at_closing_line and not stop.hit_token_limit
    assert stop.stop_reason == STOP_CLOSING_LINE and stop.output_tokens < 40
    assert stop.text == "x == 1\n====\n"
    [run] = generate_local(d, [req], temperature=0.0, max_new_tokens=40, stop_at_module_end=False)
    assert run.hit_token_limit and run.output_tokens == 40 and not run.stopped_at_closing_line
    assert run.text.startswith(stop.text)


def test_lora_adapter_loads_and_changes_logits(tiny_dir, loaded, tmp_path):
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(tiny_dir, local_files_only=True)
    cfg = LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, task_type="CAUSAL_LM",
                     target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])
    peft_model = get_peft_model(base, cfg)
    gen = torch.Generator().manual_seed(0)
    n_b = 0
    with torch.no_grad():
        for name, p in peft_model.named_parameters():
            if "lora_B" in name:  # B starts at 0 (a no-op adapter): make it non-zero
                p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
                n_b += 1
    assert n_b == 4 * 2  # q/k/v/o in both layers
    adir = tmp_path / "adapter"
    peft_model.save_pretrained(adir)

    model_a, tok = load_model(tiny_dir, adapter_dir=adir, device="cpu")
    ids = tok(build_prompt("finetuned", "A clock.") + "\n", return_tensors="pt")["input_ids"]
    with torch.no_grad():
        base_logits = loaded[0](input_ids=ids).logits
        lora_logits = model_a(input_ids=ids).logits
    assert (base_logits - lora_logits).abs().max() > 1e-3

    reqs = _requests(2)
    res = generate_local(tiny_dir, reqs, adapter_dir=adir, max_new_tokens=8, device="cpu")
    assert len(res) == 4 and all(r.output_tokens >= 1 for r in res)
    assert all(r.adapter_dir == str(adir.resolve()) and r.settings["peft"] for r in res)
    base_res = generate_local(tiny_dir, reqs, max_new_tokens=8, model_and_tokenizer=loaded)
    assert [r.text for r in res] != [r.text for r in base_res]
    with pytest.raises(FileNotFoundError):
        load_model(tiny_dir, adapter_dir=tmp_path / "no-adapter")
