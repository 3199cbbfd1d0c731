"""DPO data and loss: preference pairs rendered through the full chat template with assistant-only
labels (data.encode, the SFT masking), per-sequence log-probs, and the sigmoid DPO loss.

A pair line: {"pair_id": str, "prompt": [messages, no final assistant turn], "chosen": str,
"rejected": str, "weight": float (default 1)}."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import data as D
from .common import UserError, read_jsonl


@dataclass
class Pair:
    pair_id: str
    chosen: D.Encoded
    rejected: D.Encoded
    weight: float
    # log-probs of the reference (the frozen starting policy), filled before any update
    ref_chosen: float = 0.0
    ref_rejected: float = 0.0

    def __len__(self) -> int:  # length-grouped batching sorts pairs by their longer side
        return max(len(self.chosen), len(self.rejected))


def _prompt_ids(e: D.Encoded) -> list[int]:
    first = next(i for i, lab in enumerate(e.labels) if lab != D.IGNORE)
    return e.input_ids[:first]


def load_pairs(tokenizer, path: str, eot: str, eot_id: int, max_length: int, swap: bool = False) -> list[Pair]:
    """The pairs as read; `swap` (the negative control) exchanges chosen and rejected of every pair."""
    rows = read_jsonl(path)
    if not rows:
        raise UserError(f"{path}: no preference pair")
    pairs: list[Pair] = []
    seen: set[str] = set()
    for i, row in enumerate(rows):
        where = f"{path}: pair {i}"
        pid, prompt = row.get("pair_id"), row.get("prompt")
        if not isinstance(pid, str) or not pid:
            raise UserError(f"{where}: pair_id must be a non-empty string")
        if pid in seen:
            raise UserError(f"{where}: pair_id {pid!r} repeats")
        seen.add(pid)
        if not isinstance(prompt, list) or not prompt:
            raise UserError(f"{where}: prompt must be a non-empty list of messages")
        for m in prompt:
            if (
                not isinstance(m, dict)
                or m.get("role") not in ("system", "user")
                or not isinstance(m.get("content"), str)
            ):
                raise UserError(f"{where}: a prompt message is not {{role: system|user, content: str}}")
        for side in ("chosen", "rejected"):
            if not isinstance(row.get(side), str) or not row[side]:
                raise UserError(f"{where}: {side} must be a non-empty string")
        weight = row.get("weight", 1.0)
        if not isinstance(weight, (int, float)) or isinstance(weight, bool) or not weight > 0:
            raise UserError(f"{where}: weight must be a number > 0")
        msgs = [{"role": m["role"], "content": m["content"]} for m in prompt]
        chosen = D.encode(tokenizer, [*msgs, {"role": "assistant", "content": row["chosen"]}], eot, max_length)
        rejected = D.encode(tokenizer, [*msgs, {"role": "assistant", "content": row["rejected"]}], eot, max_length)
        D.preflight([chosen], eot_id, where=f"{where} (chosen)")
        D.preflight([rejected], eot_id, where=f"{where} (rejected)")
        # Segments are tokenized apart, so one prompt gives the same prefix ids; a difference means
        # the template renders the answer into the prompt, and the comparison would not be paired.
        if _prompt_ids(chosen) != _prompt_ids(rejected):
            raise UserError(f"{where}: chosen and rejected do not share the prompt's tokens")
        pairs.append(Pair(pid, rejected, chosen, float(weight)) if swap else Pair(pid, chosen, rejected, float(weight)))
    return pairs


def pair_batch(pairs: Sequence[Pair], pad_id: int, device: Any) -> dict[str, Any]:
    """One padded batch: the chosen answers first, then the rejected ones (one forward for both)."""
    return D.collate([p.chosen for p in pairs] + [p.rejected for p in pairs], pad_id, device)


def sequence_logps(model, batch: dict[str, Any]):
    """Per row: the summed log-prob of the supervised (assistant) tokens, and their count."""
    import torch.nn.functional as F

    out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], use_cache=False)
    logits = out.logits[:, :-1, :].float()
    labels = batch["labels"][:, 1:]
    token_ce = F.cross_entropy(
        logits.reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=D.IGNORE, reduction="none"
    ).view(labels.shape)
    mask = labels != D.IGNORE
    return -(token_ce * mask).sum(dim=1), mask.sum(dim=1)


def dpo_loss(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta: float):
    """Sigmoid DPO (Rafailov et al. 2023) per pair: -log σ(β[(πc − rc) − (πr − rr)]).
    Returns (losses, chosen rewards, rejected rewards); rewards are β·(policy − reference)."""
    import torch.nn.functional as F

    chosen_rewards = beta * (policy_chosen - ref_chosen)
    rejected_rewards = beta * (policy_rejected - ref_rejected)
    losses = -F.logsigmoid(chosen_rewards - rejected_rewards)
    return losses, chosen_rewards.detach(), rejected_rewards.detach()


def reference_logps(
    model, pairs: Sequence[Pair], pad_id: int, device: Any, batch_size: int, fresh_adapter: bool
) -> None:
    """Fill each pair's reference log-probs with the frozen starting policy: the base (adapter
    disabled) for a fresh LoRA, else the starting adapter as loaded, before any update. Eval mode
    (no dropout), no gradient. Computed once: the reference cannot drift during training."""
    import contextlib

    import torch

    was_training = model.training
    model.eval()
    ctx = model.disable_adapter() if fresh_adapter else contextlib.nullcontext()
    with torch.no_grad(), ctx:
        for s in range(0, len(pairs), batch_size):
            chunk = pairs[s : s + batch_size]
            lp, _ = sequence_logps(model, pair_batch(chunk, pad_id, device))
            for k, p in enumerate(chunk):
                p.ref_chosen = float(lp[k])
                p.ref_rejected = float(lp[len(chunk) + k])
    if was_training:
        model.train()


def window_backward(
    model,
    windows: Sequence[Sequence[Pair]],
    pad_id: int,
    device: Any,
    beta: float,
    sft_weight: float,
    dpo_weight: float = 1.0,
):
    """Backward over one accumulation window of micro-batches. The DPO term is the weighted mean
    over the window's pairs (Σ w·loss / Σ w); the optional SFT term is the chosen answers' summed
    token cross-entropy over the window's chosen supervised tokens (the SFT normalisation). So a
    window equals one step on the union of its pairs, whatever the micro-batch split. dpo_weight 0
    (the rft control) leaves the SFT term alone; the DPO figures are still measured, not trained."""
    import torch

    w_total = sum(p.weight for mb in windows for p in mb)
    n_chosen = sum(p.chosen.n_supervised for mb in windows for p in mb)
    stats = {
        "loss": 0.0,
        "dpo_loss": 0.0,
        "sft_loss": 0.0,
        "margin": 0.0,
        "accuracy": 0.0,
        "chosen": 0.0,
        "rejected": 0.0,
    }
    tokens = 0
    for mb in windows:
        lp, n = sequence_logps(model, pair_batch(mb, pad_id, device))
        k = len(mb)
        ref_c = torch.tensor([p.ref_chosen for p in mb], device=lp.device)
        ref_r = torch.tensor([p.ref_rejected for p in mb], device=lp.device)
        w = torch.tensor([p.weight for p in mb], device=lp.device)
        losses, rc, rr = dpo_loss(lp[:k], lp[k:], ref_c, ref_r, beta)
        dpo_term = (w * losses).sum() / w_total
        total = dpo_weight * dpo_term
        if sft_weight > 0:
            sft_term = -lp[:k].sum() / n_chosen
            total = total + sft_weight * sft_term
            stats["sft_loss"] += float(sft_term.detach())
        total.backward()
        stats["dpo_loss"] += float(dpo_term.detach())
        stats["loss"] += float(total.detach())
        stats["margin"] += float((w * (rc - rr)).sum()) / w_total
        stats["accuracy"] += float((w * (rc > rr).float()).sum()) / w_total
        stats["chosen"] += float((w * rc).sum()) / w_total
        stats["rejected"] += float((w * rr).sum()) / w_total
        tokens += int(n.sum())
    return stats, tokens
