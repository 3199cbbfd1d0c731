"""FSDP on CPU with gloo (spec.parallel = "fsdp"): 2 sharded ranks give the same update
as 1 process on the same global batch with unequal sample lengths and unequal numbers of
micro-batches per rank; the evaluation through the sharded wrapper equals one process's; rank 0's
snapshot, written from the gathered LoRA parameters alone, loads into a fresh base and holds the
one-process weights."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp
from torch.distributed.tensor import DTensor

from agentlab_trainer import distributed as dd
from agentlab_trainer.modeling import load_model, load_tokenizer
from agentlab_trainer.snapshots import save_snapshot
from agentlab_trainer.train import evaluate
from dist_worker import BATCH_SIZE, LR, encoded, fresh_model, grads, one_process, trainable

# Window 1 deals samples 0,2,4 to rank 0 (two micro-batches: [0, 2], [4]) and 1,3 to rank 1 (one):
# under FSDP rank 1 must run a zero-weighted second pass, or the ranks' all-gathers would not pair.
# Window 2 holds one sample, so rank 1 has none at all.
WINDOWS = [[[0, 1], [2, 3], [4]], [[4]]]


def fsdp_rank(rank: int, world: int, model_dir: str, init_file: str, out: str) -> None:
    torch.set_num_threads(1)
    dist = dd.Dist(rank=rank, world_size=world, local_rank=rank)
    device = dd.init(dist, "cpu", init_method=f"file://{init_file}")
    samples = encoded(model_dir)
    pad = int(load_tokenizer(model_dir).pad_token_id)
    model = fresh_model(model_dir)
    wrapped = dd.wrap_fsdp(model, device)
    assert dd.is_fsdp(wrapped)
    # after fully_shard the parameters are DTensor shards: the optimizer is built over those
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=LR)
    record: dict = {"losses": [], "tokens": [], "sharded": [], "passes": []}
    for w, window in enumerate(WINDOWS):
        share = dd.shard_window(window, dist, BATCH_SIZE)
        record["passes"].append(len(share))
        micro, dummy = dd.collate_share(samples, share, pad, device)
        loss, n = dd.window_backward(wrapped, micro, dist, dummy, device=device)
        record["losses"].append(loss)
        record["tokens"].append(n)
        if w == 0:
            # FSDP2 shards each gradient as a DTensor: gather it whole to compare with 1 process.
            g = {k: v.full_tensor() if isinstance(v, DTensor) else v for k, v in grads(model).items()}
            record["grads"] = g
        opt.step()
        opt.zero_grad(set_to_none=True)
    record["sharded"] = [type(p).__name__ for p in model.parameters()][:1]
    record["eval"] = evaluate(model, samples, pad, device, batch_size=2, loss_of=wrapped)
    adapter = dd.adapter_state(model)
    record["params"] = adapter
    if dist.is_main:
        save_snapshot(model, Path(out), 1, {"epoch": 1}, adapter)
    torch.save(record, Path(out) / f"rank{rank}.pt")
    dd.shutdown()


def close(a: dict, b: dict, atol=1e-6, rtol=1e-4) -> None:
    assert a.keys() == b.keys()
    for k in a:
        torch.testing.assert_close(a[k], b[k], atol=atol, rtol=rtol, msg=lambda m, k=k: f"{k}: {m}")  # type: ignore[misc]


def test_two_fsdp_gloo_ranks_equal_one_process(tiny_model, tokenizer, tmp_path):
    from peft import PeftModel

    pad = int(tokenizer.pad_token_id)
    args = (2, str(tiny_model), str(tmp_path / "init"), str(tmp_path))
    mp.start_processes(fsdp_rank, args=args, nprocs=2, join=True, start_method="fork")
    ranks = [torch.load(tmp_path / f"rank{r}.pt") for r in (0, 1)]
    ref, model, samples = one_process(str(tiny_model), pad, WINDOWS)
    ref["eval"] = evaluate(model, samples, pad, "cpu", batch_size=2)

    assert [r["passes"] for r in ranks] == [[2, 1], [1, 0]]  # unequal shares: padding was needed
    assert ranks[0]["sharded"] == ["DTensor"]  # the model really was sharded
    for r in ranks:
        assert r["tokens"] == ref["tokens"]
        assert r["losses"] == [pytest.approx(x, rel=1e-5, abs=1e-6) for x in ref["losses"]]
        close(r["grads"], ref["grads"])
        close(r["params"], ref["params"])
        assert r["eval"] == pytest.approx(ref["eval"], rel=1e-5)

    # The snapshot: adapter files only (no base weights gathered), loadable onto a fresh base.
    snap = tmp_path / "epoch-1"
    assert json.loads((snap / "agentlab-snapshot.json").read_text()) == {"epoch": 1}
    base, _ = load_model(str(tiny_model), device="cpu", quantization="none")
    loaded = PeftModel.from_pretrained(base, str(snap))
    got = {n: p.detach() for n, p in loaded.named_parameters() if "lora_" in n}
    want = {n: p for n, p in ref["params"].items() if "lora_" in n}
    assert got and got.keys() == want.keys()
    close(got, want)
    # positive control: the untrained adapter differs from the trained one by more than the tolerance
    start = {n: p for n, p in trainable(fresh_model(str(tiny_model))).items() if "lora_" in n}
    assert any(not torch.allclose(start[k], want[k], atol=1e-6, rtol=1e-4) for k in want)


def test_train_cli_with_parallel_fsdp_under_torchrun_matches_one_process(tiny_model, tmp_path):
    """train.py's wiring: spec.parallel = "fsdp" under torchrun (2 gloo ranks), with an eval set
    (evaluated through the sharded wrapper); rank 0's snapshot holds the one-process LoRA tensors."""
    import os

    from safetensors.torch import load_file

    from agentlab_trainer.common import CancelFlag
    from agentlab_trainer.train import train
    from conftest import run_cli
    from helpers import make_samples, write_jsonl
    from test_torchrun import spec_for

    data = write_jsonl(tmp_path / "train.jsonl", make_samples(7, offset=3))  # 2 windows, the last short
    held = write_jsonl(tmp_path / "eval.jsonl", make_samples(3, offset=20))
    spec1 = {**spec_for(tiny_model, data, tmp_path / "one", 1), "eval_dataset": str(held)}
    rec1 = train(spec1, CancelFlag())
    spec2 = {**spec_for(tiny_model, data, tmp_path / "two", 2), "eval_dataset": str(held), "parallel": "fsdp"}
    code, events, err = run_cli("train", spec2, tmp_path, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert code == 0, err[-3000:]
    results = [e for e in events if e["event"] == "result"]
    assert len(results) == 1 and results[0]["status"] == "succeeded"
    rec2 = results[0]["record"]
    assert (rec2["world_size"], rec2["parallel"], rec1["parallel"]) == (2, "fsdp", None)
    assert rec2["supervised_tokens"] == rec1["supervised_tokens"]
    assert rec2["final_train_loss"] == pytest.approx(rec1["final_train_loss"], rel=1e-5)
    assert rec2["final_eval_loss"] == pytest.approx(rec1["final_eval_loss"], rel=1e-5)
    a = load_file(str(tmp_path / "one" / "epoch-1" / "adapter_model.safetensors"))
    b = load_file(str(tmp_path / "two" / "epoch-1" / "adapter_model.safetensors"))
    lora = sorted(k for k in a if "lora_" in k)
    assert lora and sorted(b) == lora  # the LoRA tensors only: the sharded base is never gathered
    for k in lora:
        torch.testing.assert_close(a[k], b[k], atol=1e-6, rtol=1e-4)


def test_fsdp_with_nf4_is_refused_naming_parallel(tiny_model, tmp_path):
    from agentlab_trainer.common import UserError
    from agentlab_trainer.train import normalize_spec

    spec = {"base_model": str(tiny_model), "dataset": "d.jsonl", "output_dir": str(tmp_path)}
    cfg = normalize_spec({**spec, "parallel": "fsdp"})
    assert (cfg["parallel"], cfg["quantization"]) == ("fsdp", "none")  # auto never picks NF4 under fsdp
    assert normalize_spec(spec)["quantization"] == "auto"
    with pytest.raises(UserError, match="parallel fsdp does not shard NF4"):
        normalize_spec({**spec, "parallel": "fsdp", "method": "qlora-nf4"})
    with pytest.raises(UserError, match="parallel must be ddp or fsdp"):
        normalize_spec({**spec, "parallel": "zero3"})
