import { z } from "zod";
import { canonicalJson, sha256Hex } from "../hash";
import { PolicyChatTemplate, type PolicyReady, type PolicyTurnAnswer } from "../trainer/episode-policy";
import { callFromReply, MALFORMED_TOOL_CALL, TEACHER_PROMPT_HASH } from "./teacher";

// The local-model policy: a base model (and optionally an adapter) on the agent, run by the
// trainer's `episode-policy` command and asked turn by turn with the same history a teacher gets
// (teacherMessages: system prompt, first message, each call and its result), rendered with the
// model's own tool-call chat template. Its tool call is parsed from the completion by the trainer
// (Qwen `<tool_call>` or Llama-3 JSON); a call that does not parse is a refused turn.

const Sha256 = z.string().regex(/^[a-f0-9]{64}$/, "a sha256 hex digest");

export const LocalDecoding = z.strictObject({
  /** false: greedy; true: sampled with a seed per turn drawn from the episode's seed (localTurnSeed). */
  doSample: z.boolean().default(true),
  temperature: z.number().positive().max(5).default(0.8),
  topP: z.number().gt(0).max(1).default(1),
  maxNewTokens: z.number().int().min(1).max(32_768).default(512),
});
export type LocalDecoding = z.infer<typeof LocalDecoding>;

/**
 * The local policy in an episode job's payload. `baseModel` is a hub id or a folder on the agent;
 * an adapter is named by its archive in the artifact store (`adapterArtifact`, fetched like a
 * generate job's) and, when given, the snapshot's tree hash the trainer checks before loading.
 */
export const LocalPolicySpec = z.strictObject({
  kind: z.literal("local"),
  baseModel: z.string().min(1).max(500),
  revision: z.string().min(1).max(200).optional(),
  adapterArtifact: Sha256.optional(),
  adapterSha256: Sha256.optional(),
  chatTemplate: PolicyChatTemplate.default("model"),
  decoding: LocalDecoding.default({ doSample: true, temperature: 0.8, topP: 1, maxNewTokens: 512 }),
  device: z.enum(["auto", "cpu", "cuda"]).default("auto"),
  localFilesOnly: z.boolean().default(false),
});
export type LocalPolicySpec = z.infer<typeof LocalPolicySpec>;

/**
 * The policy's identity for the records: the weights actually loaded (as the trainer hashed them),
 * the adapter's tree hash, the rendered template, the decoding, and how it is asked (system prompt
 * and tool schemas). A test hook's scripted completions make another policy.
 */
export function localPolicyHash(spec: LocalPolicySpec, ready: PolicyReady): string {
  return sha256Hex(
    canonicalJson({
      kind: "local",
      weights: ready.model.weights_sha256 ?? `${ready.model.ref}@${ready.model.revision ?? "?"}`,
      adapter: ready.adapter_sha256,
      template: ready.chat_template_sha256,
      decoding: spec.decoding,
      prompt: TEACHER_PROMPT_HASH,
      ...(ready.test_completions_sha256 ? { testCompletions: ready.test_completions_sha256 } : {}),
    }),
  );
}

/** The policy's name in lists and reports: the model, and the adapter's hash prefix when there is one. */
export function localPolicyName(spec: LocalPolicySpec): string {
  const base = spec.baseModel.split("/").filter(Boolean).slice(-2).join("/");
  return `local:${base}${spec.adapterSha256 ? `+${spec.adapterSha256.slice(0, 12)}` : ""}`;
}

/**
 * The sampling seed of the turn that makes step `t` of an episode run with `seed`: a pure function
 * of both, so a continuation resumed from a stored state draws its turns as a fresh run would, and
 * turns do not share one random stream. Below 2^31 like the trainer's task seeds.
 */
export function localTurnSeed(seed: number, t: number): number {
  return Number.parseInt(sha256Hex(`local-turn:${seed}:${t}`).slice(0, 8), 16) % 2 ** 31;
}

const MAX_TEXT_CHARS = 4000;

/** The call a local model's turn makes: its parsed call, a malformed one (refused), or none. */
export function callFromLocalAnswer(answer: Extract<PolicyTurnAnswer, { text: string }>): {
  tool: string;
  args: unknown;
} {
  if (answer.malformed !== null)
    return {
      tool: MALFORMED_TOOL_CALL,
      args: { content: answer.text.slice(0, MAX_TEXT_CHARS), why: answer.malformed },
    };
  return callFromReply({
    content: answer.text,
    toolCalls: answer.call ? [answer.call] : [],
    finishReason: answer.finish_reason,
  });
}
