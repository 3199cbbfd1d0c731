"""`grpo`: online RL with an execution reward, TRL's GRPOTrainer on a LoRA policy.

The reward is the isolated judge's verdict, graded by the parent (grpo_reward.py); this process
only generates and learns. Every optimizer step is reported as a `grpo_step` event (reward mean
and spread, zero-variance groups, length, truncation, entropy, KL, judge throughput and the
reward-hacking audit), and an adapter snapshot is taken every `snapshot_every_steps` steps (and
at the last one), saved like train's epoch snapshots (snapshots.save_snapshot): those are what
dev evaluates. Settings default to TRL 1.16's GRPOConfig (core GrpoSpec pins them).
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .common import (
    Canceled,
    CancelFlag,
    UserError,
    emit,
    log,
    memory_mb,
    pick_device,
    read_jsonl,
    sha256_file,
    weights_hash,
)
from .dpo import load_policy
from .grpo_groups import GroupCounts, dynamic_grpo_trainer
from .grpo_reward import JudgeReward, RewardChannel
from .modeling import load_tokenizer, resolve_model
from .snapshots import finish_record, save_snapshot
from .spec_schema import spec_defaults

# The values of the keys a spec may leave out: the contract's (zod) defaults, read from its schema.
GRPO_DEFAULTS: dict[str, Any] = spec_defaults("grpo")
# The settings that go to GRPOConfig as they are (the record's `config` lists what TRL ran).
_TRL_KEYS = (
    "learning_rate",
    "num_generations",
    "beta",
    "loss_type",
    "scale_rewards",
    "epsilon",
    "epsilon_high",
    "mask_truncated_completions",
    "max_completion_length",
    "temperature",
    "top_p",
    "max_steps",
    "weight_decay",
    "max_grad_norm",
    "seed",
)


def normalize_spec(spec: dict[str, Any]) -> dict[str, Any]:
    for key in ("base_model", "prompts", "output_dir", "reward_socket"):
        if not isinstance(spec.get(key), str) or not spec[key]:
            raise UserError(f"grpo spec needs {key}")
    for key in ("max_steps", "snapshot_every_steps"):
        if not isinstance(spec.get(key), int) or spec[key] < 1:
            raise UserError(f"grpo spec needs {key} >= 1")
    cfg = {**GRPO_DEFAULTS, **{k: v for k, v in spec.items() if v is not None}}
    cfg["lora"] = {**GRPO_DEFAULTS["lora"], **(spec.get("lora") or {})}
    if cfg["start_adapter"] and not Path(cfg["start_adapter"]).is_dir():
        raise UserError(f"start_adapter folder not found: {cfg['start_adapter']}")
    return cfg


def load_prompts(path: str) -> list[dict[str, Any]]:
    rows = read_jsonl(path)
    for i, r in enumerate(rows, 1):
        if set(r) != {"task_id", "prompt"} or not isinstance(r["prompt"], list) or not r["prompt"]:
            raise UserError(f"{path} line {i}: a prompt line is {{task_id, prompt: [messages]}}")
        if any(m.get("role") == "assistant" for m in r["prompt"]):
            raise UserError(f"{path} line {i}: field prompt holds an assistant turn")
    if not rows:
        raise UserError(f"{path}: no prompts")
    return rows


def grpo_config(cfg: dict[str, Any], device: str, out_dir: Path):
    from trl import GRPOConfig

    batch = int(cfg["num_generations"]) * int(cfg["prompts_per_step"])
    return GRPOConfig(
        output_dir=str(out_dir / "trl"),
        **{k: cfg[k] for k in _TRL_KEYS},
        lr_scheduler_type=cfg["lr_schedule"],
        # transformers 5 takes warmup as steps only
        warmup_steps=int(
            cfg["warmup_steps"]
            if cfg.get("warmup_steps") is not None
            else round(float(cfg["warmup_ratio"]) * int(cfg["max_steps"]))
        ),
        per_device_train_batch_size=batch,
        gradient_accumulation_steps=int(cfg["grad_accum"]),
        use_vllm=False,  # CPU path: generation through transformers
        use_cpu=device == "cpu",
        bf16=device == "cuda",
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
        remove_unused_columns=False,
        dataloader_num_workers=0,
    )


class _StepReporter:
    """A TrainerCallback: one grpo_step event per logged step, snapshots every K steps, cancel."""

    def __init__(self, reward: JudgeReward, cfg, device, out_dir, record, cancel: CancelFlag, groups: GroupCounts):
        self.reward, self.cfg, self.device, self.out_dir = reward, cfg, device, out_dir
        self.record, self.cancel, self.groups = record, cancel, groups
        self.t0 = time.time()
        # The trainer's (LoRA-wrapped) model, set once GRPOTrainer has built it.
        self.model: Any = None

    def hook(self):
        from transformers import TrainerCallback

        outer = self

        class Callback(TrainerCallback):
            def on_step_end(self, args, state, control, **kw):
                if outer.cancel.is_set:
                    control.should_training_stop = True

            def on_log(self, args, state, control, logs=None, **kw):
                if logs and "reward" in logs:
                    outer.step(int(state.global_step), logs)

        return Callback()

    def step(self, step: int, logs: dict[str, Any]) -> None:
        total = int(self.cfg["max_steps"])
        seen = self.reward.drain()
        elapsed = time.time() - self.t0
        groups = max(1, seen.completions // int(self.cfg["num_generations"]))
        kl = logs.get("kl")
        metrics = {
            "step": step,
            "total_steps": total,
            "loss": float(logs.get("loss", 0.0)),
            "lr": float(logs.get("learning_rate", 0.0)),
            "reward_mean": _finite(logs.get("reward")),
            "reward_std": _finite(logs.get("reward_std")),
            # TRL's share counts masked groups as zero-variance too; ours is over the scored groups
            "zero_variance_share": min(1.0, max(0.0, _finite(logs.get("frac_reward_zero_std")))),
            "completion_length_mean": _finite(logs.get("completions/mean_length")),
            "truncated_share": min(1.0, max(0.0, _finite(logs.get("completions/clipped_ratio")))),
            "entropy": _finite(logs["entropy"]) if "entropy" in logs else None,
            "kl": _finite(kl) if kl is not None and float(self.cfg["beta"]) > 0 else None,
            "completions": seen.completions,
            "masked_groups": min(seen.masked_groups, groups),
            **self.group_counts(),
            "pass_count": seen.passes,
            "grades_per_s": round(seen.completions / seen.grade_time_s, 3) if seen.grade_time_s > 0 else 0.0,
            "audit": seen.audit(),
            "eta_s": round(elapsed / step * (total - step), 1) if step else 0.0,
            "memory_mb": round(memory_mb(self.device), 1),
        }
        emit("grpo_step", **metrics)
        self.record["step_metrics"].append(metrics)
        self.record["steps"] = step
        every = int(self.cfg["snapshot_every_steps"])
        if step % every == 0 or step == total:
            self.snapshot(step, metrics)

    def group_counts(self) -> dict[str, int]:
        """Dynamic sampling's counts of the step (absent when equal-reward groups are kept, as before)."""
        done = GroupCounts(self.groups.resampled, self.groups.dropped)
        self.groups.resampled = self.groups.dropped = 0
        mode = self.cfg["equal_reward_groups"]
        if mode == "keep":
            return {}
        return {"dropped_groups": done.dropped, **({"resampled_groups": done.resampled} if mode == "resample" else {})}

    def snapshot(self, step: int, metrics: dict[str, Any]) -> None:
        if self.model is None:
            return
        index = len(self.record["snapshots"]) + 1
        meta = {"trainer": "grpo", "snapshot": index, "step": step, "reward_mean": metrics["reward_mean"]}
        path, digest, files = save_snapshot(self.model, self.out_dir, index, meta)
        snap = {
            "epoch": index,
            "path": str(path),
            "sha256": digest,
            "files": files,
            "train_loss": metrics["loss"],
            "eval_loss": None,
            "step": step,
            "reward_mean": metrics["reward_mean"],
        }
        self.record["snapshots"].append(snap)
        emit("artifact", kind="adapter", **{k: v for k, v in snap.items() if k != "reward_mean"})


def _finite(v: Any) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return 0.0
    return f if f == f and abs(f) != float("inf") else 0.0


def _unshadow_vllm() -> None:
    """This package's folder holds `vllm/` (the vLLM venv's requirements and runner), which Python
    takes for a namespace package when the trainer runs from there; TRL then finds a `vllm` with no
    version and fails to import GRPOTrainer. Drop those sys.path entries (nothing is imported from
    the working folder: agentlab_trainer is installed)."""
    import importlib
    import importlib.util
    import sys

    spec = importlib.util.find_spec("vllm")
    if spec is None or spec.loader is not None:
        return
    shadow = {str(Path(p).resolve().parent) for p in spec.submodule_search_locations or []}
    sys.path[:] = [p for p in sys.path if str(Path(p or ".").resolve()) not in shadow]
    importlib.invalidate_caches()


def run(spec: dict[str, Any], cancel: CancelFlag) -> dict[str, Any]:
    _unshadow_vllm()
    import torch
    import trl
    from datasets import Dataset
    from trl import GRPOTrainer

    t_start = time.time()
    cfg = normalize_spec(spec)
    if cfg.get("torch_threads"):
        torch.set_num_threads(int(cfg["torch_threads"]))
    torch.manual_seed(int(cfg["seed"]))
    device = pick_device(cfg["device"])
    prompts = load_prompts(cfg["prompts"])
    out_dir = Path(cfg["output_dir"])
    out_dir.mkdir(parents=True, exist_ok=True)
    model_path, _ = resolve_model(cfg["base_model"], cfg["revision"], cfg["local_files_only"])
    cfg["base_model"] = model_path
    tokenizer = load_tokenizer(model_path, cfg["local_files_only"])
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model, method, start_sha = load_policy(cfg, device)
    channel = RewardChannel(cfg["reward_socket"], float(cfg["reward_timeout_s"]))
    reward = JudgeReward(channel, int(cfg["num_generations"]))
    args = grpo_config(cfg, device, out_dir)
    record: dict[str, Any] = {
        "status": "succeeded",
        "method": method,
        "device": device,
        "config": {
            **{k: getattr(args, k) for k in (*_TRL_KEYS, "per_device_train_batch_size", "num_iterations")},
            # ours, not TRL's (grpo_groups.py): what became of groups whose rewards were all equal
            "equal_reward_groups": cfg["equal_reward_groups"],
            "max_resamples": int(cfg["max_resamples"]),
        },
        "prompts_sha256": sha256_file(cfg["prompts"]),
        "prompt_count": len(prompts),
        "model": {
            "id": cfg.get("model_id") or spec["base_model"],
            "path": model_path,
            "weights_sha256": weights_hash(model_path),
        },
        "start_adapter_sha256": start_sha,
        "seed": int(cfg["seed"]),
        "trl": trl.__version__,
        "trainable_parameters": sum(p.numel() for p in model.parameters() if p.requires_grad),
        "total_steps": int(cfg["max_steps"]),
        "steps": 0,
        "step_metrics": [],
        "snapshots": [],
        "started_at": datetime.now(timezone.utc).isoformat(),
    }
    groups = GroupCounts()
    reporter = _StepReporter(reward, cfg, device, out_dir, record, cancel, groups)
    trainer_class = dynamic_grpo_trainer(
        GRPOTrainer, reward, cfg["equal_reward_groups"], int(cfg["max_resamples"]), groups
    )
    trainer = trainer_class(
        model=model,
        reward_funcs=[reward],
        args=args,
        train_dataset=Dataset.from_list(prompts),
        processing_class=tokenizer,
        callbacks=[reporter.hook()],
    )
    from transformers.trainer_callback import PrinterCallback

    # stdout carries JSON events only: the printer would write each log as a Python dict there
    trainer.remove_callback(PrinterCallback)
    reporter.model = trainer.model
    log(
        f"grpo: {len(prompts)} prompts, {cfg['max_steps']} steps, group {cfg['num_generations']}, {method}",
        also_event=True,
    )
    t_train = time.time()
    try:
        trainer.train()
    finally:
        channel.close()
    train_time = time.time() - t_train
    record["masked_groups"] = reward.total_masked
    record["graded_completions"] = reward.total_graded
    record["grade_time_s"] = round(reward.total_grade_time_s, 4)
    finish_record(record, device, t_start, train_time, 0)
    for key in ("supervised_tokens", "supervised_tokens_per_s"):
        record.pop(key, None)
    if cancel.is_set:
        record["status"] = "canceled"
        raise Canceled(record)
    return record


def main(spec: dict[str, Any], cancel: CancelFlag) -> None:
    record = run(spec, cancel)
    emit("result", command="grpo", status="succeeded", grpo=record)
