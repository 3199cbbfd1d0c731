import { z } from "zod";
import { Sha256 } from "./shared";

// The `episode-policy` trainer command: a local model kept loaded for one episode job, asked for
// one turn at a time. The agent serves a Unix socket (as for grpo's rewards, the other way round):
// the trainer connects, sends one `ready` line with what it loaded, then answers each turn request
// (the transcript as chat messages, rendered with the model's chat template and the tools) with
// the completion and the tool call parsed from it. The socket closing ends the command.

/**
 * `model`: the tokenizer's own chat template, refused when it does not render `tools` (Qwen2.5/3
 * and Llama-3.1 templates do). `minimal_qwen`: a minimal Qwen-style template with `<tools>` and
 * `<tool_call>` (tool_template.py), for models whose template has no tool support (the tiny test
 * models: their ChatML template ignores `tools`).
 */
export const PolicyChatTemplate = z.enum(["model", "minimal_qwen"]);
export type PolicyChatTemplate = z.infer<typeof PolicyChatTemplate>;

export const EpisodePolicyTrainerSpec = z.strictObject({
  base_model: z.string().min(1),
  revision: z.string().min(1).nullable().optional(),
  /** Adapter snapshot folder; absent for the base model. */
  adapter: z.string().min(1).optional(),
  /** The adapter folder must hash (sha256_tree) to this, or nothing is loaded. */
  expected_adapter_sha256: Sha256.nullable().optional(),
  /** The agent's socket the trainer connects to. */
  policy_socket: z.string().min(1),
  /** The tools as OpenAI function schemas (core EPISODE_TOOL_SCHEMAS), handed to the chat template. */
  tools: z.array(z.looseObject({ type: z.literal("function"), function: z.looseObject({ name: z.string() }) })).min(1),
  chat_template: PolicyChatTemplate.default("model"),
  max_new_tokens: z.number().int().min(1).max(32_768).default(512),
  /** false: greedy; true: sampled with each turn request's seed. */
  do_sample: z.boolean().default(true),
  temperature: z.number().positive().default(0.8),
  top_p: z.number().gt(0).max(1).default(1),
  device: z.enum(["auto", "cpu", "cuda"]).default("auto"),
  dtype: z.enum(["auto", "float32", "bfloat16"]).default("auto"),
  local_files_only: z.boolean().default(false),
  /** Intra-op threads on the CPU (unset: torch's default). */
  torch_threads: z.number().int().min(1).optional(),
});
export type EpisodePolicyTrainerSpec = z.infer<typeof EpisodePolicyTrainerSpec>;

/** The trainer's first line on the socket: what it loaded, which the policy's hash is made of. */
export const PolicyReady = z.strictObject({
  event: z.literal("ready"),
  model: z.strictObject({ ref: z.string(), revision: z.string().nullable(), weights_sha256: Sha256.nullable() }),
  adapter_sha256: Sha256.nullable(),
  chat_template_sha256: Sha256,
  device: z.string(),
  dtype: z.string(),
  /** Prompt plus completion tokens the model takes (its max_position_embeddings). */
  context_tokens: z.number().int().min(1),
  /** Set only under the test hook that replaces the model's completions (AGENTLAB_TEST_POLICY_COMPLETIONS). */
  test_completions_sha256: Sha256.nullable(),
});
export type PolicyReady = z.infer<typeof PolicyReady>;

/** One turn asked of the model: the history as chat messages (core teacherMessages) and the turn's seed (null: greedy). */
export const PolicyTurnRequest = z.strictObject({
  id: z.number().int().min(0),
  messages: z.array(z.looseObject({ role: z.string() })).min(1),
  seed: z.number().int().min(0).nullable(),
});
export type PolicyTurnRequest = z.infer<typeof PolicyTurnRequest>;

/**
 * The answer: the completion and its tool call (`arguments` as JSON text), or null with `malformed`
 * saying why when the output tried a call that does not parse; both null: no call at all. An
 * `error` instead: the turn could not be generated (the transcript outgrew the model's context).
 */
export const PolicyTurnAnswer = z.union([
  z.strictObject({
    id: z.number().int().min(0),
    text: z.string(),
    call: z.strictObject({ name: z.string(), arguments: z.string() }).nullable(),
    malformed: z.string().nullable(),
    prompt_tokens: z.number().int().min(0),
    completion_tokens: z.number().int().min(0),
    finish_reason: z.enum(["stop", "length"]),
  }),
  z.strictObject({
    id: z.number().int().min(0),
    error: z.strictObject({ kind: z.literal("context"), message: z.string() }),
  }),
]);
export type PolicyTurnAnswer = z.infer<typeof PolicyTurnAnswer>;

/** The command's result: how many turns it answered and what they cost. */
export const EpisodePolicySummary = z.strictObject({
  turns: z.number().int().min(0),
  prompt_tokens: z.number().int().min(0),
  completion_tokens: z.number().int().min(0),
  generate_time_s: z.number().min(0),
  load_time_s: z.number().min(0),
});
export type EpisodePolicySummary = z.infer<typeof EpisodePolicySummary>;
