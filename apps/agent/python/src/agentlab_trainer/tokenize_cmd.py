"""`tokenize`: supervised-token counts of an SFT dataset under a model's tokenizer and template."""

from __future__ import annotations

from typing import Any

from . import data as D
from .common import UserError, emit, sha256_file, sha256_text


def run(spec: dict[str, Any]) -> dict[str, Any]:
    from .modeling import load_tokenizer

    model = spec.get("model") or spec.get("base_model")
    if not isinstance(model, str) or not isinstance(spec.get("dataset"), str):
        raise UserError("tokenize spec needs model and dataset")
    tokenizer = load_tokenizer(model, bool(spec.get("local_files_only", False)))
    eot, eot_id = D.resolve_eot(tokenizer, spec.get("eot_token"))
    max_length = spec.get("max_length")
    stats = D.conversations_stats(tokenizer, spec["dataset"], eot, eot_id, max_length)
    # Untruncated lengths: a sample longer than max_length would lose its end-of-turn to
    # truncation and be refused by the trainer; the dataset stage drops and reports these first.
    lengths = [len(D.encode(tokenizer, c, eot)) for c in D.load_sft(spec["dataset"])]
    over = [i for i, n in enumerate(lengths) if max_length is not None and n > max_length]
    template = tokenizer.chat_template if isinstance(tokenizer.chat_template, str) else str(tokenizer.chat_template)
    return {
        **stats,
        "sample_tokens": lengths,
        "over_length": over,
        "eot_token": eot,
        "max_length": max_length,
        "dataset_sha256": sha256_file(spec["dataset"]),
        "chat_template_sha256": sha256_text(template),
    }


def main(spec: dict[str, Any]) -> None:
    emit("result", command="tokenize", status="succeeded", tokenize=run(spec))
