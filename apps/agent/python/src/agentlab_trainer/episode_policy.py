"""`episode-policy`: a local model as an episode's policy, loaded once for a whole episode job
(the main episode and its continuations) and asked one turn at a time.

The agent serves a Unix socket (`policy_socket`); this process connects, sends one `ready` line
(the weights, adapter and template it loaded: the policy's identity), then answers each request
line {id, messages, seed} with one line: the completion and the tool call parsed from it
(tool_template.py), or an error when the prompt would not fit the model's context. Decoding is the
generate command's (recipe generation config, stop ids, per-row seeded sampler): greedy, or
sampled with the request's seed. The agent closing the socket ends the command.

Test hook: AGENTLAB_TEST_POLICY_COMPLETIONS names a JSON list of completions that replace the
model's, turn by turn (the last one repeats), still parsed here and sent back like the model's.
It is in the `ready` line as a hash, so such a run is another policy in every record."""

from __future__ import annotations

import json
import os
import socket
import time
from typing import Any

from . import data as D
from .common import CancelFlag, UserError, emit, log, pick_device, sha256_file, sha256_text
from .generate import _finish, load_generation_model, model_identity, recipe_generation_config, verify_adapter
from .sampling import make_per_row_sampler
from .spec_schema import spec_defaults
from .stops import stop_token_ids
from .tool_template import parse_tool_call, render, use_template

DEFAULTS: dict[str, Any] = spec_defaults("episode-policy")
TEST_HOOK = "AGENTLAB_TEST_POLICY_COMPLETIONS"


class Lines:
    """Newline-framed JSON over the socket, polling the cancel flag while it waits."""

    def __init__(self, sock: socket.socket, cancel: CancelFlag) -> None:
        self.sock, self.cancel, self.buf = sock, cancel, b""
        sock.settimeout(1.0)

    def read(self) -> dict[str, Any] | None:
        while b"\n" not in self.buf:
            self.cancel.raise_if_set()
            try:
                chunk = self.sock.recv(1 << 16)
            except TimeoutError:
                continue
            if not chunk:
                return None  # the agent closed the socket: the job is over
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def write(self, obj: dict[str, Any]) -> None:
        self.sock.settimeout(None)
        self.sock.sendall((json.dumps(obj, ensure_ascii=False) + "\n").encode())
        self.sock.settimeout(1.0)


def context_tokens(model) -> int:
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    return int(getattr(config, "max_position_embeddings", 0) or 1 << 20)


def test_completions() -> tuple[list[str] | None, str | None]:
    path = os.environ.get(TEST_HOOK)
    if not path:
        return None, None
    items = json.loads(open(path, encoding="utf-8").read())
    if not isinstance(items, list) or not items or not all(isinstance(t, str) for t in items):
        raise UserError(f"{TEST_HOOK} must name a non-empty JSON list of strings")
    log(f"test hook: completions replaced from {path}", also_event=True)
    return items, sha256_file(path)


class Policy:
    """The loaded model and how it decodes one turn."""

    def __init__(self, cfg: dict[str, Any]) -> None:
        import torch

        from .modeling import load_tokenizer, resolve_model

        if cfg["torch_threads"]:
            torch.set_num_threads(int(cfg["torch_threads"]))
        self.cfg = cfg
        self.adapter_sha = verify_adapter(cfg)  # before loading: the adapter is the one named
        cfg["model_path"], _ = resolve_model(cfg["base_model"], cfg["revision"], cfg["local_files_only"])
        self.tokenizer = load_tokenizer(cfg["model_path"], True)
        use_template(self.tokenizer, cfg["chat_template"], cfg["tools"])
        _, eot_id = D.resolve_eot(self.tokenizer, None)
        self.stop_ids = stop_token_ids(self.tokenizer, eot_id, cfg)
        self.device = pick_device(cfg["device"])
        tok = self.tokenizer
        self.pad_id = tok.pad_token_id if tok.pad_token_id is not None else next(iter(self.stop_ids))
        self.recipe = recipe_generation_config({**cfg, "samples": 1}, self.stop_ids, self.pad_id)
        self.model = load_generation_model(cfg, self.recipe, self.device)
        self.context = context_tokens(self.model)
        self.scripted, self.scripted_sha = test_completions()
        self.turns = self.prompt_tokens = self.completion_tokens = 0
        self.generate_s = 0.0

    def ready(self) -> dict[str, Any]:
        template = self.tokenizer.chat_template
        return {
            "event": "ready",
            "model": model_identity(self.cfg),
            "adapter_sha256": self.adapter_sha,
            "chat_template_sha256": sha256_text(template if isinstance(template, str) else str(template)),
            "device": self.device,
            "dtype": str(self.model.dtype).removeprefix("torch."),
            "context_tokens": self.context,
            "test_completions_sha256": self.scripted_sha,
        }

    def answer(self, req: dict[str, Any]) -> dict[str, Any]:
        text = render(self.tokenizer, req["messages"], self.cfg["tools"])
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        need = len(ids) + self.cfg["max_new_tokens"]
        if need > self.context:
            message = f"the prompt ({len(ids)} tokens) and max_new_tokens need {need}; the model takes {self.context}"
            return {"id": req["id"], "error": {"kind": "context", "message": message}}
        t0 = time.time()
        new, reason = self.generate(ids, req["seed"])
        self.generate_s += time.time() - t0
        completion = self.tokenizer.decode(new, skip_special_tokens=False)
        if self.scripted is not None:
            completion = self.scripted[min(self.turns, len(self.scripted) - 1)]
        call, malformed = parse_tool_call(completion)
        self.turns += 1
        self.prompt_tokens += len(ids)
        self.completion_tokens += len(new)
        return {
            "id": req["id"],
            "text": completion,
            "call": call,
            "malformed": malformed,
            "prompt_tokens": len(ids),
            "completion_tokens": len(new),
            "finish_reason": reason,
        }

    def generate(self, ids: list[int], seed: int | None) -> tuple[list[int], str]:
        import torch
        from transformers import LogitsProcessorList

        kwargs: dict[str, Any] = {"generation_config": self.recipe}
        if self.cfg["do_sample"]:
            if seed is None:
                raise UserError("a sampled policy's turn needs a seed")
            sampler = make_per_row_sampler(
                [seed], float(self.cfg["temperature"]), float(self.cfg["top_p"]), self.device
            )
            kwargs["logits_processor"] = LogitsProcessorList([sampler])
        input_ids = torch.tensor([ids], dtype=torch.long, device=self.device)
        with torch.no_grad():
            out = self.model.generate(input_ids=input_ids, attention_mask=torch.ones_like(input_ids), **kwargs)
        return _finish(out[0, len(ids) :].tolist(), self.stop_ids | {self.pad_id}, self.cfg["max_new_tokens"])


def normalize_spec(spec: dict[str, Any]) -> dict[str, Any]:
    cfg = {**DEFAULTS, **{k: v for k, v in spec.items() if v is not None}}
    # generate's helpers read these keys: one decoding path for both commands
    return {**cfg, "use_checkpoint_generation_config": False, "adapter": cfg.get("adapter")}


def main(spec: dict[str, Any], cancel: CancelFlag) -> None:
    t0 = time.time()
    cfg = normalize_spec(spec)
    policy = Policy(cfg)
    load_s = time.time() - t0
    log(f"policy loaded on {policy.device} in {load_s:.1f}s; context {policy.context} tokens", also_event=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(cfg["policy_socket"])
    except OSError as e:
        raise UserError(f"policy_socket {cfg['policy_socket']}: cannot connect to the agent ({e})") from e
    lines = Lines(sock, cancel)
    lines.write(policy.ready())
    try:
        while (req := lines.read()) is not None:
            lines.write(policy.answer(req))
    finally:
        sock.close()
    emit(
        "result",
        command="episode-policy",
        status="succeeded",
        episode_policy={
            "turns": policy.turns,
            "prompt_tokens": policy.prompt_tokens,
            "completion_tokens": policy.completion_tokens,
            "generate_time_s": round(policy.generate_s, 4),
            "load_time_s": round(load_s, 4),
        },
    )
