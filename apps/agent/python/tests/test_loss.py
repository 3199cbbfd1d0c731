"""The supervised-position, chunked loss equals the full-logits loss (values and gradients),
and gradient checkpointing changes neither."""

from __future__ import annotations

import pytest
import torch

from agentlab_trainer import data as D
from agentlab_trainer.loss import (
    enable_checkpointing,
    full_logits_loss_sum,
    resolve_checkpointing,
    token_loss_sum,
)
from agentlab_trainer.modeling import attach_lora, load_model
from helpers import make_samples

ALL_LINEAR = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"]


def _lora_model(path, *, checkpointing: bool = False):
    model, _ = load_model(str(path), device="cpu", quantization="none")
    if checkpointing:
        enable_checkpointing(model)
    model = attach_lora(model, {"r": 4, "alpha": 8, "dropout": 0.0, "target_modules": ALL_LINEAR}, seed=0)
    # LoRA starts with B = 0, where A gets no gradient: give B values so that every adapter weight is tested
    g = torch.Generator().manual_seed(1)
    for name, p in model.named_parameters():
        if "lora_B" in name:
            p.data.copy_(torch.randn(p.shape, generator=g) * 0.05)
    model.train()
    return model


def _batch(tokenizer, n: int = 3):
    eot, _ = D.resolve_eot(tokenizer)
    samples = [D.encode(tokenizer, s["messages"], eot) for s in make_samples(n, offset=1)]
    return D.collate(samples, int(tokenizer.pad_token_id))


def _loss_and_grads(model, fn, batch):
    model.zero_grad(set_to_none=True)
    loss, n = fn(model, batch)
    loss.backward()
    grads = {k: p.grad.detach().clone() for k, p in model.named_parameters() if p.requires_grad and p.grad is not None}
    return float(loss.detach()), n, grads


def _assert_same(a, b, *, rtol=1e-4, atol=1e-6):
    (la, na, ga), (lb, nb, gb) = a, b
    assert na == nb and la == pytest.approx(lb, rel=1e-5)
    assert ga.keys() == gb.keys() and len(ga) > 0
    for k in ga:
        torch.testing.assert_close(ga[k], gb[k], rtol=rtol, atol=atol, msg=k)


def test_supervised_chunked_loss_equals_the_full_loss(tiny_model, tokenizer):
    model = _lora_model(tiny_model)
    batch = _batch(tokenizer)
    full = _loss_and_grads(model, full_logits_loss_sum, batch)
    assert full[1] < batch["input_ids"].numel() / 2  # fewer supervised positions than tokens: gathering matters
    for chunk in (7, 1024):  # many chunks, and one
        ours = _loss_and_grads(model, lambda m, b, c=chunk: token_loss_sum(m, b, chunk_tokens=c), batch)
        _assert_same(ours, full)
    # every LoRA matrix, the lm_head's included, got a gradient through the gathered path
    assert any("lm_head" in k for k in full[2]) and sum("lora_A" in k for k in full[2]) == sum(
        "lora_B" in k for k in full[2]
    )


def test_a_wrong_label_changes_the_loss(tiny_model, tokenizer):
    # positive control for the equality above: the comparison sees a one-token difference
    model = _lora_model(tiny_model)
    batch = _batch(tokenizer)
    with torch.no_grad():
        base, _ = token_loss_sum(model, batch)
        labels = batch["labels"].clone()
        pos = (labels[:, 1:] != D.IGNORE).nonzero()[0]
        labels[pos[0], pos[1] + 1] = (labels[pos[0], pos[1] + 1] + 1) % tokenizer.vocab_size
        moved, _ = token_loss_sum(model, {**batch, "labels": labels})
    assert float(moved) != pytest.approx(float(base), rel=1e-6)


def _layer_calls(model) -> list[int]:
    """Counts the forward runs of a module inside the first decoder layer (module hooks do not see
    the recompute, so its forward is wrapped)."""
    calls = [0]
    inner = model.get_base_model().get_decoder().layers[0].mlp
    forward = inner.forward

    def counted(*args, **kwargs):
        calls[0] += 1
        return forward(*args, **kwargs)

    inner.forward = counted
    return calls


def test_checkpointing_gives_the_same_loss_and_gradients(tiny_model, tokenizer):
    batch = _batch(tokenizer)
    plain_model = _lora_model(tiny_model)
    plain_calls = _layer_calls(plain_model)
    plain = _loss_and_grads(plain_model, token_loss_sum, batch)
    ckpt_model = _lora_model(tiny_model, checkpointing=True)
    ckpt_calls = _layer_calls(ckpt_model)
    _assert_same(_loss_and_grads(ckpt_model, token_loss_sum, batch), plain)
    # it did checkpoint: backward ran the layer's forward again (once without checkpointing)
    assert plain_calls == [1] and ckpt_calls == [2]


def test_checkpointing_default_follows_the_model_size():
    assert resolve_checkpointing(None, 1_500_000_000) is True
    assert resolve_checkpointing(None, 426_624) is False
    assert resolve_checkpointing(True, 426_624) is True and resolve_checkpointing(False, 10**10) is False
