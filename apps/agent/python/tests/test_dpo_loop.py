"""The DPO loop: an accumulation window equals one step on the union of its pairs
(weights and the SFT term included), and SIGTERM mid-epoch keeps the finished epochs' snapshots
in the canceled run record."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from agentlab_trainer import data as D
from agentlab_trainer.common import sha256_tree
from agentlab_trainer.dpo_data import load_pairs, reference_logps, window_backward
from agentlab_trainer.modeling import attach_lora, load_model
from helpers import write_jsonl
from test_dpo import make_pairs


def _grads(model) -> dict[str, object]:
    return {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}


def test_a_window_equals_one_step_on_the_union_of_its_pairs(tiny_model, tokenizer, tmp_path):
    import torch

    rows = make_pairs(4)
    for r, w in zip(rows, (1.0, 0.5, 2.0, 1.0), strict=True):
        r["weight"] = w
    eot, eot_id = D.resolve_eot(tokenizer)
    pairs = load_pairs(tokenizer, str(write_jsonl(tmp_path / "p.jsonl", rows)), eot, eot_id, 512)
    base, _ = load_model(str(tiny_model), device="cpu", quantization="none")
    model = attach_lora(base, {"r": 4, "alpha": 8, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]}, seed=0)
    with torch.no_grad():  # a non-zero adapter, so the DPO gradient is not the one at policy = reference
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.05, generator=torch.Generator().manual_seed(2))
    reference_logps(model, pairs, tokenizer.pad_token_id, "cpu", 4, fresh_adapter=True)
    model.train()
    pad = tokenizer.pad_token_id
    whole, _ = window_backward(model, [pairs], pad, "cpu", beta=0.2, sft_weight=0.5)
    g_whole = _grads(model)
    model.zero_grad(set_to_none=True)
    split, _ = window_backward(model, [pairs[:1], pairs[1:3], pairs[3:]], pad, "cpu", beta=0.2, sft_weight=0.5)
    g_split = _grads(model)
    assert split["loss"] == pytest.approx(whole["loss"], rel=1e-5)
    # The margin is a difference of log-prob sums of ~-300 in float32 (each ~2e-5 of rounding, and the
    # sub-batches pad to other lengths): equal to ~1e-5, where a wrong weighting moves it by ~1e-3.
    assert split["margin"] == pytest.approx(whole["margin"], rel=1e-5, abs=5e-5)
    assert g_whole.keys() == g_split.keys() and g_whole
    for n, g in g_whole.items():
        assert torch.allclose(g, g_split[n], rtol=1e-4, atol=1e-7), n  # type: ignore[arg-type]
    # positive control: the weights matter (equal weights give another gradient)
    model.zero_grad(set_to_none=True)
    for p in pairs:
        p.weight = 1.0
    window_backward(model, [pairs], pad, "cpu", beta=0.2, sft_weight=0.5)
    assert any(not torch.allclose(g, _grads(model)[n]) for n, g in g_whole.items())  # type: ignore[arg-type]


def test_sigterm_mid_epoch_keeps_finished_snapshots(tiny_model, tmp_path):
    spec = {
        "base_model": str(tiny_model),
        "pairs": str(write_jsonl(tmp_path / "pairs.jsonl", make_pairs(6))),
        "output_dir": str(tmp_path / "out"),
        "lora": {"r": 4, "alpha": 8, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]},
        "epochs": 100,
        "batch_size": 1,
        "max_length": 512,
        "torch_threads": 1,
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentlab_trainer", "dpo", "--spec", str(tmp_path / "spec.json")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    events, sent, deadline = [], False, time.time() + 240
    for line in proc.stdout:
        events.append(json.loads(line))
        e = events[-1]
        if not sent and e["event"] == "progress" and e["epoch"] == 2:  # mid-epoch 2, epoch 1 saved
            proc.send_signal(signal.SIGTERM)
            sent = True
        assert time.time() < deadline
    assert proc.wait(timeout=60) == 143 and sent
    result = events[-1]
    assert result["event"] == "result" and result["status"] == "canceled"
    rec = result["dpo"]
    assert rec["status"] == "canceled" and rec["epochs_completed"] >= 1 and rec["steps"] < rec["total_steps"]
    for s in rec["snapshots"]:
        assert sha256_tree(s["path"]) == s["sha256"]
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [f"epoch-{s['epoch']}" for s in rec["snapshots"]]
