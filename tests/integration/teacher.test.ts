import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { sql } from "drizzle-orm";
import {
  GradeBatchJobPayload,
  GradeJobPayload,
  formatAnswer,
  parseAnswer,
  type GradeResult,
  type GradeVerdict,
  type TaskSpec,
} from "@agentlab/core";
import {
  claimJob,
  collectableTasks,
  createApiToken,
  createEnrollmentToken,
  createSplit,
  enrollAgent,
  finishAttempt,
  importPool,
  queryRows,
  schema,
  setDatasetTokenCounts,
  setPrice,
} from "@agentlab/db";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { startTestApp, trpcHttp, viewerOf, type Caller, type TestApp } from "./auth-helpers";
import { awaitCollection } from "../../apps/web/server/teacher/runner";
import { main as cli } from "../../apps/web/cli/main";

// Teacher collection end to end: a local OpenAI-compatible server, the real app and Postgres, and
// this file playing the agent that claims `grade` jobs (verdict: does the candidate equal the reference).

const KEY = "sk-test-TEACHER-KEY-7f3a9c0d2e";
const MODEL = "teach-1";
type Mode = "normal" | "429once" | "500always" | "malformed" | "slow";

let t: TestDb;
let s: TestApp;
let admin: Caller;
let fake: Server;
let fakeUrl = "";
const seen: { task: string; auth: string; body: string }[] = [];
const modes = new Map<string, Mode>();
const hits = new Map<string, number>();
const responses: unknown[] = [];
const keep = <T>(v: T): T => (responses.push(v), v);
let splitId = "";
const parts: Record<"train" | "dev" | "test", string[]> = { train: [], dev: [], test: [] };
let agentId = "";
let grader: ReturnType<typeof setInterval> | undefined;
let failTask: string | null = null; // a task whose candidates the grading agent fails (replay test)

const task = (i: number): TaskSpec => ({
  id: `t${String(i).padStart(2, "0")}`,
  source_group: `g${i}`,
  language: "python",
  instruction: `Fix task t${String(i).padStart(2, "0")}.`,
  files: [
    { path: "solution.py", role: "main", content: `def f():\n    return ${i} - 1\n` },
    { path: "util.py", role: "dependency", content: "X = 1\n" },
  ],
  public_tests: [
    {
      path: "test_public.py",
      content: "from solution import f\n\ndef test_type():\n    assert isinstance(f(), int)\n",
    },
  ],
  hidden_tests: [
    {
      path: "test_hidden.py",
      content: `from solution import f\n\ndef test_value():\n    assert f() == ${i}  # HIDDEN_MARKER\n`,
    },
  ],
  reference: [{ path: "solution.py", content: `def f():\n    return ${i}  # REFERENCE_MARKER\n` }],
  metadata: {},
});
const TASKS = Array.from({ length: 12 }, (_, i) => task(i));
const refOf = (id: string) => TASKS.find((x) => x.id === id)?.reference[0]?.content ?? "";

function startFake(): Promise<string> {
  fake = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      const id = /Fix task (t\d+)\./.exec(body)?.[1] ?? "?";
      seen.push({ task: id, auth: req.headers.authorization ?? "", body });
      const n = (hits.get(id) ?? 0) + 1;
      hits.set(id, n);
      const mode = modes.get(id) ?? "normal";
      const send = (status: number, json: unknown) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(json));
      if (mode === "500always") return send(500, { error: { message: "boom", type: "server_error" } });
      if (mode === "slow")
        return void setTimeout(
          () => send(200, { id: "c", object: "chat.completion", created: 1, model: MODEL, choices: [] }),
          1500,
        );
      if (mode === "429once" && n === 1) return send(429, { error: { message: "slow down", type: "rate_limit" } });
      const content =
        mode === "malformed"
          ? "I think you should return i instead."
          : `Here is the fix.\n\n${formatAnswer([{ path: "solution.py", content: refOf(id) }])}`;
      send(200, {
        id: "c1",
        object: "chat.completion",
        created: 1,
        model: MODEL,
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 },
      });
    });
  });
  return new Promise((resolve) =>
    fake.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(fake.address() as { port: number }).port}/v1`)),
  );
}

// What the simulated grader says: a pass when the candidate is the task's reference.
function decide(taskId: string, candidate: { content: string }[]): GradeResult {
  const pass = candidate[0]?.content === refOf(taskId) && taskId !== failTask;
  const verdict: GradeVerdict = pass ? "pass" : "fail_hidden";
  return {
    verdict,
    backend: "process",
    isolation: "judge",
    unsandboxed: true,
    graderVersion: "test",
    reasons: pass ? [] : ["test_hidden.py::test_value: failed"],
    tests: [],
    ignoredCandidatePaths: [],
    exitCode: 1,
    signal: null,
    stdoutTail: "",
    stderrTail: "",
    candidateOutputTail: "",
    wallTimeMs: 1,
    cpuTimeMs: null,
    peakMemoryKb: null,
  };
}

// The agent side of grading, over the real queue: claim, decide, report a GradeResult.
async function gradeQueued(): Promise<void> {
  for (;;) {
    const job = await claimJob(t.db, {
      agentId,
      labels: [],
      gpuCount: 0,
      gpuMemoryMb: 0,
      sandbox: "process",
      leaseTtlMs: 30_000,
    });
    if (!job) return;
    // A batch (issue 17) gets one verdict per item, a single grade job (a retry alone) one.
    let result: Record<string, unknown>;
    if (job.type === "grade-batch") {
      const batch = GradeBatchJobPayload.parse(job.payload);
      const taskIds = new Map(batch.tasks.map((x) => [x.fingerprint, x.task.id]));
      result = {
        items: batch.items.map((it) => ({
          key: it.key,
          status: "graded",
          grade: { ...decide(taskIds.get(it.task) ?? "", it.candidate), expectedTestIds: [] },
        })),
      };
    } else {
      const p = GradeJobPayload.parse(job.payload);
      result = decide(p.task.id, p.candidate);
    }
    await finishAttempt(t.db, {
      jobId: job.jobId,
      attemptId: job.attemptId,
      reason: "succeeded",
      exitCode: 0,
      signal: null,
      result,
      error: null,
    });
  }
}

async function waitFor<T>(fn: () => Promise<T | null | undefined | false>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  t = await createTestDatabase();
  s = await startTestApp(t);
  fakeUrl = await startFake();
  const [u] = await t.db
    .insert(schema.users)
    .values({ email: "admin@lab.test", name: "A", passwordHash: "x", role: "admin" })
    .returning();
  if (!u) throw new Error("no user");
  admin = s.caller(viewerOf(u));
  const imp = await importPool(t.db, {
    name: "teach",
    lines: [new TextEncoder().encode(TASKS.map((x) => JSON.stringify(x)).join("\n"))],
  });
  if (!imp.ok) throw new Error(JSON.stringify(imp.problems));
  const { split } = await createSplit(t.db, { poolId: imp.poolId, seed: 3, devRatio: 0.2, testRatio: 0.25 });
  splitId = split.id;
  const rows = await queryRows<{ task_id: string; part: "train" | "dev" | "test" }>(
    t.db,
    sql`select task_id, part from split_assignments where split_id = ${splitId} order by task_id`,
  );
  for (const r of rows) parts[r.part].push(r.task_id);
  expect(parts.train.length).toBeGreaterThanOrEqual(4);
  expect(parts.test.length).toBeGreaterThanOrEqual(1);
  const [a, b, c] = parts.train;
  modes
    .set(a ?? "", "429once")
    .set(b ?? "", "500always")
    .set(c ?? "", "malformed");
  await setPrice(t.db, { model: MODEL, inputPerMTok: 1000, outputPerMTok: 2000 }); // 100 in + 50 out = $0.20 a call
  const { token } = await createEnrollmentToken(t.db, { name: "grader", ttlS: 60 });
  ({ agentId } = await enrollAgent(t.db, token, "grader"));
  grader = setInterval(() => void gradeQueued().catch(() => {}), 100);
});

afterAll(async () => {
  if (grader) clearInterval(grader);
  await s?.close();
  await new Promise((r) => fake?.close(r));
  await t?.drop();
});

let providerId = "";
let col1 = "";

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
    col1 = col.id;
    await awaitCollection(col.id);
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
    await awaitCollection(col.id);
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
    await awaitCollection(col.id);
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
    await awaitCollection(col.id);
    modes.delete(slow);
    const done = keep(await admin.collections.byId({ id: col.id }));
    // No usable sample: the run ends failed (issue 20), with the reason.
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

  it("turns passing candidates into an immutable, hashed snapshot; replay drops a sample that no longer passes", async () => {
    const d = keep(await admin.datasets.create({ name: "v1", splitId, collectionIds: [col1] }));
    const n = parts.train.length;
    expect(d).toMatchObject({ sampleCount: n - 2, taskCount: n - 2, oracleSamples: 0 });
    const exp = keep(await admin.datasets.export({ id: d.id }));
    expect(createHash("sha256").update(exp.jsonl).digest("hex")).toBe(d.hash);
    expect(
      readFileSync(join(s.app.services.env.AGENTLAB_DATA_DIR, "artifacts", d.hash.slice(0, 2), d.hash), "utf8"),
    ).toBe(exp.jsonl); // agents fetch these bytes
    const lines = exp.jsonl
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { messages: { role: string; content: string }[] });
    expect(lines).toHaveLength(n - 2);
    expect(lines[0]?.messages.map((m) => m.role)).toEqual(["system", "user", "assistant"]);
    expect(parseAnswer(lines[0]?.messages[2]?.content ?? "", ["solution.py"]).ok).toBe(true);
    expect(exp.jsonl).not.toContain("HIDDEN_MARKER");
    failTask = parts.train[0] ?? null; // e.g. a grader change now fails this one
    const r = await admin.datasets.replay({ id: d.id });
    expect(r.jobs).toBe(n - 2);
    const replay = keep(
      await waitFor(async () => {
        const x = await admin.datasets.replayStatus({ id: r.id });
        return x.state === "done" && x;
      }),
    );
    failTask = null;
    expect(replay.kept).toBe(n - 3);
    expect(replay.dropped).toEqual([expect.objectContaining({ taskKey: parts.train[0], verdict: "fail_hidden" })]);
    const verified = keep(await admin.datasets.byId({ id: replay.resultDatasetId ?? "" }));
    expect(verified).toMatchObject({ parentId: d.id, sampleCount: n - 3 });
    expect(verified.hash).not.toBe(d.hash);
    expect((await admin.datasets.byId({ id: d.id })).hash).toBe(d.hash); // the original is untouched
    // Immutable in the database itself, not only by convention.
    await expect(
      queryRows(t.db, sql`update sft_samples set task_key = 'x' where dataset_id = ${d.id}`),
    ).rejects.toThrow();
    await expect(queryRows(t.db, sql`delete from sft_samples where dataset_id = ${d.id}`)).rejects.toThrow();
    await expect(queryRows(t.db, sql`update sft_datasets set sample_count = 0 where id = ${d.id}`)).rejects.toThrow();
    const counts = {
      model: "tiny",
      supervisedTokens: 10,
      totalTokens: 30,
      maxTokens: 12,
      chatTemplateSha256: "0".repeat(64),
    };
    expect(await setDatasetTokenCounts(t.db, d.id, counts)).toBe(true);
    expect(await setDatasetTokenCounts(t.db, d.id, { ...counts, supervisedTokens: 11 })).toBe(false);
    await expect(
      queryRows(t.db, sql`update sft_datasets set token_counts = null where id = ${d.id}`),
    ).rejects.toThrow();
  });

  it("runs the reference oracle through the CLI and exports its dataset", async () => {
    const ref = keep(
      await admin.providers.create({ name: "oracle", kind: "reference", model: "reference", extraParams: {} }),
    );
    const [u] = await queryRows<{ id: string }>(t.db, sql`select id from users limit 1`);
    const { token } = await createApiToken(t.db, { userId: u?.id ?? "", name: "cli" });
    const dir = mkdtempSync(join(tmpdir(), "agentlab-teacher-"));
    const run = async (...argv: string[]) => {
      const out = new PassThrough();
      let text = "";
      out.on("data", (c: Buffer) => (text += c.toString("utf8")));
      const code = await cli(["--server", s.url, "--token", token, ...argv], { out, err: out, cwd: dir });
      return { code, text };
    };
    try {
      // Train only: the dataset layer refuses dev and test tasks (issue 12).
      const c = await run("collect", "--split", splitId, "--provider", ref.id, "--parts", "train", "--poll-ms", "100");
      expect(c.text).toContain("reference ORACLE");
      expect(c.code).toBe(0);
      const colId = /collection ([0-9a-f-]{36})/.exec(c.text)?.[1] ?? "";
      expect(c.text).toContain(`verdicts: pass=${parts.train.length}`);
      const d = await run("datasets", "create", "--split", splitId, "--collection", colId, "--name", "oracle");
      expect(d.code).toBe(0);
      const id = /dataset ([0-9a-f-]{36})/.exec(d.text)?.[1] ?? "";
      const e = await run("datasets", "export", id, "--out", "o.jsonl");
      expect(e.code).toBe(0);
      const bytes = readFileSync(join(dir, "o.jsonl"));
      expect(e.text).toContain(`sha256 ${createHash("sha256").update(bytes).digest("hex")}`);
      expect(e.text).toContain("reference ORACLE");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
