"""The tiny model is deterministic for a seed, cached, loadable with Auto classes; tokenize counts."""

from __future__ import annotations

import json

from agentlab_trainer import data as D
from agentlab_trainer import tiny_model as tm
from agentlab_trainer import tokenize_cmd
from conftest import TINY_SPEC


def test_tiny_model_deterministic_cached_and_loadable(tiny_model, tmp_path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    again = tm.run({**TINY_SPEC, "output_dir": str(tmp_path / "m")})
    stamp = json.loads((tiny_model / tm.STAMP).read_text())
    assert again["cached"] is False
    assert again["weights_sha256"] == stamp["weights_sha256"]
    assert (tmp_path / "m" / "tokenizer.json").read_bytes() == (tiny_model / "tokenizer.json").read_bytes()
    assert tm.run({**TINY_SPEC, "output_dir": str(tmp_path / "m")})["cached"] is True
    other_seed = tm.run({**TINY_SPEC, "seed": 1, "output_dir": str(tmp_path / "m")})
    assert other_seed["cached"] is False and other_seed["weights_sha256"] != stamp["weights_sha256"]
    tok = AutoTokenizer.from_pretrained(tiny_model)
    model = AutoModelForCausalLM.from_pretrained(tiny_model)
    assert model.config.model_type == "llama" and model.config.num_hidden_layers == 2
    assert tok.eos_token == "<|im_end|>" and "<|im_start|>" in tok.get_vocab()
    text = tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True)
    assert text == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"


def test_tokenize_counts(tiny_model, tokenizer, sft_files):
    out = tokenize_cmd.run({"model": str(tiny_model), "dataset": str(sft_files["train"])})
    eot, eot_id = D.resolve_eot(tokenizer)
    enc = D.encode_dataset(tokenizer, str(sft_files["train"]), eot, eot_id, None, "x")
    assert out["samples"] == 20
    assert out["per_sample_supervised"] == [e.n_supervised for e in enc]
    assert out["supervised_tokens"] == sum(e.n_supervised for e in enc) > 0
    assert out["preflight_error"] is None
    short = tokenize_cmd.run({"model": str(tiny_model), "dataset": str(sft_files["train"]), "max_length": 40})
    assert short["preflight_error"] is not None


def test_tokenize_reports_over_length_samples(tiny_model, sft_files):
    full = tokenize_cmd.run({"model": str(tiny_model), "dataset": str(sft_files["train"])})
    lengths = full["sample_tokens"]
    assert len(lengths) == 20 and full["over_length"] == []  # no max_length: nothing is over
    cut = sorted(lengths)[len(lengths) // 2]
    out = tokenize_cmd.run({"model": str(tiny_model), "dataset": str(sft_files["train"]), "max_length": cut})
    assert out["sample_tokens"] == lengths  # measured before truncation
    assert out["over_length"] == [i for i, n in enumerate(lengths) if n > cut]
    assert 0 < len(out["over_length"]) < 20
