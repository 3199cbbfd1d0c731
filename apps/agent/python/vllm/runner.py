"""The vLLM backend of `generate`, run by the vLLM venv's python (never imported by the trainer).

Input: a request JSON file (--request) written by agentlab_trainer/vllm_backend.py: the model,
engine settings, and prompts already tokenized by the trainer (token ids in, token ids out, so both
backends render, tokenize and decode with the same tokenizer code). Output: JSON lines on stdout:
  {"event": "loaded", "load_s", "versions": {...}}   once, after the engine is built
  {"event": "completion", "task_id", "index", "token_ids", "finish_reason"}   one per sample
  {"event": "done", "generate_s"}
Anything else (vLLM's own logs) goes to stderr. Exit 0 on success, 1 on any error (message on stderr)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from importlib import metadata


def emit(**fields) -> None:
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def versions() -> dict[str, str]:
    out = {}
    for dist in ("vllm", "torch", "transformers"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "missing"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="vllm-runner")
    parser.add_argument("--request", required=True)
    req = json.loads(open(parser.parse_args(argv).request, encoding="utf-8").read())

    from vllm import LLM, SamplingParams

    t0 = time.perf_counter()
    engine = dict(req["engine"])
    lora_request = None
    if req.get("adapter"):
        from vllm.lora.request import LoRARequest

        engine.update(enable_lora=True, max_lora_rank=int(req["max_lora_rank"]))
        lora_request = LoRARequest("adapter", 1, req["adapter"])
    llm = LLM(**engine)
    emit(event="loaded", load_s=round(time.perf_counter() - t0, 3), versions=versions())

    t1 = time.perf_counter()
    s = req["sampling"]
    params = [
        SamplingParams(
            n=int(p["n"]),
            temperature=float(s["temperature"]),
            top_p=float(s["top_p"]),
            max_tokens=int(s["max_tokens"]),
            seed=int(p["seed"]),
            stop_token_ids=[int(t) for t in s["stop_token_ids"]],
        )
        for p in req["prompts"]
    ]
    outs = llm.generate(
        [{"prompt_token_ids": p["prompt_token_ids"]} for p in req["prompts"]],
        params,
        lora_request=lora_request,
        use_tqdm=False,
    )
    for p, o in zip(req["prompts"], outs, strict=True):
        for c in sorted(o.outputs, key=lambda c: c.index):
            emit(
                event="completion",
                task_id=p["task_id"],
                index=int(c.index),
                token_ids=list(c.token_ids),
                finish_reason="length" if c.finish_reason == "length" else "stop",
            )
    emit(event="done", generate_s=round(time.perf_counter() - t1, 3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
