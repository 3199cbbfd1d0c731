"""inspect-model: facts of a local folder and of a cached hub id, offline; an uncached hub id fails fast."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from conftest import TINY_SPEC, run_cli

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _hub_cache(tiny_model, root):
    """A hub cache holding the tiny model as acme/tiny at COMMIT, with refs/main pointing at it."""
    repo = root / "models--acme--tiny"
    shutil.copytree(tiny_model, repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(COMMIT)
    return root


def _env(cache):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    return {**env, "HF_HUB_CACHE": str(cache), "HF_HOME": str(cache.parent / "hf-home")}


def test_local_folder_facts(tiny_model, monkeypatch):
    from transformers import AutoModelForCausalLM

    from agentlab_trainer import inspect_model

    # In process (a CLI start costs torch's and transformers' imports again): the CLI envelope of
    # inspect-model is what the other tests of this file run. run() switches HF offline mode on
    # for its process; monkeypatch restores the variable afterwards.
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    facts = inspect_model.run({"model": str(tiny_model)})
    real = AutoModelForCausalLM.from_pretrained(tiny_model)
    assert facts["parameters"] == sum(p.numel() for p in real.parameters())
    assert facts["source"] == "path" and facts["revision"] is None
    assert facts["architecture"] == "LlamaForCausalLM" and facts["model_type"] == "llama"
    assert facts["layers"] == TINY_SPEC["num_layers"] and facts["hidden_size"] == TINY_SPEC["hidden_size"]
    assert facts["intermediate_size"] == TINY_SPEC["intermediate_size"]
    assert facts["vocab_size"] == TINY_SPEC["vocab_size"]
    assert facts["heads"] == 4 and facts["kv_heads"] == 2 and facts["head_dim"] == 32
    assert facts["tokenizer"] is True and facts["chat_template"] is True
    assert facts["weights_bytes"] and facts["weights_bytes"] > 0


def test_cached_hub_id_offline_resolves_the_revision(tiny_model, tmp_path):
    cache = _hub_cache(tiny_model, tmp_path / "hub")
    code, events, err = run_cli("inspect-model", {"model": "acme/tiny", "revision": "main"}, tmp_path, env=_env(cache))
    assert code == 0, err
    facts = events[-1]["inspect_model"]
    assert facts["source"] == "hub" and facts["revision"] == COMMIT
    assert facts["path"].endswith(f"snapshots/{COMMIT}")
    assert facts["layers"] == TINY_SPEC["num_layers"]


def test_uncached_hub_id_fails_fast_naming_model_and_revision(tiny_model, tmp_path):
    cache = _hub_cache(tiny_model, tmp_path / "hub")
    code, events, _ = run_cli("inspect-model", {"model": "acme/missing", "revision": "v1"}, tmp_path, env=_env(cache))
    assert code == 3
    msg = events[-1]["error"]["message"]
    assert "acme/missing" in msg and "revision v1" in msg and "offline" in msg
    # Fast because it is refused against the cache before torch or transformers are imported (and
    # with HF_HUB_OFFLINE, so no request is retried): the check below proves the order.
    probe = (
        "import sys\n"
        "from agentlab_trainer import inspect_model\n"
        "try:\n    inspect_model.run({'model': 'acme/missing'})\n"
        "except inspect_model.UserError:\n    print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], env=_env(cache), capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stderr
    # and a cached id at an uncached revision names that revision
    code, events, _ = run_cli("inspect-model", {"model": "acme/tiny", "revision": "v2"}, tmp_path, env=_env(cache))
    assert code == 3 and "revision v2" in events[-1]["error"]["message"]


def test_missing_folder_is_named(tmp_path):
    code, events, _ = run_cli("inspect-model", {"model": str(tmp_path / "nope")}, tmp_path)
    assert code == 3 and f"model folder not found: {tmp_path / 'nope'}" in events[-1]["error"]["message"]
