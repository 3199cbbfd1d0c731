"""The DPO trainer: the loss against a hand-computed value and against TRL's DPOTrainer on
the same batch; the reference log-probs never change during training; training on pairs raises
the chosen-vs-rejected margin; per-epoch snapshots are immutable and hashed."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from agentlab_trainer import data as D
from agentlab_trainer.common import sha256_tree
from agentlab_trainer.dpo_data import dpo_loss, load_pairs, pair_batch, sequence_logps
from agentlab_trainer.modeling import load_model
from conftest import ALL_LINEAR, run_cli
from helpers import make_samples, write_jsonl

EPOCHS = 4


def make_pairs(n: int) -> list[dict]:
    """chosen = the fixed function, rejected = the buggy one, for the same prompt."""
    rows = []
    for i, s in enumerate(make_samples(n)):
        prompt, fixed = s["messages"][:-1], s["messages"][-1]["content"]
        buggy = prompt[-1]["content"].split("\n", 1)[1]  # the fenced buggy code of the user turn
        rows.append({"pair_id": f"p{i}", "prompt": prompt, "chosen": fixed, "rejected": buggy})
    return rows


@pytest.fixture(scope="module")
def pairs_file(tmp_path_factory) -> Path:
    return write_jsonl(tmp_path_factory.mktemp("pairs") / "pairs.jsonl", make_pairs(8))


def test_dpo_loss_equals_the_hand_computed_value():
    import torch

    pc, pr = torch.tensor([-10.0, -4.0]), torch.tensor([-12.0, -3.0])
    rc, rr = torch.tensor([-11.0, -5.0]), torch.tensor([-11.0, -5.0])
    losses, chosen, rejected = dpo_loss(pc, pr, rc, rr, beta=0.5)
    # pair 0: β[(−10+11) − (−12+11)] = 0.5·2 = 1 → −log σ(1); pair 1: 0.5[(1) − (2)] = −0.5
    want = [-math.log(1 / (1 + math.exp(-1.0))), -math.log(1 / (1 + math.exp(0.5)))]
    assert losses.tolist() == pytest.approx(want, abs=1e-6)
    assert chosen.tolist() == pytest.approx([0.5, 0.5]) and rejected.tolist() == pytest.approx([-0.5, 1.0])
    # positive control: equal policy and reference → log 2, whatever β
    assert dpo_loss(rc, rr, rc, rr, beta=3.0)[0].tolist() == pytest.approx([math.log(2)] * 2)


def _perturb_lora(model) -> None:
    """Non-zero LoRA B matrices, so the policy differs from the reference (the adapter disabled)."""
    import torch

    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=g) * 0.05)


def test_dpo_loss_equals_trl_on_the_same_batch(tiny_model, tokenizer, pairs_file, tmp_path):
    import torch
    from datasets import Dataset
    from peft import LoraConfig
    from trl import DPOConfig, DPOTrainer

    eot, eot_id = D.resolve_eot(tokenizer)
    pairs = load_pairs(tokenizer, str(pairs_file), eot, eot_id, 512)[:3]
    batch = pair_batch(pairs, tokenizer.pad_token_id, "cpu")
    k, beta = len(pairs), 0.3
    base, _ = load_model(str(tiny_model), device="cpu", quantization="none")
    args = DPOConfig(
        output_dir=str(tmp_path / "trl"),
        beta=beta,
        loss_type=["sigmoid"],
        report_to=[],
        use_cpu=True,
        per_device_train_batch_size=k,
        precompute_ref_log_probs=False,
    )
    # TRL 1.16 refuses a LoRA on lm_head (its fused head reads lm_head.weight), so not ALL_LINEAR here.
    # A fresh adapter from peft_config: TRL's reference is then the base (adapter disabled), like ours.
    lora = LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules=[t for t in ALL_LINEAR if t != "lm_head"])
    rows = [{"prompt": "p", "chosen": "a", "rejected": "b"}]  # DPOTrainer needs a dataset; the batch is ours
    trainer = DPOTrainer(
        model=base, args=args, train_dataset=Dataset.from_list(rows), processing_class=tokenizer, peft_config=lora
    )
    model: Any = trainer.model  # a PeftModel (peft_config given); typed as a bare module by TRL
    model.eval()
    _perturb_lora(model)
    with torch.no_grad():
        lp, _ = sequence_logps(model, batch)
        with model.disable_adapter():
            ref, _ = sequence_logps(model, batch)
        ours = dpo_loss(lp[:k], lp[k:], ref[:k], ref[k:], beta)[0].mean()
        inputs = {
            "input_ids": batch["input_ids"],
            "attention_mask": batch["attention_mask"],
            "completion_mask": (batch["labels"] != D.IGNORE).long(),
        }
        theirs = trainer._compute_loss(model, inputs, False)
    assert float(ours) != pytest.approx(math.log(2), abs=1e-3)  # the policy really differs from the reference
    assert float(theirs) == pytest.approx(float(ours), rel=1e-5, abs=1e-6)


@pytest.fixture(scope="module")
def run(tiny_model, pairs_file, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("dpo")
    spec = {
        "base_model": str(tiny_model),
        "model_id": "tiny-test",
        "pairs": str(pairs_file),
        "output_dir": str(tmp / "out"),
        "lora": {"r": 8, "alpha": 16, "dropout": 0.0, "target_modules": ALL_LINEAR},
        "epochs": EPOCHS,
        "learning_rate": 5e-3,
        "beta": 0.1,
        "sft_weight": 0.0,
        "batch_size": 2,
        "max_length": 512,
        "torch_threads": 1,
    }
    code, events, stderr = run_cli("dpo", spec, tmp)
    assert code == 0, stderr[-3000:]
    return spec, events


def _logps(model, pairs, pad_id):
    import torch

    with torch.no_grad():
        lp, _ = sequence_logps(model.eval(), pair_batch(pairs, pad_id, "cpu"))
    return lp[: len(pairs)].tolist(), lp[len(pairs) :].tolist()


def test_events_record_and_snapshots(run, pairs_file):
    spec, events = run
    result = events[-1]
    assert result["event"] == "result" and result["status"] == "succeeded"
    rec = result["dpo"]
    progress = [e for e in events if e["event"] == "progress"]
    artifacts = [e for e in events if e["event"] == "artifact"]
    assert len(progress) == rec["total_steps"] == EPOCHS * 4 and rec["steps"] == EPOCHS * 4
    for p in progress:
        assert {"loss", "reward_margin", "preference_accuracy", "chosen_reward", "rejected_reward"} <= p.keys()
        assert 0.0 <= p["preference_accuracy"] <= 1.0
    assert [a["epoch"] for a in artifacts] == list(range(1, EPOCHS + 1))
    # each epoch's last step carries the train pairs' Δ log-prob per side, as its snapshot does
    ends = [e for e in progress if "chosen_logp_delta" in e]
    assert [e["epoch"] for e in ends] == list(range(1, EPOCHS + 1))
    for e, s in zip(ends, rec["snapshots"], strict=True):
        assert (e["chosen_logp_delta"], e["rejected_logp_delta"]) == (s["chosen_logp_delta"], s["rejected_logp_delta"])
        assert ("logp_warning" in e) == (s["chosen_logp_delta"] < 0) == (s["logp_warning"] is not None)
    assert rec["mode"] == "train" and rec["reference"] == "base (adapter disabled)" and rec["pair_count"] == 8
    for a, s in zip(artifacts, rec["snapshots"], strict=True):
        assert sha256_tree(a["path"]) == a["sha256"] == s["sha256"]
        assert all((f.stat().st_mode & 0o222) == 0 for f in Path(a["path"]).iterdir())
        meta = json.loads((Path(a["path"]) / "agentlab-snapshot.json").read_text())
        assert meta["pairs_sha256"] == rec["pairs_sha256"] and meta["beta"] == 0.1


def test_reference_never_changes_and_the_margin_rises(run, tiny_model, tokenizer, pairs_file):
    from peft import PeftModel

    spec, events = run
    rec = events[-1]["dpo"]
    eot, eot_id = D.resolve_eot(tokenizer)
    pairs = load_pairs(tokenizer, str(pairs_file), eot, eot_id, 512)
    pad = tokenizer.pad_token_id
    # The reference, recomputed after training from the untouched base, equals what the run used.
    base, _ = load_model(str(tiny_model), device="cpu", quantization="none")
    # Sums of ~800 float32 terms: a process with another thread count sums them in another order.
    ref_c, ref_r = _logps(base, pairs, pad)
    assert [r["ref_chosen_logp"] for r in rec["pairs"]] == pytest.approx(ref_c, rel=1e-6, abs=1e-4)
    assert [r["ref_rejected_logp"] for r in rec["pairs"]] == pytest.approx(ref_r, rel=1e-6, abs=1e-4)
    # ... while the trained policy moved: its margin (chosen − rejected) rose on every pair's mean.
    trained = PeftModel.from_pretrained(base, str(Path(spec["output_dir"]) / f"epoch-{EPOCHS}"))
    pol_c, pol_r = _logps(trained, pairs, pad)
    before = sum(c - r for c, r in zip(ref_c, ref_r, strict=True)) / len(pairs)
    after = sum(c - r for c, r in zip(pol_c, pol_r, strict=True)) / len(pairs)
    assert after > before + 1.0, (before, after)
    with trained.disable_adapter():
        again_c, _ = _logps(trained, pairs, pad)
    assert again_c == pytest.approx(ref_c, rel=1e-6, abs=1e-4)  # disabling the adapter still gives the reference
    progress = [e for e in events if e["event"] == "progress"]
    assert progress[-1]["reward_margin"] > progress[0]["reward_margin"]
    assert rec["snapshots"][-1]["preference_accuracy"] >= rec["snapshots"][0]["preference_accuracy"]


def test_score_only_starting_from_an_adapter_uses_it_as_the_reference(run, tiny_model, tokenizer, pairs_file, tmp_path):
    from peft import PeftModel

    spec, _ = run
    start = Path(spec["output_dir"]) / "epoch-1"
    before = sha256_tree(start)
    score = {
        "base_model": str(tiny_model),
        "pairs": str(pairs_file),
        "output_dir": str(tmp_path / "score"),
        "start_adapter": str(start),
        "expected_start_adapter_sha256": before,
        "score_only": True,
        "max_length": 512,
    }
    code, events, stderr = run_cli("dpo", score, tmp_path)
    assert code == 0, stderr[-3000:]
    rec = events[-1]["dpo"]
    assert rec["mode"] == "score" and rec["snapshots"] == [] and rec["start_adapter_sha256"] == before
    eot, eot_id = D.resolve_eot(tokenizer)
    pairs = load_pairs(tokenizer, str(pairs_file), eot, eot_id, 512)
    base, _ = load_model(str(tiny_model), device="cpu", quantization="none")
    c, r = _logps(PeftModel.from_pretrained(base, str(start)), pairs, tokenizer.pad_token_id)
    assert [p["margin"] for p in rec["pairs"]] == pytest.approx(
        [a - b for a, b in zip(c, r, strict=True)], rel=1e-6, abs=1e-4
    )
    assert sha256_tree(start) == before
    # a start adapter that does not hash as expected is refused before anything runs
    code, events, _ = run_cli("dpo", {**score, "expected_start_adapter_sha256": "0" * 64}, tmp_path)
    assert code == 3 and "hash mismatch" in events[-1]["error"]["message"]


def test_bad_pairs_are_refused_with_the_line(tokenizer, tmp_path):
    from agentlab_trainer.common import UserError

    eot, eot_id = D.resolve_eot(tokenizer)
    good = make_pairs(2)
    ok = write_jsonl(tmp_path / "ok.jsonl", good)
    assert len(load_pairs(tokenizer, str(ok), eot, eot_id, 512)) == 2  # positive control
    bad = write_jsonl(tmp_path / "bad.jsonl", [good[0], {**good[1], "rejected": ""}])
    with pytest.raises(UserError, match=r"pair 1: rejected must be a non-empty string"):
        load_pairs(tokenizer, str(bad), eot, eot_id, 512)
    dup = write_jsonl(tmp_path / "dup.jsonl", [good[0], {**good[1], "pair_id": "p0"}])
    with pytest.raises(UserError, match=r"pair 1: pair_id 'p0' repeats"):
        load_pairs(tokenizer, str(dup), eot, eot_id, 512)
