import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getJob, listAttempts } from "@agentlab/db";
import type { JobHandler } from "../../apps/agent/src/jobs/types";
import { AGENT_EVENTS, PROTOCOL_VERSION, type ClaimAck, type WriteAck } from "@agentlab/core";
import { spawnShellAgent } from "./helpers/agent-process";
import { connectAgent, hello, request } from "./security-agent-helpers";
import { enrollTestAgent, startInProcessAgent, startTestServer, waitFor, type TestServer } from "./helpers/server";
import { shellResult, tokenizePayload, tokenizeResult } from "./helpers/payloads";

// A server restart loses nothing. A job that finishes while the server is down
// (longer than a lease TTL) is accepted when it comes back, not re-run; the agent is back within
// seconds. Control: a job whose agent does not come back IS reaped (after the reaper's start grace)
// and re-run, so "not re-run" above is the reaper waiting, not a reaper that never runs.
// Also at the supervisor: a handler that ignores its abort signal cannot hold a shutdown.

const TTL_MS = 2000;
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ AGENTLAB_LEASE_TTL_MS: String(TTL_MS), AGENTLAB_HEARTBEAT_MS: "400" });
});
afterAll(async () => server?.close());

// `tokenize` is only a routing key here: these in-process agents run the test's own handlers. Their
// result fits the tokenize contract and carries the attempt's id (in a free-text field), so the
// stored result says which attempt produced it.
const resultOf = (attemptId: string) => tokenizeResult({ eot_token: attemptId });
function gatedHandler() {
  let open: () => void = () => {};
  const gate = new Promise<void>((r) => (open = r));
  const handler: JobHandler = async (ctx) => {
    await gate;
    return { reason: "succeeded", result: resultOf(ctx.attemptId) };
  };
  return { handler, open: () => open() };
}

const state = async (id: string) => (await getJob(server.db.db, id))?.state;
const waitState = (id: string, s: string, ms = 30_000) => waitFor(async () => (await state(id)) === s, ms, 50);

describe("server restart", () => {
  it("accepts a result finished while the server was down; only a lease nobody came back for is re-run", async () => {
    const survivor = gatedHandler();
    const a = await startInProcessAgent(server, "survivor", {
      pollMs: 300,
      handlers: { tokenize: survivor.handler },
      shellJobs: false,
    });
    const kept = await server.app.services.queue.enqueue({
      type: "tokenize",
      payload: tokenizePayload(),
      maxAttempts: 3,
    });
    await waitState(kept.id, "running");
    // A second job still running when the server comes back (it ends 3 s after): it must not be
    // fenced for the outage, nor re-run.
    const through = gatedHandler();
    const c = await startInProcessAgent(server, "through", {
      pollMs: 300,
      handlers: { tokenize: through.handler },
      shellJobs: false,
    });
    const spanning = await server.app.services.queue.enqueue({
      type: "tokenize",
      payload: tokenizePayload(),
      maxAttempts: 3,
    });
    await waitState(spanning.id, "running");
    const b = await spawnShellAgent(server, "casualty", { LOG_LEVEL: "error" });
    const orphan = await server.app.services.queue.enqueue({
      type: "shell",
      payload: { argv: ["sleep", "20"] },
      maxAttempts: 3,
    });
    await waitState(orphan.id, "running", 60_000);
    expect((await getJob(server.db.db, orphan.id))?.agentId).toBe(b.agentId);

    // Down for 3 lease TTLs: the survivor's job finishes meanwhile (its result is spooled), the
    // casualty's agent process dies meanwhile.
    setTimeout(() => survivor.open(), TTL_MS);
    setTimeout(() => b.child.kill("SIGKILL"), TTL_MS);
    await server.restart(3 * TTL_MS);
    const backAt = Date.now();
    setTimeout(() => through.open(), 3000);
    const rescuer = await startInProcessAgent(server, "rescuer", {
      pollMs: 300,
      handlers: { shell: async () => ({ reason: "succeeded", result: shellResult() }) },
    });

    await waitState(kept.id, "succeeded", 20_000);
    const keptAfterMs = Date.now() - backAt;
    expect(keptAfterMs).toBeLessThan(8000); // reconnect backoff capped at 4 s, then hello + delivery
    const keptAttempts = await listAttempts(server.db.db, kept.id);
    expect(keptAttempts.map((x) => x.reason)).toEqual(["succeeded"]);
    expect((await getJob(server.db.db, kept.id))?.result).toEqual(resultOf(keptAttempts[0]?.id ?? ""));
    await waitState(spanning.id, "succeeded", 20_000);
    expect((await listAttempts(server.db.db, spanning.id)).map((x) => x.reason)).toEqual(["succeeded"]);

    // Control: nobody renews the casualty's lease, so after the start grace it is reaped and re-run.
    await waitState(orphan.id, "succeeded", 40_000);
    expect((await listAttempts(server.db.db, orphan.id)).map((x) => x.reason)).toEqual(["agent_lost", "succeeded"]);
    await Promise.all([a.stop(), c.stop(), rescuer.stop()]);
  }, 90_000);
});

describe("a result delivered twice (its first ack lost, as to a restart)", () => {
  it("gets back the job its first delivery claimed instead of claiming another", async () => {
    const { credential } = await enrollTestAgent(server.db, "acks");
    const sock = await connectAgent(server.url, credential);
    try {
      expect(await hello(sock)).toMatchObject({ ok: true });
      const jobs = await server.app.services.queue.enqueueMany(
        [0, 1, 2].map((i) => ({ type: "tokenize" as const, payload: tokenizePayload(), priority: 900 - i })),
      );
      const claim = await request<ClaimAck>(sock, AGENT_EVENTS.claim, { version: PROTOCOL_VERSION });
      if (!claim.ok || !claim.data.job) throw new Error("no claim");
      const first = claim.data.job;
      expect(first.jobId).toBe(jobs[0]?.id);
      const result = {
        version: PROTOCOL_VERSION,
        jobId: first.jobId,
        attemptId: first.attemptId,
        reason: "succeeded",
        result: tokenizeResult(),
        claimNext: true,
      };
      const once = await request<WriteAck>(sock, AGENT_EVENTS.result, result);
      const twice = await request<WriteAck>(sock, AGENT_EVENTS.result, result);
      if (!once.ok || !twice.ok) throw new Error("result refused");
      expect(once.data.next?.jobId).toBe(jobs[1]?.id);
      expect(twice.data).toMatchObject({
        accepted: true,
        next: { jobId: jobs[1]?.id, attemptId: once.data.next?.attemptId },
      });
      // Positive control of the probe: the third job is there to be claimed, and was not.
      expect(await state(jobs[2]?.id ?? "")).toBe("queued");
      await server.app.services.queue.cancel(jobs[2]?.id ?? "");
      await request(sock, AGENT_EVENTS.result, {
        version: PROTOCOL_VERSION,
        jobId: jobs[1]?.id,
        attemptId: once.data.next?.attemptId,
        reason: "succeeded",
        result: tokenizeResult(),
      });
    } finally {
      sock.close();
    }
  });
});

describe("a handler that ignores its abort signal", () => {
  it("cannot hold a shutdown: the supervisor reports the interruption and the job is requeued", async () => {
    const stuck = gatedHandler(); // never opened before the stop: it ignores the signal entirely
    const agent = await startInProcessAgent(server, "stubborn", {
      pollMs: 300,
      handlers: { tokenize: stuck.handler },
      abandonAfterMs: 1000,
    });
    const job = await server.app.services.queue.enqueue({
      type: "tokenize",
      payload: tokenizePayload(),
      maxAttempts: 3,
    });
    await waitState(job.id, "running");
    // Positive control: it really does not end by itself.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await state(job.id)).toBe("running");
    const t0 = Date.now();
    await agent.stop();
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(await state(job.id)).toBe("queued");
    const attempts = await listAttempts(server.db.db, job.id);
    expect(attempts.map((x) => x.reason)).toEqual(["infra_error"]);
    expect(attempts[0]?.error).toMatch(/shut down/);
    stuck.open();
    await server.app.services.queue.cancel(job.id);
  }, 60_000);

  it("cannot hold a cancel: the job ends canceled and the agent takes the next one", async () => {
    const stuck = gatedHandler();
    let calls = 0;
    const handler: JobHandler = (ctx) =>
      ++calls === 1 ? stuck.handler(ctx) : Promise.resolve({ reason: "succeeded", result: tokenizeResult() });
    const agent = await startInProcessAgent(server, "stubborn2", {
      pollMs: 300,
      handlers: { tokenize: handler },
      abandonAfterMs: 1000,
    });
    const job = await server.app.services.queue.enqueue({
      type: "tokenize",
      payload: tokenizePayload(),
      maxAttempts: 3,
    });
    await waitState(job.id, "running");
    const t0 = Date.now();
    await server.app.services.queue.cancel(job.id);
    await waitState(job.id, "canceled", 10_000);
    expect(Date.now() - t0).toBeLessThan(5000);
    const next = await server.app.services.queue.enqueue({ type: "tokenize", payload: tokenizePayload() });
    await waitState(next.id, "succeeded", 10_000);
    stuck.open();
    await agent.stop();
  }, 60_000);
});
