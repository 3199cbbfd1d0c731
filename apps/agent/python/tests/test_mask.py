"""Assistant-only labels on the real chat template, end-of-turn included."""

from __future__ import annotations

import json

import pytest

from agentlab_trainer import data as D
from agentlab_trainer.common import UserError
from helpers import make_samples


def supervised_runs(enc: D.Encoded) -> list[list[int]]:
    runs, cur = [], []
    for tok, lab in zip(enc.input_ids, enc.labels, strict=True):
        if lab != D.IGNORE:
            assert lab == tok
            cur.append(tok)
        elif cur:
            runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    return runs


def test_eot_is_im_end(tokenizer):
    eot, eot_id = D.resolve_eot(tokenizer)
    assert eot == "<|im_end|>"
    assert eot_id == tokenizer.convert_tokens_to_ids("<|im_end|>")


def test_mask_equals_assistant_span_token_by_token(tokenizer):
    eot, eot_id = D.resolve_eot(tokenizer)
    msgs = make_samples(3)[2]["messages"]
    enc = D.encode(tokenizer, msgs, eot)
    # the full rendering is tokenized exactly as the template renders it
    assert tokenizer.decode(enc.input_ids) == D.render(tokenizer, msgs)
    # the supervised tokens are exactly the assistant content followed by <|im_end|>
    expected = tokenizer(msgs[-1]["content"], add_special_tokens=False)["input_ids"] + [eot_id]
    assert supervised_runs(enc) == [expected]
    # and they sit at the end of the prompt the model sees at inference time
    prompt = tokenizer(D.render(tokenizer, msgs[:-1], add_generation_prompt=True), add_special_tokens=False)[
        "input_ids"
    ]
    assert enc.input_ids[: len(prompt)] == prompt
    assert enc.labels[: len(prompt)] == [D.IGNORE] * len(prompt)
    assert enc.input_ids[len(prompt) : len(prompt) + len(expected)] == expected
    # the newline after <|im_end|> is template glue, not supervised
    assert all(lab == D.IGNORE for lab in enc.labels[len(prompt) + len(expected) :])


def test_mask_matches_transformers_generation_mask(tokenizer):
    """Independent check: transformers' {% generation %} assistant mask marks the same tokens."""
    eot, _ = D.resolve_eot(tokenizer)
    for sample in make_samples(6):
        msgs = sample["messages"]
        enc = D.encode(tokenizer, msgs, eot)
        hf = tokenizer.apply_chat_template(msgs, tokenize=True, return_dict=True, return_assistant_tokens_mask=True)
        assert hf["input_ids"] == enc.input_ids
        assert [bool(m) for m in hf["assistant_masks"]] == [lab != D.IGNORE for lab in enc.labels]


def test_multi_turn_supervises_every_assistant_turn_only(tokenizer):
    eot, eot_id = D.resolve_eot(tokenizer)
    msgs = [
        {"role": "user", "content": "fix a"},
        {"role": "assistant", "content": "def a(): return 1"},
        {"role": "user", "content": "and b"},
        {"role": "assistant", "content": "def b(): return 2"},
    ]
    enc = D.encode(tokenizer, msgs, eot)
    runs = supervised_runs(enc)
    assert [tokenizer.decode(r) for r in runs] == ["def a(): return 1<|im_end|>", "def b(): return 2<|im_end|>"]
    assert enc.n_supervised == sum(len(r) for r in runs)
    assert all(r[-1] == eot_id for r in runs)


def test_an_unsupervised_turn_stays_in_the_context_without_labels(tokenizer, tmp_path):
    """A trajectory's failed attempt (train: false): the same tokens as the plain conversation, the
    masked turn's labels gone, the later turns' unchanged (the plain encoding is the control)."""
    eot, _ = D.resolve_eot(tokenizer)
    msgs = [
        {"role": "user", "content": "fix a"},
        {"role": "assistant", "content": "wrong edit"},
        {"role": "user", "content": "public tests: failed"},
        {"role": "assistant", "content": "right edit"},
    ]
    path = tmp_path / "d.jsonl"
    masked = [*msgs[:1], {**msgs[1], "train": False}, *msgs[2:]]
    path.write_text(json.dumps({"messages": masked}) + "\n")
    [loaded] = D.load_sft(str(path))
    plain, enc = D.encode(tokenizer, msgs, eot), D.encode(tokenizer, loaded, eot)
    assert enc.input_ids == plain.input_ids
    assert [tokenizer.decode(r) for r in supervised_runs(plain)] == ["wrong edit<|im_end|>", "right edit<|im_end|>"]
    assert [tokenizer.decode(r) for r in supervised_runs(enc)] == ["right edit<|im_end|>"]


def test_train_false_only_on_an_assistant_turn(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "x", "train": False}]}) + "\n")
    with pytest.raises(UserError, match="only an assistant turn"):
        D.load_sft(str(path))
    path.write_text(json.dumps({"messages": [{"role": "assistant", "content": "x", "train": True}]}) + "\n")
    with pytest.raises(UserError, match="only an assistant turn"):
        D.load_sft(str(path))
