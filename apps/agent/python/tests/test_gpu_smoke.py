"""The GPU smoke's code runs (its --dry-run: the same steps on the CPU with a tiny config of
the same architecture), and without CUDA the real run refuses with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch


def _smoke(tmp_path, *args):
    return subprocess.run(
        [sys.executable, "-m", "agentlab_trainer.gpu_smoke", "--work", str(tmp_path), *args],
        capture_output=True,
        text=True,
        timeout=1200,
    )


def test_the_dry_run_trains_generates_and_checks(tmp_path):
    p = _smoke(tmp_path, "--dry-run")
    assert p.returncode == 0, p.stderr[-3000:]
    lines = [line for line in p.stdout.splitlines() if line.strip()]
    assert len(lines) == 1  # one JSON line
    out = json.loads(lines[0])
    assert out["bench"] == "gpu" and out["dry_run"] is True
    assert out["checks"] == {"adapter_changes_answers": True, "adapter_hash_round_trips": True}
    fp32 = out["train"]["lora-fp32"]
    assert fp32["steps"] == 8 and fp32["tokens_per_s"] > 0 and fp32["gradient_checkpointing"] is True
    assert out["generate_tokens_per_s"]["transformers"] > 0 and out["vllm_skipped"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-CUDA refusal")
def test_without_cuda_the_real_run_exits_2(tmp_path):
    p = _smoke(tmp_path)
    assert p.returncode == 2 and "CUDA is not available" in p.stderr
