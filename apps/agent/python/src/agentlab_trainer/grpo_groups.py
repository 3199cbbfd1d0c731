"""Dynamic sampling during RL: what happens to a group whose rewards are all equal.

Such a group has zero advantage, so it teaches nothing; TRL 1.16's GRPOTrainer keeps it anyway
(its tokens still count in the "dapo" loss's denominator, diluting the other groups' gradient,
and with β > 0 its KL term still pulls). TRL 1.16 has no dynamic sampling of its own (its issue
#3708 is open; the replay-buffer trainer of later versions is not in 1.16), so this module wraps
the one method that builds a generation batch, `_generate_and_score_completions`, and leaves the
loss, the optimizer and the loop TRL's:

- "filter": the equal groups' completions leave the loss (their completion_mask rows are zeroed
  and the token count the "dapo" loss divides by is recounted). For loss "grpo" and "dr_grpo",
  whose normaliser is the number of rows, the rows still count there (documented, not hidden).
- "resample": the equal groups' prompts are generated and graded again, up to max_resamples
  rounds; a new group that carries a signal replaces the old one, and what is still equal after
  the last round is filtered. A resampled group's advantages are its own draw's (with
  scale_rewards "group", exactly what they would be in the batch; with "batch", the std is the
  resample draw's).

The reward of each completion comes from the judge as ever (grpo_reward.JudgeReward, which keeps
the rewards of its last call); TRL's logged statistics (reward mean, zero-variance share, length)
stay those of the step's first draw, so resampling does not flatter the reward curve. The counts
go to the step's `grpo_step` event as resampled_groups and dropped_groups.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MODES = ("keep", "filter", "resample")


def equal_groups(rewards: list[float | None], group_size: int) -> list[int]:
    """The groups (by index) whose rewards are all equal. A group masked for an infra error (all
    None) is not one of them: it is already out of the step and counted as masked."""
    out = []
    for g, start in enumerate(range(0, len(rewards), group_size)):
        group = rewards[start : start + group_size]
        if any(r is None for r in group):
            continue
        if all(r == group[0] for r in group):
            out.append(g)
    return out


@dataclass
class GroupCounts:
    """Groups resampled and dropped since the last logged step (the step reporter drains it)."""

    resampled: int = 0
    dropped: int = 0


def _row_tensors(batch: dict[str, Any], rows: int) -> dict[str, Any]:
    import torch

    out = {}
    for key, value in batch.items():
        if key == "num_items_in_batch" or value is None:
            continue
        if not isinstance(value, torch.Tensor) or value.ndim == 0 or value.shape[0] != rows or value.ndim > 2:
            raise RuntimeError(f"resampling cannot merge the generation batch's {key!r} (text prompts only)")
        out[key] = value
    return out


def _pad_value(key: str, pad_id: int) -> int:
    if key in ("prompt_ids", "completion_ids"):
        return pad_id
    return 1 if key == "tool_mask" else 0


def concat_rows(batches: list[dict[str, Any]], pad_id: int) -> dict[str, Any]:
    """Row-wise concatenation of generation batches: 2-D tensors padded to the widest, on the left
    for the prompt (TRL left-pads prompts) and on the right for everything else."""
    import torch
    import torch.nn.functional as F

    keyed = [_row_tensors(b, int(b["completion_mask"].shape[0])) for b in batches]
    keys = list(keyed[0])
    if any(list(k) != keys for k in keyed):
        raise RuntimeError("resampled generation batches differ in their fields")
    out: dict[str, Any] = {}
    for key in keys:
        parts = [k[key] for k in keyed]
        if parts[0].ndim == 2:
            width = max(p.shape[1] for p in parts)
            left = key.startswith("prompt_")
            parts = [
                F.pad(p, (width - p.shape[1], 0) if left else (0, width - p.shape[1]), value=_pad_value(key, pad_id))
                for p in parts
            ]
        out[key] = torch.cat(parts, dim=0)
    return out


def take_rows(batch: dict[str, Any], rows: list[int]) -> dict[str, Any]:
    import torch

    index = torch.tensor(rows, dtype=torch.long, device=batch["completion_mask"].device)
    return {k: v.index_select(0, index) for k, v in batch.items()}


def drop_groups(batch: dict[str, Any], groups: list[int], group_size: int, gather) -> None:
    """Zero the groups' completion_mask rows and recount the loss's token total (as TRL counts it)."""
    for g in groups:
        batch["completion_mask"][g * group_size : (g + 1) * group_size] = 0
    mask = batch["completion_mask"]
    if batch.get("tool_mask") is not None:
        mask = mask * batch["tool_mask"]
    batch["num_items_in_batch"] = gather(mask.sum()).sum()


def dynamic_grpo_trainer(base: type, reward: Any, mode: str, max_resamples: int, counts: GroupCounts) -> type:
    """A GRPOTrainer subclass applying `mode` to each generation batch (train mode only)."""
    if mode not in MODES:
        raise ValueError(f"equal_reward_groups must be one of {MODES}, not {mode!r}")

    class DynamicSamplingGRPOTrainer(base):
        def _generate_and_score_completions(self, inputs):
            batch = super()._generate_and_score_completions(inputs)
            if mode == "keep" or not self.model.training:
                return batch
            n = int(self.num_generations)
            rewards = list(reward.last_rewards)
            if len(rewards) != len(inputs):
                raise RuntimeError(f"{len(rewards)} rewards for a generation batch of {len(inputs)} completions")
            equal = equal_groups(rewards, n)
            if mode == "resample" and equal:
                batch, equal = self._resample(inputs, batch, rewards, equal, n)
            if equal:
                drop_groups(batch, equal, n, self.accelerator.gather)
                counts.dropped += len(equal)
            return batch

        def _resample(self, inputs, batch, rewards, equal, n):
            metrics = self._metrics["train"]
            logged = {k: len(v) for k, v in metrics.items()}
            draws = [batch]
            # rows[g]: where group g's rows are in the concatenation of the draws
            rows = [list(range(g * n, (g + 1) * n)) for g in range(len(rewards) // n)]
            offset = len(rewards)
            for _ in range(max_resamples):
                if not equal:
                    break
                again = [inputs[g * n + j] for g in equal for j in range(n)]
                counts.resampled += len(equal)
                draws.append(super()._generate_and_score_completions(again))
                still = set(equal_groups(list(reward.last_rewards), n))
                for i, g in enumerate(equal):
                    if i not in still:
                        rows[g] = list(range(offset + i * n, offset + (i + 1) * n))
                equal = [g for i, g in enumerate(equal) if i in still]
                offset += len(again)
            # The step's logged statistics stay the first draw's (see the module's docstring).
            for k in list(metrics):
                if k in logged:
                    del metrics[k][logged[k] :]
                else:
                    metrics.pop(k)
            merged = take_rows(concat_rows(draws, int(self._tokenizer.pad_token_id)), [r for g in rows for r in g])
            mask = merged["completion_mask"]
            if merged.get("tool_mask") is not None:
                mask = mask * merged["tool_mask"]
            merged["num_items_in_batch"] = self.accelerator.gather(mask.sum()).sum()
            return merged, equal

    return DynamicSamplingGRPOTrainer
