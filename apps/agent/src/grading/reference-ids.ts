import {
  taskFingerprint,
  type GradeLimits,
  type GradeResult,
  type GradingIsolation,
  type TaskSpec,
} from "@agentlab/core";
import type { Grader } from "./grader";

// The reference's test ids per task: what a candidate's test-id set is checked against, the tests
// it skips (the task's own skips, no failure of a candidate) and the candidates' limits it implies
// (a per-test budget of at least 3× its wall clock). Computed by one reference run per (task
// fingerprint, isolation, limits) per agent, not once per candidate or per job; `grade` and
// `grade-batch` jobs share one cache. Ids given by the sender carry no skips and no timing.

type Known = { ids: readonly string[]; skipped: readonly string[]; limits: Partial<GradeLimits> };

export type ReferenceIdsOutcome =
  | ({ ok: true } & Known)
  /** `infra_error`: the run itself failed (retry); `reference_failed`: the reference does not pass (the task is broken). */
  | { ok: false; kind: "infra_error" | "reference_failed"; error: string; reference: GradeResult };

export class ReferenceIds {
  private readonly known = new Map<string, Known>();

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
    if (opts.given) return { ok: true, ids: opts.given, skipped: [], limits: opts.limits ?? {} };
    const key = `${opts.fingerprint ?? taskFingerprint(task)}:${opts.isolation}:${JSON.stringify(opts.limits ?? {})}`;
    const cached = this.known.get(key);
    if (cached) return { ok: true, ...cached };
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
    const known = {
      ids: ref.ids,
      skipped: ref.skipped,
      limits: this.grader.budgetFromReference(ref.result, opts.limits),
    };
    this.known.set(key, known);
    return { ok: true, ...known };
  }
}
