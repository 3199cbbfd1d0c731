"""What DPO training does to the answers' likelihood, and the dropout rule that keeps the policy
and the reference comparable.

DPO only sees the margin (chosen − rejected); it is satisfied as well by pushing both answers down,
the chosen one less (likelihood displacement). The per-epoch Δ log-prob of each side against the
reference tells the two apart, and a falling chosen log-prob is reported as a warning."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .dpo_data import Pair, pair_batch, sequence_logps


def disable_dropout(model) -> int:
    """Sets every dropout of the model (LoRA dropout included) to p = 0, so the policy forward of a
    training step is the same function as the reference forward (TRL's `disable_dropout`, on by
    default): with dropout on, the implicit reward β·(log π − log π_ref) would compare a noised
    policy with a clean reference. Returns how many dropout modules were active."""
    import torch

    active = 0
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout) and m.p > 0:
            m.p = 0.0
            active += 1
    return active


def logp_deltas(model, pairs: Sequence[Pair], pad_id: int, device: Any, batch_size: int) -> dict[str, float]:
    """Mean over the pairs of log π(side) − log π_ref(side), in nats per answer (summed over its
    supervised tokens), for the chosen and the rejected side. Same batches, same mode as the
    reference pass, so an unchanged policy gives exactly 0."""
    import torch

    was_training = model.training
    model.eval()
    d_chosen = d_rejected = 0.0
    with torch.no_grad():
        for s in range(0, len(pairs), batch_size):
            chunk = pairs[s : s + batch_size]
            lp, _ = sequence_logps(model, pair_batch(chunk, pad_id, device))
            for k, p in enumerate(chunk):
                d_chosen += float(lp[k]) - p.ref_chosen
                d_rejected += float(lp[len(chunk) + k]) - p.ref_rejected
    if was_training:
        model.train()
    n = max(len(pairs), 1)
    return {"chosen_logp_delta": d_chosen / n, "rejected_logp_delta": d_rejected / n}


def displacement_warning(deltas: dict[str, float]) -> str | None:
    """A sentence when the chosen answers became less likely than under the reference, else None."""
    dc, dr = deltas["chosen_logp_delta"], deltas["rejected_logp_delta"]
    if dc >= 0:
        return None
    return (
        f"the chosen answers' log-prob fell by {-dc:.3g} nats per answer on the train pairs "
        f"(rejected: {dr:+.3g}): the margin grows by displacing the chosen answer; "
        "a lower learning rate or a larger SFT term keeps it likely"
    )
