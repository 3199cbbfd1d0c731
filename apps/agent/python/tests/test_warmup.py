"""The tiny base's warm-up: it trains, it is recorded, it is part of the cache key, and
its data is refused like SFT data when malformed."""

from __future__ import annotations

import json

import pytest

from conftest import TINY_SPEC
from helpers import make_samples, write_jsonl


def test_warmup_lowers_loss_and_is_recorded(tmp_path):
    from agentlab_trainer import tiny_model as tm

    data = write_jsonl(tmp_path / "warm.jsonl", make_samples(8))
    warm = {
        "dataset": str(data),
        "task_ids": ["t1", "t2"],
        "description": "echo of train tasks",
        "steps": 30,
        "batch_size": 4,
        "learning_rate": 1e-2,
    }
    out = tmp_path / "model"
    res = tm.run({**TINY_SPEC, "output_dir": str(out), "warmup": warm})
    rec = res["warmup"]
    assert rec["steps"] == 30 and rec["samples"] == 8 and rec["task_ids"] == ["t1", "t2"]
    assert rec["final_loss"] < rec["first_loss"] * 0.7  # it trained (positive: a random model starts near ln(vocab))
    assert json.loads((out / "agentlab-warmup.json").read_text())["dataset_sha256"] == rec["dataset_sha256"]
    # A cold model with the same shape has other weights: the warm-up changed the saved model.
    cold = tm.run({**TINY_SPEC, "output_dir": str(tmp_path / "cold")})
    assert cold["weights_sha256"] != res["weights_sha256"] and cold["warmup"] is None
    # Other warm-up data is another model (never a stale cache hit); the same spec is cached.
    data.write_text("".join(json.dumps(r) + "\n" for r in make_samples(8, offset=50)))
    again = tm.run({**TINY_SPEC, "output_dir": str(out), "warmup": warm})
    assert again["cached"] is False and again["warmup"]["dataset_sha256"] != rec["dataset_sha256"]
    assert tm.run({**TINY_SPEC, "output_dir": str(out), "warmup": warm})["cached"] is True


def test_warmup_refuses_bad_specs(tmp_path):
    from agentlab_trainer import tiny_model as tm
    from agentlab_trainer.common import UserError

    with pytest.raises(UserError, match="warmup needs dataset"):
        tm.run({**TINY_SPEC, "output_dir": str(tmp_path / "a"), "warmup": {"steps": 3}})
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"messages": [{"role": "user", "content": "no answer"}]}) + "\n")
    with pytest.raises(UserError, match="pre-flight refused warm-up dataset"):
        tm.run({**TINY_SPEC, "output_dir": str(tmp_path / "b"), "warmup": {"dataset": str(bad), "steps": 3}})
