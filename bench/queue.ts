// Queue throughput and dispatch latency over real socket.io on loopback and the real Postgres:
// N jobs on K in-process agents; dispatch = enqueue to the agent starting the job.
import { sql } from "drizzle-orm";
import { queryRows } from "@agentlab/db";
import type { JobHandler } from "../apps/agent/src/jobs/types";
import { startInProcessAgent, startTestServer, waitFor } from "../tests/integration/helpers/server";

const JOBS = Number(process.argv[3] ?? 2000);
const AGENTS = Number(process.argv[4] ?? 4);

const server = await startTestServer({ AGENTLAB_LEASE_TTL_MS: "30000", AGENTLAB_HEARTBEAT_MS: "10000" });
const started = new Map<string, number>();
const enqueuedAt = new Map<string, number>();
// A no-op job type isolates the queue from process start-up costs.
const noop: JobHandler = async (ctx) => {
  started.set(ctx.jobId, performance.now());
  return { reason: "succeeded" };
};
const agents = await Promise.all(
  Array.from({ length: AGENTS }, (_, i) =>
    startInProcessAgent(server, `bench${i}`, { pollMs: 1000, handlers: { shell: noop } }),
  ),
);
await new Promise((r) => setTimeout(r, 500));

// Latency: jobs enqueued one at a time onto idle agents.
const latencies: number[] = [];
for (let i = 0; i < 200; i++) {
  const t0 = performance.now();
  const job = await server.app.services.queue.enqueue({ type: "shell", payload: { argv: ["true"] } });
  enqueuedAt.set(job.id, t0);
  await waitFor(async () => started.has(job.id), 10_000, 1);
  latencies.push((started.get(job.id) ?? t0) - t0);
}

// Throughput: a burst of JOBS enqueued at once, drained by all agents.
const t0 = performance.now();
await server.app.services.queue.enqueueMany(
  Array.from({ length: JOBS }, () => ({ type: "shell" as const, payload: { argv: ["true"] } })),
);
await waitFor(
  async () => {
    const [r] = await queryRows<{ n: number }>(
      server.db.db,
      sql`select count(*)::int as n from jobs where state = 'succeeded'`,
    );
    return (r?.n ?? 0) >= JOBS + 200;
  },
  600_000,
  20,
);
const seconds = (performance.now() - t0) / 1000;
const [dup] = await queryRows<{ n: number }>(
  server.db.db,
  sql`select count(*)::int as n from (select job_id from job_attempts group by job_id having count(*) > 1) d`,
);
const [lost] = await queryRows<{ n: number }>(
  server.db.db,
  sql`select count(*)::int as n from jobs where state <> 'succeeded'`,
);
await Promise.all(agents.map((a) => a.stop()));
await server.close();

latencies.sort((a, b) => a - b);
const pct = (p: number) =>
  Math.round((latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0) * 100) / 100;
console.log(
  JSON.stringify({
    bench: "queue",
    jobs: JOBS,
    agents: AGENTS,
    claims_per_s: Math.round(JOBS / seconds),
    dispatch_p50_ms: pct(0.5),
    dispatch_p99_ms: pct(0.99),
    lost: lost?.n ?? -1,
    duplicated: dup?.n ?? -1,
  }),
);
process.exit(0);
