import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { io } from "socket.io-client";
import { AGENT_EVENTS, PROTOCOL_VERSION } from "@agentlab/core";
import pino from "pino";
import { claimJob, finishAttempt, getJob, listAttempts, revokeAgent } from "@agentlab/db";
import { Supervisor } from "../../apps/agent/src/supervisor";
import { spawnShellAgent } from "./helpers/agent-process";
import {
  enrollTestAgent,
  startInProcessAgent,
  startTestServer,
  testCapabilities,
  waitFor,
  type TestServer,
} from "./helpers/server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ AGENTLAB_LEASE_TTL_MS: "2000", AGENTLAB_HEARTBEAT_MS: "400" });
});
afterAll(async () => server?.close());

describe("faults", () => {
  it("re-leases the job of an agent killed with SIGKILL and refuses the dead attempt's late result", async () => {
    const victim = await spawnShellAgent(server, "victim");
    const job = await server.app.services.queue.enqueue({
      type: "shell",
      payload: { argv: ["sh", "-c", "sleep 2; echo ok"] },
      maxAttempts: 3,
    });
    const running = await waitFor(async () => {
      const j = await getJob(server.db.db, job.id);
      return j?.state === "running" ? j : null;
    }, 60_000);
    expect(running.agentId).toBe(victim.agentId);
    const deadAttempt = running.currentAttemptId ?? "";
    victim.child.kill("SIGKILL");
    const rescuer = await startInProcessAgent(server, "rescuer", { pollMs: 300 });
    const done = await waitFor(async () => {
      const j = await getJob(server.db.db, job.id);
      return j?.state === "succeeded" ? j : null;
    }, 30_000);
    expect(done.agentId).toBe(rescuer.agentId);
    const attempts = await listAttempts(server.db.db, job.id);
    expect(attempts.map((a) => a.reason)).toEqual(["agent_lost", "succeeded"]);
    const late = await finishAttempt(server.db.db, {
      jobId: job.id,
      attemptId: deadAttempt,
      reason: "succeeded",
      exitCode: 0,
      signal: null,
      result: {},
      error: null,
    });
    expect(late.accepted).toBe(false);
    await rescuer.stop();
  });

  it("disconnects a revoked agent at once and lets it claim nothing", async () => {
    const { agentId, credential } = await enrollTestAgent(server.db, "revokee");
    const socket = io(server.url, { auth: { token: credential }, transports: ["websocket"], reconnection: false });
    await new Promise<void>(
      (resolve, reject) => (socket.once("connect", () => resolve()), socket.once("connect_error", reject)),
    );
    await socket
      .timeout(5000)
      .emitWithAck(AGENT_EVENTS.hello, { version: PROTOCOL_VERSION, capabilities: testCapabilities() });
    const disconnected = new Promise<string>((resolve) => socket.once("disconnect", (reason) => resolve(reason)));
    await revokeAgent(server.db.db, agentId);
    server.app.services.agentHub.disconnect(agentId);
    expect(await disconnected).toBe("io server disconnect");
    const job = await server.app.services.queue.enqueue({ type: "shell", payload: { argv: ["true"] } });
    const again = io(server.url, { auth: { token: credential }, transports: ["websocket"], reconnection: false });
    const err = await new Promise<Error>((resolve) => again.once("connect_error", resolve));
    expect(err.message).toBe("unauthorized");
    again.close();
    // Left queued, the job would be the next agent's: the spool tests below start agents.
    await server.app.services.queue.cancel(job.id);
  });
});

describe("the outbox spool", () => {
  /** What the previous run of the agent left on disk, a result never acknowledged; delivered by a new run. */
  async function deliverSpooled(name: string, result: Record<string, unknown>) {
    const { agentId, credential } = await enrollTestAgent(server.db, name);
    // Top priority, so that this claim takes this job whatever else is queued; one attempt, so a
    // refused result fails it for good instead of sending it back to the queue.
    const job = await server.app.services.queue.enqueue({
      type: "shell",
      payload: { argv: ["true"] },
      priority: 1000,
      maxAttempts: 1,
    });
    const claimed = await claimJob(server.db.db, {
      agentId,
      labels: [],
      gpuCount: 0,
      gpuMemoryMb: 0,
      sandbox: "process",
      leaseTtlMs: 60_000,
      shellJobs: true,
    });
    expect(claimed?.jobId).toBe(job.id);
    const stateDir = await mkdtemp(join(tmpdir(), "agentlab-spool-"));
    const payload = {
      version: PROTOCOL_VERSION,
      jobId: job.id,
      attemptId: claimed?.attemptId,
      reason: "succeeded",
      exitCode: 0,
      signal: null,
      result,
      error: null,
      lastLogSeq: -1,
    };
    await writeFile(
      join(stateDir, "outbox.jsonl"),
      JSON.stringify({ event: AGENT_EVENTS.result, attemptId: claimed?.attemptId, payload }) + "\n",
    );
    // It delivers its spool and claims nothing (no shell jobs): a job it claimed after the delivery
    // would have no handler, and its stop would wait on it (seen under load: a 120 s hang).
    const supervisor = new Supervisor({
      serverUrl: server.url,
      credential,
      stateDir,
      capabilities: testCapabilities([], false),
      handlers: {},
      runtime: { python: null, sandboxBackend: "process", sandboxOk: true },
      log: pino({ level: "silent" }),
      pollMs: 500,
    });
    await supervisor.start();
    const done = await waitFor(async () => {
      const j = await getJob(server.db.db, job.id);
      return j && j.state !== "running" && j.state !== "queued" ? j : null;
    });
    await supervisor.stop(0);
    return done;
  }

  it("delivers a result spooled by an agent process that died before sending it", async () => {
    const done = await deliverSpooled("phoenix", { outputTruncated: false });
    expect(done).toMatchObject({ state: "succeeded", result: { outputTruncated: false } });
  });

  it("refuses a spooled success whose result breaks the shell contract: the job fails with the field named", async () => {
    const done = await deliverSpooled("phoenix-2", { from: "spool" });
    expect(done.state).toBe("failed");
    expect(done.result).not.toEqual({ from: "spool" });
    expect(done.error).toMatch(/shell result does not match its contract[\s\S]*outputTruncated/);
    const [attempt] = await listAttempts(server.db.db, done.id);
    expect(attempt?.reason).toBe("infra_error");
  });
});
