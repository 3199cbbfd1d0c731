import type { ModelShape } from "./inspect";
import type { TrainMethod } from "./schemas";

// Pre-flight estimate of peak GPU memory, from the model's shape and the recipe, without
// loading anything. It counts what PyTorch keeps alive at the peak of a training step — weights,
// the LoRA parameters with their gradients and AdamW moments, the activations autograd saves, the
// logits of the loss — plus the CUDA context and allocator slack. It is an upper-bound estimate to
// refuse recipes that cannot fit before a GPU is claimed, not a measurement; the measured peaks
// come from the GPU smoke (scripts/gpu-smoke.sh) and every run record's peak_memory_mb.

const MiB = 1024 * 1024;
/** CUDA context plus cuBLAS/cuDNN workspaces, allocated before the first tensor. */
export const CUDA_CONTEXT_MB = 600;
/** The caching allocator's fragmentation: reserved memory runs this much above allocated at the peak. */
export const ALLOCATOR_SLACK = 0.1;
/** NF4 stores 4 bits per weight plus one fp32 absmax per block of 64 (bitsandbytes' default blocksize). */
const NF4_BYTES_PER_PARAM = 0.5 + 4 / 64;

export type LossMode =
  /** Full-vocabulary logits for every position of the batch (bf16 logits, their fp32 upcast and its gradient). */
  | { kind: "full" }
  /** Logits only at supervised positions; `positionsPerSample` unknown → every position (worst case). */
  | { kind: "supervised"; positionsPerSample?: number }
  /** Logits computed over at most `chunkTokens` positions at a time. */
  | { kind: "chunked"; chunkTokens: number };

export type TrainRecipe = {
  method: TrainMethod;
  loraRank: number;
  loraTargets: readonly string[];
  batchSize: number;
  seqLength: number;
  /**
   * Micro-batches packed by tokens (the recipe's batchTokens): at most this many tokens, or one
   * sample up to seqLength, whatever batchSize says. Length-grouped batches pad little, so the
   * padded batch is counted as its token budget.
   */
  batchTokens?: number;
  gradientCheckpointing: boolean;
  loss: LossMode;
  /** DDP ranks (absent: 1). Each rank holds the whole model and at most batchSize samples. */
  ranks?: number;
  /** How the ranks share the model (absent: ddp). fsdp: each rank holds 1/ranks of every parameter. */
  parallel?: "ddp" | "fsdp";
};

export type MemoryEstimate = {
  /** Each part in MiB, rounded up; totalMb includes the context and the slack. */
  parts: Record<string, number>;
  totalMb: number;
};

/** Input and output widths of each LoRA-targetable projection of a Llama/Qwen2-style decoder block. */
function projectionDims(s: ModelShape): Record<string, [number, number]> {
  const q = s.heads * s.headDim;
  const kv = s.kvHeads * s.headDim;
  return {
    q_proj: [s.hiddenSize, q],
    k_proj: [s.hiddenSize, kv],
    v_proj: [s.hiddenSize, kv],
    o_proj: [q, s.hiddenSize],
    gate_proj: [s.hiddenSize, s.intermediateSize],
    up_proj: [s.hiddenSize, s.intermediateSize],
    down_proj: [s.intermediateSize, s.hiddenSize],
  };
}

/** LoRA-targetable modules: the block projections (per layer) and the output head (once). */
function targetDims(s: ModelShape): Record<string, [number, number]> {
  return { ...projectionDims(s), lm_head: [s.hiddenSize, s.vocabSize] };
}

/** Trainable LoRA parameters: r × (in + out) per targeted projection per layer (the head once). */
export function loraParameters(s: ModelShape, rank: number, targets: readonly string[]): number {
  const dims = targetDims(s);
  let n = 0;
  for (const t of targets) {
    const d = dims[t];
    if (!d) throw new Error(`LoRA target "${t}" is not a module the estimate knows (${Object.keys(dims).join(", ")})`);
    n += rank * (d[0] + d[1]) * (t === "lm_head" ? 1 : s.layers);
  }
  return n;
}

function weightBytes(s: ModelShape, method: TrainMethod): number {
  const dims = Object.values(projectionDims(s));
  const blockLinear = s.layers * dims.reduce((n, [i, o]) => n + i * o, 0);
  const rest = Math.max(0, s.parameters - blockLinear);
  if (method === "lora-fp32") return s.parameters * 4;
  if (method === "lora-bf16") return s.parameters * 2;
  // QLoRA: only the decoder's linear layers are 4-bit; peft's k-bit preparation upcasts the rest
  // (embeddings, an untied lm_head, norms) to fp32.
  return blockLinear * NF4_BYTES_PER_PARAM + rest * 4;
}

/** Elements autograd saves per token for one decoder layer (bf16 residual stream, SDPA attention). */
function layerActivationElements(s: ModelShape, rank: number, targets: readonly string[]): number {
  const kv = s.kvHeads * s.headDim;
  const h = s.hiddenSize;
  // two norm inputs and outputs, q and its rotated copy, attention output, o_proj output, residual: ~10h;
  // k, v and their rotated k: 4·kv (v twice: projection output and attention input); SwiGLU: gate,
  // up, act(gate), their product: 4·intermediate.
  let n = 10 * h + 4 * kv + 4 * s.intermediateSize;
  // each LoRA projection keeps its (dropout) input and the rank-r intermediate
  const dims = projectionDims(s);
  for (const t of targets) if (dims[t]) n += (dims[t]?.[0] ?? 0) + rank;
  return n;
}

/** Token positions of one micro-batch. */
const batchPositions = (r: TrainRecipe): number =>
  r.batchTokens !== undefined ? Math.max(r.batchTokens, r.seqLength) : r.batchSize * r.seqLength;

const logitPositions = (r: TrainRecipe): number => {
  const all = batchPositions(r);
  if (r.loss.kind === "full") return all;
  if (r.loss.kind === "chunked") return Math.min(all, r.loss.chunkTokens);
  return r.batchSize * Math.min(r.seqLength, r.loss.positionsPerSample ?? r.seqLength);
};

const mb = (bytes: number) => Math.ceil(bytes / MiB);

function finish(parts: Record<string, number>): MemoryEstimate {
  const allocated = Object.values(parts).reduce((a, b) => a + b, 0);
  return { parts, totalMb: Math.ceil(allocated * (1 + ALLOCATOR_SLACK)) + CUDA_CONTEXT_MB };
}

/** Peak memory of one training step of `r` on a model of shape `s`. */
export function estimateTrainMemory(s: ModelShape, r: TrainRecipe): MemoryEstimate {
  const actBytes = r.method === "lora-fp32" ? 4 : 2;
  const tokens = batchPositions(r);
  const layer = layerActivationElements(s, r.loraRank, r.loraTargets) * tokens * actBytes;
  // With checkpointing each layer keeps only its input; one layer's activations are rebuilt at a time.
  const activations = r.gradientCheckpointing ? s.layers * tokens * s.hiddenSize * actBytes + layer : s.layers * layer;
  // logits (bf16 unless fp32), their fp32 upcast for the loss, and that upcast's gradient
  const perLogit = (r.method === "lora-fp32" ? 0 : 2) + 4 + 4;
  const trainable = loraParameters(s, r.loraRank, r.loraTargets);
  const ranks = r.ranks ?? 1;
  if (ranks > 1 && r.parallel === "fsdp")
    return finish({
      ...fsdpModel(s, r, ranks, trainable),
      activations: mb(activations),
      logits: mb(logitPositions(r) * s.vocabSize * perLogit),
    });
  return finish({
    weights: mb(weightBytes(s, r.method)),
    // fp32 parameters, gradients and the two AdamW moments
    lora: mb(trainable * 16),
    activations: mb(activations),
    logits: mb(logitPositions(r) * s.vocabSize * perLogit),
    // DDP's reducer copies the fp32 gradients into its all-reduce buckets
    ...((r.ranks ?? 1) > 1 ? { ddp: mb(trainable * 4) } : {}),
  });
}

/**
 * FSDP2 (agentlab_trainer/distributed.py wrap_fsdp): every parameter, LoRA gradient and AdamW
 * moment sharded over the ranks; at the peak a rank also holds gathered in bf16 the root unit
 * (embeddings and head, gathered for the whole forward and backward) and two decoder layers (the
 * one computing and the one prefetched).
 */
function fsdpModel(s: ModelShape, r: TrainRecipe, ranks: number, trainable: number): Record<string, number> {
  const rootParams = s.vocabSize * s.hiddenSize * (s.tiedEmbeddings ? 1 : 2);
  const layerParams = Math.max(0, s.parameters - rootParams) / s.layers;
  return {
    weights: mb(weightBytes(s, r.method) / ranks),
    gathered: mb((rootParams + 2 * layerParams) * 2),
    lora: mb((trainable * 16) / ranks),
  };
}

export type GenerateRecipe = {
  dtype: "float32" | "bfloat16";
  batchSize: number;
  promptTokens: number;
  maxNewTokens: number;
  /** LoRA rank and targets of the adapter, when one is served. */
  lora?: { rank: number; targets: readonly string[] } | null;
};

/** Peak memory of generating with `g`: weights, the KV cache of a full batch, and the prefill's working set. */
export function estimateGenerateMemory(s: ModelShape, g: GenerateRecipe): MemoryEstimate {
  const bytes = g.dtype === "float32" ? 4 : 2;
  const ctx = g.promptTokens + g.maxNewTokens;
  const kv = 2 * s.layers * s.kvHeads * s.headDim * bytes * g.batchSize * ctx;
  // prefill of one layer at a time (hidden, q, k, v, attention out, SwiGLU) and fp32 next-token logits
  const prefill =
    g.batchSize * g.promptTokens * (4 * s.hiddenSize + 2 * s.intermediateSize) * bytes + g.batchSize * s.vocabSize * 8;
  return finish({
    weights: mb(s.parameters * bytes),
    adapter: g.lora ? mb(loraParameters(s, g.lora.rank, g.lora.targets) * bytes) : 0,
    kv_cache: mb(kv),
    prefill: mb(prefill),
  });
}

const gib = (m: number) => `${(m / 1024).toFixed(1)} GiB`;

/** The parts of an estimate in words: "weights 2.9 GiB, lora 0.1 GiB, …". */
export const estimateText = (e: MemoryEstimate): string =>
  `${gib(e.totalMb)} (${Object.entries(e.parts)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${k.replace("_", " ")} ${gib(v)}`)
    .join(", ")}, context + ${Math.round(ALLOCATOR_SLACK * 100)}% slack)`;

/** Null when the estimate fits a GPU of `gpuMemoryMb`; otherwise the refusal, naming the numbers. */
export function memoryRefusal(e: MemoryEstimate, gpuMemoryMb: number, hint: string): string | null {
  if (e.totalMb <= gpuMemoryMb) return null;
  return `needs ≈ ${estimateText(e)}, more than the ${gib(gpuMemoryMb)} of the GPU: ${hint}`;
}

/** What to change when a training recipe does not fit, from the recipe's own settings. */
export function trainFitHint(r: TrainRecipe): string {
  const batch = r.batchTokens !== undefined ? `batch tokens (${r.batchTokens})` : `batch size (${r.batchSize})`;
  const tips = [`lower ${batch} or max length (${r.seqLength})`];
  if (!r.gradientCheckpointing) tips.push("turn gradient checkpointing on");
  if (r.loss.kind === "full") tips.push("compute the loss at supervised positions or in chunks");
  if (r.method !== "qlora-nf4") tips.push("use qlora-nf4");
  return tips.join(", ");
}
