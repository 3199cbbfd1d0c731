"""`tiny-model`: a random-init small Llama/Qwen2-style causal LM with a locally trained byte-level BPE
tokenizer and a ChatML chat template. Deterministic for a seed; cached by a stamp in the folder."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .common import UserError, emit, log, read_jsonl, sha256_file, sha256_text, weights_hash

STAMP = "agentlab-tiny-model.json"
IM_START, IM_END, ENDOFTEXT = "<|im_start|>", "<|im_end|>", "<|endoftext|>"

# ChatML with `{% generation %}` markers around what the assistant must learn (its content and the
# end-of-turn token). The markers render nothing; they let transformers' assistant-mask (and TRL's
# assistant_only_loss) see the same span our trainer supervises.
CHAT_TEMPLATE = (
    "{%- for message in messages -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' -}}"
    "{%- if message['role'] == 'assistant' -%}"
    "{%- generation -%}{{- message['content'] + '<|im_end|>' -}}{%- endgeneration -%}"
    "{{- '\\n' -}}"
    "{%- else -%}"
    "{{- message['content'] + '<|im_end|>' + '\\n' -}}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)

DEFAULTS: dict[str, Any] = {
    "arch": "llama",
    "seed": 0,
    "vocab_size": 2048,
    "hidden_size": 128,
    "intermediate_size": 256,
    "num_layers": 2,
    "num_heads": 4,
    "num_kv_heads": 2,
    "max_position_embeddings": 2048,
    # Tied input/output embeddings drawn with this std (instead of 0.02): with frozen random
    # weights and a unit-RMS final norm, logits are bounded by |h|*|e|, so 0.02 caps how far LoRA
    # alone can push the loss down; 0.1 leaves room for a tiny model to actually fit data.
    "embedding_std_milli": 100,
}


def _corpus_texts(paths: list[str], train_task_ids: set[str] | None = None) -> Iterator[str]:
    for raw in paths:
        p = Path(raw)
        if not p.is_file():
            raise UserError(f"corpus file not found: {p}")
        if p.name.endswith(".jsonl") or p.name.endswith(".jsonl.gz"):
            # A task pool (Task spec v1): learn from everything a model reads or writes, of the
            # train tasks only when `train_task_ids` is given: a tokenizer fitted on dev/test text
            # (their hidden tests and references above all) leaks them into every later number.
            for task in read_jsonl(p):
                if train_task_ids is not None and task.get("id") not in train_task_ids:
                    continue
                if isinstance(task.get("instruction"), str):
                    yield task["instruction"]
                for key in ("files", "public_tests", "hidden_tests", "reference"):
                    for f in task.get(key) or []:
                        if isinstance(f, dict) and isinstance(f.get("content"), str):
                            yield f["content"]
        else:
            yield p.read_text(encoding="utf-8", errors="replace")


def _config_key(spec: dict[str, Any], corpus_hashes: list[str]) -> str:
    from . import __version__

    cfg = {k: spec.get(k, v) for k, v in DEFAULTS.items()}
    ids = sorted(spec["train_task_ids"]) if spec.get("train_task_ids") is not None else None
    key = {"cfg": cfg, "corpus": corpus_hashes, "v": __version__, "template": CHAT_TEMPLATE, "train_task_ids": ids}
    warm = spec.get("warmup")
    if warm:
        # The warm-up's data (by hash) and settings are part of what the folder is.
        key["warmup"] = {
            **warm,
            "dataset": sha256_file(warm["dataset"]) if Path(str(warm.get("dataset"))).is_file() else None,
        }
    return sha256_text(json.dumps(key, sort_keys=True))


def build_tokenizer(texts: list[str], vocab_size: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        special_tokens=[ENDOFTEXT, IM_START, IM_END],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=None,
        eos_token=IM_END,
        pad_token=ENDOFTEXT,
        unk_token=None,
        additional_special_tokens=[IM_START],
        chat_template=CHAT_TEMPLATE,
        model_max_length=DEFAULTS["max_position_embeddings"],
        padding_side="right",
        clean_up_tokenization_spaces=False,
    )


def build_model(tokenizer, cfg: dict[str, Any]):
    import torch
    from transformers import AutoModelForCausalLM, GenerationConfig, LlamaConfig, PretrainedConfig, Qwen2Config

    common = dict(
        vocab_size=len(tokenizer),
        hidden_size=cfg["hidden_size"],
        intermediate_size=cfg["intermediate_size"],
        num_hidden_layers=cfg["num_layers"],
        num_attention_heads=cfg["num_heads"],
        num_key_value_heads=cfg["num_kv_heads"],
        max_position_embeddings=cfg["max_position_embeddings"],
        tie_word_embeddings=True,
        bos_token_id=tokenizer.convert_tokens_to_ids(ENDOFTEXT),
        eos_token_id=tokenizer.convert_tokens_to_ids(IM_END),
        pad_token_id=tokenizer.convert_tokens_to_ids(ENDOFTEXT),
    )
    config: PretrainedConfig
    if cfg["arch"] == "llama":
        config = LlamaConfig(**common)
    elif cfg["arch"] == "qwen2":
        config = Qwen2Config(**common)
    else:
        raise UserError(f"unknown arch {cfg['arch']!r} (llama or qwen2)")
    torch.manual_seed(int(cfg["seed"]))
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    with torch.no_grad():
        model.get_input_embeddings().weight.normal_(0.0, cfg["embedding_std_milli"] / 1000.0)
    model.generation_config = GenerationConfig(
        do_sample=False,
        eos_token_id=common["eos_token_id"],
        pad_token_id=common["pad_token_id"],
        bos_token_id=common["bos_token_id"],
    )
    return model


def run(spec: dict[str, Any]) -> dict[str, Any]:
    out = spec.get("output_dir")
    if not isinstance(out, str) or not out:
        raise UserError("tiny-model spec needs output_dir")
    corpus = spec.get("corpus")
    if isinstance(corpus, str):
        corpus = [corpus]
    if not isinstance(corpus, list) or not corpus or not all(isinstance(c, str) for c in corpus):
        raise UserError("tiny-model spec needs corpus: a path or a list of paths")
    cfg = {k: spec.get(k, v) for k, v in DEFAULTS.items()}
    for k in DEFAULTS:
        if k != "arch" and (not isinstance(cfg[k], int) or cfg[k] < 0):
            raise UserError(f"{k} must be a non-negative integer")
    for c in corpus:
        if not Path(c).is_file():
            raise UserError(f"corpus file not found: {c}")
    corpus_hashes = [sha256_file(c) for c in corpus]
    key = _config_key(spec, corpus_hashes)
    out_dir = Path(out)
    stamp = out_dir / STAMP
    if stamp.is_file() and not spec.get("force"):
        try:
            meta = json.loads(stamp.read_text())
        except json.JSONDecodeError:
            meta = {}
        if meta.get("key") == key:
            log(f"tiny model cached at {out_dir}")
            return {**meta, "cached": True, "path": str(out_dir)}
    if out_dir.exists() and any(out_dir.iterdir()) and not stamp.is_file():
        raise UserError(
            f"output_dir {out_dir} exists, is not empty and is not a tiny-model folder; refusing to overwrite"
        )

    t0 = time.time()
    ids = spec.get("train_task_ids")
    if ids is not None and (not isinstance(ids, list) or not all(isinstance(i, str) for i in ids)):
        raise UserError("train_task_ids must be a list of task ids")
    texts = [t for t in _corpus_texts(corpus, set(ids) if ids is not None else None) if t.strip()]
    if not texts:
        raise UserError("corpus is empty")
    tokenizer = build_tokenizer(texts, int(cfg["vocab_size"]))
    model = build_model(tokenizer, cfg)
    warm_record = None
    if spec.get("warmup"):
        from . import warmup

        warm_record = warmup.run(model, tokenizer, spec["warmup"])
    tmp = out_dir.parent / f".{out_dir.name}.tmp-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    n_params = sum(p.numel() for p in model.parameters())
    meta = {
        "key": key,
        "arch": cfg["arch"],
        "config": cfg,
        "corpus_sha256": corpus_hashes,
        "vocab_size": len(tokenizer),
        "parameters": n_params,
        "weights_sha256": weights_hash(tmp),
        "chat_template_sha256": sha256_text(CHAT_TEMPLATE),
        "build_s": round(time.time() - t0, 3),
        "warmup": warm_record,
    }
    if warm_record is not None:
        (tmp / "agentlab-warmup.json").write_text(json.dumps(warm_record, indent=2, sort_keys=True))
    (tmp / STAMP).write_text(json.dumps(meta, indent=2, sort_keys=True))
    if out_dir.exists():
        shutil.rmtree(out_dir)
    os.replace(tmp, out_dir)
    log(f"tiny model built at {out_dir}: {n_params} parameters, vocab {len(tokenizer)}")
    return {**meta, "cached": False, "path": str(out_dir)}


def main(spec: dict[str, Any]) -> None:
    emit("result", command="tiny-model", status="succeeded", tiny_model=run(spec))
