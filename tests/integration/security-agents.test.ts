import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { AGENT_EVENTS, PROTOCOL_VERSION, type ClaimAck, type WriteAck } from "@agentlab/core";
import { enrollAgent, enrollmentTokens, getJob, users } from "@agentlab/db";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { startTestApp, viewerOf, type TestApp } from "./auth-helpers";
import { connectAgent, hello, request, waitFor } from "./security-agent-helpers";

let t: TestDb;
let s: TestApp;
let adminViewer: ReturnType<typeof viewerOf>;
beforeAll(async () => {
  t = await createTestDatabase();
  // A short lease so the reaper takes a revoked agent's job back within the test.
  s = await startTestApp(t, { AGENTLAB_LEASE_TTL_MS: "900", AGENTLAB_HEARTBEAT_MS: "300" });
  const [admin] = await t.db
    .insert(users)
    .values({ email: "root@lab.test", name: "Root", passwordHash: "scrypt$unused", role: "admin" })
    .returning();
  if (!admin) throw new Error("no admin");
  adminViewer = viewerOf(admin);
});
afterAll(async () => {
  await s?.close();
  await t?.drop();
});

const mintEnrollment = (name: string) =>
  s.caller(adminViewer).agents.createEnrollmentToken({ name, ttlMinutes: 5, shellJobs: true });

describe("agent enrollment tokens", () => {
  it("are one-time", async () => {
    const { token } = await mintEnrollment("once");
    await enrollAgent(t.db, token);
    await expect(enrollAgent(t.db, token)).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("expire", async () => {
    const { token, id } = await mintEnrollment("late");
    await t.db
      .update(enrollmentTokens)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(enrollmentTokens.id, id));
    await expect(enrollAgent(t.db, token)).rejects.toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("only admins create them", async () => {
    const member = { ...adminViewer, role: "member" as const };
    await expect(s.caller(member).agents.createEnrollmentToken({ name: "x" })).rejects.toMatchObject({
      code: "FORBIDDEN",
    });
  });
});

describe("revoking an agent mid-job", () => {
  it("disconnects its socket at once, refuses its credential everywhere, and fences its attempt", async () => {
    const a = await enrollAgent(t.db, (await mintEnrollment("doomed")).token);
    const b = await enrollAgent(t.db, (await mintEnrollment("healthy")).token);
    const sockA = await connectAgent(s.url, a.credential);
    expect(await hello(sockA)).toMatchObject({ ok: true });
    const job = await s
      .caller(adminViewer)
      .jobs.create({ type: "shell", payload: { argv: ["sleep", "60"] }, maxAttempts: 3 });
    const claim = await request<ClaimAck>(sockA, AGENT_EVENTS.claim, { version: PROTOCOL_VERSION });
    if (!claim.ok || !claim.data.job) throw new Error(`no claim: ${JSON.stringify(claim)}`);
    const attemptA = claim.data.job.attemptId;
    const ref = { version: PROTOCOL_VERSION, jobId: job.id, attemptId: attemptA };
    expect(
      await request(sockA, AGENT_EVENTS.log, { ...ref, chunks: [{ seq: 0, stream: "stdout", data: "working" }] }),
    ).toEqual({ ok: true, data: { accepted: true } });

    const revoked = waitFor(sockA, AGENT_EVENTS.revoked);
    const dropped = waitFor<string>(sockA, "disconnect");
    await s.caller(adminViewer).agents.revoke({ id: a.agentId });
    await revoked;
    expect(await dropped).toBe("io server disconnect");

    // The credential no longer opens a socket, nor the artifact upload route.
    await expect(connectAgent(s.url, a.credential)).rejects.toThrow(/unauthorized/);
    const upload = await fetch(`${s.url}/api/artifacts/${"ab".repeat(32)}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${a.credential}`, "upload-offset": "0" },
      body: "late bytes",
    });
    expect(upload.status).toBe(401);

    // Its lease lapses; the reaper requeues the job (agent_lost) and another agent takes it.
    const sockB = await connectAgent(s.url, b.credential);
    try {
      expect(await hello(sockB)).toMatchObject({ ok: true });
      let attemptB: string | null = null;
      for (let i = 0; i < 40 && !attemptB; i++) {
        const c = await request<ClaimAck>(sockB, AGENT_EVENTS.claim, { version: PROTOCOL_VERSION });
        attemptB = c.ok ? (c.data.job?.attemptId ?? null) : null;
        if (!attemptB) await new Promise((r) => setTimeout(r, 150));
      }
      expect(attemptB).not.toBeNull();
      expect(attemptB).not.toBe(attemptA);
      // Late writes for the revoked agent's attempt, from whichever socket, are refused.
      expect(
        await request(sockB, AGENT_EVENTS.log, { ...ref, chunks: [{ seq: 1, stream: "stdout", data: "late" }] }),
      ).toMatchObject({ ok: true, data: { accepted: false } });
      // A shell job reports no progress, so this event also breaks the contract: the attempt end
      // that refusal asks for is fenced like any write, and B's attempt runs on (checked below).
      expect(await request(sockB, AGENT_EVENTS.progress, { ...ref, seq: 1, data: { step: 9 } })).toMatchObject({
        ok: true,
        data: { accepted: false },
      });
      // A result that fits the shell contract, so what refuses it is the fence, not the receipt.
      const forged = await request<WriteAck>(sockB, AGENT_EVENTS.result, {
        ...ref,
        reason: "succeeded",
        result: { outputTruncated: false },
      });
      expect(forged).toMatchObject({ ok: true, data: { accepted: false } });
      expect(forged.ok && forged.data.refused).toBeFalsy();
      const after = await getJob(t.db, job.id);
      expect(after).toMatchObject({ state: "running", currentAttemptId: attemptB, agentId: b.agentId });
      expect(after?.result).toBeNull();
    } finally {
      sockB.close();
    }
  });

  it("refuses sockets without a credential or with a forged one", async () => {
    await expect(connectAgent(s.url, "")).rejects.toThrow(/unauthorized/);
    await expect(connectAgent(s.url, "agt_forged")).rejects.toThrow(/unauthorized/);
  });
});
