"""What ends a completion, the same for both backends: the union of the end-of-turn token,
the tokenizer's eos, the checkpoint config's eos ids and its generation_config's eos ids. A
Llama-3.1 row that emits `<|eom_id|>` (an eos of its generation_config, not of the tokenizer) then
stops on the transformers path as it does on vLLM's. Also the hashes of the rendered prompts (the
whole job's and each task's), which the generate summary carries so that a template, date string
or tokenizer change between runs is visible: the control plane refuses to compare two models whose
prompt for the same task differs."""

from __future__ import annotations

import hashlib
from typing import Any


def _ids(value: Any) -> set[int]:
    if value is None:
        return set()
    if isinstance(value, int):
        return {value}
    return {int(v) for v in value}


def checkpoint_eos_ids(ref: str, revision: str | None, local_files_only: bool) -> set[int]:
    """eos ids of the model's config.json (and its text config) and of its generation_config.json."""
    from transformers import AutoConfig, GenerationConfig

    config = AutoConfig.from_pretrained(ref, revision=revision, local_files_only=local_files_only)
    ids = _ids(getattr(config, "eos_token_id", None))
    text = config.get_text_config() if hasattr(config, "get_text_config") else None
    if text is not None and text is not config:
        ids |= _ids(getattr(text, "eos_token_id", None))
    try:
        gen = GenerationConfig.from_pretrained(ref, revision=revision or "main", local_files_only=local_files_only)
    except OSError:  # no generation_config.json: nothing more to add
        return ids
    return ids | _ids(gen.eos_token_id)


def stop_token_ids(tokenizer, eot_id: int, cfg: dict[str, Any]) -> set[int]:
    stop = {int(eot_id)}
    if tokenizer.eos_token_id is not None:
        stop.add(int(tokenizer.eos_token_id))
    return stop | checkpoint_eos_ids(cfg["model_path"], None, True)


def prompts_sha256(encoded: list[tuple[str, list[int]]]) -> str:
    """sha256 over the (task id, prompt token ids) pairs in task order: the prompts as the model saw them."""
    h = hashlib.sha256()
    for task_id, ids in sorted(encoded, key=lambda e: e[0]):
        h.update(task_id.encode())
        h.update(b"\0")
        h.update(",".join(map(str, ids)).encode())
        h.update(b"\n")
    return h.hexdigest()


def prompt_sha256(ids: list[int]) -> str:
    """sha256 of one prompt's token ids: what the model saw for that task."""
    return hashlib.sha256(",".join(map(str, ids)).encode()).hexdigest()


def task_prompts_sha256(encoded: list[tuple[str, list[int]]]) -> dict[str, str]:
    """Each task's prompt hash. Per task rather than per job because answers reused from the cache
    and answers generated now are compared task by task, and a job holds only the missing tasks."""
    return {task_id: prompt_sha256(ids) for task_id, ids in encoded}
