"""A hub model id is resolved once against the local hub cache; with HF_HUB_OFFLINE and a
pre-filled cache (the tiny model saved in the cache's layout) train and generate work and record
the commit; a model or revision missing from the cache is a user error naming both."""

from __future__ import annotations

import os
import shutil

from conftest import run_cli
from helpers import make_samples

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _cache(tiny_model, tmp_path):
    """HF cache layout: models--org--name/{refs/main, snapshots/<commit>/...}."""
    repo = tmp_path / "hub" / "models--agentlab--tiny"
    shutil.copytree(tiny_model, repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    return tmp_path / "hub"


def _env(hub):
    return {**os.environ, "HF_HUB_CACHE": str(hub), "HF_HUB_OFFLINE": "1"}


PROMPTS = [{"task_id": "t0", "messages": make_samples(1)[0]["messages"][:-1]}]


def test_generate_from_a_prefilled_cache_offline(tiny_model, tmp_path):
    hub = _cache(tiny_model, tmp_path)
    spec = {"base_model": "agentlab/tiny", "prompts": PROMPTS, "max_new_tokens": 4, "local_files_only": True}
    code, events, err = run_cli("generate", spec, tmp_path, env=_env(hub))
    assert code == 0, err[-2000:]
    summary = events[-1]["generate"]
    assert summary["model"]["ref"] == "agentlab/tiny" and summary["model"]["revision"] == COMMIT
    assert summary["model"]["weights_sha256"] is not None
    # the commit named as the revision resolves to the same snapshot
    code, events, err = run_cli("generate", {**spec, "revision": COMMIT}, tmp_path, env=_env(hub))
    assert code == 0 and events[-1]["generate"]["model"]["revision"] == COMMIT


def test_train_from_a_prefilled_cache_offline(tiny_model, sft_files, tmp_path):
    hub = _cache(tiny_model, tmp_path)
    spec = {
        "base_model": "agentlab/tiny",
        "dataset": str(sft_files["eval"]),
        "output_dir": str(tmp_path / "out"),
        "lora": {"r": 2, "alpha": 4, "dropout": 0.0, "target_modules": ["q_proj"]},
        "batch_size": 5,
        "local_files_only": True,
    }
    code, events, err = run_cli("train", spec, tmp_path, env=_env(hub))
    assert code == 0, err[-2000:]
    assert events[-1]["record"]["model"]["weights_sha256"] is not None


def test_a_model_or_revision_missing_from_the_cache_names_both(tiny_model, tmp_path):
    hub = _cache(tiny_model, tmp_path)
    base = {"prompts": PROMPTS, "max_new_tokens": 4, "local_files_only": True}
    for model, rev in (("agentlab/absent", None), ("agentlab/tiny", "v9")):
        code, events, _ = run_cli("generate", {**base, "base_model": model, "revision": rev}, tmp_path, env=_env(hub))
        assert code == 3, events
        msg = events[-1]["error"]["message"]
        assert model in msg and (rev or "main") in msg and "local hub cache" in msg, msg
