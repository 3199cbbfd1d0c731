import { afterAll, describe, expect, it } from "vitest";
import type { JobHandler } from "../../apps/agent/src/jobs/types";
import { startInProcessAgent, startTestServer, waitFor, type TestServer } from "./helpers/server";
import { shellResult } from "./helpers/payloads";

// An enqueue wakes as many idle agents as it made jobs (agents/wake.ts), the longest idle first.
// When that agent cannot take the job (here: it did not opt in to shell jobs), its empty claim
// falls back to waking everyone, so the agent that can take it starts at once, not at its poll.
const POLL_MS = 10_000;

let server: TestServer;
afterAll(async () => server?.close());

describe("targeted wake-ups", () => {
  it("a woken agent that cannot take the job hands the nudge on to every agent", async () => {
    server = await startTestServer({ AGENTLAB_HEARTBEAT_MS: "20000", AGENTLAB_LEASE_TTL_MS: "60000" });
    const started = new Map<string, { at: number; by: string }>();
    const handler =
      (by: string): JobHandler =>
      async (ctx) => {
        started.set(ctx.jobId, { at: performance.now(), by });
        return { reason: "succeeded", result: shellResult() };
      };
    // The one without shell jobs goes idle first, so it is the one an enqueue of one job wakes.
    const picky = await startInProcessAgent(server, "no-shell", {
      pollMs: POLL_MS,
      shellJobs: false,
      handlers: { shell: handler("no-shell") },
    });
    await waitFor(async () => server.app.gateway.connectedCount() === 1, 30_000);
    await new Promise((r) => setTimeout(r, 500));
    const able = await startInProcessAgent(server, "shell", { pollMs: POLL_MS, handlers: { shell: handler("shell") } });
    await waitFor(async () => server.app.gateway.connectedCount() === 2, 30_000);
    await new Promise((r) => setTimeout(r, 500));

    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      const job = await server.app.services.queue.enqueue({ type: "shell", payload: { argv: ["true"] } });
      const s = await waitFor(async () => started.get(job.id), POLL_MS / 2, 5);
      expect(s.by).toBe("shell");
      expect(s.at - t0).toBeLessThan(POLL_MS / 2);
      // Let both agents go back to waiting (their empty claims) before the next job.
      await new Promise((r) => setTimeout(r, 300));
    }
    await picky.stop();
    await able.stop();
  }, 60_000);
});
