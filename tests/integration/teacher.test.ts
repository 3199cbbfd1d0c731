import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { collectableTasks, queryRows } from "@agentlab/db";
import type { TestDb } from "./helpers/db";
import {
  startTeacherWorld,
  TEACHER_MODEL as MODEL,
  waitFor,
  type FakeProvider,
  type TeacherWorld,
} from "./helpers/teacher-fixture";
import { trpcHttp, type Caller, type TestApp } from "./auth-helpers";
import { awaitCollection } from "../../apps/web/server/teacher/collection-runs";

// Teacher collection end to end: a local OpenAI-compatible server, the real app and Postgres, and
// an agent over the real queue that claims `grade` jobs (verdict: does the candidate equal the
// reference). The datasets built from collections: teacher-datasets.test.ts.

const KEY = "sk-test-TEACHER-KEY-7f3a9c0d2e";

let w: TeacherWorld;
let t: TestDb;
let s: TestApp;
let admin: Caller;
let splitId = "";
let parts: TeacherWorld["parts"];
let fakeUrl = "";
let seen: FakeProvider["seen"] = [];
let modes: FakeProvider["modes"] = new Map();
let hits: FakeProvider["hits"] = new Map();
const responses: unknown[] = [];
const keep = <T>(v: T): T => (responses.push(v), v);

beforeAll(async () => {
  w = await startTeacherWorld();
  ({ t, s, admin, splitId, parts } = w);
  ({ url: fakeUrl, seen, modes, hits } = w.fake);
  const [a, b, c] = parts.train;
  modes
    .set(a ?? "", "429once")
    .set(b ?? "", "500always")
    .set(c ?? "", "malformed");
});

afterAll(async () => {
  await w?.close();
});

let providerId = "";

describe("teacher collection", () => {
  it("stores the provider key sealed and never returns it", async () => {
    const p = keep(
      await admin.providers.create({
        name: "fake",
        kind: "openai",
        baseUrl: fakeUrl,
        model: MODEL,
        apiKey: KEY,
        extraParams: {},
      }),
    );
    providerId = p.id;
    expect(p.hasApiKey).toBe(true);
    keep(await admin.providers.list());
    keep(await admin.providers.byId({ id: p.id }));
    const [row] = await queryRows<{ k: string }>(
      t.db,
      sql`select api_key_sealed as k from teacher_providers where id = ${p.id}`,
    );
    expect(row?.k).toMatch(/^v1\./);
    expect(row?.k).not.toContain(KEY);
  });

  it("collects with retries on 429, gives up on 500s past the limit, keeps malformed answers, and fills the ledger", async () => {
    const [a, b, c] = parts.train;
    const col = keep(
      await admin.collections.create({
        splitId,
        providerId,
        experimentId: "00000000-0000-4000-8000-00000000000a",
        parts: ["train"],
        nSamples: 1,
        concurrency: 3,
        maxRetries: 2,
        params: { temperature: 0.8, top_p: 1, max_tokens: 512 },
      }),
    );
    await awaitCollection(s.app.services, col.id);
    const done = keep(
      await waitFor(async () => {
        const x = await admin.collections.byId({ id: col.id });
        return x.state === "done" && x;
      }),
    );
    const n = parts.train.length;
    expect(done).toMatchObject({
      samplesTotal: n,
      samplesDone: n - 1,
      samplesFailed: 1,
      reused: 0,
      tokensIn: 100 * (n - 1),
      tokensOut: 50 * (n - 1),
    });
    expect(done.costUsd).toBeCloseTo(0.2 * (n - 1), 9);
    expect(done.stopReason).toMatch(/1 request\(s\) failed after retries.*500/);
    expect(done.verdicts).toEqual({ pass: n - 2, fail_syntax: 1 });
    expect(hits.get(a ?? "")).toBe(2); // 429 then success
    expect(hits.get(b ?? "")).toBe(3); // 500 × (1 + maxRetries)
    expect(seen.every((r) => r.auth === `Bearer ${KEY}`)).toBe(true);
    const summary = keep(await admin.collections.tasks({ id: col.id }));
    const bad = summary.find((r) => r.taskKey === c);
    expect(bad).toMatchObject({ samples: 1, malformed: 1, passed: 0 });
    const cands = keep(await admin.collections.candidates({ id: col.id, taskRowId: bad?.taskRowId ?? "" }));
    expect(cands[0]?.candidate).toMatchObject({
      verdict: "fail_syntax",
      verdictReasons: ["no fenced code block in the answer"],
      parseError: "no fenced code block in the answer",
      files: null,
    });
    const ledger = keep(await admin.collections.ledger({ by: "provider" }));
    expect(ledger).toEqual([
      expect.objectContaining({
        key: providerId,
        label: "fake",
        calls: n - 1,
        tokensIn: 100 * (n - 1),
        tokensOut: 50 * (n - 1),
      }),
    ]);
    // Only public context went out: no hidden test, no reference, no test-split task.
    expect(
      seen.some(
        (r) =>
          r.body.includes("HIDDEN_MARKER") || r.body.includes("REFERENCE_MARKER") || r.body.includes("test_hidden"),
      ),
    ).toBe(false);
  });

  it("reuses cached candidates on a second experiment and reports the cost saved", async () => {
    const before = seen.length;
    const col = keep(
      await admin.collections.create({
        splitId,
        providerId,
        experimentId: "00000000-0000-4000-8000-00000000000b",
        parts: ["train"],
        maxRetries: 0,
        params: { temperature: 0.8, top_p: 1, max_tokens: 512 },
      }),
    );
    await awaitCollection(s.app.services, col.id);
    const done = keep(await admin.collections.byId({ id: col.id }));
    const n = parts.train.length;
    expect(done).toMatchObject({ state: "done", reused: n - 1, samplesDone: n - 1, samplesFailed: 1, costUsd: 0 });
    expect(done.costSavedUsd).toBeCloseTo(0.2 * (n - 1), 9);
    expect(seen.slice(before).map((r) => r.task)).toEqual([parts.train[1]]); // only the failed one is asked again
    const byExp = keep(await admin.collections.ledger({ by: "experiment" }));
    expect(byExp).toEqual([expect.objectContaining({ key: "00000000-0000-4000-8000-00000000000a", calls: n - 1 })]);
  });

  it("stops cleanly at the budget cap and says why", async () => {
    const col = keep(
      await admin.collections.create({
        splitId,
        providerId,
        parts: ["train", "dev"],
        concurrency: 1,
        budgetUsd: 0.3,
        maxRetries: 0,
        grade: false,
        params: { temperature: 0.5, top_p: 1, max_tokens: 512 },
      }),
    );
    await awaitCollection(s.app.services, col.id);
    const done = keep(await admin.collections.byId({ id: col.id }));
    expect(done.state).toBe("stopped_budget");
    expect(done.samplesDone).toBe(2);
    expect(done.costUsd).toBeCloseTo(0.4, 9);
    expect(done.stopReason).toContain("budget cap of $0.3000 reached");
    expect(done.samplesDone + done.samplesFailed).toBeLessThan(done.samplesTotal);
  });

  it("times out a slow provider and retries within the limit", async () => {
    const slow = parts.dev[0] ?? "";
    modes.set(slow, "slow");
    const before = hits.get(slow) ?? 0;
    const col = keep(
      await admin.collections.create({
        splitId,
        providerId,
        parts: ["dev"],
        taskIds: [slow],
        timeoutMs: 200,
        maxRetries: 1,
        grade: false,
        params: { temperature: 0.1, top_p: 1, max_tokens: 512 },
      }),
    );
    await awaitCollection(s.app.services, col.id);
    modes.delete(slow);
    const done = keep(await admin.collections.byId({ id: col.id }));
    // No usable sample: the run ends failed, with the reason.
    expect(done).toMatchObject({ state: "failed", samplesDone: 0, samplesFailed: 1 });
    expect(done.stopReason).toMatch(/no usable sample.*timed out.*after 2 attempts/i);
    expect((hits.get(slow) ?? 0) - before).toBe(2);
  });

  it("refuses test-split tasks in the collection code itself", async () => {
    const testTask = parts.test[0] ?? "";
    const before = seen.length;
    await expect(admin.collections.create({ splitId, providerId, parts: ["train", "test"] })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
    });
    await expect(
      admin.collections.create({ splitId, providerId, parts: ["train"], taskIds: [parts.train[3] ?? "", testTask] }),
    ).rejects.toMatchObject({ code: "PRECONDITION_FAILED", message: expect.stringContaining(testTask) });
    await expect(collectableTasks(t.db, { splitId, parts: ["dev"], taskIds: [testTask] })).rejects.toThrow(
      /test-split tasks never reach a teacher/,
    );
    expect(seen.length).toBe(before);
    expect(seen.some((r) => parts.test.includes(r.task))).toBe(false);
  });

  it("never puts the API key in an API response or a log line", async () => {
    const wire = await trpcHttp(s.url, "providers.list", { headers: {} });
    expect(JSON.stringify(wire.body)).not.toContain(KEY);
    expect(responses.length).toBeGreaterThan(10);
    for (const r of responses) expect(JSON.stringify(r)).not.toContain(KEY);
    expect(s.logs.length).toBeGreaterThan(0);
    expect(s.logs.some((l) => l.includes("collection finished"))).toBe(true);
    for (const l of s.logs) expect(l).not.toContain(KEY);
  });
});
