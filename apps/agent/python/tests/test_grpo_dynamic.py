"""Dynamic sampling in the grpo trainer (grpo_groups.py): groups whose rewards are all equal are
filtered out of the loss or resampled, and counted in the step's grpo_step event. The wrapper's
batch surgery is checked on a scripted stand-in for GRPOTrainer; the counts and the extra judge
requests end to end on the tiny model with a fake grading parent (test_grpo.py's)."""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace

import pytest
import torch

from agentlab_trainer.grpo_groups import GroupCounts, dynamic_grpo_trainer, equal_groups
from test_grpo import alternating, run_grpo


def test_equal_groups_are_the_all_equal_ones_and_never_a_masked_group():
    rewards = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0, None, None, 1.0, 0.0]
    assert equal_groups(rewards, 2) == [1, 2]
    # control: no equal group in an alternating batch
    assert equal_groups([1.0, 0.0] * 3, 2) == []


class _Reward:
    last_rewards: list = []


class _ScriptedTrainer:
    """Stands in for GRPOTrainer: each call returns the next scripted draw (rewards, completion
    width); a row's completion ids hold the draw's number, so the merged batch says where it came from."""

    def __init__(self, reward: _Reward, script: list[tuple[list[float], int]]):
        self.reward, self.script, self.draw = reward, script, 0
        self.model = SimpleNamespace(training=True)
        self.num_generations = 2
        self.accelerator = SimpleNamespace(gather=lambda t: t.reshape(1))
        self._metrics: dict[str, defaultdict[str, list[float]]] = {"train": defaultdict(list)}
        self._tokenizer = SimpleNamespace(pad_token_id=-1)
        self.sizes: list[int] = []

    def _generate_and_score_completions(self, inputs):
        rewards, width = self.script[self.draw]
        assert len(rewards) == len(inputs)
        self.reward.last_rewards = rewards
        self.sizes.append(len(inputs))
        self._metrics["train"]["reward"].append(sum(rewards) / len(rewards))
        self._metrics["train"][f"draw{self.draw}"].append(1.0)
        b = len(inputs)
        out = {
            "prompt_ids": torch.full((b, 3), 7),
            "prompt_mask": torch.ones(b, 3, dtype=torch.long),
            "completion_ids": torch.full((b, width), self.draw),
            "completion_mask": torch.ones(b, width, dtype=torch.long),
            "advantages": torch.tensor(rewards) - 0.5,
            "num_items_in_batch": torch.tensor(b * width),
        }
        self.draw += 1
        return out


def _trainer(mode: str, script, max_resamples: int = 2):
    reward, counts = _Reward(), GroupCounts()
    cls = dynamic_grpo_trainer(_ScriptedTrainer, reward, mode, max_resamples, counts)
    return cls(reward, script), counts


INPUTS = [{"task_id": f"t{i // 2}"} for i in range(6)]  # three groups of two


def test_filter_zeroes_the_equal_groups_in_the_loss_and_recounts_its_tokens():
    # group 0 has a signal, groups 1 (all pass) and 2 (all fail) have none
    t, counts = _trainer("filter", [([1.0, 0.0, 1.0, 1.0, 0.0, 0.0], 4)])
    batch = t._generate_and_score_completions(INPUTS)
    assert batch["completion_mask"].sum(dim=1).tolist() == [4, 4, 0, 0, 0, 0]
    assert int(batch["num_items_in_batch"]) == 8
    assert (counts.dropped, counts.resampled) == (2, 0)
    # control: "keep" leaves TRL's batch as it was (all 24 tokens in the loss), nothing counted
    k, kc = _trainer("keep", [([1.0, 0.0, 1.0, 1.0, 0.0, 0.0], 4)])
    kept = k._generate_and_score_completions(INPUTS)
    assert int(kept["num_items_in_batch"]) == 24 and kept["completion_mask"].sum() == 24
    assert (kc.dropped, kc.resampled) == (0, 0)


def test_resample_replaces_groups_that_gain_a_signal_and_drops_the_rest():
    script = [
        ([1.0, 0.0, 1.0, 1.0, 0.0, 0.0], 4),  # draw 0: groups 1 and 2 equal
        ([1.0, 0.0, 0.0, 0.0], 5),  # draw 1 (groups 1, 2 again): group 1 now has a signal
        ([0.0, 0.0], 3),  # draw 2 (group 2 again): still equal, and max_resamples is spent
    ]
    t, counts = _trainer("resample", script)
    batch = t._generate_and_score_completions(INPUTS)
    assert t.sizes == [6, 4, 2]  # only the equal groups' prompts were generated again
    ids = batch["completion_ids"]
    assert ids.shape == (6, 5)  # padded to the widest draw
    # group 0 from draw 0, group 1 from draw 1 (its new, signalled draw), group 2 kept from draw 0 and dropped
    assert [int(r[0]) for r in ids] == [0, 0, 1, 1, 0, 0]
    assert batch["completion_mask"].sum(dim=1).tolist() == [4, 4, 5, 5, 0, 0]
    assert int(batch["num_items_in_batch"]) == 18
    assert batch["advantages"].tolist() == [0.5, -0.5, 0.5, -0.5, -0.5, -0.5]
    assert batch["prompt_ids"].shape == (6, 3)
    assert (counts.resampled, counts.dropped) == (3, 1)
    # the step's logged statistics are the first draw's only
    assert t._metrics["train"]["reward"] == [pytest.approx(0.5)]
    assert set(t._metrics["train"]) == {"reward", "draw0"}


def test_resample_stops_when_every_group_has_a_signal():
    t, counts = _trainer("resample", [([1.0, 0.0, 1.0, 1.0, 1.0, 0.0], 4), ([0.0, 1.0], 4)], max_resamples=5)
    batch = t._generate_and_score_completions(INPUTS)
    assert t.sizes == [6, 2] and (counts.resampled, counts.dropped) == (1, 0)
    assert int(batch["num_items_in_batch"]) == 24


def by_task(req):
    """t0: every completion passes (no signal); t1: alternating (a signal)."""
    items = req["items"]
    alt = alternating(req)
    return [{"verdict": "pass"} if it["task_id"] == "t0" else alt[i] for i, it in enumerate(items)]


def test_filter_counts_the_dropped_group_of_every_step(tiny_model, tmp_path, capsys):
    _, events, requests = run_grpo(tiny_model, tmp_path, by_task, capsys, equal_reward_groups="filter")
    steps = [e for e in events if e["event"] == "grpo_step"]
    assert [(s["dropped_groups"], "resampled_groups" in s) for s in steps] == [(1, False), (1, False)]
    assert len(requests) == 2  # filtering grades nothing more


def test_resample_asks_the_judge_again_for_the_equal_group_only(tiny_model, tmp_path, capsys):
    record, events, requests = run_grpo(
        tiny_model, tmp_path, by_task, capsys, equal_reward_groups="resample", max_resamples=2, max_steps=1
    )
    (step,) = [e for e in events if e["event"] == "grpo_step"]
    # t0 always passes: resampled twice, then dropped
    assert (step["resampled_groups"], step["dropped_groups"]) == (2, 1)
    assert [len(r["items"]) for r in requests] == [8, 4, 4]
    assert all(it["task_id"] == "t0" for r in requests[1:] for it in r["items"])
    # every resampled completion was graded and audited; the reward curve is the first draw's
    assert step["completions"] == 16 and step["reward_mean"] == pytest.approx(0.75)
    assert record["config"]["equal_reward_groups"] == "resample"


def test_keep_is_the_default_and_reports_no_counts(tiny_model, tmp_path, capsys):
    record, events, requests = run_grpo(tiny_model, tmp_path, by_task, capsys, max_steps=1)
    (step,) = [e for e in events if e["event"] == "grpo_step"]
    assert "dropped_groups" not in step and "resampled_groups" not in step
    assert step["zero_variance_share"] == pytest.approx(0.5) and len(requests) == 1
    assert record["config"]["equal_reward_groups"] == "keep"
