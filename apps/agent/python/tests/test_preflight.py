"""Pre-flight refuses data that would train on nothing or never learn to stop."""

from __future__ import annotations

import copy

import pytest

from agentlab_trainer import data as D
from agentlab_trainer.common import UserError
from conftest import run_cli
from helpers import make_samples, write_jsonl


def test_accepts_good_samples(tokenizer):
    eot, eot_id = D.resolve_eot(tokenizer)
    D.preflight([D.encode(tokenizer, s["messages"], eot) for s in make_samples(5)], eot_id)


def test_refuses_empty_mask(tokenizer):
    eot, eot_id = D.resolve_eot(tokenizer)
    no_assistant = [{"role": "user", "content": "hello"}]
    samples = [D.encode(tokenizer, make_samples(1)[0]["messages"], eot), D.encode(tokenizer, no_assistant, eot)]
    with pytest.raises(UserError, match=r"empty label mask.*\[1\]"):
        D.preflight(samples, eot_id)


def test_refuses_mask_cut_before_end_of_turn(tokenizer):
    eot, eot_id = D.resolve_eot(tokenizer)
    msgs = make_samples(1)[0]["messages"]
    full = D.encode(tokenizer, msgs, eot)
    cut = D.encode(tokenizer, msgs, eot, max_length=len(full) - 3)  # drops <|im_end|> (and the newline)
    assert cut.n_supervised > 0
    with pytest.raises(UserError, match="does not end with the end-of-turn"):
        D.preflight([cut], eot_id)


def test_refuses_template_without_end_of_turn(tokenizer):
    eot, eot_id = D.resolve_eot(tokenizer)
    tok = copy.deepcopy(tokenizer)
    tok.chat_template = (
        "{%- for m in messages -%}{{- '<|im_start|>' + m['role'] + '\\n' + m['content'] -}}"
        "{%- if m['role'] != 'assistant' -%}{{- '<|im_end|>\\n' -}}{%- else -%}{{- '\\n' -}}{%- endif -%}{%- endfor -%}"
        "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
    )
    enc = D.encode(tok, make_samples(1)[0]["messages"], eot)
    with pytest.raises(UserError, match="does not end with the end-of-turn"):
        D.preflight([enc], eot_id)


def test_cli_exits_3_with_user_error(tiny_model, tmp_path):
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"messages": [{"role": "user", "content": "no answer"}]}])
    code, events, _ = run_cli(
        "train", {"base_model": str(tiny_model), "dataset": str(bad), "output_dir": str(tmp_path / "out")}, tmp_path
    )
    assert code == 3
    assert events[-1]["event"] == "result" and events[-1]["status"] == "failed"
    assert events[-1]["error"]["kind"] == "user_error"
    assert "empty label mask" in events[-1]["error"]["message"]
    assert not (tmp_path / "out" / "epoch-1").exists()
