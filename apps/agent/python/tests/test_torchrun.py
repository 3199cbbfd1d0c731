"""`train` with spec.world_size = 2 runs under torchrun (gloo on CPU): one event stream (rank 0's),
one result, one set of snapshots, and the same losses and adapter as one process. The one-process
reference runs in this process (no second interpreter to start); the run under torchrun goes
through the CLI like the agent's."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from agentlab_trainer import distributed as dd
from agentlab_trainer.common import CancelFlag, UserError
from agentlab_trainer.train import train
from conftest import run_cli
from helpers import make_samples, write_jsonl

LORA = {"r": 8, "alpha": 16, "dropout": 0.0, "target_modules": ["q_proj", "v_proj", "down_proj", "lm_head"]}


def spec_for(tiny_model: Path, data: Path, out: Path, world_size: int) -> dict:
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
        "world_size": world_size,
    }


def test_two_ranks_under_torchrun_match_one_process(tiny_model, tmp_path):
    data = write_jsonl(tmp_path / "train.jsonl", make_samples(7, offset=3))  # 2 windows, the last short
    rec1 = train(spec_for(tiny_model, data, tmp_path / "one", 1), CancelFlag())
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    code2, ev2, err2 = run_cli("train", spec_for(tiny_model, data, tmp_path / "two", 2), tmp_path, env=env)
    assert code2 == 0, err2[-3000:]
    results = [e for e in ev2 if e["event"] == "result"]
    assert len(results) == 1 and results[0]["status"] == "succeeded"
    rec2 = results[0]["record"]
    assert rec2["world_size"] == 2 and rec1["world_size"] == 1
    assert [e["step"] for e in ev2 if e["event"] == "progress"] == [1, 2]  # rank 0 only
    assert len([e for e in ev2 if e["event"] == "artifact"]) == 1
    assert rec2["supervised_tokens"] == rec1["supervised_tokens"]
    assert rec2["final_train_loss"] == pytest.approx(rec1["final_train_loss"], rel=1e-5)
    a = load_file(str(tmp_path / "one" / "epoch-1" / "adapter_model.safetensors"))
    b = load_file(str(tmp_path / "two" / "epoch-1" / "adapter_model.safetensors"))
    assert a.keys() == b.keys()
    for k in a:
        torch.testing.assert_close(a[k], b[k], atol=1e-6, rtol=1e-4)
    assert json.loads((tmp_path / "two" / "epoch-1" / "agentlab-snapshot.json").read_text())["epoch"] == 1


# What torchrun prints when a rank dies (torch 2.13, ChildFailedError), trimmed.
SUMMARY = """\
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
agentlab_trainer FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2026-12-01_13:40:00
  host      : box
  rank      : 0 (local_rank: 0)
  exitcode  : 143 (pid: 41)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-12-01_13:39:59
  host      : box
  rank      : 1 (local_rank: 1)
  exitcode  : -9 (pid: 42)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 42
============================================================
"""


def test_a_failure_names_the_root_cause_rank_from_torchruns_summary():
    import io

    failure: dict[str, str] = {}
    dd._copy_stderr(io.StringIO(SUMMARY), failure)
    # the root cause, not the first row of "Failures" (rank 0, stopped by torchrun)
    assert dd.describe_failure(failure) == "rank 1 (local_rank: 1) exited -9: Signal 9 (SIGKILL) received by PID 42"
    assert dd.describe_failure({}) == "torchrun gave no failure summary"


def test_world_size_is_read_from_the_spec_and_checked():
    assert dd.ranks_of({}) == 1
    assert dd.ranks_of({"world_size": 3}) == 3
    for bad in (0, True, "2"):
        with pytest.raises(UserError, match="world_size"):
            dd.ranks_of({"world_size": bad})
    dd.preflight({"device": "cpu", "world_size": 2}, 2)  # CPU ranks: nothing to check
    if not torch.cuda.is_available():
        with pytest.raises(UserError, match="CUDA"):
            dd.preflight({"device": "cuda", "world_size": 2}, 2)


def fake_torchrun(monkeypatch, tmp_path, stdout_events: list[dict], stderr: str, code: int) -> None:
    """torchrun replaced by a script printing what torchrun would (rank 0's events, a summary)."""
    script = tmp_path / "fake_torchrun.py"
    lines = "".join(json.dumps(e) + "\n" for e in stdout_events)
    script.write_text(f"import sys\nsys.stdout.write({lines!r})\nsys.stderr.write({stderr!r})\nsys.exit({code})\n")
    monkeypatch.setattr(dd, "torchrun_argv", lambda n, c, s: [sys.executable, str(script)])


def launched(capsys, cancel: CancelFlag | None = None) -> tuple[int, list[dict]]:
    rc = dd.launch(2, "train", "/unused/spec.json", cancel or CancelFlag())
    return rc, [json.loads(line) for line in capsys.readouterr().out.splitlines()]


PROGRESS = {"event": "progress", "step": 1}
RECORD = {"status": "canceled", "epochs_completed": 1}


def test_the_launcher_turns_torchruns_exit_into_the_runs_result(monkeypatch, tmp_path, capsys):
    ok = {"event": "result", "command": "train", "status": "succeeded", "record": {"world_size": 2}}
    fake_torchrun(monkeypatch, tmp_path, [PROGRESS, ok], "", 0)
    assert launched(capsys) == (0, [PROGRESS, ok])  # positive control: relayed as is

    # a rank died: torchrun stopped rank 0 (its "canceled") and exited 1 -> failed, naming rank 1
    stopped = {"event": "result", "status": "canceled", "record": RECORD}
    fake_torchrun(monkeypatch, tmp_path, [PROGRESS, stopped], SUMMARY, 1)
    rc, out = launched(capsys)
    assert rc == 1 and out[0] == PROGRESS and out[-1]["status"] == "failed"
    assert out[-1]["error"]["kind"] == "internal_error"
    assert "rank 1 (local_rank: 1) exited -9: Signal 9 (SIGKILL)" in out[-1]["error"]["message"]
    assert "torchrun exited 1" in out[-1]["error"]["message"]

    # the same exit after the agent's SIGTERM reached the launcher: a cancel, with rank 0's record
    flag = CancelFlag()
    flag.signum = 15
    rc, out = launched(capsys, flag)
    assert rc == 143 and out[-1]["status"] == "canceled" and out[-1]["record"] == RECORD

    # bad data fails every rank alike: rank 0's user error, exit 3 (never retried as infra)
    bad = {"event": "result", "status": "failed", "error": {"kind": "user_error", "message": "dataset is empty"}}
    fake_torchrun(monkeypatch, tmp_path, [bad], SUMMARY, 1)
    rc, out = launched(capsys)
    assert rc == 3 and out == [bad]

    # no result and no summary (torchrun itself failed): still one failed result
    fake_torchrun(monkeypatch, tmp_path, [], "boom\n", 2)
    rc, out = launched(capsys)
    assert rc == 1 and [e["status"] for e in out] == ["failed"]
    assert "torchrun gave no failure summary; torchrun exited 2" in out[0]["error"]["message"]
