"""The SFT loss and the memory levers around it, shared by train, warm-up and DPO.

- The loss is computed at supervised positions only: the decoder's hidden states are gathered at
  the label positions *before* the lm_head, and the vocabulary projection + cross-entropy run in
  chunks of LOSS_CHUNK_TOKENS rows, each checkpointed so that backward recomputes its logits. Full
  fp32 logits for the whole batch (B x T x V: ~5 GB per copy at 4 x 2048 x 151,936) never exist.
- Gradient checkpointing is non-reentrant (torch's recommended form; it needs no input that
  requires grad), and input grads are enabled anyway for PEFT, as peft's own k-bit preparation does
  for the reentrant form.
- bf16 autocast on CUDA: peft upcasts the non-quantized parameters (norms, LoRA) to fp32 and
  bitsandbytes' Linear4bit returns its input dtype, so without autocast the residual stream and
  attention would run in fp32."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from . import data as D
from .common import CancelFlag, UserError

# Rows of the (supervised tokens x vocabulary) logits alive at once: 1024 x 151,936 fp32 = 0.6 GB.
LOSS_CHUNK_TOKENS = 1024
# Gradient checkpointing on by default from this many base parameters (real models); the tiny CPU
# models (0.4-20 M) train faster without it and fit anyway.
CHECKPOINTING_MIN_PARAMETERS = 100_000_000


def causal_lm(model):
    """The transformers CausalLM inside a PeftModel (its LoRA layers are injected in place), or the model."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def _head_logits(lm, hidden):
    """lm_head on gathered hidden states, with the output transforms some architectures apply in
    their forward after the head (softcapping, logit scale); Llama and Qwen2 apply none."""
    logits = lm.get_output_embeddings()(hidden).float()
    cap = getattr(lm.config, "final_logit_softcapping", None)
    if cap:
        import torch

        logits = torch.tanh(logits / cap) * cap
    scale = getattr(lm.config, "logit_scale", None)
    if isinstance(scale, (int, float)) and scale != 1:
        logits = logits * scale
    return logits


def _chunk_ce(lm, hidden, labels):
    import torch.nn.functional as F

    return F.cross_entropy(_head_logits(lm, hidden), labels, reduction="sum")


def token_loss_sum(model, batch: dict[str, Any], chunk_tokens: int = LOSS_CHUNK_TOKENS):
    """Summed next-token cross-entropy over supervised positions, and their count."""
    import torch
    from torch.utils.checkpoint import checkpoint

    lm = causal_lm(model)
    out = lm.get_decoder()(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], use_cache=False)
    labels = batch["labels"][:, 1:]
    keep = labels != D.IGNORE
    hidden = out.last_hidden_state[:, :-1][keep]  # (N, H): only positions that are trained
    targets = labels[keep]
    n = int(targets.numel())
    total = hidden.new_zeros((), dtype=torch.float32)
    for s in range(0, n, chunk_tokens):
        h, y = hidden[s : s + chunk_tokens], targets[s : s + chunk_tokens]
        if torch.is_grad_enabled() and h.requires_grad:
            # backward recomputes this chunk's logits instead of keeping every chunk's
            total = total + checkpoint(_chunk_ce, lm, h, y, use_reentrant=False)
        else:
            total = total + _chunk_ce(lm, h, y)
    return total, n


def full_logits_loss_sum(model, batch: dict[str, Any]):
    """The reference form (full logits, then the loss): what token_loss_sum must equal; tests only."""
    import torch.nn.functional as F

    out = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], use_cache=False)
    logits = out.logits[:, :-1, :].float()
    labels = batch["labels"][:, 1:]
    loss = F.cross_entropy(
        logits.reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=D.IGNORE, reduction="sum"
    )
    return loss, int((labels != D.IGNORE).sum().item())


def count_supervised(batch: dict[str, Any]) -> int:
    return int((batch["labels"][:, 1:] != D.IGNORE).sum().item())


def autocast(device: str):
    """bf16 autocast on CUDA; nothing on CPU (fp32 training there)."""
    import torch

    if device == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def window_backward(
    model, microbatches: Sequence[dict[str, Any]], cancel: CancelFlag | None = None, device: str = "cpu"
) -> tuple[float, int]:
    """Backward over one accumulation window; each micro-batch's summed token loss is divided by the
    supervised-token count of the whole window. Returns (mean token loss of the window, tokens)."""
    n_window = sum(count_supervised(b) for b in microbatches)
    if n_window == 0:
        raise UserError("an accumulation window has no supervised token")
    total = 0.0
    for b in microbatches:
        if cancel is not None:
            cancel.raise_if_set()
        with autocast(device):
            loss_sum, _ = token_loss_sum(model, b)
        (loss_sum / n_window).backward()
        total += float(loss_sum.detach())
    return total / n_window, n_window


def resolve_checkpointing(setting: bool | None, base_parameters: int) -> bool:
    """The recipe's choice, or (unset) on for real models and off for the tiny ones."""
    return bool(setting) if setting is not None else base_parameters >= CHECKPOINTING_MIN_PARAMETERS


def enable_checkpointing(model) -> None:
    """Non-reentrant activation checkpointing on every decoder layer of the base model, and input
    grads enabled (PEFT freezes the embeddings; the reentrant form would otherwise see no grad)."""
    lm = causal_lm(model)
    lm.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})
    lm.enable_input_require_grads()
    lm.config.use_cache = False
