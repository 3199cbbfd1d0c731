"""The trainer's progress events against their job contract (schemas/progress.json, generated from
TrainStepProgress in packages/core/src/jobs/progress.ts): emit refuses one that breaks it, which the
server would refuse at receipt and fail the attempt for."""

from __future__ import annotations

import json

import pytest

from agentlab_trainer.common import emit

STEP = {
    "step": 1,
    "total_steps": 4,
    "epoch": 1,
    "epoch_progress": 0.25,
    "loss": 1.5,
    "lr": 1e-4,
    "tokens_per_s": 10.0,
    "eta_s": 3.0,
    "memory_mb": 12.5,
}
DPO = {
    "dpo_loss": 0.6,
    "sft_loss": 0.1,
    "reward_margin": 0.02,
    "preference_accuracy": 0.5,
    "chosen_reward": 0.01,
    "rejected_reward": -0.01,
}


def test_a_train_and_a_dpo_step_are_emitted(capsys):
    emit("progress", **STEP)
    emit("progress", **STEP, **DPO)
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines == [{"event": "progress", **STEP}, {"event": "progress", **STEP, **DPO}]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"loss": None}, "progress.loss"),
        ({"step": 0}, "progress.step"),
        ({"epoch_progress": 1.5}, "progress.epoch_progress"),
        ({"rank": 1}, "progress.rank"),
    ],
)
def test_a_step_that_breaks_the_contract_is_refused_naming_the_field(capsys, change, field):
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        emit("progress", **{**STEP, **change})
    assert capsys.readouterr().out == ""


def test_a_missing_field_is_refused(capsys):
    fields = {k: v for k, v in STEP.items() if k != "lr"}
    with pytest.raises(ValueError, match=r"progress\.lr: required"):
        emit("progress", **fields)
    # events without a contract of their own are written as they are
    emit("log", message="x")
    assert json.loads(capsys.readouterr().out) == {"event": "log", "message": "x"}
