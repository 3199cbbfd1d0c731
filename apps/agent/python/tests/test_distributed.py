"""Data parallelism on CPU with gloo: 2 ranks give the same update as 1 process on the
same global batch with unequal sample lengths, because the loss is normalized by the supervised
tokens of the whole window on all ranks."""

from __future__ import annotations

import pytest
import torch
import torch.multiprocessing as mp

from agentlab_trainer import data as D
from agentlab_trainer import distributed as dd
from agentlab_trainer.loss import token_loss_sum
from dist_worker import BATCH_SIZE, WINDOWS, encoded, fresh_model, grads, one_process, run_rank


def assert_same(a, b, atol=1e-6, rtol=1e-4):
    assert a.keys() == b.keys()
    for k in a:
        torch.testing.assert_close(a[k], b[k], atol=atol, rtol=rtol, msg=lambda m, k=k: f"{k}: {m}")  # type: ignore[misc]


def test_two_gloo_ranks_equal_one_process(tiny_model, tokenizer, tmp_path):
    pad = int(tokenizer.pad_token_id)
    samples = encoded(str(tiny_model))
    # the ranks' shares of window 1 (samples 0,2 and 1,3) hold different numbers of tokens
    shares = [dd.shard_window(WINDOWS[0], dd.Dist(r, 2, r), BATCH_SIZE) for r in (0, 1)]
    assert shares == [[[0, 2]], [[1, 3]]]
    n_rank = [sum(samples[i].n_supervised for i in s[0]) for s in shares]
    assert n_rank[0] != n_rank[1]
    assert dd.shard_window(WINDOWS[1], dd.Dist(1, 2, 1), BATCH_SIZE) == []  # rank 1 idles in window 2

    # fork, not spawn: the ranks inherit this process's imports (torch, transformers, peft) instead
    # of importing them again, most of this test's time on a small CPU box
    args = (2, str(tiny_model), str(tmp_path / "init"), str(tmp_path))
    mp.start_processes(run_rank, args=args, nprocs=2, join=True, start_method="fork")
    ranks = [torch.load(tmp_path / f"rank{r}.pt") for r in (0, 1)]
    ref, _, _ = one_process(str(tiny_model), pad, WINDOWS)

    for r in ranks:
        assert r["tokens"] == ref["tokens"]
        assert r["losses"] == [pytest.approx(x, rel=1e-5, abs=1e-6) for x in ref["losses"]]
        assert_same(r["grads"], ref["grads"])
        assert_same(r["params"], ref["params"])
    assert_same(ranks[0]["params"], ranks[1]["params"], atol=0, rtol=0)  # the ranks never drift apart

    # Sensitivity control: normalizing by each rank's own token count (the bug this prevents)
    # gives a different gradient on these unequal shares.
    wrong = fresh_model(str(tiny_model))
    per_rank = []
    for s in shares:
        loss, k = token_loss_sum(wrong, D.collate([samples[i] for i in s[0]], pad))
        per_rank.append(loss / k)
    (sum(per_rank) / 2).backward()
    g_wrong = grads(wrong)
    assert any(not torch.allclose(g_wrong[k], ref["grads"][k], atol=1e-6, rtol=1e-4) for k in g_wrong)


def test_from_env_reads_torchrun():
    assert dd.from_env({}) is None
    assert dd.from_env({"WORLD_SIZE": "1", "RANK": "0"}) is None
    assert dd.from_env({"WORLD_SIZE": "4", "RANK": "2", "LOCAL_RANK": "2"}) == dd.Dist(2, 4, 2)
