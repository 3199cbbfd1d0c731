"""The DPO controls that must behave: dropout is off in the policy forward (so it is the same
function as the reference forward), learning rate 0 reproduces the start policy bit for bit, and
swapping chosen and rejected moves the margin the other way. Each with its positive control."""

from __future__ import annotations

from pathlib import Path

from agentlab_trainer import data as D
from agentlab_trainer import dpo
from agentlab_trainer.common import CancelFlag
from agentlab_trainer.dpo_data import load_pairs, pair_batch, sequence_logps
from agentlab_trainer.dpo_dynamics import disable_dropout
from agentlab_trainer.modeling import attach_lora, load_model
from helpers import write_jsonl
from test_dpo import make_pairs

LORA = {"r": 4, "alpha": 8, "dropout": 0.3, "target_modules": ["q_proj", "v_proj"]}


def _perturbed_lora(tiny_model):
    """A LoRA with non-zero B (a fresh one is a no-op, and so would be its dropout)."""
    import torch

    base, _ = load_model(str(tiny_model), device="cpu", quantization="none")
    model = attach_lora(base, LORA, seed=0)
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.05, generator=torch.Generator().manual_seed(3))
    return model


def _logps(model, tokenizer, pairs_path):
    import torch

    eot, eot_id = D.resolve_eot(tokenizer)
    pairs = load_pairs(tokenizer, str(pairs_path), eot, eot_id, 512)
    with torch.no_grad():
        lp, _ = sequence_logps(model, pair_batch(pairs, tokenizer.pad_token_id, "cpu"))
    return lp


def test_the_policy_forward_is_deterministic_with_lora_dropout_configured(tiny_model, tokenizer, tmp_path):
    import torch

    pairs = write_jsonl(tmp_path / "p.jsonl", make_pairs(2))
    model = _perturbed_lora(tiny_model).train()
    # positive control: with the configured dropout active, two training-mode forwards differ
    assert not torch.equal(_logps(model, tokenizer, pairs), _logps(model, tokenizer, pairs))
    assert disable_dropout(model) > 0
    model.train()
    a, b = _logps(model, tokenizer, pairs), _logps(model, tokenizer, pairs)
    assert torch.equal(a, b)
    assert torch.equal(a, _logps(model.eval(), tokenizer, pairs))  # = the reference pass's eval mode


def _spec(tiny_model, pairs: Path, out: Path, **over) -> dict:
    return {
        "base_model": str(tiny_model),
        "pairs": str(pairs),
        "output_dir": str(out),
        "lora": LORA,
        "epochs": 1,
        "batch_size": 2,
        "max_length": 512,
        "sft_weight": 0.0,
        **over,
    }


def _adapter_tensors(folder: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(folder / "adapter_model.safetensors"))


def test_learning_rate_zero_reproduces_the_start_bit_for_bit(tiny_model, tokenizer, tmp_path):
    import torch
    from peft import PeftModel

    start = tmp_path / "start"
    _perturbed_lora(tiny_model).save_pretrained(str(start))
    pairs = write_jsonl(tmp_path / "p.jsonl", make_pairs(4))
    runs = {}
    for lr in (0.0, 5e-3):  # 5e-3: the positive control (the same comparison sees a trained change)
        out = tmp_path / f"lr-{lr}"
        rec = dpo.run(_spec(tiny_model, pairs, out, start_adapter=str(start), learning_rate=lr), CancelFlag())
        runs[lr] = (rec, out / "epoch-1")
    rec, snap = runs[0.0]
    assert rec["dropout_modules_disabled"] > 0  # the start adapter's LoRA dropout 0.3 was switched off
    want = _adapter_tensors(start)
    got = _adapter_tensors(snap)
    assert got.keys() == want.keys() and all(torch.equal(got[k], want[k]) for k in want)
    s = rec["snapshots"][0]
    # The end-of-epoch pass uses the reference pass's batches: an unchanged policy gives exactly 0.
    assert s["chosen_logp_delta"] == 0.0 and s["rejected_logp_delta"] == 0.0 and s["logp_warning"] is None

    def logps(folder: Path):
        base, _ = load_model(str(tiny_model), device="cpu", quantization="none")
        return _logps(PeftModel.from_pretrained(base, str(folder)).eval(), tokenizer, pairs)

    assert torch.equal(logps(snap), logps(start))
    trained_rec, trained = runs[5e-3]
    moved = _adapter_tensors(trained)
    assert any(not torch.equal(moved[k], want[k]) for k in want)
    assert not torch.equal(logps(trained), logps(start))
    assert trained_rec["snapshots"][0]["chosen_logp_delta"] != 0.0


def test_swapped_chosen_and_rejected_move_the_margin_the_other_way(tiny_model, tmp_path):
    # The product's control (a recipe's dpo.labels "swapped" → the spec's swap_labels) on the pairs as graded.
    pairs = write_jsonl(tmp_path / "pairs.jsonl", make_pairs(6))
    moved = {}
    for name, swap in (("as labelled", False), ("swapped", True)):
        spec = _spec(tiny_model, pairs, tmp_path / name, epochs=4, learning_rate=1e-2, swap_labels=swap)
        rec = dpo.run(spec, CancelFlag())
        assert rec["swap_labels"] is swap
        s = rec["snapshots"][-1]
        # the change of the ORIGINAL margin (fixed − buggy answer), in nats
        d_fixed, d_buggy = (
            (s["chosen_logp_delta"], s["rejected_logp_delta"])
            if name == "as labelled"
            else (s["rejected_logp_delta"], s["chosen_logp_delta"])
        )
        moved[name] = d_fixed - d_buggy
    # measured: +0.81 and -0.86 nats on this tiny model; lr 0 moves it by exactly 0
    assert moved["as labelled"] > 0.3, moved
    assert moved["swapped"] < -0.3, moved


def test_the_rft_control_trains_the_sft_term_alone_over_the_same_steps(tiny_model, tokenizer, tmp_path):
    import torch

    from agentlab_trainer.dpo_data import reference_logps, window_backward

    rows = make_pairs(4)
    pairs_path = write_jsonl(tmp_path / "p.jsonl", rows)
    eot, eot_id = D.resolve_eot(tokenizer)
    pad = tokenizer.pad_token_id

    def grads(dpo_weight: float) -> list:
        model = _perturbed_lora(tiny_model)
        disable_dropout(model)
        pairs = load_pairs(tokenizer, str(pairs_path), eot, eot_id, 512)
        reference_logps(model, pairs, pad, "cpu", 2, fresh_adapter=False)
        # move the policy off the reference, so the DPO term has a non-trivial gradient
        with torch.no_grad():
            for n, p in model.named_parameters():
                if "lora_A" in n:
                    p.add_(0.05)
        window_backward(model, [pairs[:2], pairs[2:]], pad, "cpu", 0.1, 1.0, dpo_weight)
        return [p.grad.clone() for p in model.parameters() if p.requires_grad]

    def sft_only() -> list:
        model = _perturbed_lora(tiny_model)
        disable_dropout(model)
        pairs = load_pairs(tokenizer, str(pairs_path), eot, eot_id, 512)
        with torch.no_grad():
            for n, p in model.named_parameters():
                if "lora_A" in n:
                    p.add_(0.05)
        n_chosen = sum(p.chosen.n_supervised for p in pairs)
        for mb in (pairs[:2], pairs[2:]):
            lp, _ = sequence_logps(model, pair_batch(mb, pad, "cpu"))
            (-lp[: len(mb)].sum() / n_chosen).backward()
        return [p.grad.clone() for p in model.parameters() if p.requires_grad]

    want = sft_only()
    assert all(torch.allclose(g, w, atol=1e-6) for g, w in zip(grads(0.0), want, strict=True))
    # positive control: with the DPO term on, the same comparison sees a different gradient
    assert not all(torch.allclose(g, w, atol=1e-6) for g, w in zip(grads(1.0), want, strict=True))

    recs = {}
    for objective in ("dpo", "rft"):
        spec = _spec(tiny_model, pairs_path, tmp_path / objective, objective=objective, epochs=2, learning_rate=5e-3)
        recs[objective] = dpo.run({**spec, "sft_weight": 1.0}, CancelFlag())
    assert recs["rft"]["objective"] == "rft" and recs["rft"]["sft_weight"] == 1.0
    assert recs["rft"]["total_steps"] == recs["dpo"]["total_steps"] and recs["rft"]["steps"] == recs["dpo"]["steps"]
    assert recs["rft"]["supervised_tokens"] == recs["dpo"]["supervised_tokens"]
    # more SFT on the chosen answers makes them more likely
    assert recs["rft"]["snapshots"][-1]["chosen_logp_delta"] > 0
