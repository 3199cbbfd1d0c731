import { z } from "zod";

// `inspect-model`: what a base model is, read by an agent from its local folder or its
// hub cache without loading weights and without the network. The experiment form shows these facts
// before an experiment starts, and the memory estimate (./memory.ts) takes its shape from them.

export const InspectModelSpec = z.strictObject({
  /** A local model folder or a hub id (`org/name`). */
  model: z.string().min(1).max(500),
  /** Hub branch, tag or commit; ignored for a local folder. */
  revision: z.string().min(1).max(200).nullable().optional(),
});
export type InspectModelSpec = z.infer<typeof InspectModelSpec>;

export const InspectModelSummary = z.object({
  model: z.string(),
  source: z.enum(["path", "hub"]),
  /** The hub commit the revision resolved to in the local cache; null for a local folder. */
  revision: z.string().nullable(),
  /** The folder the files were read from (a hub cache snapshot for a hub id). */
  path: z.string(),
  architecture: z.string(),
  model_type: z.string(),
  /** Exact count of the architecture's parameters (built on the meta device from the config). */
  parameters: z.number().int().positive(),
  layers: z.number().int().positive(),
  hidden_size: z.number().int().positive(),
  intermediate_size: z.number().int().positive(),
  heads: z.number().int().positive(),
  kv_heads: z.number().int().positive(),
  head_dim: z.number().int().positive(),
  vocab_size: z.number().int().positive(),
  tied_embeddings: z.boolean(),
  /** The checkpoint's stored dtype (config `dtype`/`torch_dtype`), null when it names none. */
  dtype: z.string().nullable(),
  max_positions: z.number().int().positive().nullable(),
  /** Bytes of the weight files present (null: none found). */
  weights_bytes: z.number().int().nonnegative().nullable(),
  tokenizer: z.boolean(),
  chat_template: z.boolean(),
  inspect_s: z.number(),
});
export type InspectModelSummary = z.infer<typeof InspectModelSummary>;

/** The shape the memory estimate needs, in the recipe's (camelCase) words. */
export const ModelShape = z.object({
  parameters: z.number().int().positive(),
  layers: z.number().int().positive(),
  hiddenSize: z.number().int().positive(),
  intermediateSize: z.number().int().positive(),
  heads: z.number().int().positive(),
  kvHeads: z.number().int().positive(),
  headDim: z.number().int().positive(),
  vocabSize: z.number().int().positive(),
  tiedEmbeddings: z.boolean(),
});
export type ModelShape = z.infer<typeof ModelShape>;

export const modelShape = (s: InspectModelSummary): ModelShape => ({
  parameters: s.parameters,
  layers: s.layers,
  hiddenSize: s.hidden_size,
  intermediateSize: s.intermediate_size,
  heads: s.heads,
  kvHeads: s.kv_heads,
  headDim: s.head_dim,
  vocabSize: s.vocab_size,
  tiedEmbeddings: s.tied_embeddings,
});
