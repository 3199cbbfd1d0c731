// Several web instances: N jobs on K in-process agents spread over 2 instances (their own pools and
// socket.io servers, socket.io's Postgres adapter between them) on the real Postgres, over real
// socket.io on loopback. Dispatch = enqueue (alternately through either instance, so half the
// nudges cross instances) to an agent starting the job. `npm run bench -- fleet [jobs] [agents]`.
import { loadavg } from "node:os";
import type { JobHandler } from "../apps/agent/src/jobs/types";
import { startInstancePair } from "../tests/integration/helpers/cluster";
import { startInProcessAgent, waitFor } from "../tests/integration/helpers/server";
import { percentileMs, queueOutcome, succeededCount } from "./lib/queue-outcome";

const JOBS = Number(process.argv[3] ?? 5000);
const AGENTS = Number(process.argv[4] ?? 100);
const LATENCY_SAMPLES = 200;
// Half the burst is enqueued through each instance.
const HALF = Math.floor(JOBS / 2);

const pair = await startInstancePair(
  true,
  { AGENTLAB_LEASE_TTL_MS: "60000", AGENTLAB_HEARTBEAT_MS: "20000", AGENTLAB_SWEEP_MS: "600000" },
  30,
);
const instances = [pair.a, pair.b];
const started = new Map<string, number>();
// A no-op job type isolates the queue and the fan-out from process start-up costs.
const noop: JobHandler = async (ctx) => {
  started.set(ctx.jobId, performance.now());
  return { reason: "succeeded" };
};
const agents = [];
for (let i = 0; i < AGENTS; i++)
  agents.push(
    await startInProcessAgent(instances[i % 2] ?? pair.a, `fleet${i}`, { pollMs: 5000, handlers: { shell: noop } }),
  );
await waitFor(async () => instances.reduce((n, s) => n + s.app.gateway.connectedCount(), 0) === AGENTS, 60_000);
await new Promise((r) => setTimeout(r, 1000));

// Latency: jobs enqueued one at a time onto idle agents, alternately through A and B.
const latencies: number[] = [];
for (let i = 0; i < LATENCY_SAMPLES; i++) {
  const via = instances[i % 2] ?? pair.a;
  const t0 = performance.now();
  const job = await via.app.services.queue.enqueue({ type: "shell", payload: { argv: ["true"] } });
  await waitFor(async () => started.has(job.id), 10_000, 1);
  latencies.push((started.get(job.id) ?? t0) - t0);
}

// Throughput: a burst of JOBS enqueued at once, half through each instance, drained by all agents.
const burst = () => Array.from({ length: HALF }, () => ({ type: "shell" as const, payload: { argv: ["true"] } }));
const t0 = performance.now();
// CPU of this process (both instances and every agent live here) per job: less at the mercy of the
// other work on a shared machine than wall-clock rates are.
const cpu0 = process.cpuUsage();
const load0 = loadavg()[0] ?? 0;
await Promise.all(instances.map((s) => s.app.services.queue.enqueueMany(burst())));
const total = 2 * HALF + LATENCY_SAMPLES;
await waitFor(async () => (await succeededCount(pair.t.db)) >= total, 900_000, 20);
const seconds = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const load1 = loadavg()[0] ?? 0;
const { lost, duplicated } = await queueOutcome(pair.t.db);
const perInstance = instances.map((s) => s.app.gateway.connectedCount());
await Promise.all(agents.map((a) => a.stop()));
await pair.close();

console.log(
  JSON.stringify({
    bench: "fleet",
    instances: 2,
    agents: AGENTS,
    agents_per_instance: perInstance,
    jobs: 2 * HALF,
    claims_per_s: Math.round((2 * HALF) / seconds),
    dispatch_p50_ms: percentileMs(latencies, 0.5),
    dispatch_p99_ms: percentileMs(latencies, 0.99),
    cpu_ms_per_job: Math.round(((cpu.user + cpu.system) / 1000 / (2 * HALF)) * 100) / 100,
    load_avg_1m: [Math.round(load0 * 10) / 10, Math.round(load1 * 10) / 10],
    lost,
    duplicated,
  }),
);
process.exit(0);
