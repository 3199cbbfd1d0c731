// The job contract enforced where the server receives an agent's writes (agents/gateway.ts,
// core jobs/receipt.ts): a result or progress event that breaks its job type's contract is refused
// at receipt, the attempt fails with a reason naming the type and the field, and the agent is told
// in the ack. Each refusal has its positive control: the same write, well-formed, is taken.
import type { Socket } from "socket.io-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENT_EVENTS, PROTOCOL_VERSION, type ClaimAck, type EnqueueJob, type WriteAck } from "@agentlab/core";
import { getJob, listAttempts, readProgress } from "@agentlab/db";
import { connectAgent, hello, request } from "./security-agent-helpers";
import { enrollTestAgent, startTestServer, type TestServer } from "./helpers/server";

let server: TestServer;
let socket: Socket;
beforeAll(async () => {
  server = await startTestServer();
  const { credential } = await enrollTestAgent(server.db, "wire");
  socket = await connectAgent(server.url, credential);
  expect(await hello(socket)).toMatchObject({ ok: true });
});
afterAll(async () => {
  socket?.close();
  await server?.close();
});

const generate: EnqueueJob = {
  type: "generate",
  payload: { spec: { base_model: "tiny", prompts: [{ task_id: "t0", messages: [{ role: "user", content: "hi" }] }] } },
};
const shell: EnqueueJob = { type: "shell", payload: { argv: ["true"] } };

/** Enqueues one job (one attempt: a refusal fails it for good) and claims it over the bare socket. */
async function claimOne(job: EnqueueJob) {
  const queued = await server.app.services.queue.enqueue({ ...job, maxAttempts: 1, priority: 1000 });
  const claim = await request<ClaimAck>(socket, AGENT_EVENTS.claim, { version: PROTOCOL_VERSION });
  const claimed = claim.ok ? claim.data.job : null;
  expect(claimed?.jobId).toBe(queued.id);
  return { version: PROTOCOL_VERSION, jobId: queued.id, attemptId: claimed?.attemptId ?? "" };
}
const succeed = (ref: { jobId: string; attemptId: string }, result: Record<string, unknown>) =>
  request<WriteAck>(socket, AGENT_EVENTS.result, { ...ref, version: PROTOCOL_VERSION, reason: "succeeded", result });

describe("results are read by their job's contract at receipt", () => {
  it("refuses a malformed shell result: the attempt fails naming the type and the field, the agent is told", async () => {
    const ref = await claimOne(shell);
    const ack = await succeed(ref, { from: "spool" });
    expect(ack).toMatchObject({ ok: true, data: { accepted: true } });
    const refused = ack.ok ? ack.data.refused : undefined;
    expect(refused).toMatch(/refused at receipt: the agent's shell result does not match its contract/);
    expect(refused).toMatch(/outputTruncated/);
    const job = await getJob(server.db.db, ref.jobId);
    expect(job).toMatchObject({ state: "failed", error: refused });
    expect(job?.result).not.toEqual({ from: "spool" });
    const [attempt] = await listAttempts(server.db.db, ref.jobId);
    expect(attempt).toMatchObject({ reason: "infra_error", error: refused });
  });

  it("positive control: the same job's well-formed result is stored as reported", async () => {
    const ref = await claimOne(shell);
    const ack = await succeed(ref, { outputTruncated: false });
    expect(ack).toEqual({ ok: true, data: { accepted: true, next: null } });
    const job = await getJob(server.db.db, ref.jobId);
    expect(job).toMatchObject({ state: "succeeded", error: null, result: { outputTruncated: false } });
  });

  it("keeps a failure's result as evidence (only a success's result is the type's output)", async () => {
    const ref = await claimOne(shell);
    const ack = await request<WriteAck>(socket, AGENT_EVENTS.result, {
      ...ref,
      reason: "user_error",
      error: "exit 1",
      result: { note: "not the contract's shape" },
    });
    expect(ack).toEqual({ ok: true, data: { accepted: true, next: null } });
    expect(await getJob(server.db.db, ref.jobId)).toMatchObject({ state: "failed", error: "exit 1" });
  });
});

describe("progress events are read by their job's contract at receipt", () => {
  const progress = (ref: { jobId: string; attemptId: string }, seq: number, data: unknown) =>
    request<WriteAck>(socket, AGENT_EVENTS.progress, { ...ref, version: PROTOCOL_VERSION, seq, data });

  it("refuses a generate progress event without its `event` tag: the attempt fails and the write is refused", async () => {
    const ref = await claimOne(generate);
    const ack = await progress(ref, 0, { done: 3, total: 8 });
    expect(ack).toMatchObject({ ok: true, data: { accepted: false } });
    const refused = ack.ok ? ack.data.refused : undefined;
    expect(refused).toMatch(/generate progress does not match its contract/);
    expect(refused).toMatch(/event/);
    expect(await getJob(server.db.db, ref.jobId)).toMatchObject({ state: "failed", error: refused, progress: null });
    expect(await readProgress(server.db.db, ref.attemptId)).toEqual([]);
    // The attempt is over: a late result changes nothing.
    await succeed(ref, { outputs: [], summary: {} });
    expect(await getJob(server.db.db, ref.jobId)).toMatchObject({ state: "failed", error: refused, result: {} });
  });

  it("positive control: the same event with its tag is stored", async () => {
    const ref = await claimOne(generate);
    const ack = await progress(ref, 0, { event: "items", done: 3, total: 8 });
    expect(ack).toEqual({ ok: true, data: { accepted: true } });
    const rows = await readProgress(server.db.db, ref.attemptId);
    expect(rows.map((r) => r.data)).toEqual([{ event: "items", done: 3, total: 8 }]);
    expect(await getJob(server.db.db, ref.jobId)).toMatchObject({ state: "running" });
  });

  it("refuses any progress from a job type that reports none (shell), and a train step from a generate job", async () => {
    const sh = await claimOne(shell);
    const a = await progress(sh, 0, { event: "items", done: 1, total: 2 });
    expect(a.ok && a.data.refused).toMatch(/shell progress does not match its contract/);
    const gen = await claimOne(generate);
    const step = { event: "progress", step: 1, total_steps: 2, epoch: 1, epoch_progress: 0.5, loss: 1 };
    const b = await progress(gen, 0, { ...step, lr: 0, tokens_per_s: 0, eta_s: 0, memory_mb: 0 });
    expect(b.ok && b.data.refused).toMatch(/generate progress does not match its contract/);
  });
});
