"""n samples per prompt, each with its recorded seed; greedy (samples = 1) unchanged."""

from __future__ import annotations

import json

import pytest
import torch

from agentlab_trainer import generate
from agentlab_trainer.common import CancelFlag, UserError
from agentlab_trainer.sampling import make_per_row_sampler, sample_seeds, task_seed, top_p_filter
from agentlab_trainer.spec_schema import validate_spec
from helpers import make_samples


def _prompts(n: int, offset: int = 0) -> list[dict]:
    return [{"task_id": f"t{i}", "messages": s["messages"][:-1]} for i, s in enumerate(make_samples(n, offset=offset))]


def _run(capsys, spec) -> tuple[dict, list[dict]]:
    capsys.readouterr()
    summary = generate.run({"backend": "transformers", "max_new_tokens": 12, **spec}, CancelFlag())
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    return summary, [e for e in events if e["event"] == "generation"]


def _by_key(gens: list[dict]) -> dict[tuple[str, int], str]:
    return {(g["task_id"], g["sample_index"]): g["text"] for g in gens}


def test_n_samples_per_prompt_with_recorded_seeds(tiny_model, capsys):
    spec = {"base_model": str(tiny_model), "prompts": _prompts(3), "samples": 4, "temperature": 3.0, "seed": 7}
    summary, gens = _run(capsys, spec)
    assert len(gens) == 12
    assert summary["count"] == 3 and summary["decoding"]["samples"] == 4 and summary["decoding"]["do_sample"]
    for task_id in ("t0", "t1", "t2"):
        mine = sorted((g for g in gens if g["task_id"] == task_id), key=lambda g: g["sample_index"])
        assert [g["sample_index"] for g in mine] == [0, 1, 2, 3]
        assert [g["seed"] for g in mine] == sample_seeds(7, task_id, 4)
    # the tiny model copies its last token with ~98% probability; at temperature 3 the samples of a
    # prompt differ (they are not n copies of one)
    assert all(len({g["text"] for g in gens if g["task_id"] == t}) > 1 for t in ("t0", "t1", "t2"))
    # the same spec again: the same answers; another base seed: other answers
    _, again = _run(capsys, spec)
    assert _by_key(again) == _by_key(gens)
    _, other = _run(capsys, {**spec, "seed": 8})
    assert _by_key(other) != _by_key(gens)


def test_a_sample_does_not_depend_on_its_batch(tiny_model, capsys):
    prompts = _prompts(4, offset=3)
    spec = {"base_model": str(tiny_model), "samples": 3, "temperature": 2.5, "top_p": 0.95, "seed": 1}
    together = _by_key(_run(capsys, {**spec, "prompts": prompts, "batch_size": 12})[1])
    alone = {}
    for p in prompts:
        alone.update(_by_key(_run(capsys, {**spec, "prompts": [p], "batch_size": 3})[1]))
    assert len(together) == 12 and together == alone
    assert len(set(together.values())) > 6  # positive control: real samples, not one repeated answer
    # batch_size counts sequences: 1 still decodes a prompt's samples together, with the same result
    assert _by_key(_run(capsys, {**spec, "prompts": prompts, "batch_size": 1})[1]) == together


def test_greedy_is_unchanged_by_the_samples_field(tiny_model, tokenizer, capsys):
    from transformers import AutoModelForCausalLM

    prompts = _prompts(2)
    summary, gens = _run(capsys, {"base_model": str(tiny_model), "prompts": prompts})
    assert summary["decoding"] == {**summary["decoding"], "do_sample": False, "samples": 1, "temperature": 0.0}
    assert [(g["sample_index"], g["seed"]) for g in gens] == [(0, None), (0, None)]
    # the same greedy answer as transformers' own greedy decoding of one prompt
    model = AutoModelForCausalLM.from_pretrained(str(tiny_model), dtype=torch.float32).eval()
    ids = generate.prompt_ids(tokenizer, prompts[0]["messages"])
    stop = sorted({tokenizer.convert_tokens_to_ids("<|im_end|>"), tokenizer.eos_token_id} - {None})
    with torch.no_grad():
        out = model.generate(
            input_ids=torch.tensor([ids]),
            do_sample=False,
            max_new_tokens=12,
            eos_token_id=stop,
            pad_token_id=tokenizer.pad_token_id,
        )
    new = [t for t in out[0, len(ids) :].tolist() if t not in stop and t != tokenizer.pad_token_id]
    text = next(g["text"] for g in gens if g["task_id"] == "t0")
    assert text == tokenizer.decode(new, skip_special_tokens=True)


def test_samples_field_is_validated():
    gen = {"base_model": "m", "prompts": _prompts(1)}
    assert validate_spec("generate", {**gen, "samples": 4}) == []  # positive control
    assert any("spec.samples" in e for e in validate_spec("generate", {**gen, "samples": 0}))
    with pytest.raises(UserError, match="samples"):
        generate.normalize_spec({**gen, "samples": 0})


def test_task_seeds_mix_the_task_id_and_leave_room_for_the_indices():
    assert task_seed(0, "a") != task_seed(0, "b") and task_seed(0, "a") != task_seed(1, "a")
    assert task_seed(3, "a") == task_seed(3, "a")
    seeds = sample_seeds(5, "task", 1024)
    assert seeds == list(range(seeds[0], seeds[0] + 1024)) and seeds[-1] < 2**31


def test_top_p_filter_keeps_the_nucleus_like_transformers():
    from transformers import TopPLogitsWarper

    g = torch.Generator().manual_seed(0)
    scores = torch.randn(6, 50, generator=g) * 3
    for p in (0.3, 0.8, 0.95):
        ours = torch.isinf(top_p_filter(scores, p))
        theirs = torch.isinf(TopPLogitsWarper(top_p=p)(None, scores.clone()))
        assert torch.equal(ours, theirs), p
    assert torch.equal(top_p_filter(scores, 1.0), scores)


def test_per_row_sampler_draws_each_row_from_its_own_seed():
    scores = torch.randn(3, 20, generator=torch.Generator().manual_seed(1))
    out = make_per_row_sampler([11, 12, 11], 1.0, 1.0, "cpu")(None, scores)
    picks = out.argmax(dim=-1)
    assert torch.isinf(out).sum().item() == 3 * 19  # one finite score per row
    for row, seed in enumerate([11, 12, 11]):
        want = torch.multinomial(scores[row].softmax(-1), 1, generator=torch.Generator().manual_seed(seed))
        assert picks[row].item() == want.item()
    with pytest.raises(RuntimeError, match="rows"):
        make_per_row_sampler([1], 1.0, 1.0, "cpu")(None, scores)
