import OpenAI from "openai";
import {
  DEFAULT_RETRY_POLICY,
  RetryGaveUp,
  parseRetryAfter,
  scrubKnown,
  scrubSecrets,
  withRetry,
  type ChatMessage,
  type RetryDecision,
  type RetryPolicy,
  type SamplingParams,
  type TeacherMessage,
  type ToolSchema,
  type Usage,
} from "@agentlab/core";

// One chat-completions call with our own retries: the SDK's are off (maxRetries: 0) so that the
// policy (which statuses, how many, full-jitter backoff, Retry-After) is core's `withRetry`,
// visible and tested.

export type ChatRequest = {
  baseURL: string;
  /** Empty for a keyless provider (local servers): no Authorization header is sent then. */
  apiKey: string;
  /** Reused across calls of one collection when given (keeps connections alive); made per call otherwise. */
  client?: OpenAI;
  model: string;
  /** Tool-call messages (an episode's teacher turn) only with `tools`. */
  messages: ChatMessage[] | TeacherMessage[];
  /** Native tool calling: the tools the model may call, one call a turn (parallel calls off). */
  tools?: readonly ToolSchema[];
  params: SamplingParams;
  extraParams: Record<string, unknown>;
  timeoutMs: number;
  /** Retries of failures other than rate limits (429s have the policy's own, larger budget). */
  maxRetries: number;
  signal?: AbortSignal;
};

/** `rateLimited`: how many 429s this call waited out before its answer. */
export type ChatReply = {
  text: string;
  /** Function calls the reply made (arguments as the model wrote them); empty without tools. */
  toolCalls: { name: string; arguments: string }[];
  usage: Usage;
  finishReason: string | null;
  attempts: number;
  rateLimited: number;
  latencyMs: number;
};

export type { RetryPolicy };
export const DEFAULT_RETRY: RetryPolicy = DEFAULT_RETRY_POLICY;

/** `message` is scrubbed of the key and of anything that looks like a credential: it is stored and shown. */
export class ProviderCallError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
    readonly attempts: number,
    readonly rateLimited = 0,
  ) {
    super(message);
    this.name = "ProviderCallError";
  }
}

// The SDK refuses to start without a key, so a keyless provider gets a placeholder that never
// leaves the process: `Authorization: null` removes the header from every request.
const KEYLESS_PLACEHOLDER = "agentlab-keyless-provider";
export const providerClient = (baseURL: string, apiKey: string, timeoutMs: number): OpenAI =>
  apiKey
    ? new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: timeoutMs })
    : new OpenAI({
        baseURL,
        apiKey: KEYLESS_PLACEHOLDER,
        defaultHeaders: { Authorization: null },
        maxRetries: 0,
        timeout: timeoutMs,
      });

/** 429, 5xx, 408, timeouts and dropped connections are worth another try; other 4xx are our fault. */
export function classifyProviderError(err: unknown, nowMs = Date.now()): RetryDecision {
  if (err instanceof OpenAI.APIConnectionError) return { retry: true, rateLimited: false, retryAfterMs: null }; // includes timeouts
  if (!(err instanceof OpenAI.APIError)) return { retry: false };
  const s = err.status;
  if (s !== 429 && s !== 408 && (s === undefined || s < 500)) return { retry: false };
  // OpenAI's own `retry-after-ms` first (finer), then the standard header (seconds or HTTP-date).
  const ms = Number(err.headers?.get("retry-after-ms") ?? NaN);
  const retryAfterMs = Number.isFinite(ms) && ms >= 0 ? ms : parseRetryAfter(err.headers?.get("retry-after"), nowMs);
  return { retry: true, rateLimited: s === 429, retryAfterMs };
}

export const isRetryable = (err: unknown): boolean => classifyProviderError(err).retry;

export async function chatCompletion(req: ChatRequest, policy: RetryPolicy = DEFAULT_RETRY): Promise<ChatReply> {
  const client = req.client ?? providerClient(req.baseURL, req.apiKey, req.timeoutMs);
  const body = {
    ...req.extraParams,
    model: req.model,
    messages: req.messages,
    temperature: req.params.temperature,
    top_p: req.params.top_p,
    max_tokens: req.params.max_tokens,
    ...(req.params.seed !== undefined ? { seed: req.params.seed } : {}),
    ...(req.tools ? { tools: [...req.tools], parallel_tool_calls: false } : {}),
    stream: false as const,
  };
  const once = async () => {
    const started = Date.now();
    // A per-call controller: the collection's signal is shared by every call, and the SDK adds a
    // listener per request that would otherwise pile up on it.
    const call = new AbortController();
    const onAbort = () => call.abort();
    req.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const res = await client.chat.completions.create(body, { signal: call.signal });
      return { res, latencyMs: Date.now() - started };
    } finally {
      req.signal?.removeEventListener("abort", onAbort);
    }
  };
  try {
    const out = await withRetry(once, {
      policy: { ...policy, maxAttempts: req.maxRetries + 1 },
      classify: classifyProviderError,
      signal: req.signal,
    });
    const choice = out.value.res.choices[0];
    const calls = (choice?.message.tool_calls ?? []).flatMap((c) => (c.type === "function" ? [c.function] : []));
    return {
      // A provider or proxy that echoes the request can put the key into an answer, which is stored.
      text: scrubKnown(choice?.message.content ?? "", [req.apiKey]),
      toolCalls: calls.map((f) => ({
        name: scrubKnown(f.name, [req.apiKey]),
        arguments: scrubKnown(f.arguments, [req.apiKey]),
      })),
      usage: {
        promptTokens: out.value.res.usage?.prompt_tokens ?? 0,
        completionTokens: out.value.res.usage?.completion_tokens ?? 0,
      },
      finishReason: choice?.finish_reason ?? null,
      attempts: out.attempts,
      rateLimited: out.rateLimited,
      latencyMs: out.value.latencyMs,
    };
  } catch (err) {
    if (req.signal?.aborted) throw new ProviderCallError("canceled", null, 0);
    const last = err instanceof RetryGaveUp ? err.last : err;
    const status = last instanceof OpenAI.APIError ? (last.status ?? null) : null;
    const message = scrubSecrets(err instanceof Error ? err.message : String(err), [req.apiKey]);
    throw new ProviderCallError(
      message,
      status,
      err instanceof RetryGaveUp ? err.attempts : 1,
      err instanceof RetryGaveUp ? err.rateLimited : 0,
    );
  }
}
