from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# One intra-op thread in the trainer CLIs these tests start too (the session fixture below sets it
# for this process only): on a shared 2-core box torch's default of one thread per core makes
# OpenMP spin-waits collapse under load (a tiny model's step 3x slower with 2 threads than with 1
# at load 12). The env is read when torch starts, so it must be set before any child imports it.
os.environ.setdefault("OMP_NUM_THREADS", os.environ.get("AGENTLAB_TEST_THREADS", "1"))

sys.path.insert(0, str(Path(__file__).parent))
from helpers import make_samples, write_jsonl  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
CORPUS = FIXTURES / "corpus.py.txt"
# Small enough for fast CPU tests, big enough to fit the fixtures.
TINY_SPEC = {
    "corpus": [str(CORPUS)],
    "vocab_size": 1024,
    "hidden_size": 128,
    "intermediate_size": 256,
    "num_layers": 2,
    "seed": 0,
}
# LoRA on every linear layer, lm_head included: the base is random, so the output projection is
# where a rank-16 adapter gets enough leverage to memorize 20 samples in a few seconds.
ALL_LINEAR = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"]


@pytest.fixture(scope="session", autouse=True)
def _threads():
    import torch

    torch.set_num_threads(int(os.environ.get("AGENTLAB_TEST_THREADS", "1")))


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    from agentlab_trainer import tiny_model as tm

    out = tmp_path_factory.mktemp("tiny") / "model"
    tm.run({**TINY_SPEC, "output_dir": str(out)})
    return out


@pytest.fixture(scope="session")
def tokenizer(tiny_model):
    from agentlab_trainer.modeling import load_tokenizer

    return load_tokenizer(str(tiny_model))


@pytest.fixture(scope="session")
def sft_files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("sft")
    return {
        "train": write_jsonl(d / "train.jsonl", make_samples(20)),
        "eval": write_jsonl(d / "eval.jsonl", make_samples(5, offset=100)),
    }


def run_cli(command: str, spec: dict, tmp: Path, **popen) -> tuple[int, list[dict], str]:
    """Run the CLI like the agent does; every stdout line must be a JSON event."""
    spec_file = tmp / f"{command}-spec.json"
    spec_file.write_text(json.dumps(spec))
    proc = subprocess.run(
        [sys.executable, "-m", "agentlab_trainer", command, "--spec", str(spec_file)],
        capture_output=True,
        text=True,
        timeout=300,
        **popen,
    )
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return proc.returncode, events, proc.stderr
