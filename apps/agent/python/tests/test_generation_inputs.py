"""What both generate backends share: stop ids (the union with the checkpoint's eos ids),
a fixed date for date-dependent chat templates, vLLM's LoRA rank rounding and request, and a clear
error when the vLLM environment is missing."""

from __future__ import annotations

import json
import shutil
from datetime import datetime

import pytest
import torch
from transformers import AutoModelForCausalLM

from agentlab_trainer import data as D
from agentlab_trainer import generate, vllm_backend
from agentlab_trainer.common import CancelFlag, UserError
from agentlab_trainer.modeling import load_tokenizer
from agentlab_trainer.stops import prompts_sha256, stop_token_ids, task_prompts_sha256
from helpers import make_samples

PROMPTS = [{"task_id": f"t{i}", "messages": s["messages"][:-1]} for i, s in enumerate(make_samples(2))]


def _gen(spec, capsys):
    capsys.readouterr()
    summary = generate.run({"backend": "transformers", "max_new_tokens": 6, **spec}, CancelFlag())
    gens = [json.loads(x) for x in capsys.readouterr().out.splitlines() if '"generation"' in x]
    return summary, {g["task_id"]: g for g in gens}


def test_a_generation_config_eos_stops_the_transformers_path(tiny_model, tmp_path, capsys):
    _, before = _gen({"base_model": str(tiny_model), "prompts": PROMPTS}, capsys)
    assert all(g["completion_tokens"] > 0 for g in before.values())  # positive control
    # the token the model emits first for t0 becomes an eos of the checkpoint's generation_config only
    tok = load_tokenizer(str(tiny_model))
    model = AutoModelForCausalLM.from_pretrained(str(tiny_model)).eval()
    with torch.no_grad():
        logits = model(torch.tensor([generate.prompt_ids(tok, PROMPTS[0]["messages"])])).logits
    first = int(logits[0, -1].argmax())
    copy = tmp_path / "model"
    shutil.copytree(tiny_model, copy)
    gc = json.loads((copy / "generation_config.json").read_text())
    (copy / "generation_config.json").write_text(json.dumps({**gc, "eos_token_id": [gc["eos_token_id"], first]}))
    assert stop_token_ids(tok, 2, {"model_path": str(copy)}) == {2, first}
    summary, after = _gen({"base_model": str(copy), "prompts": PROMPTS}, capsys)
    assert after["t0"]["completion_tokens"] == 0 and after["t0"]["finish_reason"] == "stop"
    assert tok.convert_ids_to_tokens(first) in summary["stop"]


def test_the_prompt_hash_follows_the_rendered_prompts(tiny_model, capsys):
    a, _ = _gen({"base_model": str(tiny_model), "prompts": PROMPTS}, capsys)
    b, _ = _gen({"base_model": str(tiny_model), "prompts": PROMPTS[::-1]}, capsys)
    assert a["prompts_sha256"] == b["prompts_sha256"]  # order of the prompts does not matter
    changed = [{**PROMPTS[0], "messages": [{"role": "user", "content": "other"}]}, PROMPTS[1]]
    c, _ = _gen({"base_model": str(tiny_model), "prompts": changed}, capsys)
    assert c["prompts_sha256"] != a["prompts_sha256"]
    assert prompts_sha256([("t", [1, 2])]) != prompts_sha256([("t", [12])])
    # per task: the same for the unchanged task, another for the changed one
    assert set(a["task_prompts_sha256"]) == {"t0", "t1"} and a["task_prompts_sha256"] == b["task_prompts_sha256"]
    assert c["task_prompts_sha256"]["t1"] == a["task_prompts_sha256"]["t1"]
    assert c["task_prompts_sha256"]["t0"] != a["task_prompts_sha256"]["t0"]


DATED = (
    "{{- '<|im_start|>system\\nToday Date: ' + (date_string if date_string is defined else "
    "strftime_now('%d %b %Y')) + '<|im_end|>\\n' -}}"
    "{%- for m in messages -%}{{- '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' -}}{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)


def test_a_date_dependent_template_renders_the_same_prompt_on_two_days(tiny_model, monkeypatch):
    from transformers.utils import chat_template_utils

    tok = load_tokenizer(str(tiny_model))
    tok.chat_template = DATED
    msgs = PROMPTS[0]["messages"]

    def on(day: datetime):
        class Clock(datetime):
            @classmethod
            def now(cls, tz=None):
                return day

        monkeypatch.setattr(chat_template_utils, "datetime", Clock)
        raw = tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        return raw, D.render(tok, msgs, add_generation_prompt=True)

    raw1, ours1 = on(datetime(2026, 3, 1))
    raw2, ours2 = on(datetime(2026, 12, 1))
    assert raw1 != raw2 and "01 Mar 2026" in raw1  # the template really is date-dependent (control)
    assert ours1 == ours2 and D.FIXED_DATE_STRING in ours1


def test_a_changed_date_string_or_template_changes_the_task_prompt_hashes(tiny_model, monkeypatch):
    """What the control plane compares across models (core promptMismatches): an evaluation that
    rendered a date-dependent template with another date, or another template, is visible."""
    tok = load_tokenizer(str(tiny_model))

    def hashes(template: str) -> dict[str, str]:
        tok.chat_template = template
        return task_prompts_sha256([(p["task_id"], generate.prompt_ids(tok, p["messages"])) for p in PROMPTS])

    fixed = hashes(DATED)
    assert fixed == hashes(DATED)  # deterministic (control)
    monkeypatch.setattr(D, "FIXED_DATE_STRING", "01 Dec 2026")
    other_day = hashes(DATED)
    assert all(other_day[t] != fixed[t] for t in fixed)
    monkeypatch.undo()
    assert hashes(DATED) == fixed
    assert hashes(DATED.replace("Today Date", "Date")) != fixed


@pytest.mark.parametrize(
    ("r", "want"), [(1, 1), (2, 8), (8, 8), (16, 16), (24, 32), (100, 128), (300, 320), (512, 512)]
)
def test_lora_rank_rounds_up_to_an_accepted_vllm_rank(r, want):
    assert vllm_backend.max_lora_rank(r) == want


def test_a_lora_rank_above_512_is_refused():
    with pytest.raises(UserError, match="513"):
        vllm_backend.max_lora_rank(513)


def test_the_vllm_request_carries_the_transformers_paths_decoding(tmp_path):
    adapter = tmp_path / "epoch-1"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text(json.dumps({"r": 24}))
    cfg = generate.normalize_spec(
        {"base_model": "m", "prompts": PROMPTS, "adapter": str(adapter), "samples": 3, "temperature": 0.7, "top_p": 0.9}
    )
    cfg["model_path"] = "/snapshots/abc"  # what generate.run resolved the model to
    req = vllm_backend.build_request(cfg, [("t0", [5, 6]), ("t1", [7])], {2, 9}, {"t0": 100, "t1": 200}, "bfloat16")
    assert req["max_lora_rank"] == 32
    assert req["sampling"] == {"temperature": 0.7, "top_p": 0.9, "max_tokens": 512, "stop_token_ids": [2, 9]}
    assert [(p["task_id"], p["n"], p["seed"]) for p in req["prompts"]] == [("t0", 3, 100), ("t1", 3, 200)]
    assert req["engine"]["generation_config"] == "vllm"  # not the checkpoint's defaults
    assert req["engine"]["model"] == req["engine"]["tokenizer"] == "/snapshots/abc"
    greedy = vllm_backend.build_request(
        {**cfg, "samples": 1, "adapter": None}, [("t0", [5])], {2}, {"t0": 0}, "bfloat16"
    )
    assert greedy["sampling"]["temperature"] == 0.0 and "max_lora_rank" not in greedy


def test_a_missing_vllm_environment_is_a_clear_error(tiny_model, monkeypatch, tmp_path):
    monkeypatch.setenv("AGENTLAB_VLLM_PYTHON", str(tmp_path / "no-venv" / "python"))
    assert not vllm_backend.vllm_available()
    with pytest.raises(UserError, match="vLLM environment is missing.*no-venv"):
        generate.run({"base_model": str(tiny_model), "prompts": PROMPTS, "backend": "vllm"}, CancelFlag())
