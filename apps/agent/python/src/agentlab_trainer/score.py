"""`score`: the log-prob of each pair's chosen and rejected answer under a reference and under each
of several policies, no training. Run on held-out dev pairs after a DPO run, it says whether an
epoch kept the chosen answers likely on prompts it never trained on: the train pairs' per-epoch
Δ (dpo_dynamics) only shows what the loss pushed on.

Every adapter folder is checked against its expected tree hash before anything loads. Eval mode,
no gradient, the same batches for every model: a policy equal to the reference gives exactly 0."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from . import data as D
from .common import UserError, emit, log, pick_device, sha256_file, sha256_tree
from .dpo_data import Pair, load_pairs, pair_batch, sequence_logps
from .modeling import load_model, load_tokenizer
from .spec_schema import spec_defaults

# The values of the keys a spec may leave out: the contract's (zod) defaults, read from its schema.
SCORE_DEFAULTS: dict[str, Any] = spec_defaults("score")


def normalize_spec(spec: dict[str, Any]) -> dict[str, Any]:
    for key in ("base_model", "pairs"):
        if not isinstance(spec.get(key), str) or not spec[key]:
            raise UserError(f"score spec needs {key}")
    cfg = {**SCORE_DEFAULTS, **{k: v for k, v in spec.items() if v is not None}}
    if not cfg.get("policies"):
        raise UserError("score spec needs at least one policy")
    names = [p["name"] for p in cfg["policies"]]
    if len(set(names)) != len(names):
        raise UserError(f"score spec names a policy twice: {names}")
    return cfg


def checked_folder(path: str, want: str | None, what: str) -> str:
    """The folder's sha256_tree, refused when it is missing or hashes to something else."""
    if not Path(path).is_dir():
        raise UserError(f"{what} folder not found: {path}")
    digest = sha256_tree(path)
    if want and digest != want:
        raise UserError(f"{what} hash mismatch: the folder hashes to {digest}, expected {want}")
    return digest


def side_logps(model, pairs: list[Pair], pad_id: int, device: Any, batch_size: int) -> list[tuple[float, float]]:
    """(chosen, rejected) summed log-prob per pair, in eval mode without gradient."""
    import torch

    model.eval()
    out: list[tuple[float, float]] = []
    with torch.no_grad():
        for s in range(0, len(pairs), batch_size):
            chunk = pairs[s : s + batch_size]
            lp, _ = sequence_logps(model, pair_batch(chunk, pad_id, device))
            out.extend((float(lp[k]), float(lp[len(chunk) + k])) for k in range(len(chunk)))
    return out


def held_out_warning(dc: float, dr: float) -> str | None:
    if dc >= 0:
        return None
    return (
        f"the chosen answers' log-prob fell by {-dc:.3g} nats per answer on held-out dev pairs "
        f"(rejected: {dr:+.3g}): the policy displaces the chosen answer beyond its train prompts"
    )


def compare(name: str, digest: str, ref: list[tuple[float, float]], pol: list[tuple[float, float]]) -> dict[str, Any]:
    n = max(len(ref), 1)
    dc = sum(p[0] - r[0] for p, r in zip(pol, ref, strict=True)) / n
    dr = sum(p[1] - r[1] for p, r in zip(pol, ref, strict=True)) / n
    gains = sum(1 for p, r in zip(pol, ref, strict=True) if (p[0] - p[1]) > (r[0] - r[1]))
    return {
        "name": name,
        "adapter_sha256": digest,
        "chosen_logp_delta": dc,
        "rejected_logp_delta": dr,
        "margin_gain_rate": gains / n,
        "logp_warning": held_out_warning(dc, dr),
    }


def run(spec: dict[str, Any]) -> dict[str, Any]:
    import torch
    from peft import PeftModel

    t0 = time.time()
    cfg = normalize_spec(spec)
    if cfg["torch_threads"]:
        torch.set_num_threads(int(cfg["torch_threads"]))
    device = "cpu" if cfg["method"] == "lora-fp32" else pick_device(cfg["device"])
    # Every folder is checked before the model loads: a wrong snapshot is refused in seconds.
    ref_sha = (
        checked_folder(cfg["reference_adapter"], cfg["expected_reference_adapter_sha256"], "reference adapter")
        if cfg["reference_adapter"]
        else None
    )
    digests = [checked_folder(p["adapter"], p.get("expected_sha256"), f"policy {p['name']}") for p in cfg["policies"]]
    tokenizer = load_tokenizer(cfg["base_model"], cfg["local_files_only"])
    eot, eot_id = D.resolve_eot(tokenizer, cfg["eot_token"])
    pairs = load_pairs(tokenizer, cfg["pairs"], eot, eot_id, cfg["max_length"])
    pad_id, bs = int(tokenizer.pad_token_id), int(cfg["batch_size"])
    base, method = load_model(
        cfg["base_model"],
        device=device,
        quantization=cfg["quantization"],
        local_files_only=cfg["local_files_only"],
        method=cfg["method"],
        revision=cfg["revision"],
    )
    model = None
    if cfg["reference_adapter"]:
        model = PeftModel.from_pretrained(base, cfg["reference_adapter"], adapter_name="reference")
        ref = side_logps(model, pairs, pad_id, device, bs)
    else:
        ref = side_logps(base, pairs, pad_id, device, bs)
    scored = []
    previous: str | None = None
    for i, (p, digest) in enumerate(zip(cfg["policies"], digests, strict=True)):
        name = f"policy-{i}"
        if model is None:
            model = PeftModel.from_pretrained(base, p["adapter"], adapter_name=name)
        else:
            model.load_adapter(p["adapter"], adapter_name=name)
        model.set_adapter(name)
        if previous:
            model.delete_adapter(previous)  # one policy in memory at a time
        previous = name
        scored.append(compare(p["name"], digest, ref, side_logps(model, pairs, pad_id, device, bs)))
        log(f"scored {p['name']} on {len(pairs)} pairs", also_event=True)
    n = max(len(pairs), 1)
    return {
        "status": "succeeded",
        "method": method,
        "device": device,
        "pairs_sha256": sha256_file(cfg["pairs"]),
        "pair_count": len(pairs),
        "reference": "reference_adapter" if ref_sha else "base",
        "reference_adapter_sha256": ref_sha,
        "ref_chosen_logp": sum(r[0] for r in ref) / n,
        "ref_rejected_logp": sum(r[1] for r in ref) / n,
        "policies": scored,
        "wall_time_s": round(time.time() - t0, 3),
    }


def main(spec: dict[str, Any]) -> None:
    emit("result", command="score", status="succeeded", score=run(spec))
