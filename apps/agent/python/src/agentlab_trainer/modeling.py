"""Loading the base model, its tokenizer and the LoRA adapter: shared by train, generate and tokenize."""

from __future__ import annotations

from typing import Any

from .common import UserError


def bnb_available() -> bool:
    try:
        import bitsandbytes  # noqa: F401
    except Exception:  # noqa: BLE001 - any import failure means "not usable"
        return False
    return True


# What a hub snapshot needs for training and generation (no .bin duplicates, no GGUF, no images).
HUB_PATTERNS = ["*.json", "*.safetensors", "*.model", "*.txt", "*.jinja", "*.tiktoken"]


def resolve_model(ref: str, revision: str | None, local_files_only: bool) -> tuple[str, str | None]:
    """(folder, commit): a local folder as is (commit None); a hub id resolved ONCE to a commit and
    its snapshot folder in the local hub cache (downloaded there unless local_files_only or
    HF_HUB_OFFLINE), so tokenizer, config, weights and the vLLM process all read the same commit."""
    from pathlib import Path

    if Path(ref).is_dir():
        return ref, None
    if ref.startswith(("/", "./", "../")):
        raise UserError(f"model folder not found: {ref}")
    from huggingface_hub import snapshot_download

    try:
        folder = snapshot_download(
            ref, revision=revision, local_files_only=local_files_only, allow_patterns=HUB_PATTERNS
        )
    except Exception as e:  # noqa: BLE001 - not cached offline, unknown repo or revision, no network
        from huggingface_hub import constants

        where = "the local hub cache" if local_files_only or constants.HF_HUB_OFFLINE else "the hub"
        raise UserError(
            f"cannot resolve model {ref} at revision {revision or 'main'} from {where} "
            f"({constants.HF_HUB_CACHE}): {type(e).__name__}: {e}"
        ) from None
    return folder, Path(folder).name


def load_tokenizer(path: str, local_files_only: bool = False, revision: str | None = None):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path, local_files_only=local_files_only, revision=revision)
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return tok


def load_model(
    path: str,
    *,
    device: str,
    quantization: str,
    local_files_only: bool = False,
    method: str | None = None,
    revision: str | None = None,
    place: bool = True,
):
    """Returns (model, method). `place` False keeps a non-quantized model on the CPU in its
    method's dtype (FSDP moves each shard to the rank's GPU as it wraps). NF4 QLoRA (double quant, bf16 compute) when CUDA + bitsandbytes,
    bf16 LoRA on CUDA otherwise, fp32 LoRA on CPU. With `method` set (experiments resolve it when
    they are created), exactly that method is used or the run is refused: seeds never differ by
    which agent happened to claim them."""
    import torch
    from transformers import AutoModelForCausalLM

    if method is not None:
        need = {"qlora-nf4": "cuda", "lora-bf16": "cuda", "lora-fp32": None}
        if method not in need:
            raise UserError(f"unknown training method {method!r}")
        if need[method] == "cuda" and device != "cuda":
            raise UserError(f"training method {method} needs CUDA; this box trains on {device}")
        if method == "lora-fp32" and device != "cpu":
            raise UserError("training method lora-fp32 runs on the CPU device")
        quantization = "nf4" if method == "qlora-nf4" else "none"
    want_nf4 = quantization == "nf4" or (quantization == "auto" and device == "cuda" and bnb_available())
    if want_nf4:
        if device != "cuda":
            raise UserError("quantization nf4 needs CUDA")
        if not bnb_available():
            raise UserError("quantization nf4 needs bitsandbytes")
        from peft import prepare_model_for_kbit_training
        from transformers import BitsAndBytesConfig

        qc = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=torch.bfloat16,
        )
        model = AutoModelForCausalLM.from_pretrained(
            path,
            quantization_config=qc,
            dtype=torch.bfloat16,
            device_map={"": 0},
            local_files_only=local_files_only,
            revision=revision,
        )
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)
        return model, "qlora-nf4"
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    model = AutoModelForCausalLM.from_pretrained(
        path, dtype=dtype, local_files_only=local_files_only, revision=revision
    )
    if place:
        model.to(device)  # type: ignore[arg-type]  # transformers types .to() through a wrapper that expects a model
    return model, ("lora-bf16" if dtype == torch.bfloat16 else "lora-fp32")


def attach_lora(model, lora: dict[str, Any], seed: int):
    import torch
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(seed)
    cfg = LoraConfig(
        r=int(lora["r"]),
        lora_alpha=float(lora["alpha"]),  # type: ignore[arg-type]  # peft annotates int, scales by alpha / r
        lora_dropout=float(lora["dropout"]),
        target_modules=list(lora["target_modules"]),
        bias="none",
        task_type="CAUSAL_LM",
    )
    try:
        return get_peft_model(model, cfg)
    except ValueError as e:
        raise UserError(f"LoRA config does not fit the model: {e}") from e
