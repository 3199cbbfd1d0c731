import { z } from "zod";
import { InspectModelSpec, InspectModelSummary } from "../trainer/inspect";
import { TinyModelSpec, TinyModelSummary } from "../trainer/schemas";

// The base-model picker's jobs: `inspect-model` reads a model's facts on an agent
// (offline, from its folder or hub cache), `tiny-model` builds the tiny demo model there.

const Sha256 = z.string().regex(/^[a-f0-9]{64}$/, "a sha256 hex digest");

export const InspectModelJobPayload = InspectModelSpec;
export const InspectModelJobResult = z.strictObject({ model: InspectModelSummary });
export type InspectModelJobResult = z.infer<typeof InspectModelJobResult>;

/** The tiny model's shape settings; the agent chooses the output folder (under its state dir). */
export const TinyModelJobPayload = z.strictObject({
  /** A task pool (JSONL, Task spec v1) in the artifact store whose code and tests fit the tokenizer. */
  corpusSha256: Sha256,
  /** Only these tasks feed the tokenizer (the split's train part). */
  trainTaskIds: z.array(z.string().min(1)).min(1),
  shape: TinyModelSpec.pick({
    arch: true,
    vocab_size: true,
    hidden_size: true,
    intermediate_size: true,
    num_layers: true,
    num_heads: true,
    num_kv_heads: true,
    max_position_embeddings: true,
  })
    .partial()
    .strict()
    .default({}),
  /** Text files fed to the tokenizer beside the corpus (the CPU demo: the prompt template's words). */
  textSha256s: z.array(Sha256).max(8).default([]),
  /**
   * A short warm-up of the random model on train-split text only (the CPU demo preset's:
   * demo/cpu-demo.ts), its SFT JSONL in the artifact store; `trainTaskIds` are the tasks it read.
   */
  warmup: z
    .strictObject({
      datasetSha256: Sha256,
      description: z.string().min(1).max(2000),
      steps: z.number().int().min(1).max(100_000),
      learningRate: z.number().positive().max(1),
      batchSize: z.number().int().min(1).max(1024),
    })
    .optional(),
});
export type TinyModelJobPayload = z.input<typeof TinyModelJobPayload>;
/** `path`: the model folder on the agent that built it (a local base model for that box). */
export const TinyModelJobResult = z.strictObject({ tinyModel: TinyModelSummary });
export type TinyModelJobResult = z.infer<typeof TinyModelJobResult>;
