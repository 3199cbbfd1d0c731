// The one retry helper (teacher client today; offered to anything that calls a rate-limited or
// flaky service). Full-jitter backoff for failures; a server's Retry-After is obeyed exactly (never
// sent early), capped, and 429s have their own attempt budget: a rate limit says "later", not
// "broken", so it must not eat the failure budget and drop work.

export type RetryPolicy = {
  /** Full jitter: the wait before retry n is uniform in [0, min(capMs, baseMs·2^n)]. */
  baseMs: number;
  capMs: number;
  /** Attempts in all for failures that are not rate limits (1 = no retry). */
  maxAttempts: number;
  /** Rate-limited answers (429) allowed before giving up; counted separately from maxAttempts. */
  maxRateLimited: number;
  /** The longest Retry-After honoured; a longer ask ends the retries rather than coming early. */
  retryAfterCapMs: number;
  /** Wall-clock budget across all attempts; a wait that would pass it ends the retries. */
  deadlineMs?: number;
  random?: () => number;
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
};

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  baseMs: 500,
  capMs: 30_000,
  maxAttempts: 3,
  maxRateLimited: 50,
  retryAfterCapMs: 120_000,
  deadlineMs: 15 * 60_000,
};

/** What the caller's classifier says about one failure. */
export type RetryDecision = { retry: false } | { retry: true; rateLimited: boolean; retryAfterMs: number | null };

export type RetryOutcome<T> = { value: T; attempts: number; rateLimited: number };

/** Thrown when the retries end; `last` is the last error. */
export class RetryGaveUp extends Error {
  constructor(
    readonly last: unknown,
    readonly attempts: number,
    readonly rateLimited: number,
    readonly why: string,
  ) {
    super(
      `${last instanceof Error ? last.message : String(last)} (after ${attempts} attempt${attempts === 1 ? "" : "s"}; ${why})`,
    );
    this.name = "RetryGaveUp";
  }
}

/**
 * `Retry-After` as milliseconds from `nowMs`: delta-seconds ("120", fractions accepted) or an
 * HTTP-date. Null when absent or unparseable; a date in the past is 0.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | null {
  const v = value?.trim();
  if (!v) return null;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.ceil(Number(v) * 1000);
  if (!/^[A-Za-z]{3},/.test(v)) return null; // an HTTP-date starts with the weekday
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

export const fullJitterMs = (retry: number, p: Pick<RetryPolicy, "baseMs" | "capMs" | "random">): number =>
  Math.floor((p.random ?? Math.random)() * Math.min(p.capMs, p.baseMs * 2 ** retry));

/**
 * The wait before the next try. With a Retry-After: that long plus a little jitter (so workers told
 * the same moment do not all arrive together), never less. Without: full jitter.
 */
export function retryDelayMs(retry: number, p: RetryPolicy, retryAfterMs: number | null): number {
  if (retryAfterMs === null) return fullJitterMs(retry, p);
  return retryAfterMs + fullJitterMs(0, p);
}

export const abortableSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new Error("aborted"));
    const onAbort = () => (clearTimeout(t), reject(new Error("aborted")));
    const t = setTimeout(() => (signal?.removeEventListener("abort", onAbort), resolve()), ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** Runs `fn` until it succeeds, the classifier says stop, or a budget (attempts, 429s, deadline) ends. */
export async function withRetry<T>(
  fn: (attempt: number) => Promise<T>,
  opts: {
    policy: RetryPolicy;
    classify: (err: unknown) => RetryDecision;
    signal?: AbortSignal;
    onRetry?: (info: { attempt: number; delayMs: number; rateLimited: boolean; err: unknown }) => void;
  },
): Promise<RetryOutcome<T>> {
  const p = opts.policy;
  const now = p.now ?? Date.now;
  const sleep = p.sleep ?? abortableSleep;
  const started = now();
  let failures = 0;
  let rateLimited = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      return { value: await fn(attempt), attempts: attempt, rateLimited };
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      const d = opts.classify(err);
      if (!d.retry) throw new RetryGaveUp(err, attempt, rateLimited, "not retryable");
      if (d.rateLimited) rateLimited++;
      else failures++;
      if (!d.rateLimited && failures >= p.maxAttempts)
        throw new RetryGaveUp(err, attempt, rateLimited, "retries exhausted");
      if (d.rateLimited && rateLimited > p.maxRateLimited)
        throw new RetryGaveUp(err, attempt, rateLimited, "rate limited too many times");
      if (d.retryAfterMs !== null && d.retryAfterMs > p.retryAfterCapMs)
        throw new RetryGaveUp(
          err,
          attempt,
          rateLimited,
          `Retry-After ${Math.ceil(d.retryAfterMs / 1000)} s is over the ${Math.ceil(p.retryAfterCapMs / 1000)} s cap`,
        );
      const delayMs = retryDelayMs(d.rateLimited ? rateLimited - 1 : failures - 1, p, d.retryAfterMs);
      if (p.deadlineMs !== undefined && now() + delayMs - started > p.deadlineMs)
        throw new RetryGaveUp(err, attempt, rateLimited, "deadline reached");
      opts.onRetry?.({ attempt, delayMs, rateLimited: d.rateLimited, err });
      await sleep(delayMs, opts.signal);
    }
  }
}
