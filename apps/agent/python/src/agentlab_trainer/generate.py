"""`generate`: greedy (default) or sampled decoding for a base model or base+adapter over a list of
prompts, batched with left padding and a fixed max_new_tokens. vLLM (its own venv and process,
vllm_backend.py) when that environment exists and CUDA does, transformers otherwise. `samples` answers per prompt (1, the default: greedy unless
do_sample; more: sampled, each with its own recorded seed, see sampling.py). One `generation` event
per answer, with its task id, sample index and seed.

Decoding comes from the spec only: the checkpoint's generation_config (repetition_penalty, top_k,
...) is NOT applied unless `use_checkpoint_generation_config` says so. The adapter folder is hashed
and compared with `expected_adapter_sha256` before anything is loaded. The summary records what
the run actually used (backend and version, dtype, device, stop tokens, model revision or weights
hash, adapter hash), which the control plane checks against the recipe."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, NamedTuple

from . import data as D
from . import vllm_backend
from .common import (
    CancelFlag,
    UserError,
    emit,
    environment_info,
    log,
    peak_memory_mb,
    pick_device,
    sha256_text,
    sha256_tree,
    weights_hash,
)
from .sampling import is_sampling, make_per_row_sampler, sample_seeds, task_seed
from .spec_schema import spec_defaults
from .stops import prompts_sha256, stop_token_ids, task_prompts_sha256

# The values of the keys a spec may leave out: the contract's (zod) defaults, read from its schema.
GEN_DEFAULTS: dict[str, Any] = spec_defaults("generate")


def normalize_spec(spec: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(spec.get("base_model"), str) or not spec["base_model"]:
        raise UserError("generate spec needs base_model")
    cfg = {**GEN_DEFAULTS, **{k: v for k, v in spec.items() if v is not None}}
    prompts = cfg.get("prompts")
    if not isinstance(prompts, list):
        raise UserError("generate spec needs prompts: [{task_id, messages}]")
    seen = set()
    for p in prompts:
        if (
            not isinstance(p, dict)
            or not isinstance(p.get("task_id"), str)
            or not isinstance(p.get("messages"), list)
            or not p["messages"]
        ):
            raise UserError("each prompt needs task_id (string) and messages (non-empty list)")
        if p["task_id"] in seen:
            raise UserError(f"duplicate task_id {p['task_id']!r}")
        seen.add(p["task_id"])
    if not isinstance(cfg["max_new_tokens"], int) or cfg["max_new_tokens"] < 1:
        raise UserError("max_new_tokens must be an integer >= 1")
    if not isinstance(cfg["samples"], int) or isinstance(cfg["samples"], bool) or cfg["samples"] < 1:
        raise UserError("samples must be an integer >= 1")
    if not isinstance(cfg["batch_size"], int) or cfg["batch_size"] < 1:
        raise UserError("batch_size must be an integer >= 1")
    if cfg["backend"] not in ("auto", "transformers", "vllm"):
        raise UserError("backend must be auto, transformers or vllm")
    if cfg["adapter"] and not Path(cfg["adapter"]).is_dir():
        raise UserError(f"adapter folder not found: {cfg['adapter']}")
    if cfg["dtype"] not in ("auto", "float32", "bfloat16"):
        raise UserError("dtype must be auto, float32 or bfloat16")
    return cfg


def verify_adapter(cfg: dict[str, Any]) -> str | None:
    """The adapter's tree hash, refused unless it equals the expected (trained snapshot's) hash."""
    if not cfg["adapter"]:
        if cfg["expected_adapter_sha256"]:
            raise UserError("an adapter hash was expected but no adapter folder was given")
        return None
    digest = sha256_tree(cfg["adapter"])
    want = cfg["expected_adapter_sha256"]
    if want and digest != want:
        raise UserError(f"adapter hash mismatch: the folder hashes to {digest}, the trained snapshot is {want}")
    return digest


def resolve_dtype(cfg: dict[str, Any], device: str) -> str:
    dtype = cfg["dtype"] if cfg["dtype"] != "auto" else ("bfloat16" if device == "cuda" else "float32")
    if dtype == "bfloat16" and device != "cuda":
        raise UserError("bfloat16 generation needs CUDA")
    return dtype


def recipe_generation_config(cfg: dict[str, Any], stop_ids: set[int], pad_id: int):
    """A GenerationConfig built only from the spec: nothing from the checkpoint's generation_config."""
    from transformers import GenerationConfig

    kw: dict[str, Any] = {
        "max_new_tokens": cfg["max_new_tokens"],
        "do_sample": is_sampling(cfg),
        "eos_token_id": sorted(stop_ids),
        "pad_token_id": pad_id,
    }
    if is_sampling(cfg):
        # Temperature and top_p are applied by the per-row sampler (sampling.py), which hands generate
        # a one-hot distribution; generate's own warpers stay neutral so they cannot alter it.
        kw.update(temperature=1.0, top_p=1.0, top_k=0, num_return_sequences=int(cfg["samples"]))
    return GenerationConfig(**kw)


class Answer(NamedTuple):
    """One completion: sample `sample_index` of a task, drawn with `seed` (None: greedy)."""

    task_id: str
    sample_index: int
    seed: int | None
    prompt_tokens: int
    tokens: list[int]
    finish_reason: str


class Loaded(NamedTuple):
    """Yielded by a backend once its model is loaded: generation time is measured from here.
    versions: the backend process's own library versions (the vLLM venv's), empty in-process."""

    versions: dict[str, str]


def prompt_ids(tokenizer, messages: list[dict[str, str]]) -> list[int]:
    text = D.render(tokenizer, messages, add_generation_prompt=True)
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def _finish(ids: list[int], stop_ids: set[int], max_new: int) -> tuple[list[int], str]:
    for i, t in enumerate(ids):
        if t in stop_ids:
            return ids[:i], "stop"
    return ids, ("length" if len(ids) >= max_new else "stop")


def load_generation_model(cfg: dict[str, Any], recipe, device: str):
    """The base model (and adapter) in eval mode on `device`, decoding from `recipe` only unless the
    spec asks for the checkpoint's generation_config (episode_policy.py loads its model here too)."""
    import torch
    from transformers import AutoModelForCausalLM

    dtype = torch.bfloat16 if resolve_dtype(cfg, device) == "bfloat16" else torch.float32
    model = AutoModelForCausalLM.from_pretrained(cfg["model_path"], dtype=dtype, local_files_only=True).to(device)  # type: ignore[arg-type]  # transformers' typed .to() wrapper
    if not cfg.get("use_checkpoint_generation_config"):
        # transformers fills every unset field of a passed config from model.generation_config (the
        # checkpoint's), so that one is replaced too: the checkpoint's values are never consulted.
        model.generation_config = recipe
    if cfg["adapter"]:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, cfg["adapter"])
    model.eval()
    return model


def generate_transformers(
    cfg: dict[str, Any], tokenizer, encoded: list[tuple[str, list[int]]], stop_ids: set[int], cancel: CancelFlag
):
    import torch
    from transformers import LogitsProcessorList

    device = pick_device(cfg["device"])
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else next(iter(stop_ids))
    recipe = recipe_generation_config(cfg, stop_ids, pad_id)
    model = load_generation_model(cfg, recipe, device)
    yield Loaded({})
    sampling, n = is_sampling(cfg), int(cfg["samples"])
    # longest first: similar lengths share a batch, less padding
    order = sorted(range(len(encoded)), key=lambda i: (-len(encoded[i][1]), i))
    bs = max(1, cfg["batch_size"] // n)  # batch_size counts sequences; a prompt's n samples share a batch
    for s in range(0, len(order), bs):
        cancel.raise_if_set()
        chunk = [encoded[i] for i in order[s : s + bs]]
        seeds = [sample_seeds(cfg["seed"], task_id, n) for task_id, _ in chunk]
        gen_kwargs: dict[str, Any] = {"generation_config": recipe}
        if sampling:
            # rows come prompt-major, as generate expands them for num_return_sequences
            row_seeds = [seed for per_task in seeds for seed in per_task]
            sampler = make_per_row_sampler(row_seeds, float(cfg["temperature"]), float(cfg["top_p"]), device)
            gen_kwargs["logits_processor"] = LogitsProcessorList([sampler])
        width = max(len(ids) for _, ids in chunk)
        input_ids = torch.full((len(chunk), width), pad_id, dtype=torch.long)
        attn = torch.zeros((len(chunk), width), dtype=torch.long)
        for r, (_, ids) in enumerate(chunk):  # left padding
            input_ids[r, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
            attn[r, width - len(ids) :] = 1
        with torch.no_grad():
            out = model.generate(input_ids=input_ids.to(device), attention_mask=attn.to(device), **gen_kwargs)
        for r, (task_id, ids) in enumerate(chunk):
            for i in range(n):
                new, reason = _finish(out[r * n + i, width:].tolist(), stop_ids | {pad_id}, cfg["max_new_tokens"])
                yield Answer(task_id, i, seeds[r][i] if sampling else None, len(ids), new, reason)


def generate_vllm(
    cfg: dict[str, Any], tokenizer, encoded: list[tuple[str, list[int]]], stop_ids: set[int], cancel: CancelFlag
):
    """vLLM in its own venv and process (vllm_backend.py): the same token ids, stop ids and sampling
    parameters as the transformers path; sample i of a task seeded with the task seed + i."""
    sampling = is_sampling(cfg)
    seeds = {t: task_seed(cfg["seed"], t) if sampling else int(cfg["seed"]) for t, _ in encoded}
    request = vllm_backend.build_request(cfg, encoded, stop_ids, seeds, resolve_dtype(cfg, "cuda"))
    prompt_len = {t: len(ids) for t, ids in encoded}
    for ev in vllm_backend.run_vllm(request, cancel):
        if ev["event"] == "loaded":
            yield Loaded(ev["versions"])
        elif ev["event"] == "completion":
            t, i = ev["task_id"], int(ev["index"])
            new, _ = _finish(list(ev["token_ids"]), stop_ids, cfg["max_new_tokens"])
            yield Answer(t, i, seeds[t] + i if sampling else None, prompt_len[t], new, ev["finish_reason"])


def run(spec: dict[str, Any], cancel: CancelFlag) -> dict[str, Any]:
    from .modeling import load_tokenizer, resolve_model

    t0 = time.time()
    cfg = normalize_spec(spec)
    adapter_sha = verify_adapter(cfg)  # before any loading: the evaluated adapter is the trained one
    cfg["model_path"], _ = resolve_model(cfg["base_model"], cfg["revision"], cfg["local_files_only"])
    tokenizer = load_tokenizer(cfg["model_path"], True)
    eot, eot_id = D.resolve_eot(tokenizer, cfg["eot_token"])
    stop_ids = stop_token_ids(tokenizer, eot_id, cfg)
    encoded = [(p["task_id"], prompt_ids(tokenizer, p["messages"])) for p in cfg["prompts"]]
    backend = cfg["backend"]
    if backend == "auto":
        backend = "vllm" if vllm_backend.vllm_available() and pick_device(cfg["device"]) == "cuda" else "transformers"
    log(f"generating {len(encoded)} x {cfg['samples']} completions with {backend}", also_event=True)
    gen = generate_vllm if backend == "vllm" else generate_transformers
    n_new = 0
    t_gen = time.time()
    versions: dict[str, str] = {}
    for a in gen(cfg, tokenizer, encoded, stop_ids, cancel):
        if isinstance(a, Loaded):
            t_gen, versions = time.time(), a.versions  # tokens/s counts generation, not loading
            continue
        n_new += len(a.tokens)
        emit(
            "generation",
            task_id=a.task_id,
            sample_index=a.sample_index,
            seed=a.seed,
            text=tokenizer.decode(a.tokens, skip_special_tokens=True),
            prompt_tokens=a.prompt_tokens,
            completion_tokens=len(a.tokens),
            finish_reason=a.finish_reason,
        )
    gen_time = time.time() - t_gen
    device = pick_device(cfg["device"])
    template = tokenizer.chat_template if isinstance(tokenizer.chat_template, str) else str(tokenizer.chat_template)
    env = environment_info()
    return {
        "backend": backend,
        "backend_version": versions.get("vllm") or env.get(backend) or "unknown",
        # the vLLM venv's own versions (its torch and transformers differ from the trainer's)
        "backend_environment": versions or None,
        "prompts_sha256": prompts_sha256(encoded),
        "task_prompts_sha256": task_prompts_sha256(encoded),
        "dtype": resolve_dtype(cfg, device),
        "device": device,
        "stop": sorted(tokenizer.convert_ids_to_tokens(sorted(stop_ids))),
        "generation_config": "checkpoint" if cfg["use_checkpoint_generation_config"] else "recipe",
        "model": model_identity(cfg),
        "count": len(encoded),
        "base_model": cfg["base_model"],
        "adapter": cfg["adapter"],
        "adapter_sha256": adapter_sha,
        "decoding": {
            "do_sample": is_sampling(cfg),
            "samples": int(cfg["samples"]),
            "temperature": float(cfg["temperature"]) if is_sampling(cfg) else 0.0,
            "top_p": float(cfg["top_p"]) if is_sampling(cfg) else 1.0,
            "seed": int(cfg["seed"]),
            "max_new_tokens": cfg["max_new_tokens"],
        },
        "chat_template_sha256": sha256_text(template),
        "completion_tokens": n_new,
        "tokens_per_s": round(n_new / gen_time, 3) if gen_time > 0 else 0.0,
        "wall_time_s": round(time.time() - t0, 4),
        "peak_memory_mb": round(peak_memory_mb(device), 1),
        "environment": env,
    }


def model_identity(cfg: dict[str, Any]) -> dict[str, Any]:
    """A local folder is named by the hash of its weight files; a hub id by the commit its revision
    resolves to and the hash of that snapshot's weight files."""
    from .modeling import resolve_model

    folder, commit = resolve_model(cfg["base_model"], cfg["revision"], cfg["local_files_only"])
    return {"ref": cfg["base_model"], "revision": commit, "weights_sha256": weights_hash(folder)}


def main(spec: dict[str, Any], cancel: CancelFlag) -> None:
    emit("result", command="generate", status="succeeded", generate=run(spec, cancel))
