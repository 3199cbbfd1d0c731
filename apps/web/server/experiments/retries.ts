import { scrubbedMessage } from "@agentlab/core";

// Bounded retries for the experiment runner. A domain refusal ends a stage at once; any other
// error (a bug, a database hiccup, a validation failure of something the runner itself built) is
// retried with exponential backoff a bounded number of times, then the stage and the experiment
// fail with the reason on the page. Before this, such an error was retried at every tick forever
// while the page said "running". Counts live in the runner process: a restarted server gives a
// failing experiment one more round of retries, never an endless loop.

export type RetryBook = {
  /** False while the experiment waits out its backoff. */
  due(experimentId: string, now?: number): boolean;
  /** Records a failure; returns the final reason once the retries are used up, else null. */
  failed(experimentId: string, stage: string | null, err: unknown, now?: number): string | null;
  succeeded(experimentId: string): void;
  attempts(experimentId: string): number;
  /** How long until the experiment is due again (0 when it is). */
  waitMs(experimentId: string, now?: number): number;
};

export type RetryOptions = { maxRetries?: number; baseMs?: number; capMs?: number };

export function createRetryBook(opts: RetryOptions = {}): RetryBook {
  const maxRetries = opts.maxRetries ?? 5;
  const baseMs = opts.baseMs ?? 2000;
  const capMs = opts.capMs ?? 60_000;
  const book = new Map<string, { failures: number; nextAt: number }>();
  return {
    due: (id, now = Date.now()) => (book.get(id)?.nextAt ?? 0) <= now,
    failed(id, stage, err, now = Date.now()) {
      const failures = (book.get(id)?.failures ?? 0) + 1;
      const message = scrubbedMessage(err).slice(0, 500);
      if (failures > maxRetries) {
        book.delete(id);
        return `${stage ?? "runner"}: ${message} (failed ${failures} times in a row; not retried further)`;
      }
      book.set(id, { failures, nextAt: now + Math.min(capMs, baseMs * 2 ** (failures - 1)) });
      return null;
    },
    succeeded: (id) => void book.delete(id),
    attempts: (id) => book.get(id)?.failures ?? 0,
    waitMs: (id, now = Date.now()) => Math.max(0, (book.get(id)?.nextAt ?? 0) - now),
  };
}
