import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { AGENT_EVENTS, PROTOCOL_VERSION, type Capabilities, type ClaimAck } from "@agentlab/core";
import { agents, claimJob, getJob, type AgentFit } from "@agentlab/db";
import { eq } from "drizzle-orm";
import { callerAs, type Caller } from "./helpers/callers";
import { tokenizePayload } from "./helpers/payloads";
import { enrollTestAgent, startTestServer, testCapabilities, type TestServer } from "./helpers/server";
import { connectAgent, request } from "./security-agent-helpers";

// An agent is what the server registered, not what its socket says: a credential that never
// opted in, connecting with claimed shell opt-in, labels and an 80 GB GPU, claims none of the jobs
// that need them (and so never sees a shell job's secret environment).

let s: TestServer;
let adminCaller: Caller;
let memberCaller: Caller;
const admin = () => adminCaller;

beforeAll(async () => {
  s = await startTestServer();
  adminCaller = await callerAs(s.app.services, "admin");
  memberCaller = await callerAs(s.app.services, "member");
});
afterAll(async () => {
  await s?.close();
});

const h100: Capabilities["gpus"][number] = { name: "H100", memoryMb: 81_559, uuid: "GPU-fake", driver: "550" };
const lying: Capabilities = { ...testCapabilities(["a100"], true), gpus: [h100] };
const sayHello = (sock: Awaited<ReturnType<typeof connectAgent>>, capabilities: Capabilities) =>
  request(sock, AGENT_EVENTS.hello, { version: PROTOCOL_VERSION, capabilities, drain: false });
const claim = async (sock: Awaited<ReturnType<typeof connectAgent>>) => {
  const ack = await request<ClaimAck>(sock, AGENT_EVENTS.claim, { version: PROTOCOL_VERSION });
  if (!ack.ok) throw new Error(ack.error.message);
  return ack.data.job;
};
/** The fit the gateway used to build from the socket's own hello (before registration). */
const fitFromHello = (agentId: string, caps: Capabilities, storedLabels: string[]): AgentFit => ({
  agentId,
  labels: [...new Set([...storedLabels, ...caps.labels])],
  gpuCount: caps.gpus.length,
  gpuMemoryMb: caps.gpus.length ? Math.min(...caps.gpus.map((g) => g.memoryMb)) : 0,
  sandbox: caps.sandbox.selfTestPassed ? caps.sandbox.backend : "none",
  leaseTtlMs: 30_000,
  shellJobs: caps.shellJobs,
});

describe("what an agent may claim is the server's record", () => {
  it("a credential that never opted in claims neither the shell job nor the big-GPU job it lies its way to", async () => {
    const { agentId, credential } = await enrollTestAgent(s.db, "plain", { shellJobs: false });
    // Its first connect after enrolling registers it: no GPUs, no labels.
    const honest = await connectAgent(s.url, credential);
    expect(await sayHello(honest, testCapabilities([], false))).toMatchObject({ ok: true });
    honest.close();

    const secret = `s3cr3t-${randomUUID()}`;
    const shell = await admin().jobs.create({
      type: "shell",
      payload: { argv: ["sh", "-c", "echo $TOKEN"], env: { TOKEN: secret } },
    });
    const big = await s.app.services.queue.enqueue({
      type: "tokenize",
      payload: tokenizePayload(),
      requirements: { labels: ["a100"], gpus: 1, gpuMemoryMb: 80_000 },
    });

    // Whoever holds the credential now connects claiming the shell opt-in, the label and an H100.
    const liar = await connectAgent(s.url, credential);
    try {
      expect(await sayHello(liar, lying)).toMatchObject({ ok: true });
      expect(await claim(liar)).toBeNull();
      expect((await getJob(s.db.db, shell.id))?.state).toBe("queued");
      expect((await getJob(s.db.db, big.id))?.state).toBe("queued");
      const [row] = await s.db.db.select().from(agents).where(eq(agents.id, agentId));
      expect(row).toMatchObject({ shellJobs: false, labels: [], gpuCount: 0, registeredGpus: 0 });

      // Positive control, the old path: the fit built from that hello claims the big-GPU job (as
      // another enrolled agent, so that this one's GPU is not held by the canceled job after).
      const other = await enrollTestAgent(s.db, "other", { shellJobs: false });
      const old = await claimJob(s.db.db, fitFromHello(other.agentId, lying, []));
      expect(old?.jobId).toBe(big.id);
      await s.app.services.queue.cancel(big.id);

      // Positive control, the registration: once an admin registers the box for them, the same
      // hello claims the shell job (and would get its environment).
      const big2 = await s.app.services.queue.enqueue({
        type: "tokenize",
        payload: tokenizePayload(),
        requirements: { labels: ["a100"], gpus: 1, gpuMemoryMb: 80_000 },
      });
      await admin().agents.register({ id: agentId, shellJobs: true, labels: ["a100"], gpus: 1, gpuMemoryMb: 81_559 });
      expect(await sayHello(liar, lying)).toMatchObject({ ok: true });
      const first = await claim(liar);
      expect(first).toMatchObject({ jobId: shell.id, payload: { env: { TOKEN: secret } } });
      const second = await claim(liar);
      expect(second?.jobId).toBe(big2.id);
      await s.app.services.queue.cancel(shell.id);
      await s.app.services.queue.cancel(big2.id);
    } finally {
      liar.close();
    }
  });

  it("a later report offers less than the registration, never more; the shell opt-in needs both halves", async () => {
    const { agentId, credential } = await enrollTestAgent(s.db, "two-gpus", { shellJobs: false });
    const sock = await connectAgent(s.url, credential);
    try {
      // First report: two GPUs of 24 GB and a label, registered.
      const two = { ...testCapabilities(["fast"], false), gpus: [h100, h100].map((g) => ({ ...g, memoryMb: 24_000 })) };
      expect(await sayHello(sock, two)).toMatchObject({ ok: true });
      let [row] = await s.db.db.select().from(agents).where(eq(agents.id, agentId));
      expect(row).toMatchObject({ labels: ["fast"], registeredGpus: 2, gpuCount: 2, gpuMemoryMb: 24_000 });
      // One GPU gone: it is offered one. Then four claimed: still two, at 24 GB; a new label: ignored.
      expect(await sayHello(sock, { ...two, gpus: [two.gpus[0] ?? h100] })).toMatchObject({ ok: true });
      [row] = await s.db.db.select().from(agents).where(eq(agents.id, agentId));
      expect(row).toMatchObject({ gpuCount: 1 });
      const four = { ...testCapabilities(["fast", "a100"], false), gpus: [h100, h100, h100, h100] };
      expect(await sayHello(sock, four)).toMatchObject({ ok: true });
      [row] = await s.db.db.select().from(agents).where(eq(agents.id, agentId));
      expect(row).toMatchObject({ labels: ["fast"], gpuCount: 2, gpuMemoryMb: 24_000 });

      // Registered for shell by the admin, but the agent itself did not opt in: still no shell job.
      await admin().agents.register({ id: agentId, shellJobs: true });
      const shell = await admin().jobs.create({ type: "shell", payload: { argv: ["true"] } });
      expect(await sayHello(sock, four)).toMatchObject({ ok: true });
      expect(await claim(sock)).toBeNull();
      // And a fit that says shellJobs for an agent not registered is refused by the claim itself.
      await admin().agents.register({ id: agentId, shellJobs: false });
      expect(await claimJob(s.db.db, { ...fitFromHello(agentId, four, []), shellJobs: true })).toBeNull();
      await admin().agents.register({ id: agentId, shellJobs: true });
      expect((await claimJob(s.db.db, { ...fitFromHello(agentId, four, []), shellJobs: true }))?.jobId).toBe(shell.id);
      await s.app.services.queue.cancel(shell.id);
    } finally {
      sock.close();
    }
  });

  it("only admins register agents", async () => {
    const { agentId } = await enrollTestAgent(s.db, "x", { shellJobs: false });
    await expect(memberCaller.agents.register({ id: agentId, shellJobs: true })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
  });
});
