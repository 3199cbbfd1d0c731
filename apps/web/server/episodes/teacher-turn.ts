import {
  DomainError,
  EPISODE_TOOL_SCHEMAS,
  TEACHER_PROMPT_HASH,
  TOOL_CALL_SYSTEM_PROMPT,
  budgetReached,
  callCost,
  canonicalJson,
  paramsHash,
  parseJobPayload,
  scrubbedMessage,
  sha256Hex,
  type EpisodeBudget,
  type TeacherMessage,
  type TeacherPolicySpec,
  type TeacherTurnAck,
  type TeacherTurnMsg,
} from "@agentlab/core";
import {
  findTeacherTurn,
  getPrice,
  getProvider,
  heldAttemptJob,
  jobTeacherSpend,
  providerSealedKey,
  recordTeacherTurn,
} from "@agentlab/db";
import type { Services } from "../services";
import { chatCompletion, DEFAULT_RETRY, ProviderCallError, type RetryPolicy } from "../teacher/client";

// A teacher policy's turn, asked by the agent running the episode (core protocol/teacher-turn.ts).
// The provider's key is opened here and goes nowhere else: the agent sends the history, the server
// calls the provider with the job's own provider, model and sampling, and answers with the reply.
// Authorized by the attempt: only the agent holding the job's running attempt is answered, and only
// for the provider its payload names. Each fresh call is cached by what determines it and has its
// ledger line (with the job); the job's budget cap is checked against the ledger before each call.

type Provider = Awaited<ReturnType<typeof getProvider>>;

export type TeacherTurns = { answer(agentId: string, msg: TeacherTurnMsg): Promise<TeacherTurnAck> };

export function teacherTurns(
  services: Pick<Services, "db" | "secrets" | "log">,
  opts: { retry?: RetryPolicy } = {},
): TeacherTurns {
  const { db } = services;
  // A request the agent sent again while its first is still with the provider (a slow ack) waits
  // for that call instead of paying for a second one.
  const inFlight = new Map<string, Promise<TeacherTurnAck>>();

  async function authorize(agentId: string, msg: TeacherTurnMsg) {
    const job = await heldAttemptJob(db, agentId, msg);
    if (!job) throw new DomainError("FORBIDDEN", "no teacher turn: not a running attempt this agent holds");
    if (job.type !== "episode") throw new DomainError("FORBIDDEN", "no teacher turn: not an episode job");
    const parsed = parseJobPayload("episode", job.payload);
    if (!parsed.ok) throw new DomainError("PRECONDITION_FAILED", `the episode job's payload: ${parsed.error}`);
    const { policy, task, budget } = parsed.payload;
    if (policy.kind !== "teacher")
      throw new DomainError("FORBIDDEN", "no teacher turn: this episode's policy is scripted");
    if (msg.providerId !== policy.providerId)
      throw new DomainError("FORBIDDEN", "no teacher turn: the job's payload names another provider");
    checkHistory(msg.messages, task.instruction, budget);
    return { policy, experimentId: job.experimentId };
  }

  async function call(
    jobId: string,
    experimentId: string | null,
    policy: TeacherPolicySpec,
    msg: TeacherTurnMsg,
    key: string,
    provider: Provider | undefined,
  ): Promise<TeacherTurnAck> {
    if (!provider || provider.archivedAt || provider.kind !== "openai" || !provider.baseUrl)
      return {
        outcome: "stopped",
        reason: "provider_unusable",
        message: "the teacher's provider is gone, archived or has no base URL",
      };
    const spent = await jobTeacherSpend(db, jobId);
    if (budgetReached(spent, policy.budgetUsd))
      return {
        outcome: "stopped",
        reason: "budget",
        message: `teacher budget cap of $${(policy.budgetUsd ?? 0).toFixed(4)} reached after spending $${spent.toFixed(4)}`,
      };
    const sealed = await providerSealedKey(db, provider.id);
    const apiKey = sealed ? services.secrets.open(sealed) : "";
    try {
      const reply = await chatCompletion(
        {
          baseURL: provider.baseUrl,
          apiKey,
          model: policy.model,
          messages: msg.messages,
          tools: EPISODE_TOOL_SCHEMAS,
          params: { ...policy.params, seed: msg.seed },
          extraParams: provider.extraParams,
          timeoutMs: policy.timeoutMs,
          maxRetries: policy.maxRetries,
        },
        opts.retry ?? DEFAULT_RETRY,
      );
      const cost = callCost(reply.usage, await getPrice(db, policy.model));
      const answer = { content: reply.text || null, toolCalls: reply.toolCalls, finishReason: reply.finishReason };
      await recordTeacherTurn(db, {
        cacheKey: key,
        providerId: provider.id,
        model: policy.model,
        jobId,
        experimentId,
        reply: answer,
        tokensIn: reply.usage.promptTokens,
        tokensOut: reply.usage.completionTokens,
        costUsd: cost,
        latencyMs: reply.latencyMs,
      });
      return { outcome: "reply", reply: answer, usage: reply.usage, cached: false };
    } catch (err) {
      // ProviderCallError messages are scrubbed of the key already; anything else is scrubbed here.
      const message = err instanceof ProviderCallError ? err.message : scrubbedMessage(err, [apiKey]);
      services.log.warn({ jobId, error: message }, "teacher turn failed");
      return { outcome: "stopped", reason: "provider_failed", message: `the teacher's call failed: ${message}` };
    }
  }

  return {
    async answer(agentId, msg) {
      const { policy, experimentId } = await authorize(agentId, msg);
      const provider = await getProvider(db, policy.providerId);
      const key = sha256Hex(
        canonicalJson({
          v: 1,
          providerId: policy.providerId,
          model: policy.model,
          params: paramsHash(policy.params, provider?.extraParams ?? {}),
          prompt: TEACHER_PROMPT_HASH,
          seed: msg.seed,
          messages: msg.messages,
        }),
      );
      const cached = await findTeacherTurn(db, key);
      if (cached)
        return {
          outcome: "reply",
          reply: cached.reply,
          usage: { promptTokens: cached.tokensIn, completionTokens: cached.tokensOut },
          cached: true,
        };
      const pending = inFlight.get(key);
      if (pending) return pending;
      const asked = call(msg.jobId, experimentId, policy, msg, key, provider).finally(() => inFlight.delete(key));
      inFlight.set(key, asked);
      return asked;
    },
  };
}

/**
 * The history must be an episode's as the agent renders it (core teacherMessages): the tool-call
 * system prompt, the task's own first message, no more assistant turns than the budget has, and
 * no more text than its context cap allows. What the job's key pays for is this job's episode.
 */
function checkHistory(messages: readonly TeacherMessage[], instruction: string, budget: EpisodeBudget): void {
  const [system, first] = messages;
  const last = messages[messages.length - 1];
  const refuse = (why: string) => new DomainError("BAD_REQUEST", `not this episode's history: ${why}`);
  if (system?.role !== "system" || system.content !== TOOL_CALL_SYSTEM_PROMPT)
    throw refuse("the system prompt differs");
  if (first?.role !== "user" || !first.content.startsWith(instruction))
    throw refuse("the first message is not the task's");
  if (last?.role === "assistant") throw refuse("it ends with the assistant's turn");
  const turns = messages.filter((m) => m.role === "assistant").length;
  if (turns >= budget.maxTurns) throw refuse(`${turns} assistant turns, the budget has ${budget.maxTurns}`);
  const chars = messages.reduce((n, m) => n + (m.content?.length ?? 0) + toolCallChars(m), 0);
  const cap = budget.maxContextChars + budget.maxObservationChars + system.content.length + first.content.length;
  if (chars > cap) throw refuse(`${chars} characters, over the context budget (${cap})`);
}

const toolCallChars = (m: TeacherMessage): number =>
  m.role === "assistant"
    ? (m.tool_calls ?? []).reduce((n, c) => n + c.function.arguments.length + c.function.name.length, 0)
    : 0;
