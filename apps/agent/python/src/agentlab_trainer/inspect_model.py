"""`inspect-model`: a base model's facts from its local folder or the local hub cache.

Never touches the network: HF offline mode is set before any Hugging Face import, and every load
passes local_files_only. A hub id is resolved against the cache *before* torch and transformers are
imported, so an id that is not cached fails in about a second instead of after minutes of retries.
No weights are loaded: the parameter count comes from the architecture built on the meta device."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from .common import UserError, emit

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
# The config fields of a Llama/Qwen-style decoder that the memory estimate needs.
SHAPE_FIELDS = ("num_hidden_layers", "hidden_size", "intermediate_size", "num_attention_heads", "vocab_size")


def _looks_like_path(model: str) -> bool:
    # Hub ids are "name" or "org/name"; anything else that is not a folder is a missing path.
    return model.startswith(("/", ".", "~")) or model.count("/") > 1 or "\\" in model


def resolve(model: str, revision: str | None) -> tuple[str, str | None, Path]:
    """(source, resolved commit or None, folder) for a local folder or a cached hub id."""
    folder = Path(model).expanduser()
    if folder.is_dir():
        return "path", None, folder.resolve()
    if _looks_like_path(model):
        raise UserError(f"model folder not found: {model}")
    os.environ["HF_HUB_OFFLINE"] = "1"
    from huggingface_hub import constants, snapshot_download

    rev = revision or "main"
    try:
        snap = snapshot_download(model, revision=rev, local_files_only=True)
    except Exception as e:  # noqa: BLE001 - every failure here means "not usable offline"; say which and why
        raise UserError(
            f"hub model {model} at revision {rev} is not in the local cache ({constants.HF_HUB_CACHE}) and the "
            f"agent works offline: pre-fill the cache on this box (huggingface-cli download {model} --revision {rev}) "
            f"or use a local folder ({type(e).__name__}: {e})"
        ) from e
    path = Path(snap)
    return "hub", path.name, path


def _tokenizer_facts(folder: Path) -> tuple[bool, bool]:
    from transformers import AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    except Exception:  # noqa: BLE001 - a folder without a loadable tokenizer is a fact to report, not a crash
        return False, False
    return True, bool(getattr(tok, "chat_template", None))


def _parameters(cfg: Any) -> int:
    import torch
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(cfg)
    # parameters() yields a tied embedding/head once
    return sum(p.numel() for p in model.parameters())


def _dtype(cfg: Any) -> str | None:
    d = getattr(cfg, "dtype", None) or getattr(cfg, "torch_dtype", None)
    if d is None:
        return None
    return str(d).removeprefix("torch.")


def _weights_bytes(folder: Path) -> int | None:
    files = [p for p in folder.rglob("*") if p.is_file() and p.name.endswith(WEIGHT_SUFFIXES)]
    return sum(p.stat().st_size for p in files) if files else None


def run(spec: dict[str, Any]) -> dict[str, Any]:
    started = time.perf_counter()
    model = spec["model"]
    source, commit, folder = resolve(model, spec.get("revision"))
    where = f"{model}" + (f" at revision {commit}" if commit else "")
    os.environ["HF_HUB_OFFLINE"] = "1"
    from transformers import AutoConfig

    try:
        cfg = AutoConfig.from_pretrained(str(folder), local_files_only=True)
    except Exception as e:  # noqa: BLE001 - name the model whatever transformers raised
        raise UserError(f"{where}: no readable config.json in {folder} ({type(e).__name__}: {e})") from e
    text = cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg
    missing = [k for k in SHAPE_FIELDS if getattr(text, k, None) is None]
    if missing:
        raise UserError(
            f"{where}: its config ({cfg.model_type}) has no {', '.join(missing)}: not a decoder the lab trains"
        )
    heads = int(text.num_attention_heads)
    hidden = int(text.hidden_size)
    try:
        parameters = _parameters(cfg)
    except Exception as e:  # noqa: BLE001 - e.g. an architecture this transformers cannot build as a causal LM
        raise UserError(f"{where}: not a causal language model transformers can build ({type(e).__name__}: {e})") from e
    tokenizer, chat_template = _tokenizer_facts(folder)
    archs = getattr(cfg, "architectures", None) or [cfg.model_type]
    max_pos = getattr(text, "max_position_embeddings", None)
    return {
        "model": model,
        "source": source,
        "revision": commit,
        "path": str(folder),
        "architecture": str(archs[0]),
        "model_type": str(cfg.model_type),
        "parameters": parameters,
        "layers": int(text.num_hidden_layers),
        "hidden_size": hidden,
        "intermediate_size": int(text.intermediate_size),
        "heads": heads,
        "kv_heads": int(getattr(text, "num_key_value_heads", None) or heads),
        "head_dim": int(getattr(text, "head_dim", None) or hidden // heads),
        "vocab_size": int(text.vocab_size),
        "tied_embeddings": bool(getattr(cfg, "tie_word_embeddings", False)),
        "dtype": _dtype(text),
        "max_positions": int(max_pos) if max_pos else None,
        "weights_bytes": _weights_bytes(folder),
        "tokenizer": tokenizer,
        "chat_template": chat_template,
        "inspect_s": round(time.perf_counter() - started, 3),
    }


def main(spec: dict[str, Any]) -> None:
    emit("result", command="inspect-model", status="succeeded", inspect_model=run(spec))
