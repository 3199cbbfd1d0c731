"""Training length in optimizer steps (spec.steps) and batches packed by tokens (spec.batch_tokens).

With steps, a run takes exactly that many optimizer steps over seeded passes of the data (cycled,
the last pass cut), and `epochs` snapshots end equal segments at the expected steps; the schedule
spans the steps (a linear rate reaches 0 at the last one, not before). A step-counted run resumed
after its first snapshot is bit-identical to the run that was not lost. With batch_tokens, every
batch's length sum stays within the budget but for a single over-long sample, and the batch count
differs from fixed-size batching of the same data (the control)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentlab_trainer import data as D
from agentlab_trainer import run_plan
from agentlab_trainer.common import UserError
from agentlab_trainer.train import normalize_spec
from conftest import ALL_LINEAR, run_cli

# 20 samples in batches of 4: 5 windows per pass. 13 steps: not a multiple of 5, over 2.6 passes.
STEPS, SNAPSHOTS, PER_PASS = 13, 3, 5


def _spec(tiny_model, sft_files, out: Path, **over) -> dict:
    spec = {
        "base_model": str(tiny_model),
        "dataset": str(sft_files["train"]),
        "eval_dataset": str(sft_files["eval"]),
        "output_dir": str(out),
        "lora": {"r": 8, "alpha": 16, "dropout": 0.1, "target_modules": ALL_LINEAR},
        "epochs": SNAPSHOTS,
        "steps": STEPS,
        "learning_rate": 5e-3,
        "lr_schedule": "linear",
        "batch_size": 4,
        "max_length": 512,
        "seed": 3,
        "torch_threads": 1,
        **over,
    }
    return {k: v for k, v in spec.items() if v is not None}  # None: the key left out


def _train(spec: dict, tmp: Path) -> list[dict]:
    code, events, stderr = run_cli("train", spec, tmp)
    assert code == 0, stderr[-3000:]
    return events


def _of(events: list[dict], kind: str) -> list[dict]:
    return [e for e in events if e["event"] == kind]


@pytest.fixture(scope="module")
def encoded(tokenizer, sft_files):
    eot, eot_id = D.resolve_eot(tokenizer)
    return D.encode_dataset(tokenizer, str(sft_files["train"]), eot, eot_id, 512, "dataset")


def _cfg(**over) -> dict:
    return {
        "seed": 3,
        "batch_size": 4,
        "grad_accum": 1,
        "epochs": SNAPSHOTS,
        "steps": STEPS,
        "batch_tokens": None,
        **over,
    }


# ---------------------------------------------------------------- the plan (no model)


@pytest.mark.parametrize(
    ("steps", "segments", "sizes"),
    [(13, 3, [4, 4, 5]), (10, 2, [5, 5]), (3, 2, [1, 2]), (12, 5, [2, 2, 2, 2, 4]), (7, 1, [7])],
)
def test_segments_are_equal_with_the_remainder_last(steps, segments, sizes):
    bounds = run_plan.segment_bounds(steps, segments)
    assert [e - s for s, e in bounds] == sizes
    assert bounds[0][0] == 0 and bounds[-1][1] == steps
    assert all(a[1] == b[0] for a, b in zip(bounds[:-1], bounds[1:], strict=True))


@pytest.mark.parametrize("steps", [3, 5, 13, 17])
def test_steps_cycle_through_seeded_passes_cut_where_they_end(encoded, steps):
    cfg = _cfg(steps=steps, epochs=min(SNAPSHOTS, steps))
    got = [w for k in range(1, cfg["epochs"] + 1) for w in run_plan.segment(encoded, cfg, k)[1]]
    assert sum(run_plan.segment(encoded, cfg, k)[0] for k in range(1, cfg["epochs"] + 1)) == steps
    passes = [run_plan.pass_windows(encoded, cfg, n) for n in (1, 2, 3, 4)]
    assert all(len(p) == PER_PASS for p in passes)
    # each pass is every sample once; the passes are in different orders (so cycling reshuffles)
    assert all(sorted(i for w in p for b in w for i in b) == list(range(20)) for p in passes)
    assert passes[0] != passes[1]
    assert got == [w for p in passes for w in p][:steps]
    assert run_plan.total_steps(encoded, cfg) == steps


def test_without_steps_a_segment_is_a_pass(encoded):
    cfg = _cfg(steps=None)
    assert run_plan.total_steps(encoded, cfg) == PER_PASS * SNAPSHOTS
    for k in (1, 2, 3):
        count, windows = run_plan.segment(encoded, cfg, k)
        assert count == PER_PASS and list(windows) == run_plan.pass_windows(encoded, cfg, k)


def test_token_batches_stay_within_the_budget_and_differ_from_fixed_batches(encoded):
    budget = 3 * max(len(s) for s in encoded) // 2
    lengths = [len(s) for s in encoded] + [budget + 40]  # one sample longer than the budget
    batches = D.token_batches(lengths, budget, seed=5)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for b in batches:
        assert sum(lengths[i] for i in b) <= budget or len(b) == 1, (b, [lengths[i] for i in b])
    assert [len(lengths) - 1] in batches  # the over-long sample alone
    # packing is real: batches of several samples, some filled past half the budget
    assert max(len(b) for b in batches) > 1 and max(sum(lengths[i] for i in b) for b in batches) > budget // 2
    assert batches == D.token_batches(lengths, budget, seed=5)
    # control: the same data in fixed batches of 4 gives another batch count
    assert len(batches) != len(D.length_grouped_batches(lengths, 4, seed=5))


def test_the_spec_is_checked_before_anything_loads():
    base = {"base_model": "m", "dataset": "/d.jsonl", "output_dir": "/o"}
    assert normalize_spec({**base, "steps": 3, "epochs": 3})["steps"] == 3  # positive control
    with pytest.raises(UserError, match=r"steps \(2\) must be >= epochs \(3\)"):
        normalize_spec({**base, "steps": 2, "epochs": 3})
    with pytest.raises(UserError, match="batch_tokens needs world_size 1"):
        normalize_spec({**base, "batch_tokens": 256, "world_size": 2})
    with pytest.raises(UserError, match="batch_tokens must be an integer >= 8"):
        normalize_spec({**base, "batch_tokens": 4})


# ---------------------------------------------------------------- through the CLI


@pytest.fixture(scope="module")
def full(tiny_model, sft_files, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("steps")
    return _train(_spec(tiny_model, sft_files, tmp / "out"), tmp)


def test_a_step_counted_run_takes_exactly_its_steps_and_snapshots(full):
    progress = _of(full, "progress")
    assert [p["step"] for p in progress] == list(range(1, STEPS + 1))
    assert {p["total_steps"] for p in progress} == {STEPS}
    # segments of 4, 4 and 5 steps, each numbered like an epoch
    assert [p["epoch"] for p in progress] == [1] * 4 + [2] * 4 + [3] * 5
    assert [p["epoch_progress"] for p in progress if p["epoch"] == 1] == [0.25, 0.5, 0.75, 1.0]
    snaps = _of(full, "artifact")
    assert [(s["epoch"], s["step"]) for s in snaps] == [(1, 4), (2, 8), (3, 13)]
    assert [s["epoch"] for s in _of(full, "trainer_state")] == [1, 2]
    record = full[-1]["record"]
    assert record["steps"] == record["total_steps"] == STEPS and record["epochs_completed"] == SNAPSHOTS
    # the linear schedule spans exactly the run's steps: 0 after the last, not before
    assert progress[-1]["lr"] == 0.0 and progress[-2]["lr"] > 0.0


def test_a_step_counted_run_resumes_bit_identical(full, tiny_model, sft_files, tmp_path):
    adapters = _of(full, "artifact")
    state = _of(full, "trainer_state")[0]
    keys = ("epoch", "path", "sha256", "files", "train_loss", "eval_loss", "step")
    resume = {
        "epoch": 1,
        "adapter": adapters[0]["path"],
        "state": state["path"],
        "snapshots": [{k: adapters[0][k] for k in keys}],
    }
    resumed = _train(_spec(tiny_model, sft_files, tmp_path / "out", resume=resume), tmp_path)
    assert [p["step"] for p in _of(resumed, "progress")] == list(range(5, STEPS + 1))
    new = _of(resumed, "artifact")
    assert [(a["epoch"], a["step"], a["sha256"]) for a in new] == [
        (a["epoch"], a["step"], a["sha256"]) for a in adapters[1:]
    ]


def test_token_batches_through_the_cli(tiny_model, sft_files, encoded, tmp_path):
    budget = 2 * max(len(s) for s in encoded)
    events = _train(_spec(tiny_model, sft_files, tmp_path / "out", steps=None, epochs=2, batch_tokens=budget), tmp_path)
    cfg = _cfg(steps=None, epochs=2, batch_tokens=budget)
    planned = [len(run_plan.pass_windows(encoded, cfg, e)) for e in (1, 2)]
    record = events[-1]["record"]
    assert record["total_steps"] == record["steps"] == sum(planned)
    assert [s["step"] for s in _of(events, "artifact")] == [planned[0], sum(planned)]
    # control: fixed batches of 4 would have taken 5 steps a pass
    assert planned != [PER_PASS, PER_PASS]
