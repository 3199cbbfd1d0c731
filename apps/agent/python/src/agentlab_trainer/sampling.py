"""n samples per prompt with a seed per sample.

Every sample has its own seed, recorded in its `generation` event: sample i of a task uses
`task_seed(seed, task_id) + i`. That is vLLM's own rule for `n` (a request with seed s and n > 1
runs its i-th child with seed s + i, vllm/v1/engine/parallel_sampling.py), so the transformers
path records seeds with the same meaning; the two backends' random streams still differ.

On the transformers path the draw is made per row by `PerRowSampler`, each row with its own
torch.Generator, instead of by `generate`'s single global RNG: a sample then depends only on its
prompt, its seed and the decoding parameters, not on which other prompts shared its batch or on the
batch size, so a cached sample (keyed by task, model, protocol and sample index) is the one a
re-run would produce."""

from __future__ import annotations

import hashlib
from typing import Any

# Task seeds stay below 2**31 so that seed + index fits every consumer (torch, vLLM, numpy, JSON).
_SEED_SPACE = 2**31 - 2**20


def is_sampling(cfg: dict[str, Any]) -> bool:
    """samples > 1 implies sampling: n greedy answers to one prompt would all be the same."""
    return bool(cfg["do_sample"]) or int(cfg["samples"]) > 1


def task_seed(seed: int, task_id: str) -> int:
    """The base seed of one task's samples, mixed with the task id so that tasks do not share a
    random stream (sample i of every task drawing the same uniforms would correlate the tasks)."""
    digest = hashlib.sha256(f"{int(seed)}:{task_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % _SEED_SPACE


def sample_seeds(seed: int, task_id: str, samples: int) -> list[int]:
    base = task_seed(seed, task_id)
    return [base + i for i in range(samples)]


def top_p_filter(scores, top_p: float):
    """Scores of tokens outside the nucleus set to -inf: the smallest set of most likely tokens whose
    probability reaches top_p (the most likely token always stays), as transformers' TopPLogitsWarper."""
    import torch

    if top_p >= 1.0:
        return scores
    sorted_scores, order = torch.sort(scores, descending=True, dim=-1)
    cum = sorted_scores.softmax(dim=-1).cumsum(dim=-1)
    # a token is dropped when the tokens before it already reach top_p
    drop_sorted = (cum - sorted_scores.softmax(dim=-1)) >= top_p
    drop_sorted[..., 0] = False
    drop = drop_sorted.scatter(-1, order, drop_sorted)
    return scores.masked_fill(drop, float("-inf"))


def make_per_row_sampler(seeds: list[int], temperature: float, top_p: float, device: str):
    """A transformers LogitsProcessor that draws each row's next token with that row's generator and
    returns scores that are -inf everywhere but at the drawn token, so `generate`'s own final pick
    (multinomial over a one-hot distribution, or argmax) can only take that token."""
    import torch
    from transformers import LogitsProcessor

    class PerRowSampler(LogitsProcessor):
        def __init__(self) -> None:
            self.generators = [torch.Generator(device=device).manual_seed(int(s)) for s in seeds]

        def __call__(self, input_ids, scores):
            if scores.shape[0] != len(self.generators):
                raise RuntimeError(f"PerRowSampler: {scores.shape[0]} rows for {len(self.generators)} seeds")
            probs = top_p_filter(scores.float() / temperature, top_p).softmax(dim=-1)
            picks = torch.stack(
                [torch.multinomial(probs[r], 1, generator=g) for r, g in enumerate(self.generators)]
            ).squeeze(-1)
            out = torch.full_like(scores, float("-inf"))
            out[torch.arange(scores.shape[0], device=scores.device), picks] = 0.0
            return out

    return PerRowSampler()
