"""End to end through the CLI: events parse, per-epoch snapshots reproduce the logged eval loss,
the tiny model overfits 20 samples, generation is deterministic and changed by the adapter."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentlab_trainer import data as D
from agentlab_trainer.common import sha256_tree
from agentlab_trainer.modeling import load_model
from agentlab_trainer.train import evaluate
from conftest import ALL_LINEAR, run_cli
from helpers import make_samples

EPOCHS = 20
# Mean token loss on the 20 training samples after 20 epochs (starts near 9-12): "it memorises".
# The exact end point depends on the data order (0.60 with the per-(seed, epoch) hash order,
# lower with the old seed+epoch order), so the bound leaves that margin.
OVERFIT_BOUND = 0.75

EVENT_KEYS = {
    "progress": {"step", "total_steps", "epoch", "epoch_progress", "loss", "lr", "tokens_per_s", "eta_s", "memory_mb"},
    "artifact": {"kind", "path", "sha256", "epoch", "files", "train_loss", "eval_loss", "step"},
    "trainer_state": {"epoch", "path", "sha256"},
    "log": {"level", "message"},
    "result": {"command", "status"},
    "generation": {"task_id", "text", "prompt_tokens", "completion_tokens", "finish_reason"},
}


def check_events(events: list[dict]) -> None:
    for e in events:
        assert e["event"] in EVENT_KEYS, e
        assert EVENT_KEYS[e["event"]] <= e.keys(), (e["event"], EVENT_KEYS[e["event"]] - e.keys())
    assert [e["event"] for e in events].count("result") == 1 and events[-1]["event"] == "result"


@pytest.fixture(scope="module")
def run(tiny_model, sft_files, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("train")
    spec = {
        "base_model": str(tiny_model),
        "model_id": "tiny-test",
        "dataset": str(sft_files["train"]),
        "eval_dataset": str(sft_files["eval"]),
        "output_dir": str(tmp / "out"),
        "lora": {"r": 16, "alpha": 32, "dropout": 0.0, "target_modules": ALL_LINEAR},
        "epochs": EPOCHS,
        "learning_rate": 5e-3,
        "lr_schedule": "cosine",
        "batch_size": 4,
        "grad_accum": 1,
        "max_length": 512,
        "seed": 0,
        "torch_threads": 1,
        "log_every_steps": 5,
    }
    code, events, stderr = run_cli("train", spec, tmp)
    assert code == 0, stderr[-3000:]
    return spec, events


def test_cli_events_and_run_record(run, sft_files):
    spec, events = run
    check_events(events)
    progress = [e for e in events if e["event"] == "progress"]
    artifacts = [e for e in events if e["event"] == "artifact"]
    assert [a["epoch"] for a in artifacts] == list(range(1, EPOCHS + 1))
    assert progress[-1]["step"] == progress[-1]["total_steps"] == EPOCHS * 5
    assert all(p["tokens_per_s"] > 0 and p["memory_mb"] > 0 for p in progress)
    rec = events[-1]["record"]
    assert events[-1]["status"] == "succeeded" and rec["status"] == "succeeded"
    assert rec["method"] == "lora-fp32" and rec["device"] == "cpu"
    assert rec["model"]["id"] == "tiny-test" and len(rec["model"]["weights_sha256"]) == 64
    from agentlab_trainer.common import sha256_file

    assert rec["dataset_sha256"] == sha256_file(sft_files["train"])
    assert len(rec["chat_template_sha256"]) == 64
    assert rec["seed"] == 0 and rec["eot_token"] == "<|im_end|>"
    assert rec["supervised_tokens"] == rec["supervised_tokens_per_epoch"] * EPOCHS
    assert rec["supervised_tokens_per_s"] > 0 and rec["peak_memory_mb"] > 0 and rec["wall_time_s"] > 0
    assert rec["environment"]["torch"].startswith("2.13.0")
    assert any(line.startswith("torch==") for line in rec["pip_freeze"])
    assert [s["sha256"] for s in rec["snapshots"]] == [a["sha256"] for a in artifacts]


def test_snapshots_are_immutable_hashed_and_reproduce_eval_loss(run, tiny_model, tokenizer, sft_files):
    from peft import PeftModel

    spec, events = run
    artifacts = {e["epoch"]: e for e in events if e["event"] == "artifact"}
    eot, eot_id = D.resolve_eot(tokenizer)
    eval_samples = D.encode_dataset(tokenizer, str(sft_files["eval"]), eot, eot_id, 512, "eval")
    for epoch in (1, EPOCHS // 2, EPOCHS):
        a = artifacts[epoch]
        path = Path(a["path"])
        assert path == Path(spec["output_dir"]) / f"epoch-{epoch}"
        assert sha256_tree(path) == a["sha256"]
        assert all(not os.access(p, os.W_OK) or os.geteuid() == 0 for p in path.iterdir())
        assert all((p.stat().st_mode & 0o222) == 0 for p in path.iterdir())
        base, _ = load_model(str(tiny_model), device="cpu", quantization="none")
        model = PeftModel.from_pretrained(base, str(path))
        loss = evaluate(model, eval_samples, tokenizer.pad_token_id, "cpu", batch_size=3)
        assert loss == pytest.approx(a["eval_loss"], abs=1e-4), epoch
    # eval loss moved between epochs, so reproducing it is not trivial
    assert artifacts[1]["eval_loss"] != pytest.approx(artifacts[EPOCHS]["eval_loss"], abs=1e-2)


def test_tiny_model_overfits_20_samples(run, tiny_model, tokenizer, sft_files):
    from peft import PeftModel

    spec, events = run
    eot, eot_id = D.resolve_eot(tokenizer)
    train_samples = D.encode_dataset(tokenizer, str(sft_files["train"]), eot, eot_id, 512, "train")
    base, _ = load_model(str(tiny_model), device="cpu", quantization="none")
    before = evaluate(base, train_samples, tokenizer.pad_token_id, "cpu")
    model = PeftModel.from_pretrained(base, str(Path(spec["output_dir"]) / f"epoch-{EPOCHS}"))
    after = evaluate(model, train_samples, tokenizer.pad_token_id, "cpu")
    assert before > 5.0
    assert after < OVERFIT_BOUND, (before, after)


def _generate(capsys, spec) -> list[dict]:
    from agentlab_trainer import generate
    from agentlab_trainer.common import CancelFlag

    capsys.readouterr()
    summary = generate.run(spec, CancelFlag())
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert summary["count"] == len(spec["prompts"])
    return [e for e in events if e["event"] == "generation"]


def test_generation_deterministic_and_adapter_changes_it(run, tiny_model, capsys):
    spec, _ = run
    prompts = [{"task_id": f"t{i}", "messages": s["messages"][:-1]} for i, s in enumerate(make_samples(5))]
    base_spec = {
        "base_model": str(tiny_model),
        "prompts": prompts,
        "max_new_tokens": 24,
        "batch_size": 2,
        "backend": "transformers",
    }
    first = _generate(capsys, base_spec)
    second = _generate(capsys, base_spec)
    assert [g["task_id"] for g in first] == [g["task_id"] for g in second]
    assert [g["text"] for g in first] == [g["text"] for g in second]
    adapter = str(Path(spec["output_dir"]) / f"epoch-{EPOCHS}")
    tuned = _generate(capsys, {**base_spec, "adapter": adapter})
    tuned2 = _generate(capsys, {**base_spec, "adapter": adapter})
    assert [g["text"] for g in tuned] == [g["text"] for g in tuned2]
    by_id = {g["task_id"]: g["text"] for g in first}
    assert any(by_id[g["task_id"]] != g["text"] for g in tuned)
    # the overfit adapter answers in the trained format
    assert sum(g["text"].startswith("```python\ndef ") for g in tuned) >= 3
    # sampling with a seed is reproducible too
    sampled = {**base_spec, "do_sample": True, "temperature": 1.0, "top_p": 0.9, "seed": 3}
    assert [g["text"] for g in _generate(capsys, sampled)] == [g["text"] for g in _generate(capsys, sampled)]


def test_batched_generation_equals_single(run, tiny_model, capsys):
    spec, _ = run
    adapter = str(Path(spec["output_dir"]) / f"epoch-{EPOCHS}")
    prompts = [{"task_id": f"t{i}", "messages": s["messages"][:-1]} for i, s in enumerate(make_samples(4, offset=2))]
    base = {
        "base_model": str(tiny_model),
        "adapter": adapter,
        "prompts": prompts,
        "max_new_tokens": 16,
        "backend": "transformers",
    }
    batched = {g["task_id"]: g["text"] for g in _generate(capsys, {**base, "batch_size": 4})}
    single = {g["task_id"]: g["text"] for g in _generate(capsys, {**base, "batch_size": 1})}
    assert batched == single


def test_sigterm_mid_epoch_keeps_finished_snapshots(tiny_model, sft_files, tmp_path):
    spec = {
        "base_model": str(tiny_model),
        "dataset": str(sft_files["train"]),
        "output_dir": str(tmp_path / "out"),
        "lora": {"r": 4, "alpha": 8, "dropout": 0.0, "target_modules": ["q_proj", "v_proj"]},
        "epochs": 200,
        "batch_size": 1,
        "torch_threads": 1,
        "log_every_steps": 1,
    }
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentlab_trainer", "train", "--spec", str(tmp_path / "spec.json")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    events = []
    assert proc.stdout is not None
    deadline = time.time() + 240
    sent = False
    for line in proc.stdout:
        events.append(json.loads(line))
        e = events[-1]
        # first progress step of epoch 2: we are mid-epoch, epoch 1 is saved
        if not sent and e["event"] == "progress" and e["epoch"] == 2:
            proc.send_signal(signal.SIGTERM)
            sent = True
        assert time.time() < deadline
    code = proc.wait(timeout=60)
    assert sent
    assert code == 143
    result = events[-1]
    assert result["event"] == "result" and result["status"] == "canceled"
    rec = result["record"]
    assert rec["status"] == "canceled" and rec["epochs_completed"] >= 1
    snaps = rec["snapshots"]
    assert snaps and snaps[0]["epoch"] == 1
    for s in snaps:
        assert sha256_tree(s["path"]) == s["sha256"]
    out = Path(str(spec["output_dir"]))
    # no partial snapshot; beside each finished epoch, the trainer state a resumption would load
    adapters = sorted(p.name for p in out.iterdir() if p.name.startswith("epoch-"))
    assert adapters == [f"epoch-{s['epoch']}" for s in snaps]
    assert not any(p.name.startswith(".") for p in out.iterdir())
    assert rec["steps"] < rec["total_steps"]
