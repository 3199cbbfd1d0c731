import { createServer, type Server } from "node:http";
import { GradeBatchJobPayload, GradeJobPayload, formatAnswer, type GradeResult, type TaskSpec } from "@agentlab/core";
import { sql } from "drizzle-orm";
import {
  claimJob,
  createEnrollmentToken,
  createSplit,
  enrollAgent,
  finishAttempt,
  importPool,
  queryRows,
  schema,
  setPrice,
} from "@agentlab/db";
import { startTestApp, viewerOf, type Caller, type TestApp } from "../auth-helpers";
import { awaitCollection } from "../../../apps/web/server/teacher/collection-runs";
import { createTestDatabase, type TestDb } from "./db";
import { gradeResult } from "./payloads";
import { waitFor } from "./server";

// The teacher test's world: tasks whose reference returns i, a local OpenAI-compatible provider
// that answers with the reference (or misbehaves per task, on demand), and an agent that claims
// `grade` jobs over the real queue and passes exactly the reference.

export const TEACHER_MODEL = "teach-1";
export type ProviderMode = "normal" | "429once" | "500always" | "malformed" | "slow" | "wrong";

export const teacherTask = (i: number): TaskSpec => ({
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

export type FakeProvider = {
  url: string;
  /** Every request: the task it asked about, its Authorization header, its body. */
  seen: { task: string; auth: string; body: string }[];
  modes: Map<string, ProviderMode>;
  hits: Map<string, number>;
  close(): Promise<void>;
};

/** A chat-completions server answering each task with its reference, or as `modes` says. */
export async function startFakeProvider(refOf: (taskId: string) => string): Promise<FakeProvider> {
  const seen: FakeProvider["seen"] = [];
  const modes = new Map<string, ProviderMode>();
  const hits = new Map<string, number>();
  const server: Server = createServer((req, res) => {
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
          () => send(200, { id: "c", object: "chat.completion", created: 1, model: TEACHER_MODEL, choices: [] }),
          1500,
        );
      if (mode === "429once" && n === 1) return send(429, { error: { message: "slow down", type: "rate_limit" } });
      // "wrong": a parseable answer that returns an int (the public test passes) but not i.
      const content =
        mode === "malformed"
          ? "I think you should return i instead."
          : `Here is the fix.\n\n${formatAnswer([{ path: "solution.py", content: mode === "wrong" ? refOf(id).replace("return ", "return 1 + ") : refOf(id) }])}`;
      send(200, {
        id: "c1",
        object: "chat.completion",
        created: 1,
        model: TEACHER_MODEL,
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 },
      });
    });
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
  );
  return {
    url: `http://127.0.0.1:${port}/v1`,
    seen,
    modes,
    hits,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** The contract's grade result (payloads.ts), passing or failing the hidden test (the public one passes). */
const verdictResult = (pass: boolean): GradeResult => ({
  ...gradeResult(),
  verdict: pass ? "pass" : "fail_hidden",
  reasons: pass ? [] : ["test_hidden.py::test_value: failed"],
  tests: [
    { id: "test_public.py::test_type", layer: "public", outcome: "passed", message: "" },
    { id: "test_hidden.py::test_value", layer: "hidden", outcome: pass ? "passed" : "failed", message: "" },
  ],
  exitCode: 1,
});

/**
 * Claims every queued grade (and grade-batch) job for `agentId` and finishes it: a pass when the
 * candidate is the task's reference and `passes(taskId)` holds.
 */
export async function gradeQueued(
  db: TestDb["db"],
  agentId: string,
  passes: (taskId: string, content: string | undefined) => boolean,
): Promise<void> {
  for (;;) {
    const job = await claimJob(db, {
      agentId,
      labels: [],
      gpuCount: 0,
      gpuMemoryMb: 0,
      sandbox: "process",
      leaseTtlMs: 30_000,
    });
    if (!job) return;
    // A batch gets one verdict per item, a single grade job (a retry alone) one.
    let result: Record<string, unknown>;
    if (job.type === "grade-batch") {
      const batch = GradeBatchJobPayload.parse(job.payload);
      const taskIds = new Map(batch.tasks.map((x) => [x.fingerprint, x.task.id]));
      result = {
        items: batch.items.map((it) => ({
          key: it.key,
          status: "graded",
          grade: verdictResult(passes(taskIds.get(it.task) ?? "", it.candidate[0]?.content)),
        })),
      };
    } else {
      const p = GradeJobPayload.parse(job.payload);
      // A grade job's result as its contract has it (JOB_CONTRACTS.grade.result).
      result = verdictResult(passes(p.task.id, p.candidate[0]?.content));
    }
    await finishAttempt(db, {
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

export type TeacherWorld = {
  t: TestDb;
  s: TestApp;
  admin: Caller;
  fake: FakeProvider;
  splitId: string;
  parts: Record<"train" | "dev" | "test", string[]>;
  refOf(taskId: string): string;
  /** From now on the grading agent fails this task's candidates (null: back to the reference rule). */
  failTask(taskId: string | null): void;
  /** A provider on the fake (named `name`, key `apiKey`) and its graded collection of the train tasks; the collection's id once done. */
  collectTrain(name: string, apiKey: string): Promise<string>;
  close(): Promise<void>;
};

/** A database, the real app, an admin caller, 12 tasks split 3/… ways, the fake provider and a grading agent. */
export async function startTeacherWorld(): Promise<TeacherWorld> {
  const tasks = Array.from({ length: 12 }, (_, i) => teacherTask(i));
  const refOf = (id: string) => tasks.find((x) => x.id === id)?.reference[0]?.content ?? "";
  const t = await createTestDatabase();
  const s = await startTestApp(t);
  const fake = await startFakeProvider(refOf);
  const [u] = await t.db
    .insert(schema.users)
    .values({ email: "admin@lab.test", name: "A", passwordHash: "x", role: "admin" })
    .returning();
  if (!u) throw new Error("no user");
  const imp = await importPool(t.db, {
    name: "teach",
    lines: [new TextEncoder().encode(tasks.map((x) => JSON.stringify(x)).join("\n"))],
  });
  if (!imp.ok) throw new Error(JSON.stringify(imp.problems));
  const { split } = await createSplit(t.db, { poolId: imp.poolId, seed: 3, devRatio: 0.2, testRatio: 0.25 });
  const rows = await queryRows<{ task_id: string; part: "train" | "dev" | "test" }>(
    t.db,
    sql`select task_id, part from split_assignments where split_id = ${split.id} order by task_id`,
  );
  const parts: TeacherWorld["parts"] = { train: [], dev: [], test: [] };
  for (const r of rows) parts[r.part].push(r.task_id);
  if (parts.train.length < 4 || parts.test.length < 1) throw new Error(`unexpected split ${JSON.stringify(parts)}`);
  await setPrice(t.db, { model: TEACHER_MODEL, inputPerMTok: 1000, outputPerMTok: 2000 }); // 100 in + 50 out = $0.20 a call
  const { token } = await createEnrollmentToken(t.db, { name: "grader", ttlS: 60 });
  const { agentId } = await enrollAgent(t.db, token, "grader");
  const admin = s.caller(viewerOf(u));
  let failing: string | null = null;
  const passes = (taskId: string, content: string | undefined) => content === refOf(taskId) && taskId !== failing;
  const grader = setInterval(() => void gradeQueued(t.db, agentId, passes).catch(() => {}), 100);
  return {
    t,
    s,
    admin,
    fake,
    splitId: split.id,
    parts,
    refOf,
    failTask: (id) => (failing = id),
    collectTrain: async (name, apiKey) => {
      const p = await admin.providers.create({
        name,
        kind: "openai",
        baseUrl: fake.url,
        model: TEACHER_MODEL,
        apiKey,
        extraParams: {},
      });
      const col = await admin.collections.create({
        splitId: split.id,
        providerId: p.id,
        parts: ["train"],
        params: { temperature: 0.8, top_p: 1, max_tokens: 512 },
      });
      await awaitCollection(s.app.services, col.id);
      await waitFor(async () => (await admin.collections.byId({ id: col.id })).state === "done");
      return col.id;
    },
    close: async () => {
      clearInterval(grader);
      await s.close();
      await fake.close();
      await t.drop();
    },
  };
}

// The one polling waiter of the integration helpers (50 ms steps, 30 s by default).
export { waitFor };
