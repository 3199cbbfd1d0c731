import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { createTaskValidator } from "@agentlab/core";
import {
  enrollmentTokens,
  getJob,
  insertCandidate,
  jobLogs,
  listAttempts,
  readLogs,
  teacherCandidates,
} from "@agentlab/db";
import type { JobHandler } from "../../apps/agent/src/jobs/types";
import { callerAs, type Caller } from "./helpers/callers";
import { tokenizePayload } from "./helpers/payloads";
import { startInProcessAgent, startTestServer, waitFor, type TestServer } from "./helpers/server";

// Text Postgres refuses (U+0000, lone surrogates) is escaped where agents' and teachers' text is
// recorded, and refused with the field named where a user asks us to keep it. Each positive
// control writes the same text the old way (straight into the table) and shows Postgres refuse it.

let s: TestServer;
let adminCaller: Caller;
const admin = () => adminCaller;

beforeAll(async () => {
  s = await startTestServer();
  adminCaller = await callerAs(s.app.services, "admin");
});
afterAll(async () => {
  await s?.close();
});

const NUL = "\u0000";

describe("agent output with U+0000", () => {
  it("is stored escaped: the job ends with its logs and error instead of staying running", async () => {
    const noisy: JobHandler = async (ctx) => {
      ctx.emitLog("stdout", `binary${NUL}junk\n`);
      await new Promise((r) => setTimeout(r, 300));
      return { reason: "user_error", error: `failed at byte ${NUL} and \uD800` };
    };
    const agent = await startInProcessAgent(s, "noisy", { pollMs: 100, handlers: { tokenize: noisy } });
    try {
      const job = await s.app.services.queue.enqueue({ type: "tokenize", maxAttempts: 1, payload: tokenizePayload() });
      const done = await waitFor(
        async () => ((j) => (j?.state === "failed" ? j : null))(await getJob(s.db.db, job.id)),
        20_000,
      );
      expect(done.error).toBe("failed at byte \\u0000 and \uFFFD");
      const [attempt] = await listAttempts(s.db.db, job.id);
      if (!attempt) throw new Error("no attempt");
      expect(attempt.error).toBe("failed at byte \\u0000 and \uFFFD");
      const logs = await readLogs(s.db.db, attempt.id, -1, 100);
      expect(logs.map((l) => l.data).join("")).toContain("binary\\u0000junk");

      // Positive control: the chunk written as the agent sent it is refused by Postgres.
      await expect(
        s.db.db.insert(jobLogs).values({ attemptId: attempt.id, seq: 999, stream: "stdout", data: `x${NUL}` }),
      ).rejects.toThrow();
    } finally {
      await agent.stop();
    }
  }, 40_000);
});

describe("a teacher answer with U+0000", () => {
  it("is stored escaped, so it cannot fail its collection", async () => {
    const candidate = {
      cacheKey: randomUUID(),
      fingerprint: "f",
      promptHash: "p",
      model: "m",
      paramsHash: "h",
      sampleIndex: 0,
      providerKind: "reference" as const,
      oracle: false,
      answer: `def f():\n    return "${NUL}"\n`,
      files: [{ path: "solution.py", content: `return "${NUL}"` }],
    };
    const { row, inserted } = await insertCandidate(s.db.db, candidate);
    expect(inserted).toBe(true);
    expect(row.answer).toBe('def f():\n    return "\\u0000"\n');
    expect(row.files).toEqual([{ path: "solution.py", content: 'return "\\u0000"' }]);
    // Positive control: the raw insert the old insertCandidate made is refused.
    await expect(s.db.db.insert(teacherCandidates).values({ ...candidate, cacheKey: randomUUID() })).rejects.toThrow();
  });
});

describe("user text with U+0000", () => {
  it("is refused with 400 naming the field, in any procedure's input", async () => {
    const err = await admin()
      .agents.createEnrollmentToken({ name: `box${NUL}1`, ttlMinutes: 5 })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toMatchObject({ code: "BAD_REQUEST", message: "name: must not contain the character U+0000 (NUL)" });
    // Nested fields are named by their path.
    await expect(admin().jobs.create({ type: "shell", payload: { argv: ["echo", `a${NUL}`] } })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringMatching(/^payload\.argv\.1: must not contain/),
    });
    // Positive control: the same name written without the check is a database error (the old 500).
    await expect(
      s.db.db.insert(enrollmentTokens).values({ tokenHash: randomUUID(), name: `box${NUL}1`, expiresAt: new Date() }),
    ).rejects.toThrow();
    // And a clean name goes through.
    expect((await admin().agents.createEnrollmentToken({ name: "box1", ttlMinutes: 5 })).token).toBeTruthy();
  });

  it("is refused with 400 naming the field at agent enrollment (plain HTTP)", async () => {
    const { token } = await admin().agents.createEnrollmentToken({ name: "box", ttlMinutes: 5 });
    const res = await fetch(`${s.url}/api/agents/enroll`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token, name: `my${NUL}box` }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { message: "name: must not contain the character U+0000 (NUL)" } });
    // Positive control: the same token with a clean name enrolls (the refusal did not use it up).
    const ok = await fetch(`${s.url}/api/agents/enroll`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token, name: "mybox" }),
    });
    expect(ok.status).toBe(200);
  });

  it("in a task file is a problem naming the field (line, path), like any other", () => {
    const task = {
      id: "t1",
      source_group: "g",
      language: "python",
      instruction: `Fix${NUL} it`,
      files: [{ path: "solution.py", role: "main", content: "x = 1\n" }],
      public_tests: [],
      hidden_tests: [{ path: "test_h.py", content: "def test(): pass\n" }],
      reference: [],
      metadata: { [`k${NUL}`]: "v" },
    };
    const res = createTaskValidator().check({ line: 3, bytes: new TextEncoder().encode(JSON.stringify(task)) });
    expect(res.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ line: 3, field: "instruction", message: expect.stringContaining("U+0000") }),
        expect.objectContaining({ line: 3, field: "metadata.k\\u0000", message: expect.stringContaining("its key") }),
      ]),
    );
  });
});
