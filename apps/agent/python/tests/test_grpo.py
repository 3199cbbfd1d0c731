"""grpo: TRL's GRPOTrainer on the tiny model, its rewards from a fake grading parent on the
reward socket (the real judge's side is tests/integration/agent-grpo.test.ts)."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path

import pytest

from agentlab_trainer.common import CancelFlag, sha256_tree
from agentlab_trainer.grpo_reward import group_rewards

PROMPT = [{"role": "user", "content": "Fix the function.\n```python\ndef add(a, b):\n    return a - b\n```"}]


class FakeParent:
    """Answers each reward request with `answer(request) -> verdicts`; keeps what it was sent."""

    def __init__(self, path: Path, answer):
        self.path, self.answer = str(path), answer
        self.requests: list[dict] = []
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(self.path)
        self.server.listen(1)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        conn, _ = self.server.accept()
        with conn, conn.makefile("r", encoding="utf-8") as lines:
            for line in lines:
                req = json.loads(line)
                self.requests.append(req)
                out = {"id": req["id"], "verdicts": self.answer(req), "grade_time_s": 0.01}
                conn.sendall((json.dumps(out) + "\n").encode())

    def close(self):
        self.server.close()


def write_prompts(path: Path, tasks: list[str]) -> Path:
    path.write_text("".join(json.dumps({"task_id": t, "prompt": PROMPT}) + "\n" for t in tasks))
    return path


def run_grpo(tiny_model, tmp_path, answer, capsys, **over):
    from agentlab_trainer import grpo

    parent = FakeParent(tmp_path / "reward.sock", answer)
    spec = {
        "base_model": str(tiny_model),
        "output_dir": str(tmp_path / "out"),
        "prompts": str(write_prompts(tmp_path / "prompts.jsonl", ["t0", "t1"])),
        "reward_socket": parent.path,
        "num_generations": 4,
        "prompts_per_step": 2,
        "max_completion_length": 8,
        "mask_truncated_completions": False,  # a random tiny model never stops: keep its tokens in the loss
        "learning_rate": 1e-4,
        "max_steps": 2,
        "snapshot_every_steps": 1,
        "device": "cpu",
        "seed": 0,
        **over,
    }
    try:
        record = grpo.run(spec, CancelFlag())
    finally:
        parent.close()
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    return record, events, parent.requests


def alternating(req):
    """Pass, fail, pass, fail … within every group: reward mean 0.5, no zero-variance group."""
    return [{"verdict": "pass" if i % 2 == 0 else "fail_hidden"} for i in range(len(req["items"]))]


def test_group_rewards_masks_the_whole_group_of_an_infra_error():
    v = [{"verdict": x} for x in ["pass", "fail_hidden", "infra_error", "pass", "tampered", "unparseable"]]
    rewards, masked = group_rewards(v, 3)
    assert rewards == [None, None, None, 1.0, 0.0, 0.0]
    assert masked == 1


def test_judge_rewards_reach_the_trainer_and_snapshots_are_taken(tiny_model, tmp_path, capsys):
    record, events, requests = run_grpo(tiny_model, tmp_path, alternating, capsys)
    steps = [e for e in events if e["event"] == "grpo_step"]
    assert [s["step"] for s in steps] == [1, 2]
    # every completion of the step went to the parent, each with its prompt's task
    assert all(len(r["items"]) == 8 for r in requests)
    assert {it["task_id"] for r in requests for it in r["items"]} == {"t0", "t1"}
    # TRL's own reward statistics are the parent's verdicts: half pass in every group
    for s in steps:
        assert s["reward_mean"] == pytest.approx(0.5)
        assert s["zero_variance_share"] == 0
        assert s["pass_count"] == 4 and s["completions"] == 8 and s["masked_groups"] == 0
        assert s["kl"] is None  # beta 0: no reference model
    assert record["config"]["loss_type"] == "dapo" and record["config"]["epsilon_high"] == 0.28
    snaps = record["snapshots"]
    assert [s["step"] for s in snaps] == [1, 2]
    for s in snaps:
        assert sha256_tree(s["path"]) == s["sha256"]
        assert "adapter_model.safetensors" in s["files"]
    assert [e["sha256"] for e in events if e["event"] == "artifact"] == [s["sha256"] for s in snaps]
    # the policy moved: the two snapshots' adapters differ
    assert snaps[0]["sha256"] != snaps[1]["sha256"]


def test_an_infra_error_drops_its_whole_group_and_is_counted(tiny_model, tmp_path, capsys):
    def answer(req):
        # group 0 (first 4): alternating pass/fail; group 1: passes, but one infra_error
        out = alternating({"items": req["items"][:4]})
        return out + [{"verdict": "pass"}] * 3 + [{"verdict": "infra_error"}]

    record, events, _ = run_grpo(tiny_model, tmp_path, answer, capsys, max_steps=1)
    (step,) = [e for e in events if e["event"] == "grpo_step"]
    assert step["masked_groups"] == 1 and step["audit"]["infra_error"] == 1
    # Masked: only group 0 is scored (mean 0.5). Counted, the three passes would lift it to 5/8.
    assert step["reward_mean"] == pytest.approx(0.5)
    assert record["masked_groups"] == 1


def test_the_audit_counts_tampered_verdicts_and_flags(tiny_model, tmp_path, capsys):
    def answer(req):
        out = alternating(req)
        out[1] = {"verdict": "tampered", "flags": ["conftest_planted"]}
        out[3] = {"verdict": "timeout"}
        return out

    _, events, _ = run_grpo(tiny_model, tmp_path, answer, capsys, max_steps=1)
    (step,) = [e for e in events if e["event"] == "grpo_step"]
    assert step["audit"]["tampered"] == 1 and step["audit"]["timeout"] == 1
    assert step["audit"]["flags"] == [{"flag": "conftest_planted", "count": 1}]
    # a tampered completion earns nothing: the mean is still the passes' share
    assert step["reward_mean"] == pytest.approx(0.5)
