"""Data-parallel training across the GPUs of one agent: `gpus: N` runs the trainer under
torchrun, one process per GPU, the LoRA model wrapped in torch DDP.

Loss normalization is GLOBAL: every rank scales its micro-batches' summed token loss by
world_size / N_global, where N_global is the number of supervised tokens of the whole accumulation
window on ALL ranks (one all-reduce of the count per window). DDP averages the gradients over the
ranks (divides by world_size), so the update is exactly the single-process update on the union of
the window's samples with a per-token mean, whatever the ranks' sample lengths. Dividing by each
rank's own count (the late-fixed transformers bug) weights a rank's tokens by how few it had.

A window's samples are dealt round-robin to the ranks (its batches are length-grouped, so ranks get
similar lengths) and each rank groups its share into micro-batches of `batch_size`. A rank with no
sample in a short last window still runs one zero-weighted forward/backward, so every rank joins
the same gradient all-reduce. Only the last micro-batch of a rank synchronizes (DDP no_sync on the
others). Rank 0 alone writes snapshots and reports progress; the other ranks' stdout (events
only) is dropped so that the agent reads exactly one event stream. A rank that dies makes torchrun
stop the others and exit non-zero; the launcher (`launch`) then reports a failed run naming the
dead rank and its exit, from torchrun's summary.

FSDP (`wrap_fsdp`, spec.parallel = "fsdp") is for bases that do not fit one GPU: torch's FSDP2
(`fully_shard`) shards every parameter across the ranks, one unit per decoder layer plus the root.
Its forwards all-gather parameters (collectives), so under FSDP every rank runs the same number of
micro-batches in a window (the shorter shares padded with zero-weighted passes); gradients are
reduce-scattered once per window, averaged over the ranks like DDP's, so the same normalization
gives the same update. Rank 0 writes the snapshot from the LoRA parameters gathered alone
(`adapter_state`), never the full base. Tested on CPU with gloo (test_fsdp.py); not run on GPUs here."""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import data as D
from .common import CancelFlag, UserError
from .loss import autocast, count_supervised, token_loss_sum


@dataclass(frozen=True)
class Dist:
    rank: int
    world_size: int
    local_rank: int

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def from_env(environ: dict[str, str] | None = None) -> Dist | None:
    """The torchrun process group this process belongs to, or None when it runs alone."""
    env = os.environ if environ is None else environ
    world = int(env.get("WORLD_SIZE", "1"))
    if world <= 1:
        return None
    return Dist(rank=int(env["RANK"]), world_size=world, local_rank=int(env.get("LOCAL_RANK", env["RANK"])))


def die_with_torchrun() -> None:
    """A torchrun worker runs in a session of its own (torch's elastic agent starts each with
    start_new_session), so the agent's kill of the job's process group never reaches it: once the
    cancel's grace ran out and torchrun was killed mid-shutdown, a rank could live on, waiting in a
    collective until its timeout. It dies with torchrun instead (SIGKILL when its parent goes; at
    once if that already happened before the request)."""
    import ctypes
    import signal

    pr_set_pdeathsig = 1
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() == 1:
        os._exit(137)


def init(dist: Dist, device: str, init_method: str = "env://") -> str:
    """Joins the process group (NCCL on CUDA, gloo on CPU); returns this rank's device string.
    Non-main ranks' stdout (events only, by protocol: duplicates of rank 0's progress, and a result
    record nobody reads) goes to /dev/null: one event stream reaches the agent, and the job's log
    keeps their stderr (human logs, tracebacks) without copies of every progress line."""
    import torch
    import torch.distributed as tdist

    backend = "nccl" if device == "cuda" else "gloo"
    if device == "cuda":
        torch.cuda.set_device(dist.local_rank)
    tdist.init_process_group(backend, init_method=init_method, rank=dist.rank, world_size=dist.world_size)
    if not dist.is_main:
        sys.stdout.flush()
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), sys.stdout.fileno())
    return f"cuda:{dist.local_rank}" if device == "cuda" else "cpu"


def ranks_of(spec: dict[str, Any]) -> int:
    """The ranks the spec asks for (world_size; the agent sets it from the job's GPUs), 1 when unset."""
    raw = spec.get("world_size", 1)
    if not isinstance(raw, int) or isinstance(raw, bool) or raw < 1:
        raise UserError(f"world_size must be a positive integer, got {raw!r}")
    return raw


def preflight(spec: dict[str, Any], nproc: int) -> None:
    """Before torchrun starts anything: CUDA ranks need one visible GPU each."""
    if spec.get("method") == "lora-fp32" or spec.get("device") == "cpu":
        return  # gloo CPU ranks (the agent allows them only under AGENTLAB_TRAIN_CPU_RANKS=1)
    import torch

    from .common import pick_device

    if pick_device(str(spec.get("device", "auto"))) == "cuda" and torch.cuda.device_count() < nproc:
        raise UserError(f"world_size {nproc} needs {nproc} CUDA GPUs; this machine has {torch.cuda.device_count()}")


def torchrun_argv(nproc: int, command: str, spec_path: str) -> list[str]:
    """torchrun on this machine only (a free port), no restarts: a dead rank ends the run."""
    argv = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={nproc}"]
    return argv + ["--max-restarts=0", "-m", "agentlab_trainer", command, "--spec", spec_path]


def launch(nproc: int, command: str, spec_path: str, cancel: CancelFlag) -> int:
    """Runs `command` under torchrun with `nproc` ranks on this machine (no restarts); returns the
    exit code. Rank 0's events are relayed as they come (progress, snapshots). The result:
    - torchrun succeeded: rank 0's;
    - this launcher was signalled (the agent's cancel reaches the whole process group): canceled,
      with rank 0's record of the epochs it finished;
    - rank 0's own user error (every rank refuses the same data): that error;
    - otherwise a rank died or failed and torchrun stopped the others (rank 0 then reads as
      canceled): failed, naming the rank, its exit and torchrun's, from torchrun's summary.
    torchrun's stderr (the ranks' tracebacks, its summary) is copied to this process's stderr."""
    import json
    import subprocess
    import threading

    from .common import EXIT_CANCELED, EXIT_INTERNAL, EXIT_USER, emit

    argv = torchrun_argv(nproc, command, spec_path)
    result: dict[str, Any] | None = None
    failure: dict[str, str] = {}
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as child:
        assert child.stdout is not None and child.stderr is not None
        copier = threading.Thread(target=_copy_stderr, args=(child.stderr, failure), daemon=True)
        copier.start()
        for line in child.stdout:
            event = json.loads(line) if line.startswith("{") else None
            if isinstance(event, dict) and event.get("event") == "result":
                result = event
            else:
                sys.stdout.write(line)
                sys.stdout.flush()
        rc = child.wait()
        copier.join()
    if result is not None and rc == 0:
        emit(**result)
        return 0
    record = {"record": result["record"]} if result is not None and result.get("record") else {}
    if cancel.is_set:
        emit(
            "result",
            command=command,
            status="canceled",
            error={"kind": "canceled", "message": "canceled by signal"},
            **record,
        )
        return EXIT_CANCELED
    if result is not None and (result.get("error") or {}).get("kind") == "user_error":
        emit(**result)
        return EXIT_USER
    message = (
        f"a training rank failed: {describe_failure(failure)}; torchrun exited {rc} (every rank's output is in the log)"
    )
    emit("result", command=command, status="failed", error={"kind": "internal_error", "message": message})
    return EXIT_INTERNAL


# torchrun's ChildFailedError summary: "Root Cause (first observed failure):" then "key : value" rows.
_SUMMARY_ROW = re.compile(r"^\s*(rank|exitcode|traceback)\s*:\s*(.*?)\s*$")


def _copy_stderr(stream, failure: dict[str, str]) -> None:
    """Copies torchrun's stderr through and keeps the root-cause rows of its failure summary."""
    root = False
    for line in stream:
        sys.stderr.write(line)
        sys.stderr.flush()
        root = root or "Root Cause" in line
        m = _SUMMARY_ROW.match(line) if root else None
        if m and m.group(1) not in failure:
            failure[m.group(1)] = m.group(2)


def describe_failure(failure: dict[str, str]) -> str:
    """'rank 1 (local_rank: 1) exited -9: Signal 9 (SIGKILL) received by PID 77', from the summary."""
    if "rank" not in failure:
        return "torchrun gave no failure summary"
    code = failure.get("exitcode", "?").split(" (pid")[0]
    tb = failure.get("traceback", "")
    detail = f": {tb}" if tb and not tb.startswith("To enable traceback") else ""
    return f"rank {failure['rank']} exited {code}{detail}"


def shutdown() -> None:
    import torch.distributed as tdist

    if tdist.is_initialized():
        # Every rank reaches the teardown together: a gloo rank that destroys its group while a
        # peer is still tearing down can leave that peer waiting forever (seen once in
        # test_distributed: both ranks had written their results, one hung in destroy).
        tdist.barrier()
        tdist.destroy_process_group()


class _LossModule:
    """Makes the summed token loss the wrapped module's forward, so DDP sees every forward."""

    @staticmethod
    def build(model):
        import torch

        class LossOf(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, batch: dict[str, Any]):
                return token_loss_sum(self.inner, batch)[0]

        return LossOf(model)


def wrap_ddp(model, device: str):
    """DDP around the loss of `model` (the LoRA model; only its trainable parameters are reduced)."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    ids = [int(device.split(":")[1])] if device.startswith("cuda:") else None
    return DDP(_LossModule.build(model), device_ids=ids)


def wrap_fsdp(model, device: str):
    """FSDP2 around the loss of `model`: each decoder layer its own unit, the rest (embeddings, norm,
    head) the root's, so the loss's direct calls of the decoder and the head (loss.py) run inside
    the root's forward with its parameters gathered. LoRA's frozen and trainable parameters share
    units (FSDP2 shards each parameter on its own). On CUDA, parameters are gathered in bf16 (one
    dtype per unit: a bf16 base with fp32 LoRA would otherwise be refused) and gradients reduced
    in fp32; on CPU (gloo, tests) nothing is cast, so the update is comparable to one process's."""
    import torch
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    mp = (
        MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        if device.startswith("cuda")
        else MixedPrecisionPolicy()
    )
    layers = _decoder_layers(model)
    if not layers:
        raise UserError("parallel fsdp: found no decoder layers to shard in this model")
    for layer in layers:
        fully_shard(layer, mp_policy=mp)
    return fully_shard(_LossModule.build(model), mp_policy=mp)  # the default mesh: every rank


def _decoder_layers(model) -> list:
    """The decoder's layer list (model.layers of a transformers CausalLM, under peft's wrappers)."""
    from .loss import causal_lm

    decoder = causal_lm(model).get_decoder()
    return list(getattr(decoder, "layers", []))


def is_fsdp(wrapped) -> bool:
    return hasattr(wrapped, "set_requires_gradient_sync")


def adapter_state(model) -> dict[str, Any]:
    """The trainable (LoRA) parameters as full CPU tensors, gathered from their shards one by one;
    a collective, so every rank calls it. Names as model.state_dict() has them (peft's save
    filters them). The frozen base is never gathered."""
    from torch.distributed.tensor import DTensor

    out: dict[str, Any] = {}
    for name, p in model.named_parameters():
        if p.requires_grad:
            full = p.full_tensor() if isinstance(p, DTensor) else p.detach()
            out[name] = full.detach().cpu().clone()
    return out


def shard_window(window: Sequence[Sequence[int]], dist: Dist, batch_size: int) -> list[list[int]]:
    """This rank's micro-batches of one window: its samples dealt round-robin, `batch_size` each."""
    flat = [i for batch in window for i in batch]
    mine = flat[dist.rank :: dist.world_size]
    return [mine[s : s + batch_size] for s in range(0, len(mine), batch_size)]


def window_backward(
    wrapped,
    microbatches: Sequence[dict[str, Any]],
    dist: Dist,
    dummy: dict[str, Any],
    cancel: CancelFlag | None = None,
    device: str = "cpu",
) -> tuple[float, int]:
    """Backward of this rank's share of one window with the global per-token normalization.
    Returns (the window's mean token loss over all ranks, its supervised tokens over all ranks)."""
    import torch
    import torch.distributed as tdist

    counts = torch.tensor([float(sum(count_supervised(b) for b in microbatches))], dtype=torch.float64)
    passes = torch.tensor([float(len(microbatches))], dtype=torch.float64)
    if device.startswith("cuda"):
        counts, passes = counts.to(device), passes.to(device)
    tdist.all_reduce(counts)
    n_global = int(counts.item())
    if n_global == 0:
        raise UserError("an accumulation window has no supervised token")
    # A rank without samples contributes a zero-weighted pass so it joins the all-reduce. Under
    # FSDP every forward and backward is a collective: every rank runs the most passes any has.
    work = [(b, 1.0) for b in microbatches] or [(dummy, 0.0)]
    if is_fsdp(wrapped):
        tdist.all_reduce(passes, op=tdist.ReduceOp.MAX)
        work += [(dummy, 0.0)] * (int(passes.item()) - len(work))
    local_sum = 0.0
    for k, (batch, weight) in enumerate(work):
        if cancel is not None:
            cancel.raise_if_set()
        sync = k == len(work) - 1
        with contextlib.nullcontext() if sync else _no_sync(wrapped):
            with autocast("cuda" if device.startswith("cuda") else "cpu"):
                loss_sum = wrapped(batch)
            (loss_sum * (weight * dist.world_size / n_global)).backward()
        local_sum += weight * float(loss_sum.detach())
    total = torch.tensor([local_sum], dtype=torch.float64, device=counts.device)
    tdist.all_reduce(total)
    return float(total.item()) / n_global, n_global


@contextlib.contextmanager
def _no_sync(wrapped):
    """Accumulate without reducing: DDP's no_sync, FSDP2's gradient-sync switch."""
    if not is_fsdp(wrapped):
        with wrapped.no_sync():
            yield
        return
    wrapped.set_requires_gradient_sync(False)
    try:
        yield
    finally:
        wrapped.set_requires_gradient_sync(True)


def collate_share(samples: Sequence[D.Encoded], share: Sequence[Sequence[int]], pad_id: int, device: str):
    """The rank's micro-batches as tensors, and a one-sample dummy for an empty share."""
    micro = [D.collate([samples[i] for i in b], pad_id, device) for b in share if b]
    return micro, D.collate([samples[0]], pad_id, device)
