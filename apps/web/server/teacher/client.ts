import OpenAI from "openai";
import type { ChatMessage, SamplingParams, Usage } from "@agentlab/core";

// One chat-completions call with our own retries: the SDK's are off (maxRetries: 0) so that the
// policy (which statuses, how many, full-jitter backoff) is ours, visible and tested.

export type ChatRequest = {
  baseURL: string;
  apiKey: string;
  /** Reused across calls of one collection when given (keeps connections alive); made per call otherwise. */
  client?: OpenAI;
  model: string;
  messages: ChatMessage[];
  params: SamplingParams;
  extraParams: Record<string, unknown>;
  timeoutMs: number;
  maxRetries: number;
  signal?: AbortSignal;
};

export type ChatReply = { text: string; usage: Usage; finishReason: string | null; attempts: number; latencyMs: number };

export type RetryPolicy = { baseMs: number; capMs: number; random?: () => number; sleep?: (ms: number, signal?: AbortSignal) => Promise<void> };
export const DEFAULT_RETRY: RetryPolicy = { baseMs: 500, capMs: 30_000 };

export class ProviderCallError extends Error {
  constructor(message: string, readonly status: number | null, readonly attempts: number) {
    super(message);
    this.name = "ProviderCallError";
  }
}

export const providerClient = (baseURL: string, apiKey: string, timeoutMs: number): OpenAI => new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: timeoutMs });

/** Full jitter (AWS architecture blog): uniform in [0, min(cap, base·2^attempt)]. */
export const fullJitter = (attempt: number, p: RetryPolicy): number => Math.floor((p.random ?? Math.random)() * Math.min(p.capMs, p.baseMs * 2 ** attempt));

const sleepFor = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new Error("aborted"));
    const onAbort = () => (clearTimeout(t), reject(new Error("aborted")));
    const t = setTimeout(() => (signal?.removeEventListener("abort", onAbort), resolve()), ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** 429, 5xx, timeouts and dropped connections are worth another try; other 4xx are our fault. */
export function isRetryable(err: unknown): boolean {
  if (err instanceof OpenAI.APIConnectionError) return true; // includes APIConnectionTimeoutError
  if (err instanceof OpenAI.APIError) return err.status === 429 || err.status === 408 || (err.status !== undefined && err.status >= 500);
  return false;
}

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
    stream: false as const,
  };
  const sleep = policy.sleep ?? sleepFor;
  for (let attempt = 0; ; attempt++) {
    const started = Date.now();
    // A per-call controller: the collection's signal is shared by every call, and the SDK adds a
    // listener per request that would otherwise pile up on it.
    const call = new AbortController();
    const onAbort = () => call.abort();
    req.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const res = await client.chat.completions.create(body, { signal: call.signal });
      const choice = res.choices[0];
      return {
        text: choice?.message.content ?? "",
        usage: { promptTokens: res.usage?.prompt_tokens ?? 0, completionTokens: res.usage?.completion_tokens ?? 0 },
        finishReason: choice?.finish_reason ?? null,
        attempts: attempt + 1,
        latencyMs: Date.now() - started,
      };
    } catch (err) {
      if (req.signal?.aborted) throw new ProviderCallError("canceled", null, attempt + 1);
      const status = err instanceof OpenAI.APIError ? (err.status ?? null) : null;
      if (!isRetryable(err) || attempt >= req.maxRetries) {
        const what = err instanceof Error ? err.message : String(err);
        throw new ProviderCallError(`${what} (after ${attempt + 1} attempt${attempt ? "s" : ""})`, status, attempt + 1);
      }
      await sleep(fullJitter(attempt, policy), req.signal);
    } finally {
      req.signal?.removeEventListener("abort", onAbort);
    }
  }
}
