import type { Server } from "node:http";
import { AuditResult } from "@agentlab/core";
import { finishAudit, finishedAuditJobs, type FinishedAuditJob } from "@agentlab/db";
import type { Services } from "../services";

// Copies finished `audit` jobs' results into task_audits. Polled: the queue has no completion
// hooks, and a poll over the database survives restarts (a row stays pending until copied).

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

export type AuditSync = { tick(): Promise<number>; stop(): Promise<void> };

export function createAuditSync(services: Services, opts: { intervalMs?: number } = {}): AuditSync {
  const log = services.log.child({ component: "audits" });
  let timer: NodeJS.Timeout | null = null;
  let current: Promise<unknown> | null = null;
  let stopped = false;
  const loop = () => {
    if (stopped) return;
    current = syncAudits(services)
      .catch((err: unknown) => log.error({ err }, "syncing audits failed; retrying next tick"))
      .finally(() => {
        current = null;
        if (!stopped) timer = setTimeout(loop, opts.intervalMs ?? 2000);
      });
  };
  timer = setTimeout(loop, 0);
  return {
    tick: () => syncAudits(services),
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}

/** Started by createApp; stops when the HTTP server closes. */
export function startAuditSync(services: Services, server: Server): AuditSync {
  const sync = createAuditSync(services);
  server.on("close", () => void sync.stop());
  return sync;
}
