// Queue throughput and dispatch latency over real socket.io on loopback and the real Postgres:
// N jobs on K in-process agents; dispatch = enqueue to the agent starting the job.
import type { JobHandler } from "../apps/agent/src/jobs/types";
import { startInProcessAgent, startTestServer, waitFor } from "../tests/integration/helpers/server";
import { percentileMs, queueOutcome, succeededCount } from "./lib/queue-outcome";

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
await waitFor(async () => (await succeededCount(server.db.db)) >= JOBS + 200, 600_000, 20);
const seconds = (performance.now() - t0) / 1000;
const { lost, duplicated } = await queueOutcome(server.db.db);
await Promise.all(agents.map((a) => a.stop()));
await server.close();

console.log(
  JSON.stringify({
    bench: "queue",
    jobs: JOBS,
    agents: AGENTS,
    claims_per_s: Math.round(JOBS / seconds),
    dispatch_p50_ms: percentileMs(latencies, 0.5),
    dispatch_p99_ms: percentileMs(latencies, 0.99),
    lost,
    duplicated,
  }),
);
process.exit(0);
