"""A lost SFT run resumed after an epoch takes the same steps as the run that was not lost: the
resumed adapter is bit-identical on one CPU process. Positive control: the same resumption with the
optimizer's moments thrown away ends elsewhere, so the comparison can fail. A state from another
run (another recipe) is refused, naming what differs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import ALL_LINEAR, run_cli

EPOCHS = 3


def _spec(tiny_model, sft_files, out: Path, **over) -> dict:
    return {
        "base_model": str(tiny_model),
        "dataset": str(sft_files["train"]),
        "eval_dataset": str(sft_files["eval"]),
        "output_dir": str(out),
        # dropout > 0: the resumed run must also restore torch's RNG to draw the same masks
        "lora": {"r": 8, "alpha": 16, "dropout": 0.1, "target_modules": ALL_LINEAR},
        "epochs": EPOCHS,
        "learning_rate": 5e-3,
        "batch_size": 4,
        "max_length": 512,
        "seed": 3,
        "torch_threads": 1,
        **over,
    }


def _train(spec: dict, tmp: Path) -> list[dict]:
    code, events, stderr = run_cli("train", spec, tmp)
    assert code == 0, stderr[-3000:]
    return events


@pytest.fixture(scope="module")
def full(tiny_model, sft_files, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("full")
    return _train(_spec(tiny_model, sft_files, tmp / "out"), tmp)


def _resume_from(events: list[dict], epoch: int, state: Path | None = None) -> dict:
    adapters = [e for e in events if e["event"] == "artifact" and e["epoch"] <= epoch]
    states = {e["epoch"]: e for e in events if e["event"] == "trainer_state"}
    snapshots = [
        {k: a[k] for k in ("epoch", "path", "sha256", "files", "train_loss", "eval_loss", "step")} for a in adapters
    ]
    return {
        "epoch": epoch,
        "adapter": adapters[-1]["path"],
        "state": str(state or states[epoch]["path"]),
        "snapshots": snapshots,
    }


def test_full_run_leaves_a_state_after_every_epoch_but_the_last(full):
    states = [e for e in full if e["event"] == "trainer_state"]
    assert [s["epoch"] for s in states] == list(range(1, EPOCHS))
    assert all(Path(s["path"], "trainer_state.pt").is_file() for s in states)


def test_resumed_run_is_bit_identical_and_continues_the_steps(full, tiny_model, sft_files, tmp_path):
    resumed = _train(_spec(tiny_model, sft_files, tmp_path / "out", resume=_resume_from(full, 1)), tmp_path)
    digest = {e["epoch"]: e["sha256"] for e in full if e["event"] == "artifact"}
    new = [e for e in resumed if e["event"] == "artifact"]
    assert [a["epoch"] for a in new] == [2, 3]  # epoch 1 is not trained again
    assert {a["epoch"]: a["sha256"] for a in new} == {2: digest[2], 3: digest[3]}
    steps = [e["step"] for e in resumed if e["event"] == "progress"]
    full_steps = [e["step"] for e in full if e["event"] == "progress"]
    assert steps == full_steps[len(full_steps) // EPOCHS :]  # continues at epoch 2's first step
    record = resumed[-1]["record"]
    assert record["resumed_from_epoch"] == 1 and record["epochs_completed"] == EPOCHS
    assert [s["sha256"] for s in record["snapshots"]] == [digest[1], digest[2], digest[3]]
    assert record["steps"] == full[-1]["record"]["steps"]


def test_control_without_the_optimizer_state_the_run_ends_elsewhere(full, tiny_model, sft_files, tmp_path):
    import torch

    states = {e["epoch"]: e for e in full if e["event"] == "trainer_state"}
    state = tmp_path / "state-no-moments"
    shutil.copytree(states[1]["path"], state)
    (state / "trainer_state.pt").chmod(0o644)
    saved = torch.load(state / "trainer_state.pt", weights_only=True)
    saved["optimizer"]["state"] = {}  # AdamW's moments dropped: what a resume from the adapter alone would do
    torch.save(saved, state / "trainer_state.pt")
    resumed = _train(_spec(tiny_model, sft_files, tmp_path / "out", resume=_resume_from(full, 1, state)), tmp_path)
    digest = {e["epoch"]: e["sha256"] for e in full if e["event"] == "artifact"}
    last = [e for e in resumed if e["event"] == "artifact"][-1]
    assert last["epoch"] == EPOCHS and last["sha256"] != digest[EPOCHS]


def test_a_state_from_another_recipe_is_refused(full, tiny_model, sft_files, tmp_path):
    spec = _spec(tiny_model, sft_files, tmp_path / "out", learning_rate=1e-3, resume=_resume_from(full, 1))
    code, events, stderr = run_cli("train", spec, tmp_path)
    assert code != 0
    message = json.dumps(events) + stderr
    assert "another run" in message and "config" in message
