"""The data order per (seed, epoch), the recipe-only generation config, the adapter hash
check before generating, and a tokenizer fitted on train tasks only."""

from __future__ import annotations

import json
import shutil
from typing import Any

import pytest

from agentlab_trainer.common import CancelFlag, UserError, sha256_tree
from agentlab_trainer.schedule import order_seed, plan_windows


def test_data_order_per_seed_and_epoch_is_a_proper_derivation():
    # seed + epoch gave seed 0 / epoch 2 the order of seed 1 / epoch 1; a hash does not.
    assert order_seed(0, 2) != order_seed(1, 1)
    seeds = {order_seed(s, e) for s in range(20) for e in range(1, 20)}
    assert len(seeds) == 20 * 19

    class S:
        def __init__(self, n):
            self.n = n

        def __len__(self):
            return self.n

    samples: list[Any] = [S(10 + (i % 7)) for i in range(64)]  # stand-ins with a length, as plan_windows needs
    a = plan_windows(samples, 2, 1, order_seed(0, 2))
    b = plan_windows(samples, 2, 1, order_seed(1, 1))
    assert a != b
    assert a == plan_windows(samples, 2, 1, order_seed(0, 2))  # still deterministic


def _gen(capsys, spec):
    from agentlab_trainer import generate

    capsys.readouterr()
    summary = generate.run(spec, CancelFlag())
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    return [e["text"] for e in events if e.get("event") == "generation"], summary


PROMPTS = [
    {"task_id": f"t{i}", "messages": [{"role": "user", "content": f"def f{i}(a, b):\n    return a + b {i}"}]}
    for i in range(3)
]


def test_checkpoint_generation_config_is_not_applied(tiny_model, tmp_path, capsys):
    hostile = tmp_path / "hostile"
    shutil.copytree(tiny_model, hostile)
    # A checkpoint whose generation_config changes greedy decoding a lot.
    (hostile / "generation_config.json").write_text(
        json.dumps({"repetition_penalty": 50.0, "no_repeat_ngram_size": 1, "bad_words_ids": None})
    )
    spec = {
        "base_model": str(tiny_model),
        "prompts": PROMPTS,
        "max_new_tokens": 24,
        "backend": "transformers",
        "device": "cpu",
        "local_files_only": True,
    }
    plain, s_plain = _gen(capsys, spec)
    recipe, s_recipe = _gen(capsys, {**spec, "base_model": str(hostile)})
    assert recipe == plain
    assert s_recipe["generation_config"] == "recipe"
    # Positive control: letting the checkpoint's config apply does change the answers.
    applied, s_applied = _gen(capsys, {**spec, "base_model": str(hostile), "use_checkpoint_generation_config": True})
    assert applied != plain
    assert s_applied["generation_config"] == "checkpoint"
    # What the run used is recorded.
    assert s_plain["backend"] == "transformers" and s_plain["dtype"] == "float32" and s_plain["device"] == "cpu"
    assert s_plain["backend_version"] and s_plain["stop"]
    assert s_plain["model"]["weights_sha256"] and s_plain["model"]["revision"] is None


def test_adapter_hash_is_verified_before_generating(tmp_path, capsys):
    from agentlab_trainer import generate

    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}")
    good = sha256_tree(adapter)
    cfg = generate.normalize_spec(
        {"base_model": "x", "prompts": PROMPTS, "adapter": str(adapter), "expected_adapter_sha256": good}
    )
    assert generate.verify_adapter(cfg) == good
    # A stray file in the folder (the agent's old `.complete` marker) changes the hash: refused.
    (adapter / ".complete").write_text("")
    with pytest.raises(UserError, match="adapter hash mismatch"):
        generate.verify_adapter(cfg)
    with pytest.raises(UserError, match="adapter hash mismatch"):
        generate.run(
            {
                "base_model": "/nonexistent-model",
                "prompts": PROMPTS,
                "adapter": str(adapter),
                "expected_adapter_sha256": good,
            },
            CancelFlag(),
        )


def test_tokenizer_learns_from_train_tasks_only(tmp_path):
    from agentlab_trainer import tiny_model as tm

    def task(tid, marker):
        return {
            "id": tid,
            "source_group": tid,
            "language": "python",
            "instruction": f"Fix {marker}.",
            "files": [{"path": "s.py", "role": "main", "content": f"{marker} = 1\n"}],
            "public_tests": [],
            "hidden_tests": [{"path": "t.py", "content": f"assert {marker}_hidden\n"}],
            "reference": [{"path": "s.py", "content": f"{marker}_reference = 2\n"}],
            "metadata": {},
        }

    pool = tmp_path / "pool.jsonl"
    pool.write_text("\n".join(json.dumps(t) for t in [task("a", "trainonlyword"), task("b", "devsecretword")]) + "\n")
    texts = list(tm._corpus_texts([str(pool)], {"a"}))
    joined = "\n".join(texts)
    assert "trainonlyword_hidden" in joined and "trainonlyword_reference" in joined
    assert "devsecretword" not in joined
    # Control: without the filter the dev task's text (hidden tests included) would be read.
    assert "devsecretword_hidden" in "\n".join(tm._corpus_texts([str(pool)]))


def test_hub_model_is_named_by_its_resolved_commit_and_cached_weights(tiny_model, tmp_path):
    """A hub id resolved offline from a hub cache laid out like huggingface_hub's: the recorded
    revision is the commit `main` points to, and the weights hash is that snapshot's."""
    import os
    import subprocess
    import sys

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--org--tiny"
    snap = repo / "snapshots" / commit
    shutil.copytree(tiny_model, snap)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    code = (
        "import json; from agentlab_trainer.generate import model_identity; "
        "print(json.dumps(model_identity({'base_model': 'org/tiny', 'revision': 'main', 'local_files_only': True})))"
    )
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    ident = json.loads(out.stdout.strip().splitlines()[-1])
    from agentlab_trainer.common import weights_hash

    assert ident == {"ref": "org/tiny", "revision": commit, "weights_sha256": weights_hash(tiny_model)}
