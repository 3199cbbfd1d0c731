import { z } from "zod";
import {
  canonicalJson,
  GRADER_VERSION,
  isTerminal,
  sha256Hex,
  SandboxBackend,
  type AuditJobPayload,
  type EnqueueJob,
} from "@agentlab/core";
import { auditCandidates, insertAuditRows, toTaskSpec, type AuditCandidate, type NewAuditRow } from "@agentlab/db";
import type { Services } from "../services";

// Task admission audits run as `audit` jobs on agents; this file turns "audit these
// tasks" into jobs plus pending task_audits rows, which the sync loop (sync.ts) fills in later.

/**
 * The grader whose verdicts an audit stands for; part of every audit's dedupe key, so that a new
 * grader re-audits everything while the same grader never repeats an audit unasked.
 */
export const AUDIT_GRADER_VERSION = GRADER_VERSION;

export const StartAudits = z.object({
  poolId: z.string().uuid(),
  /** Row ids of tasks in the pool; all of the pool's tasks when absent. */
  taskIds: z.array(z.string().uuid()).min(1).max(1000).optional(),
  /** `process` must be picked explicitly; its audits are marked unsandboxed. */
  sandbox: SandboxBackend.default("bwrap"),
  /** Audit again even when an audit under this grader already exists (a new round). */
  rerun: z.boolean().default(false),
  referenceRuns: z.number().int().min(1).max(10).default(3),
  maxMutants: z.number().int().min(0).max(500).default(60),
});
export type StartAudits = z.input<typeof StartAudits>;

/** `finished`: audits whose job had already ended (an identical task audited elsewhere); their rows fill in at the next sync. */
export type StartAuditsResult = { enqueued: number; skipped: number; finished: number };

const PAGE = 200;

/**
 * The round a task's next audit gets, or null to leave it: without `rerun` an existing audit under
 * this grader stands (pending, passed or failed); one that errored is retried in a new round.
 */
export function nextRound(c: Pick<AuditCandidate, "round" | "latest">, rerun: boolean): number | null {
  if (c.round === null) return 0;
  if (rerun || c.latest === "error") return c.round + 1;
  return null;
}

/**
 * What makes two audits the same: the task's fingerprint (everything a model sees plus hidden
 * tests), its reference (which the fingerprint leaves out, and the audit runs), the grader and the
 * audit parameters. Identical tasks in two pools share one job; `round` makes a re-audit new.
 */
export function auditDedupeKey(
  c: Pick<AuditCandidate, "fingerprint" | "reference" | "inProcessReason">,
  params: { graderVersion: string; sandbox: string; referenceRuns: number; maxMutants: number },
  round: number,
): string {
  const ref = sha256Hex(canonicalJson(c.reference)).slice(0, 16);
  // An admin's in-process mark changes what the audit may decide: marked and unmarked never share a job.
  const mark = c.inProcessReason ? [c.inProcessReason] : [];
  const p = sha256Hex(canonicalJson([params.sandbox, params.referenceRuns, params.maxMutants, ...mark])).slice(0, 12);
  return `audit:${params.graderVersion}:${c.fingerprint}:${ref}:${p}:r${round}`;
}

/** Enqueues one `audit` job per task that needs one (see nextRound) and records pending audit rows. */
export async function enqueueAudits(
  services: Services,
  input: StartAudits,
  requestedBy: string | null = null,
): Promise<StartAuditsResult> {
  const opts = StartAudits.parse(input);
  const params = {
    graderVersion: AUDIT_GRADER_VERSION,
    sandbox: opts.sandbox,
    referenceRuns: opts.referenceRuns,
    maxMutants: opts.maxMutants,
  };
  const out: StartAuditsResult = { enqueued: 0, skipped: 0, finished: 0 };
  let after: string | undefined;
  // Pages keep memory flat on large pools: each page's tasks carry their full files.
  for (;;) {
    const page = await auditCandidates(services.db, {
      poolId: opts.poolId,
      taskRowIds: opts.taskIds,
      graderVersion: AUDIT_GRADER_VERSION,
      after,
      limit: PAGE,
    });
    if (page.length === 0) break;
    after = page[page.length - 1]?.id;
    const todo: { task: AuditCandidate; round: number; job: EnqueueJob }[] = [];
    for (const task of page) {
      const round = nextRound(task, opts.rerun);
      if (round === null) {
        out.skipped++;
        continue;
      }
      const payload: AuditJobPayload = {
        task: toTaskSpec(task),
        referenceRuns: opts.referenceRuns,
        maxMutants: opts.maxMutants,
        // Only an admin's mark lets the audit choose in-process grading.
        ...(task.inProcessReason ? { inProcessReason: task.inProcessReason } : {}),
      };
      todo.push({
        task,
        round,
        job: {
          type: "audit",
          payload,
          requirements: { labels: [], gpus: 0, gpuMemoryMb: 0, sandbox: opts.sandbox },
          // Admission audits are background work: experiments' grading goes first.
          priority: -10,
          maxDurationS: 1800,
          dedupeKey: auditDedupeKey(task, params, round),
        },
      });
    }
    if (todo.length > 0) {
      // Jobs first, rows second: should the rows fail, asking again finds the same jobs by key.
      const jobs = await services.queue.enqueueMany(todo.map((t) => t.job));
      const rows: NewAuditRow[] = todo.map((t, i) => {
        const job = jobs[i];
        if (!job) throw new Error("enqueueMany returned fewer jobs than asked");
        if (isTerminal(job.state)) out.finished++;
        return {
          taskRowId: t.task.id,
          jobId: job.id,
          graderVersion: AUDIT_GRADER_VERSION,
          round: t.round,
          sandbox: opts.sandbox,
          requestedBy,
        };
      });
      out.enqueued += await insertAuditRows(services.db, rows);
    }
    if (page.length < PAGE) break;
  }
  return out;
}
