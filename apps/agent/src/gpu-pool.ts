import { inheritedEnv } from "./env";

// GPU pinning on one agent. With AGENTLAB_CONCURRENCY > 1 the claim may give this box
// two GPU jobs at once (it counts the GPUs each holds), but every trainer process would otherwise
// open cuda:0. The pool hands each running job its own GPU indices and the job's trainer process
// sees only those (CUDA_VISIBLE_DEVICES); they return to the pool when the job's handler returns,
// whatever the outcome (success, failure, crash, cancel).

/** GPUs held by one running job; `release` is idempotent. */
export type GpuLease = { readonly indices: readonly number[]; release(): void };

export class GpuPool {
  private readonly free = new Set<number>();

  /** `count` GPUs, indices 0..count-1 in nvidia-smi's (PCI bus) order. */
  constructor(readonly count: number) {
    for (let i = 0; i < count; i++) this.free.add(i);
  }

  get available(): number {
    return this.free.size;
  }

  /** The `n` lowest free indices, or null (nothing taken) when fewer than `n` are free. */
  acquire(n: number): GpuLease | null {
    if (!Number.isInteger(n) || n < 1) throw new Error(`GPU lease of ${n}: must be a positive integer`);
    if (this.free.size < n) return null;
    const indices = [...this.free].sort((a, b) => a - b).slice(0, n);
    indices.forEach((i) => this.free.delete(i));
    let held = true;
    return {
      indices,
      release: () => {
        if (!held) return;
        held = false;
        indices.forEach((i) => this.free.add(i));
      },
    };
  }
}

/**
 * What a trainer job asks of the box's GPUs, read from its payload (the claim's requirement does
 * not travel with the claimed job): `exact` N for a GPU method, a CUDA device, several ranks or
 * the vLLM backend; `cpu` for a CPU method or device; `auto` when the trainer would pick CUDA if it
 * saw one (device auto without a method: the tiny models), for which the claim reserved none.
 */
export type GpuNeed = { kind: "exact"; gpus: number } | { kind: "auto" } | { kind: "cpu" };

const GPU_METHODS = new Set(["lora-bf16", "qlora-nf4"]);

export function gpuNeed(type: string, payload: unknown): GpuNeed {
  const spec = isRecord(payload) && isRecord(payload.spec) ? payload.spec : null;
  if (!spec || !["train", "dpo", "score", "generate", "grpo"].includes(type)) return { kind: "cpu" };
  const ranks = typeof spec.world_size === "number" ? spec.world_size : 1;
  if (spec.device === "cpu" || spec.method === "lora-fp32") return { kind: "cpu" };
  const method = typeof spec.method === "string" ? spec.method : "";
  if (GPU_METHODS.has(method) || spec.device === "cuda" || ranks > 1 || spec.backend === "vllm")
    return { kind: "exact", gpus: Math.max(1, ranks) };
  return { kind: "auto" };
}

/**
 * The environment of a job's trainer process and the lease behind it, or why the job cannot run
 * now. A box without GPUs changes nothing (CPU ranks keep working). A CPU job, and an `auto` one
 * when no GPU is free, sees no GPU at all, so it cannot land on a card another job holds.
 */
export function pinGpus(
  pool: GpuPool | undefined,
  need: GpuNeed,
  base: NodeJS.ProcessEnv = inheritedEnv(),
): { env: NodeJS.ProcessEnv | undefined; lease: GpuLease | null } | { refusal: string } {
  if (!pool || pool.count === 0) return { env: undefined, lease: null };
  const lease = need.kind === "cpu" ? null : pool.acquire(need.kind === "exact" ? need.gpus : 1);
  if (need.kind === "exact" && !lease)
    return {
      refusal: `needs ${need.gpus} free GPU(s) on this agent; ${pool.available} of ${pool.count} are free (the others are held by running jobs)`,
    };
  // nvidia-smi numbers GPUs in PCI bus order; CUDA's default order (fastest first) may differ.
  const visible = lease ? lease.indices.join(",") : "";
  return { env: { ...base, CUDA_DEVICE_ORDER: "PCI_BUS_ID", CUDA_VISIBLE_DEVICES: visible }, lease };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
