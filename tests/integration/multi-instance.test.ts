import { afterAll, describe, expect, it } from "vitest";
import type { JobHandler } from "../../apps/agent/src/jobs/types";
import { startInstancePair, type InstancePair } from "./helpers/cluster";
import { startInProcessAgent, waitFor, type TestServer } from "./helpers/server";
import { shellResult } from "./helpers/payloads";

// Two web instances over one Postgres, each with its own connection pool and socket.io server (as two
// processes behind a load balancer would have). An agent connected to A is told about work
// enqueued, or a cancel requested, through B: with socket.io's Postgres adapter at once; without it
// (the positive control) only at the agent's next poll or heartbeat, both set long here.
const POLL_MS = 8000;
const PROMPT_MS = 1500;
const slow = { AGENTLAB_HEARTBEAT_MS: "20000", AGENTLAB_LEASE_TTL_MS: "60000" };

// Records when the agent starts each job and when it is told to abort one; "hold" jobs run until then.
function recordingAgent(server: TestServer, name: string) {
  const started = new Map<string, number>();
  const aborted = new Map<string, number>();
  const shell: JobHandler = async (ctx) => {
    started.set(ctx.jobId, performance.now());
    const argv = ctx.payload.argv;
    if (!Array.isArray(argv) || argv[0] !== "hold") return { reason: "succeeded", result: shellResult() };
    await new Promise((r) => ctx.signal.addEventListener("abort", r, { once: true }));
    aborted.set(ctx.jobId, performance.now());
    return { reason: "canceled" };
  };
  return {
    started,
    aborted,
    agent: startInProcessAgent(server, name, { pollMs: POLL_MS, handlers: { shell } }),
  };
}

// Connected, said hello and made its first (empty) claim: its next poll is POLL_MS away.
async function settled(server: TestServer) {
  await waitFor(async () => server.app.gateway.connectedCount() === 1, 10_000);
  await new Promise((r) => setTimeout(r, 500));
}

const pairs: InstancePair[] = [];
afterAll(async () => {
  for (const p of pairs) await p.close();
});

describe("several web instances", () => {
  it("with the Postgres adapter, a job enqueued through B starts at once on an agent connected to A, and B's cancel reaches it", async () => {
    const pair = await startInstancePair(true, slow);
    pairs.push(pair);
    const rec = recordingAgent(pair.a, "on-a");
    const agent = await rec.agent;
    await settled(pair.a);
    expect(pair.b.app.gateway.connectedCount()).toBe(0);

    const t0 = performance.now();
    const job = await pair.b.app.services.queue.enqueue({ type: "shell", payload: { argv: ["hold"] } });
    await waitFor(async () => rec.started.has(job.id), PROMPT_MS, 5);
    const dispatchMs = (rec.started.get(job.id) ?? Number.POSITIVE_INFINITY) - t0;
    expect(dispatchMs).toBeLessThan(PROMPT_MS);

    const c0 = performance.now();
    expect((await pair.b.app.services.queue.cancel(job.id))?.state).toBe("canceling");
    await waitFor(async () => rec.aborted.has(job.id), PROMPT_MS, 5);
    const cancelMs = (rec.aborted.get(job.id) ?? Number.POSITIVE_INFINITY) - c0;
    expect(cancelMs).toBeLessThan(PROMPT_MS);
    console.log(JSON.stringify({ dispatch_ms: Math.round(dispatchMs), cancel_ms: Math.round(cancelMs) }));
    await agent.stop();
  }, 60_000);

  it("without the adapter (positive control), B's job and B's cancel wait for the agent's poll and heartbeat", async () => {
    const pair = await startInstancePair(false, slow);
    pairs.push(pair);
    const rec = recordingAgent(pair.a, "on-a");
    const agent = await rec.agent;
    await settled(pair.a);

    const t0 = performance.now();
    const job = await pair.b.app.services.queue.enqueue({ type: "shell", payload: { argv: ["hold"] } });
    await new Promise((r) => setTimeout(r, 2 * PROMPT_MS));
    expect(rec.started.has(job.id)).toBe(false);
    // The job itself is fine: the agent's next poll picks it up.
    await waitFor(async () => rec.started.has(job.id), POLL_MS + 2000, 20);
    expect((rec.started.get(job.id) ?? 0) - t0).toBeGreaterThan(2 * PROMPT_MS);

    expect((await pair.b.app.services.queue.cancel(job.id))?.state).toBe("canceling");
    await new Promise((r) => setTimeout(r, 2 * PROMPT_MS));
    expect(rec.aborted.has(job.id)).toBe(false);
    await agent.stop();
  }, 60_000);
});
