import { AuditResult } from "@agentlab/core";
import { finishAudit, finishedAuditJobs, type FinishedAuditJob } from "@agentlab/db";
import type { Services } from "../services";

// Copies finished `audit` jobs' results into task_audits. Run when an audit job ends (the queue's
// events, background.ts) and by the slow sweep; a pass over the database survives restarts
// (a row stays pending until copied).

/** The audit outcome a finished job stands for; a job without a valid AuditResult is an `error`. */
export function auditOutcome(f: FinishedAuditJob) {
  if (f.state === "succeeded") {
    const parsed = AuditResult.safeParse(f.result?.audit);
    if (parsed.success) return { status: parsed.data.status, result: parsed.data };
    return { status: "error" as const, error: "audit job succeeded without a valid AuditResult" };
  }
  if (f.state === null) return { status: "error" as const, error: "the audit job was deleted" };
  return {
    status: "error" as const,
    error: `audit job ${f.state} (${f.reason ?? "?"})${f.error ? `: ${f.error}` : ""}`,
  };
}

/** One pass; returns how many audit rows it finished. */
export async function syncAudits(services: Services): Promise<number> {
  let done = 0;
  for (;;) {
    const batch = await finishedAuditJobs(services.db, 500);
    for (const f of batch) {
      if (await finishAudit(services.db, f.id, auditOutcome(f), f.finishedAt)) done++;
    }
    if (batch.length < 500) return done;
  }
}
