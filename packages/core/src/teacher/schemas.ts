import { z } from "zod";
import { NAME_MAX_LENGTH } from "../names";
import { GradeVerdict } from "../grading/schemas";

// Teacher vocabulary shared by the server, its tRPC API, the CLI and the pages.

export const PROVIDER_KINDS = ["openai", "reference"] as const;
export const ProviderKind = z.enum(PROVIDER_KINDS);
export type ProviderKind = z.infer<typeof ProviderKind>;

/** Sampling parameters sent with every request; part of the cache key through `paramsHash`. */
export const SamplingParams = z.object({
  temperature: z.number().min(0).max(2).default(0.8),
  top_p: z.number().gt(0).max(1).default(1),
  max_tokens: z.number().int().min(16).max(32768).default(2048),
  seed: z.number().int().min(0).optional(),
});
export type SamplingParams = z.infer<typeof SamplingParams>;

const Url = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//.test(u), "http(s) URLs only");

export const ProviderInput = z.object({
  name: z.string().min(1).max(100),
  kind: ProviderKind,
  baseUrl: Url.optional(),
  model: z.string().min(1).max(200),
  /** Write-only: stored sealed, never returned. */
  apiKey: z.string().min(1).max(4096).optional(),
  /** Merged into every request body (e.g. `{"reasoning_effort": "low"}`); part of the cache key. */
  extraParams: z.record(z.string(), z.unknown()).default({}),
});
export type ProviderInput = z.infer<typeof ProviderInput>;

export const ProviderUpdate = ProviderInput.partial().extend({
  id: z.string().uuid(),
  /** true removes the stored key. */
  clearApiKey: z.boolean().default(false),
});
export type ProviderUpdate = z.infer<typeof ProviderUpdate>;

/** USD per million tokens. */
export const PriceInput = z.object({
  model: z.string().min(1).max(200),
  inputPerMTok: z.number().min(0),
  outputPerMTok: z.number().min(0),
});
export type PriceInput = z.infer<typeof PriceInput>;

export const COLLECTION_STATES = [
  "queued",
  "running",
  "grading",
  "done",
  "stopped_budget",
  "failed",
  "canceled",
] as const;
export const CollectionState = z.enum(COLLECTION_STATES);
/** A replay (re-grading of a snapshot's samples). */
export const REPLAY_STATES = ["grading", "done", "failed"] as const;
export type CollectionState = z.infer<typeof CollectionState>;

export const CollectPart = z.enum(["train", "dev"]);
export type CollectPart = z.infer<typeof CollectPart>;

export const CollectionInput = z.object({
  name: z.string().min(1).max(NAME_MAX_LENGTH).optional(),
  splitId: z.string().uuid(),
  providerId: z.string().uuid(),
  experimentId: z.string().uuid().optional(),
  /** Split parts to collect from. "test" is accepted by the schema so that the refusal is the domain's, with its message. */
  parts: z
    .array(z.enum(["train", "dev", "test"]))
    .min(1)
    .default(["train"]),
  /** A subset of the split's task ids (the task key, e.g. "humaneval-12-m3"); all tasks of `parts` when absent. */
  taskIds: z.array(z.string().min(1)).max(100_000).optional(),
  nSamples: z.number().int().min(1).max(64).default(1),
  params: SamplingParams.default(SamplingParams.parse({})),
  concurrency: z.number().int().min(1).max(64).default(4),
  /** Stop launching requests once this much (USD) has been spent by this collection. */
  budgetUsd: z.number().min(0).optional(),
  maxRetries: z.number().int().min(0).max(20).default(5),
  timeoutMs: z.number().int().min(100).max(600_000).default(120_000),
  /** Enqueue grade jobs for new candidates when collection ends. */
  grade: z.boolean().default(true),
});
export type CollectionInput = z.input<typeof CollectionInput>;
export type CollectionConfig = z.output<typeof CollectionInput>;

export const CandidateVerdict = GradeVerdict;
export type CandidateVerdict = GradeVerdict;

/** Token usage as the chat-completions API reports it. */
export const Usage = z.object({ promptTokens: z.number().int().min(0), completionTokens: z.number().int().min(0) });
export type Usage = z.infer<typeof Usage>;
