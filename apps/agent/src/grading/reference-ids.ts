import {
  taskFingerprint,
  type GradeLimits,
  type GradeResult,
  type GradingIsolation,
  type TaskSpec,
} from "@agentlab/core";
import type { Grader } from "./grader";

// The reference's test ids per task: what a candidate's test-id set is checked against. Computed
// by one reference run per (task fingerprint, isolation) per agent, not once per candidate or per
// job; `grade` and `grade-batch` jobs share one cache.

export type ReferenceIdsOutcome =
  | { ok: true; ids: readonly string[] }
  /** `infra_error`: the run itself failed (retry); `reference_failed`: the reference does not pass (the task is broken). */
  | { ok: false; kind: "infra_error" | "reference_failed"; error: string; reference: GradeResult };

export class ReferenceIds {
  private readonly known = new Map<string, readonly string[]>();

  constructor(private readonly grader: Grader) {}

  async get(
    task: TaskSpec,
    opts: {
      isolation: GradingIsolation;
      limits?: Partial<GradeLimits>;
      given?: readonly string[];
      signal?: AbortSignal;
      fingerprint?: string;
    },
  ): Promise<ReferenceIdsOutcome> {
    if (opts.given) return { ok: true, ids: opts.given };
    const key = `${opts.fingerprint ?? taskFingerprint(task)}:${opts.isolation}`;
    const cached = this.known.get(key);
    if (cached) return { ok: true, ids: cached };
    const ref = await this.grader.referenceIds(task, opts.limits, { isolation: opts.isolation, signal: opts.signal });
    if (ref.result.verdict === "infra_error")
      return { ok: false, kind: "infra_error", error: ref.result.reasons.join("; "), reference: ref.result };
    if (ref.result.verdict !== "pass")
      return {
        ok: false,
        kind: "reference_failed",
        error: `the task's reference does not pass (${ref.result.verdict}); cannot grade against it`,
        reference: ref.result,
      };
    this.known.set(key, ref.ids);
    return { ok: true, ids: ref.ids };
  }
}
