"""The grpo reward: verdicts of the parent's isolated judge, never a grader in this process.

Each batch of completions goes to the parent (the agent) as one JSON line on a Unix socket
(GrpoRewardRequest in packages/core/src/trainer/grpo.ts); the parent grades them all and answers
one line with one verdict per completion, in order (GrpoRewardResponse). Reward 1 for `pass`,
0 for anything else (unparseable, a failing or crashing candidate, tampered, timeout).

An `infra_error` is no verdict about the policy: the whole group of that prompt leaves the step.
How, in TRL 1.16: a reward function may return None for a completion; GRPOTrainer turns it into
NaN, leaves it out of the group's (nan-aware) mean and std, and sets its advantage to 0
(`advantages = nan_to_num(advantages, nan=0.0)` in `_generate_and_score_completions`). Returning
None for every completion of the group therefore gives the whole group zero advantage: no
gradient, and out of the logged reward statistics. Per-sample masking is never done: a group with
one infra error loses all its completions, so a flaky judge cannot bias which samples train.
(The masked completions' tokens still count in the "dapo" loss denominator, a dilution of the
step's gradient by the masked share, reported as `masked_groups`.)
"""

from __future__ import annotations

import json
import socket
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .common import UserError

AUDITED = ("tampered", "timeout", "resource_limit", "unparseable", "infra_error")


class RewardChannel:
    """Line-JSON requests to the parent over its Unix socket, one answer per request."""

    def __init__(self, path: str, timeout_s: float) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout_s)
        try:
            self.sock.connect(path)
        except OSError as e:
            raise UserError(f"reward_socket {path}: cannot connect to the grading parent ({e})") from e
        self.reader = self.sock.makefile("r", encoding="utf-8")
        self.next_id = 0

    def grade(self, step: int, items: list[dict[str, str]]) -> tuple[list[dict[str, Any]], float]:
        req_id = self.next_id
        self.next_id += 1
        line = json.dumps({"id": req_id, "step": step, "items": items}, ensure_ascii=False)
        self.sock.sendall((line + "\n").encode("utf-8"))
        raw = self.reader.readline()
        if not raw:
            raise RuntimeError("the grading parent closed the reward socket")
        answer = json.loads(raw)
        if answer.get("id") != req_id:
            raise RuntimeError(f"reward answer for request {answer.get('id')}, expected {req_id}")
        if answer.get("error"):
            raise RuntimeError(f"the grading parent failed the batch: {answer['error']}")
        verdicts = answer.get("verdicts")
        if not isinstance(verdicts, list) or len(verdicts) != len(items):
            raise RuntimeError(f"reward answer has {len(verdicts or [])} verdicts for {len(items)} completions")
        return verdicts, float(answer.get("grade_time_s") or 0.0)

    def close(self) -> None:
        self.reader.close()
        self.sock.close()


@dataclass
class StepAudit:
    """What the reward function saw since the last logged step (the callback drains it)."""

    completions: int = 0
    passes: int = 0
    masked_groups: int = 0
    grade_time_s: float = 0.0
    verdicts: Counter = field(default_factory=Counter)
    flags: Counter = field(default_factory=Counter)

    def audit(self) -> dict[str, Any]:
        return {
            **{k: int(self.verdicts.get(k, 0)) for k in AUDITED},
            "flags": [{"flag": f, "count": int(n)} for f, n in sorted(self.flags.items())],
        }


def completion_text(completion: Any) -> str:
    """A conversational completion is a list of messages; a plain one is text."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(str(m.get("content", "")) for m in completion if isinstance(m, dict))
    raise TypeError(f"unexpected completion type {type(completion).__name__}")


def group_rewards(verdicts: list[dict[str, Any]], group_size: int) -> tuple[list[float | None], int]:
    """Rewards in the batch's order (TRL lays out each prompt's group as consecutive completions)
    and how many groups were masked (None for all their completions) for an infra_error."""
    rewards: list[float | None] = []
    masked = 0
    for start in range(0, len(verdicts), group_size):
        group = verdicts[start : start + group_size]
        if any(v.get("verdict") == "infra_error" for v in group):
            masked += 1
            rewards.extend([None] * len(group))
        else:
            rewards.extend([1.0 if v.get("verdict") == "pass" else 0.0 for v in group])
    return rewards, masked


class JudgeReward:
    """The reward function handed to GRPOTrainer (`reward_funcs=[JudgeReward(...)]`)."""

    def __init__(self, channel: RewardChannel, group_size: int) -> None:
        self.channel = channel
        self.group_size = group_size
        self.pending = StepAudit()
        self.total_graded = 0
        self.total_masked = 0
        self.total_grade_time_s = 0.0
        # The rewards of the last call, in its order: dynamic sampling (grpo_groups.py) reads them.
        self.last_rewards: list[float | None] = []
        self.__name__ = "judge"  # TRL names the reward column after the function

    def __call__(self, prompts, completions, task_id, trainer_state=None, **_: Any) -> list[float | None]:
        if len(completions) % self.group_size:
            raise RuntimeError(f"{len(completions)} completions is not a whole number of groups of {self.group_size}")
        step = int(getattr(trainer_state, "global_step", 0) or 0)
        items = [
            {"task_id": str(t), "completion": completion_text(c)} for t, c in zip(task_id, completions, strict=True)
        ]
        t0 = time.perf_counter()
        verdicts, parent_s = self.channel.grade(step, items)
        took = parent_s or (time.perf_counter() - t0)
        rewards, masked = group_rewards(verdicts, self.group_size)
        a = self.pending
        a.completions += len(items)
        a.passes += sum(1 for v in verdicts if v.get("verdict") == "pass")
        a.masked_groups += masked
        a.grade_time_s += took
        a.verdicts.update(str(v.get("verdict")) for v in verdicts)
        for v in verdicts:
            a.flags.update(str(f) for f in v.get("flags") or [])
        self.total_graded += len(items)
        self.total_masked += masked
        self.total_grade_time_s += took
        self.last_rewards = rewards
        return rewards

    def drain(self) -> StepAudit:
        out, self.pending = self.pending, StepAudit()
        return out
