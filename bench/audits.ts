// `npm run bench -- audits`: a 10,000-task pool on the real Postgres; "Audit all" (enqueue one
// audit job and one pending row per task), then a realistic mix of finished audits (some tasks
// audited twice), and the pool view's reads: the status summary and task-list pages filtered by
// audit status (sparse and dense); the summary includes the count of cross-file tasks. Ends with
// one JSON line of the figures.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { importPool, listTasks, poolAuditSummary, queryRows } from "@agentlab/db";
import { createTestDatabase } from "../tests/integration/helpers/db";
import { makePool, toJsonl } from "../tests/fixtures/tasks/generate";
import { enqueueAudits } from "../apps/web/server/audits/enqueue";
import { createQueue } from "../apps/web/server/queue";
import { createArtifactStore } from "../apps/web/server/artifacts/store";
import { createSecretBox } from "../apps/web/server/auth/secret-box";
import { createLogger } from "../apps/web/server/logger";
import { loadEnv } from "../apps/web/server/env";
import type { Services } from "../apps/web/server/services";

const N = Number(process.env.BENCH_TASKS ?? 10_000);
const db = await createTestDatabase();
const dir = await mkdtemp(join(tmpdir(), "agentlab-bench-audits-"));
try {
  const imported = await importPool(db.db, {
    name: "bench",
    lines: [new TextEncoder().encode(toJsonl(makePool(N, 4)))],
  });
  if (!imported.ok) throw new Error("import rejected");
  const poolId = imported.poolId;
  const env = loadEnv({ AGENTLAB_DATA_DIR: dir, LOG_LEVEL: "silent" });
  const services: Services = {
    env,
    db: db.db,
    log: createLogger("silent"),
    queue: createQueue(db.db),
    artifacts: createArtifactStore(join(dir, "artifacts")),
    secrets: createSecretBox("bench-secret-bench-secret-bench-secret-00"),
    agentHub: { disconnect: () => {} },
  };

  let t0 = performance.now();
  const started = await enqueueAudits(services, { poolId });
  const enqueueS = (performance.now() - t0) / 1000;
  if (started.enqueued !== N) throw new Error(`enqueued ${started.enqueued} of ${N}`);
  // Finish them as the sync loop would: 90 % passed, 5 % failed, 3 % error, 2 % still pending;
  // every tenth task also gets an older round, so "newest audit" has to pick.
  await db.db.execute(
    sql`update task_audits set status = (case when random() < 0.90 then 'passed' when random() < 0.5 then 'failed' when random() < 0.6 then 'error' else 'pending' end)::audit_row_status, mutation_score = random(), finished_at = now()`,
  );
  await db.db.execute(
    sql`insert into task_audits (task_row_id, status, sandbox, grader_version, round, created_at) select task_row_id, 'failed', sandbox, grader_version, round - 1, created_at - interval '1 day' from task_audits where random() < 0.1`,
  );
  // Finished audits record their cross-file uses (half of them a use), which the summary counts.
  await db.db.execute(
    sql`update task_audits set result = jsonb_build_object('crossFile', case when random() < 0.5 then '["limits.LIMIT"]'::jsonb else '[]'::jsonb end) where status in ('passed', 'failed')`,
  );
  await db.db.execute(sql`analyze task_audits`);
  const [counts] = await queryRows<{ rows: number }>(db.db, sql`select count(*)::int as rows from task_audits`);

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const time = async (n: number, fn: (i: number) => Promise<unknown>) => {
    const ms: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      await fn(i);
      ms.push(performance.now() - t);
    }
    return median(ms);
  };
  const summary = await poolAuditSummary(db.db, poolId);
  const summaryMs = await time(20, () => poolAuditSummary(db.db, poolId));
  const pages = async (audit: "failed" | "passed" | undefined) => {
    let after: string | undefined;
    return time(20, async () => {
      const page = await listTasks(db.db, { poolId, audit, after, limit: 50 });
      after = page.nextCursor ?? undefined;
    });
  };
  const pageAllMs = await pages(undefined);
  const pagePassedMs = await pages("passed");
  const pageFailedMs = await pages("failed");
  t0 = performance.now();
  const again = await enqueueAudits(services, { poolId });
  const skipS = (performance.now() - t0) / 1000;
  const round = (x: number) => Math.round(x * 10) / 10;
  console.error(
    `summary ${JSON.stringify(summary.byState)}, cross-file ${JSON.stringify(summary.crossFile)}; re-request skipped ${again.skipped}, enqueued ${again.enqueued} (errors retried)`,
  );
  console.log(
    JSON.stringify({
      bench: "audits",
      tasks: N,
      audit_rows: counts?.rows ?? 0,
      enqueue_all_s: round(enqueueS),
      enqueue_tasks_per_s: round(N / enqueueS),
      rerequest_s: round(skipS),
      summary_ms_median: round(summaryMs),
      page_ms_median: round(pageAllMs),
      page_passed_ms_median: round(pagePassedMs),
      page_failed_ms_median: round(pageFailedMs),
    }),
  );
} finally {
  await db.drop();
  await rm(dir, { recursive: true, force: true });
}
