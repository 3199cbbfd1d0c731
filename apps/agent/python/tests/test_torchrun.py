"""`train` with AGENTLAB_TRAIN_PROCESSES=2 runs under torchrun (gloo on CPU): one event stream
(rank 0's), one result, one set of snapshots, and the same losses and adapter as one process."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from conftest import run_cli
from helpers import make_samples, write_jsonl

LORA = {"r": 8, "alpha": 16, "dropout": 0.0, "target_modules": ["q_proj", "v_proj", "down_proj", "lm_head"]}


def spec_for(tiny_model: Path, data: Path, out: Path) -> dict:
    return {
        "base_model": str(tiny_model),
        "dataset": str(data),
        "output_dir": str(out),
        "lora": LORA,
        "epochs": 1,
        "learning_rate": 5e-3,
        "lr_schedule": "constant",
        "batch_size": 2,
        "grad_accum": 2,
        "max_length": 512,
        "seed": 0,
        "torch_threads": 1,
        "device": "cpu",
    }


def test_two_ranks_under_torchrun_match_one_process(tiny_model, tmp_path):
    data = write_jsonl(tmp_path / "train.jsonl", make_samples(7, offset=3))  # 2 windows, the last short
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    code1, ev1, err1 = run_cli("train", spec_for(tiny_model, data, tmp_path / "one"), tmp_path, env=env)
    assert code1 == 0, err1[-3000:]
    env2 = {**env, "AGENTLAB_TRAIN_PROCESSES": "2"}
    code2, ev2, err2 = run_cli("train", spec_for(tiny_model, data, tmp_path / "two"), tmp_path, env=env2)
    assert code2 == 0, err2[-3000:]
    results = [e for e in ev2 if e["event"] == "result"]
    assert len(results) == 1 and results[0]["status"] == "succeeded"
    rec2, rec1 = results[0]["record"], [e for e in ev1 if e["event"] == "result"][0]["record"]
    assert rec2["world_size"] == 2 and rec1["world_size"] == 1
    assert [e["step"] for e in ev2 if e["event"] == "progress"] == [1, 2]  # rank 0 only
    assert len([e for e in ev2 if e["event"] == "artifact"]) == 1
    assert rec2["final_train_loss"] == pytest.approx(rec1["final_train_loss"], rel=1e-5)
    a = load_file(str(tmp_path / "one" / "epoch-1" / "adapter_model.safetensors"))
    b = load_file(str(tmp_path / "two" / "epoch-1" / "adapter_model.safetensors"))
    assert a.keys() == b.keys()
    for k in a:
        torch.testing.assert_close(a[k], b[k], atol=1e-6, rtol=1e-4)
    assert json.loads((tmp_path / "two" / "epoch-1" / "agentlab-snapshot.json").read_text())["epoch"] == 1
