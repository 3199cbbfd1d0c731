"""The trainer reads the same job-spec contract as the agent (JSON Schema generated from the
zod schemas in core, checked in under agentlab_trainer/schemas), with unknown keys refused, and the
defaults Python still spells out agree with the contract's."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agentlab_trainer import dpo, generate, grpo, score, tiny_model, train
from agentlab_trainer.common import EXIT_USER, UserError, load_spec
from agentlab_trainer.spec_schema import SchemaError, errors, load_schema, spec_defaults, validate_spec

COMMANDS = ("tiny-model", "train", "dpo", "generate", "tokenize")
TRAIN = {"base_model": "m", "dataset": "/d.jsonl", "output_dir": "/o"}
GEN = {"base_model": "m", "prompts": [{"task_id": "t", "messages": [{"role": "user", "content": "hi"}]}]}


def test_every_command_has_a_strict_schema():
    for c in COMMANDS:
        s = load_schema(c)
        assert s["type"] == "object" and s["additionalProperties"] is False, c


def test_a_misspelled_key_is_refused_anywhere_in_the_spec():
    assert validate_spec("train", TRAIN) == []  # positive control
    assert any("learning_rat" in e for e in validate_spec("train", {**TRAIN, "learning_rat": 1e-3}))
    nested = {**TRAIN, "lora": {"r": 8, "targets": ["q_proj"]}}
    assert any("spec.lora.targets: unknown key" in e for e in validate_spec("train", nested))
    assert validate_spec("generate", GEN) == []
    bad_msg = {**GEN, "prompts": [{"task_id": "t", "messages": [{"role": "user", "content": "hi", "name": "x"}]}]}
    assert any("messages[0].name" in e for e in validate_spec("generate", bad_msg))


def test_types_ranges_enums_and_required_keys():
    assert any("required" in e for e in validate_spec("train", {"base_model": "m"}))
    assert any("one of" in e for e in validate_spec("train", {**TRAIN, "lr_schedule": "cosin"}))
    assert any(">= 1" in e for e in validate_spec("train", {**TRAIN, "epochs": 0}))
    assert any("expected integer" in e for e in validate_spec("train", {**TRAIN, "epochs": True}))
    assert any("> 0" in e for e in validate_spec("train", {**TRAIN, "learning_rate": 0}))
    # nullable enum (anyOf): null and a member pass, anything else not
    assert validate_spec("train", {**TRAIN, "method": None}) == []
    assert validate_spec("train", {**TRAIN, "method": "lora-fp32"}) == []
    assert validate_spec("train", {**TRAIN, "method": "lora-fp64"}) != []
    assert any("must match" in e for e in validate_spec("generate", {**GEN, "expected_adapter_sha256": "XYZ"}))


def test_an_unknown_schema_keyword_fails_loudly():
    with pytest.raises(SchemaError):
        errors({}, {"type": "object", "patternProperties": {}})


def test_load_spec_refuses_a_broken_spec_as_a_user_error(tmp_path):
    p = tmp_path / "spec.json"
    p.write_text(json.dumps({**TRAIN, "epoch": 2}))
    assert load_spec(p)["epoch"] == 2  # without a command: read as is (module callers, tests)
    with pytest.raises(UserError, match=r"spec\.epoch: unknown key"):
        load_spec(p, "train")


def test_the_cli_exits_with_a_user_error_before_loading_anything(tmp_path):
    p = tmp_path / "spec.json"
    p.write_text(json.dumps({**TRAIN, "epoch": 2}))
    r = subprocess.run(
        [sys.executable, "-m", "agentlab_trainer", "train", "--spec", str(p)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == EXIT_USER
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["error"]["kind"] == "user_error" and "spec.epoch" in result["error"]["message"]


def _defaults(command: str) -> dict:
    return {k: v.get("default") for k, v in load_schema(command)["properties"].items()}


@pytest.mark.parametrize(
    ("command", "python_defaults"),
    [
        ("train", train.TRAIN_DEFAULTS),
        ("dpo", dpo.DPO_DEFAULTS),
        ("grpo", grpo.GRPO_DEFAULTS),
        ("score", score.SCORE_DEFAULTS),
        ("generate", generate.GEN_DEFAULTS),
    ],
)
def test_a_command_starts_from_the_contract_defaults(command, python_defaults):
    assert python_defaults == spec_defaults(command)


@pytest.mark.parametrize(
    ("command", "python_defaults", "internal"),
    [
        # embedding_std_milli is a constant of the tiny model, not a spec key.
        ("tiny-model", tiny_model.DEFAULTS, {"embedding_std_milli"}),
    ],
)
def test_python_defaults_agree_with_the_contract(command, python_defaults, internal):
    schema = _defaults(command)
    assert set(python_defaults) - set(schema) == internal
    for k in set(python_defaults) - internal:
        assert python_defaults[k] == schema[k], f"{command}.{k}: Python {python_defaults[k]!r}, contract {schema[k]!r}"


def test_lora_defaults_agree_with_the_contract():
    lora = load_schema("train")["properties"]["lora"]["default"]
    assert train.LORA_DEFAULTS == lora
