"""One rank of the gloo equivalence test (test_distributed.py), run by torch.multiprocessing.spawn."""

from __future__ import annotations

from pathlib import Path

import torch

from agentlab_trainer import data as D
from agentlab_trainer import distributed as dd
from agentlab_trainer.loss import window_backward
from agentlab_trainer.modeling import attach_lora, load_model, load_tokenizer
from helpers import make_samples

LORA = {"r": 8, "alpha": 16, "dropout": 0.0, "target_modules": ["q_proj", "v_proj", "down_proj", "lm_head"]}
# Two windows of batch_size 2 x grad_accum 2: the second holds one sample, so rank 1 has none.
WINDOWS = [[[0, 1], [2, 3]], [[4]]]
BATCH_SIZE = 2
LR = 0.5


def fresh_model(model_dir: str):
    model, _ = load_model(model_dir, device="cpu", quantization="none")
    model = attach_lora(model, LORA, seed=0)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():  # non-zero B so that every LoRA matrix gets a gradient
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=g) * 0.02)
    model.train()
    return model


def encoded(model_dir: str) -> list[D.Encoded]:
    tok = load_tokenizer(model_dir)
    eot, _ = D.resolve_eot(tok)
    return [D.encode(tok, s["messages"], eot) for s in make_samples(5, offset=1)]


def trainable(model) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def grads(model) -> dict[str, torch.Tensor]:
    return {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def run_rank(rank: int, world: int, model_dir: str, init_file: str, out: str) -> None:
    torch.set_num_threads(1)
    dist = dd.Dist(rank=rank, world_size=world, local_rank=rank)
    device = dd.init(dist, "cpu", init_method=f"file://{init_file}")
    samples = encoded(model_dir)
    pad = int(load_tokenizer(model_dir).pad_token_id)
    model = fresh_model(model_dir)
    wrapped = dd.wrap_ddp(model, device)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=LR)
    record: dict = {"losses": [], "tokens": []}
    for w, window in enumerate(WINDOWS):
        micro, dummy = dd.collate_share(samples, dd.shard_window(window, dist, BATCH_SIZE), pad, device)
        loss, n = dd.window_backward(wrapped, micro, dist, dummy, device=device)
        record["losses"].append(loss)
        record["tokens"].append(n)
        if w == 0:
            record["grads"] = grads(model)
        opt.step()
        opt.zero_grad(set_to_none=True)
    record["params"] = trainable(model)
    torch.save(record, Path(out) / f"rank{rank}.pt")
    dd.shutdown()


def one_process(model_dir: str, pad: int, windows: list[list[list[int]]]):
    """The reference the ranks must equal: the same windows trained in this one process.
    Returns its record (losses, token counts, first-window gradients, final parameters), the model
    and the samples."""
    samples = encoded(model_dir)
    model = fresh_model(model_dir)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=LR)
    out: dict = {"losses": [], "tokens": []}
    for w, window in enumerate(windows):
        micro = [D.collate([samples[i] for i in b], pad) for b in window]
        loss, n = window_backward(model, micro)
        out["losses"].append(loss)
        out["tokens"].append(n)
        if w == 0:
            out["grads"] = grads(model)
        opt.step()
        opt.zero_grad(set_to_none=True)
    out["params"] = trainable(model)
    return out, model, samples
