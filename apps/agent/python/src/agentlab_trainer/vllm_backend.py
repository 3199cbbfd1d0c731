"""The vLLM backend of `generate`, as a client of apps/agent/python/vllm/runner.py running in the
vLLM venv (its own pinned torch and transformers, see vllm/requirements.txt). The trainer tokenizes,
picks stop ids and seeds and decodes; the runner only turns token ids into token ids."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .common import CancelFlag, UserError

VLLM_DIR = Path(__file__).resolve().parents[2] / "vllm"
RUNNER = VLLM_DIR / "runner.py"
# vLLM's LoRA engine accepts only these max_lora_rank values.
VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)


def vllm_python() -> Path:
    """The vLLM venv's interpreter: AGENTLAB_VLLM_PYTHON, else apps/agent/python/vllm/.venv."""
    env = os.environ.get("AGENTLAB_VLLM_PYTHON")
    return Path(env) if env else VLLM_DIR / ".venv" / "bin" / "python"


def vllm_available() -> bool:
    return vllm_python().is_file() and RUNNER.is_file()


def max_lora_rank(r: int) -> int:
    """The smallest accepted max_lora_rank that holds rank r (e.g. 24 -> 32)."""
    for allowed in VLLM_LORA_RANKS:
        if r <= allowed:
            return allowed
    raise UserError(f"LoRA rank {r} is above vLLM's largest max_lora_rank ({VLLM_LORA_RANKS[-1]})")


def build_request(
    cfg: dict[str, Any], encoded: list[tuple[str, list[int]]], stop_ids: set[int], seeds: dict[str, int], dtype: str
) -> dict[str, Any]:
    """The runner's request: the same explicit sampling parameters and stop ids as the transformers
    path; `seeds` maps each task to the seed of its sample 0 (vLLM seeds child i with seed + i)."""
    from .sampling import is_sampling

    sampling = is_sampling(cfg)
    engine: dict[str, Any] = {
        # the snapshot folder the trainer resolved: the vLLM process needs no hub access
        "model": cfg["model_path"],
        "tokenizer": cfg["model_path"],
        "dtype": dtype,
        "seed": int(cfg["seed"]),
    }
    if not cfg["use_checkpoint_generation_config"]:
        engine["generation_config"] = "vllm"  # vLLM's neutral defaults, not the checkpoint's generation_config
    req: dict[str, Any] = {
        "engine": engine,
        "adapter": str(cfg["adapter"]) if cfg["adapter"] else None,
        "sampling": {
            "temperature": float(cfg["temperature"]) if sampling else 0.0,
            "top_p": float(cfg["top_p"]) if sampling else 1.0,
            "max_tokens": int(cfg["max_new_tokens"]),
            "stop_token_ids": sorted(stop_ids),
        },
        "prompts": [
            {"task_id": t, "prompt_token_ids": ids, "n": int(cfg["samples"]), "seed": seeds[t]} for t, ids in encoded
        ],
    }
    if cfg["adapter"]:
        rank = json.loads((Path(cfg["adapter"]) / "adapter_config.json").read_text()).get("r", 16)
        req["max_lora_rank"] = max_lora_rank(int(rank))
    return req


def run_vllm(request: dict[str, Any], cancel: CancelFlag) -> Iterator[dict[str, Any]]:
    """Runs the runner and yields its JSON events; kills it on cancel; a failure names its stderr tail."""
    python = vllm_python()
    if not vllm_available():
        raise UserError(
            f"backend vllm requested but the vLLM environment is missing ({python}); "
            "scripts/setup-python.sh makes it on CUDA boxes"
        )
    with tempfile.TemporaryDirectory(prefix="agentlab-vllm-") as tmp:
        req_file = Path(tmp) / "request.json"
        req_file.write_text(json.dumps(request), encoding="utf-8")
        err_file = Path(tmp) / "stderr.txt"
        with err_file.open("w") as err:
            proc = subprocess.Popen(
                [str(python), str(RUNNER), "--request", str(req_file)], stdout=subprocess.PIPE, stderr=err, text=True
            )
            assert proc.stdout is not None
            try:
                for line in proc.stdout:
                    if cancel.is_set:
                        proc.kill()
                        cancel.raise_if_set()
                    if line.strip():
                        yield json.loads(line)
                code = proc.wait()
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        if code != 0:
            tail = err_file.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"the vLLM runner exited with {code}: {tail}")
