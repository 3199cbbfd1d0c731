"""Gradient accumulation normalized by the supervised tokens of the whole window."""

from __future__ import annotations

import pytest
import torch

from agentlab_trainer import data as D
from agentlab_trainer.loss import token_loss_sum, window_backward
from agentlab_trainer.modeling import attach_lora, load_model
from agentlab_trainer.schedule import plan_windows
from helpers import make_samples

LORA = {"r": 8, "alpha": 16, "dropout": 0.0, "target_modules": ["q_proj", "v_proj", "down_proj", "lm_head"]}


@pytest.fixture(scope="module")
def samples(tokenizer):
    eot, _ = D.resolve_eot(tokenizer)
    # unequal lengths and unequal supervised counts
    enc = [D.encode(tokenizer, s["messages"], eot) for s in make_samples(4, offset=1)]
    assert len({len(e) for e in enc}) == 4 and len({e.n_supervised for e in enc}) > 1
    return enc


def fresh_model(tiny_model):
    model, method = load_model(str(tiny_model), device="cpu", quantization="none")
    assert method == "lora-fp32"
    model = attach_lora(model, LORA, seed=0)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():  # non-zero B so that every LoRA matrix gets a gradient
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=g) * 0.02)
    model.train()
    return model


def grads_after(model, windows) -> dict[str, torch.Tensor]:
    for w in windows:
        window_backward(model, w)
    return {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def batches(samples, pad_id, sizes):
    out, i = [], 0
    for s in sizes:
        out.append(D.collate(samples[i : i + s], pad_id))
        i += s
    return out


def assert_same(a, b, atol=1e-6, rtol=1e-4):
    assert a.keys() == b.keys()
    for k in a:
        torch.testing.assert_close(a[k], b[k], atol=atol, rtol=rtol, msg=lambda m, k=k: f"{k}: {m}")  # type: ignore[misc]


def reference_grads(tiny_model, samples, pad_id):
    """Independent reference: mean token loss over the union, one sample at a time, summed."""
    model = fresh_model(tiny_model)
    n = 0
    losses = []
    for s in samples:
        loss, k = token_loss_sum(model, D.collate([s], pad_id))
        losses.append(loss)
        n += k
    (sum(losses) / n).backward()
    return {name: p.grad.detach().clone() for name, p in model.named_parameters() if p.requires_grad}


def test_batch4_accum1_equals_batch1_accum4(tiny_model, tokenizer, samples):
    pad = tokenizer.pad_token_id
    g_big = grads_after(fresh_model(tiny_model), [batches(samples, pad, [4])])
    g_acc = grads_after(fresh_model(tiny_model), [batches(samples, pad, [1, 1, 1, 1])])
    assert_same(g_big, g_acc)
    assert_same(g_big, reference_grads(tiny_model, samples, pad))
    # sensitivity: averaging per-micro-batch means (the common bug) gives a different update
    wrong = fresh_model(tiny_model)
    for b in batches(samples, pad, [1, 1, 1, 1]):
        loss, k = token_loss_sum(wrong, b)
        (loss / k / 4).backward()
    g_wrong = {n: p.grad for n, p in wrong.named_parameters() if p.requires_grad}
    assert any(not torch.allclose(g_wrong[k], g_big[k], atol=1e-6, rtol=1e-4) for k in g_big)


def _one_step(tiny_model, samples, pad, sizes, make_opt):
    model = fresh_model(tiny_model)
    opt = make_opt([p for p in model.parameters() if p.requires_grad])
    window_backward(model, batches(samples, pad, sizes))
    opt.step()
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def test_one_optimizer_step_matches(tiny_model, tokenizer, samples):
    pad = tokenizer.pad_token_id
    # SGD's step is linear in the gradient, so the summation order's float noise stays at its size.
    sgd = [
        _one_step(tiny_model, samples, pad, sizes, lambda ps: torch.optim.SGD(ps, lr=1e-2))
        for sizes in ([4], [1, 1, 1, 1], [2, 2])
    ]
    assert_same(sgd[0], sgd[1], atol=1e-6)
    assert_same(sgd[0], sgd[2], atol=1e-6)
    # AdamW's first step is lr * g / (|g| + eps): for a gradient element near eps that noise is
    # amplified up to the step itself (seen: 2.7e-6 on one of 8,192 elements on one CPU), so the
    # bound is a small share of lr; a wrong accumulation moves whole steps (the control below).
    adam = [
        _one_step(tiny_model, samples, pad, sizes, lambda ps: torch.optim.AdamW(ps, lr=1e-2))
        for sizes in ([4], [1, 1, 1, 1], [2, 2])
    ]
    assert_same(adam[0], adam[1], atol=1e-4)
    assert_same(adam[0], adam[2], atol=1e-4)
    # control: one micro-batch of the four alone is a different update, beyond that bound
    partial = _one_step(tiny_model, samples[:1], pad, [1], lambda ps: torch.optim.AdamW(ps, lr=1e-2))
    assert any(not torch.allclose(partial[k], adam[0][k], atol=1e-4, rtol=1e-4) for k in adam[0])


def test_short_last_window(tiny_model, tokenizer, samples):
    """3 samples with accumulation 4 (a short window of 3 micro-batches) equals batch 3; so does
    batch 2 + batch 1 in one window."""
    pad = tokenizer.pad_token_id
    three = samples[:3]
    g_batch = grads_after(fresh_model(tiny_model), [batches(three, pad, [3])])
    g_short = grads_after(fresh_model(tiny_model), [batches(three, pad, [1, 1, 1])])
    g_mixed = grads_after(fresh_model(tiny_model), [batches(three, pad, [2, 1])])
    assert_same(g_batch, g_short)
    assert_same(g_batch, g_mixed)
    assert_same(g_batch, reference_grads(tiny_model, three, pad))


def test_plan_windows_keeps_short_last_window_and_is_deterministic():
    lengths = [10, 50, 20, 40, 30]
    w = plan_windows([D.Encoded([0] * n, [0] * n) for n in lengths], batch_size=1, grad_accum=2, seed=7)
    assert [len(x) for x in w] == [2, 2, 1]
    assert sorted(i for win in w for b in win for i in b) == [0, 1, 2, 3, 4]
    assert w == plan_windows([D.Encoded([0] * n, [0] * n) for n in lengths], batch_size=1, grad_accum=2, seed=7)


def test_length_grouping_groups_similar_lengths():
    lengths = [5, 100, 6, 101, 7, 102, 8, 103]
    bs = D.length_grouped_batches(lengths, batch_size=2, seed=0)
    spans = [max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in bs]
    assert max(spans) <= 1
    assert bs == D.length_grouped_batches(lengths, batch_size=2, seed=0)
    assert sorted(i for b in bs for i in b) == list(range(8))
