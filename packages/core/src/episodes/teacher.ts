import { z } from "zod";
import { canonicalJson, sha256Hex } from "../hash";
import { SamplingParams } from "../teacher/schemas";
import { ToolCall, type EpisodeStep } from "./schemas";

// A teacher policy with native tool calls (OpenAI chat-completions `tools`). The provider's key
// stays on the server, so the agent running the episode asks the server for each turn
// (protocol/teacher-turn.ts): it renders the transcript as messages here, the server calls the
// provider with these tool schemas, and the agent maps the first tool call back to a ToolCall.
// The messages are a pure function of the transcript, so a continuation resumed from a stored
// state asks with the same history the main episode had: tool-call ids are the step's index and
// the assistant's prose beside a call is not kept (the transcript records calls only).

const TOOL_DESCRIPTIONS: Record<ToolCall["tool"], string> = {
  list_files: "List the workspace's files.",
  read_file: "Read lines start..end (1-based, inclusive) of a file, with line numbers; without them, the whole file.",
  edit_file:
    "Replace the one occurrence of `old` in `path` by `new` (exact match; a Python file must still parse). " +
    "An empty `old` creates `path`.",
  run_public_tests: "Run the public tests on the workspace; a pytest summary comes back.",
  submit: "Submit the workspace to the hidden tests; the episode ends.",
};

export type ToolSchema = {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
};

/** The five tools as OpenAI function schemas, derived once from the ToolCall contract the environment parses. */
export const EPISODE_TOOL_SCHEMAS: readonly ToolSchema[] = ToolCall.options.map((o) => {
  const { $schema: _drop, ...parameters } = z.toJSONSchema(o.shape.args);
  const name = o.shape.tool.value;
  return { type: "function", function: { name, description: TOOL_DESCRIPTIONS[name], parameters } };
});

export const TOOL_CALL_SYSTEM_PROMPT =
  "You repair a Python program in a workspace. Act only through the tools, one tool call a turn; each " +
  "tool's result comes back as the next message. Submit when the fix is done: the hidden tests run then.";

/** Identifies how a teacher is asked (system prompt and tool schemas): part of its policy hash and turn cache key. */
export const TEACHER_PROMPT_HASH = sha256Hex(
  canonicalJson({ system: TOOL_CALL_SYSTEM_PROMPT, tools: EPISODE_TOOL_SCHEMAS }),
);

/** The tool name a reply without any tool call is recorded under (the environment refuses it as bad_call). */
export const NO_TOOL_CALL = "(no tool call)";
const NO_TOOL_CALL_NOTE = "No tool was called, so nothing happened. Act through one of the tools.";
/** The tool name a local model's completion is recorded under when its tool call does not parse (also refused). */
export const MALFORMED_TOOL_CALL = "(malformed tool call)";
const MALFORMED_NOTE = "Your tool call could not be parsed, so nothing happened";

const MAX_ARGUMENTS_CHARS = 512 << 10;
const CallPart = z.strictObject({
  id: z.string().min(1).max(100),
  type: z.literal("function"),
  function: z.strictObject({ name: z.string().max(200), arguments: z.string().max(MAX_ARGUMENTS_CHARS) }),
});

/** A chat-completions message with tool calls, as the agent sends the history and the server forwards it. */
export const TeacherMessage = z.discriminatedUnion("role", [
  z.strictObject({ role: z.literal("system"), content: z.string() }),
  z.strictObject({ role: z.literal("user"), content: z.string() }),
  z.strictObject({
    role: z.literal("assistant"),
    content: z.string().nullable(),
    tool_calls: z.array(CallPart).max(1).optional(),
  }),
  z.strictObject({ role: z.literal("tool"), tool_call_id: z.string().min(1).max(100), content: z.string() }),
]);
export type TeacherMessage = z.infer<typeof TeacherMessage>;

/** What the server answers a turn with: the assistant's text and every tool call it made (arguments as sent). */
export const TeacherReply = z.strictObject({
  content: z.string().nullable(),
  toolCalls: z
    .array(z.strictObject({ name: z.string().max(200), arguments: z.string().max(MAX_ARGUMENTS_CHARS) }))
    .max(64),
  finishReason: z.string().nullable(),
});
export type TeacherReply = z.infer<typeof TeacherReply>;

/**
 * The teacher policy in an episode job's payload. `model` is the provider's at enqueue time; the
 * episode's seed (a continuation's own) is the sampling seed. `budgetUsd` caps what all attempts
 * of the job may spend (the ledger's sum for the job).
 */
export const TeacherPolicySpec = z.strictObject({
  kind: z.literal("teacher"),
  providerId: z.string().uuid(),
  model: z.string().min(1).max(200),
  params: SamplingParams.omit({ seed: true }).default({ temperature: 0.8, top_p: 1, max_tokens: 2048 }),
  maxRetries: z.number().int().min(0).max(20).default(5),
  timeoutMs: z.number().int().min(100).max(600_000).default(120_000),
  budgetUsd: z.number().min(0).optional(),
});
export type TeacherPolicySpec = z.infer<typeof TeacherPolicySpec>;

/** The teacher policy's identity for the records: who answers, how it is sampled and asked. */
export const teacherPolicyHash = (p: TeacherPolicySpec): string =>
  sha256Hex(
    canonicalJson({
      kind: "teacher",
      providerId: p.providerId,
      model: p.model,
      params: p.params,
      prompt: TEACHER_PROMPT_HASH,
    }),
  );

const callId = (step: EpisodeStep) => `call_${step.index}`;
const argumentsText = (args: unknown) => (typeof args === "string" ? args : JSON.stringify(args ?? {}));
const contentOf = (args: unknown): string =>
  typeof args === "object" && args !== null && "content" in args && typeof args.content === "string"
    ? args.content
    : "";

const whyOf = (args: unknown): string =>
  typeof args === "object" && args !== null && "why" in args && typeof args.why === "string" ? args.why : "unparseable";

/** The history a teacher reads: the system prompt, the episode's first message, then each call and its result. */
export function teacherMessages(first: string, steps: readonly EpisodeStep[]): TeacherMessage[] {
  const messages: TeacherMessage[] = [
    { role: "system", content: TOOL_CALL_SYSTEM_PROMPT },
    { role: "user", content: first },
  ];
  for (const s of steps) {
    // The environment's own submit ends the episode; nobody is asked after it.
    if (s.role !== "assistant") break;
    if (s.call.tool === NO_TOOL_CALL) {
      messages.push({ role: "assistant", content: contentOf(s.call.args) });
      messages.push({ role: "user", content: NO_TOOL_CALL_NOTE });
      continue;
    }
    // What the model wrote stays its own turn; a made-up call in its name would teach it a format it never produced.
    if (s.call.tool === MALFORMED_TOOL_CALL) {
      messages.push({ role: "assistant", content: contentOf(s.call.args) });
      messages.push({
        role: "user",
        content: `${MALFORMED_NOTE} (${whyOf(s.call.args)}). Act through one of the tools.`,
      });
      continue;
    }
    const id = callId(s);
    messages.push({
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name: s.call.tool, arguments: argumentsText(s.call.args) } }],
    });
    messages.push({ role: "tool", tool_call_id: id, content: s.result.output });
  }
  return messages;
}

const MAX_PROSE_CHARS = 4000;

/**
 * The call a reply makes: its first tool call (a model asked for one a turn; any others are
 * dropped), its arguments parsed when they are JSON and kept as text when not (the environment
 * then refuses the call as bad_call, a turn spent); prose alone is a call of NO_TOOL_CALL.
 */
export function callFromReply(reply: TeacherReply): { tool: string; args: unknown } {
  const first = reply.toolCalls[0];
  if (!first) return { tool: NO_TOOL_CALL, args: { content: (reply.content ?? "").slice(0, MAX_PROSE_CHARS) } };
  const text = first.arguments.trim();
  if (text === "") return { tool: first.name, args: {} };
  try {
    return { tool: first.name, args: JSON.parse(text) as unknown };
  } catch {
    return { tool: first.name, args: first.arguments };
  }
}
