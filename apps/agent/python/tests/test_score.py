"""The `score` command: a policy equal to the reference scores exactly 0 on both sides, a changed
one does not (the positive control), and a folder that does not hash as expected is refused."""

from __future__ import annotations

import pytest

from agentlab_trainer import score
from agentlab_trainer.common import UserError, sha256_tree
from helpers import write_jsonl
from test_dpo import make_pairs
from test_dpo_controls import _perturbed_lora


def _adapter(tiny_model, path, bump: float = 0.0):
    import torch

    model = _perturbed_lora(tiny_model)
    if bump:
        with torch.no_grad():
            for n, p in model.named_parameters():
                if "lora_A" in n:
                    p.add_(bump)
    model.save_pretrained(str(path))
    return str(path)


def test_scores_each_policy_against_the_reference(tiny_model, tmp_path):
    start = _adapter(tiny_model, tmp_path / "start")
    moved = _adapter(tiny_model, tmp_path / "moved", bump=0.2)
    pairs = write_jsonl(tmp_path / "p.jsonl", make_pairs(3))
    spec = {
        "base_model": str(tiny_model),
        "pairs": str(pairs),
        "max_length": 512,
        "method": "lora-fp32",
        "reference_adapter": start,
        "expected_reference_adapter_sha256": sha256_tree(start),
        "policies": [
            {"name": "epoch-1", "adapter": start, "expected_sha256": sha256_tree(start)},
            {"name": "epoch-2", "adapter": moved},
        ],
    }
    rec = score.run(spec)
    assert rec["pair_count"] == 3 and rec["reference"] == "reference_adapter"
    same, other = rec["policies"]
    assert same["name"] == "epoch-1" and same["chosen_logp_delta"] == 0.0 and same["rejected_logp_delta"] == 0.0
    assert same["logp_warning"] is None and same["margin_gain_rate"] == 0.0
    # positive control: the same comparison sees a changed policy
    assert other["chosen_logp_delta"] != 0.0 and other["rejected_logp_delta"] != 0.0
    assert (other["logp_warning"] is None) == (other["chosen_logp_delta"] >= 0)
    # the base as reference: the start adapter itself now differs from it
    base_ref = score.run({**spec, "reference_adapter": None, "expected_reference_adapter_sha256": None})
    assert base_ref["reference"] == "base" and base_ref["policies"][0]["chosen_logp_delta"] != 0.0


def test_refuses_a_folder_that_does_not_hash_as_expected(tiny_model, tmp_path):
    start = _adapter(tiny_model, tmp_path / "start")
    pairs = write_jsonl(tmp_path / "p.jsonl", make_pairs(1))
    spec = {
        "base_model": str(tiny_model),
        "pairs": str(pairs),
        "method": "lora-fp32",
        "policies": [{"name": "e1", "adapter": start, "expected_sha256": "0" * 64}],
    }
    with pytest.raises(UserError, match="policy e1 hash mismatch"):
        score.run(spec)
    with pytest.raises(UserError, match="names a policy twice"):
        score.run({**spec, "policies": [spec["policies"][0]] * 2})
