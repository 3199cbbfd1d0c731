import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq, inArray } from "drizzle-orm";
import { join } from "node:path";
import {
  GradeBatchJobPayload,
  GradeBatchJobResult,
  JOB_CONTRACTS,
  gradeBatchPayloads,
  type CandidateFile,
  type GradeResult,
  type TaskSpec,
} from "@agentlab/core";
import { createSplit, importPool, schema } from "@agentlab/db";
import { Grader, type GradeOptions } from "../../apps/agent/src/grading/grader";
import { ReferenceIds } from "../../apps/agent/src/grading/reference-ids";
import { makeGradeHandler } from "../../apps/agent/src/jobs/grade";
import { makeGradeBatchHandler } from "../../apps/agent/src/jobs/grade-batch";
import { awaitCollection } from "../../apps/web/server/teacher/collection-runs";
import { callerAs, type Caller } from "./helpers/callers";
import { startInProcessAgent, startTestServer, waitFor, type TestServer } from "./helpers/server";

// Batched grading with the real grader (bwrap, the isolated judge) through the real
// queue and an in-process agent over socket.io: a batch gives the verdicts one-by-one grading
// gives; teacher collections are graded in batches, and a candidate whose grading failed in its
// batch is retried alone; a canceled batch stops and reports the items it graded.

const task = (i: number): TaskSpec => ({
  id: `b${i}`,
  source_group: `grp${i}`,
  language: "python",
  instruction: `Fix task b${i}.`,
  metadata: {},
  files: [{ path: "solution.py", role: "main", content: `def f(x):\n    return x + ${i - 1}\n` }],
  public_tests: [
    {
      path: "test_public.py",
      content: "from solution import f\n\ndef test_type():\n    assert isinstance(f(1), int)\n",
    },
  ],
  hidden_tests: [
    { path: "test_hidden.py", content: `from solution import f\n\ndef test_value():\n    assert f(1) == ${1 + i}\n` },
  ],
  reference: [{ path: "solution.py", content: `def f(x):\n    return x + ${i}\n` }],
});
const TASKS = Array.from({ length: 6 }, (_, i) => task(i + 1));
const file = (content: string): CandidateFile[] => [{ path: "solution.py", content }];
const LOOP = "def f(x):\n    while True:\n        pass\n";

/** The real grader; the first candidate grading of `flaky`'s task ends in infra_error (the grader "lost its sandbox"). */
class FlakyGrader extends Grader {
  flaky: string | null = null;
  readonly failed: string[] = [];
  override async grade(t: TaskSpec, candidate: CandidateFile[], opts: GradeOptions): Promise<GradeResult> {
    const result = await super.grade(t, candidate, opts);
    if (opts.expectedIds === null || t.id !== this.flaky || this.failed.includes(t.id)) return result;
    this.failed.push(t.id);
    return { ...result, verdict: "infra_error", reasons: ["simulated: the sandbox vanished"] };
  }
}

let srv: TestServer;
let grader: FlakyGrader;
let agent: Awaited<ReturnType<typeof startInProcessAgent>>;
let caller: Caller;
let splitId = "";

beforeAll(async () => {
  srv = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
  grader = new FlakyGrader(
    {
      backend: "bwrap",
      graderDir: join(process.cwd(), "apps/agent/grader"),
      uid: 65534,
      gid: 65534,
      scratchDir: "/tmp/agentlab-test-scratch",
    },
    { workers: 2, limits: { wallTimeoutS: 10, testTimeoutS: 2, memoryMb: 256, pids: 48 } },
  );
  const refs = new ReferenceIds(grader);
  agent = await startInProcessAgent(srv, "grader", {
    pollMs: 200,
    handlers: { grade: makeGradeHandler(grader, refs), "grade-batch": makeGradeBatchHandler(grader, refs) },
  });
  const db = srv.app.services.db;
  caller = await callerAs(srv.app.services, "admin", "b@lab.test");
  const imp = await importPool(db, {
    name: "batch",
    lines: [new TextEncoder().encode(TASKS.map((x) => JSON.stringify(x)).join("\n"))],
  });
  if (!imp.ok) throw new Error("import failed");
  splitId = (await createSplit(db, { poolId: imp.poolId, seed: 1, devRatio: 0, testRatio: 0.2 })).split.id;
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  grader?.close();
  await srv?.close();
});

const jobRows = (ids: string[]) => srv.app.services.db.select().from(schema.jobs).where(inArray(schema.jobs.id, ids));
const finished = (ids: string[]) =>
  waitFor(
    async () => {
      const rows = await jobRows(ids);
      return rows.every((r) => ["succeeded", "failed", "canceled"].includes(r.state)) && rows;
    },
    180_000,
    200,
  );

describe("grade-batch jobs with the real grader", () => {
  it("give the verdicts one-by-one grading gives: passing, failing, broken and looping candidates", async () => {
    const [t1, t2, t3] = TASKS;
    if (!t1 || !t2 || !t3) throw new Error("no tasks");
    const items = [t1, t2, t3].flatMap((t, n) => [
      { key: `${t.id}:ref`, task: t, candidate: t.reference, isolation: "judge" as const },
      { key: `${t.id}:buggy`, task: t, candidate: t.files, isolation: "judge" as const },
      { key: `${t.id}:syntax`, task: t, candidate: file("def f(x) return x\n"), isolation: "judge" as const },
      { key: `${t.id}:str`, task: t, candidate: file("def f(x):\n    return str(x)\n"), isolation: "judge" as const },
      { key: `${t.id}:exit`, task: t, candidate: file("import os\nos._exit(3)\n"), isolation: "judge" as const },
      ...(n === 0 ? [{ key: `${t.id}:loop`, task: t, candidate: file(LOOP), isolation: "judge" as const }] : []),
    ]);
    const [payload] = gradeBatchPayloads(items);
    if (!payload) throw new Error("no payload");
    expect(payload.tasks).toHaveLength(3); // each task once, for its 5–6 candidates
    const { queue } = srv.app.services;
    const batch = await queue.enqueue({ type: "grade-batch", payload, maxAttempts: 1, maxDurationS: 900 });
    const singles = await queue.enqueueMany(
      items.map((i) => ({
        type: "grade" as const,
        payload: { task: i.task, candidate: i.candidate },
        maxDurationS: 900,
      })),
    );
    const [b] = await finished([batch.id]);
    expect(b?.state).toBe("succeeded");
    const batched = new Map(
      GradeBatchJobResult.parse(b?.result).items.map((i) => [i.key, i.status === "graded" ? i.grade.verdict : "error"]),
    );
    const rows = new Map((await finished(singles.map((j) => j.id))).map((r) => [r.id, r]));
    const single = new Map(
      items.map((it, n) => {
        const row = rows.get(singles[n]?.id ?? "");
        const r = JOB_CONTRACTS.grade.result.safeParse(row?.result);
        return [it.key, r.success ? r.data.verdict : `job ${row?.state}`];
      }),
    );
    expect(Object.fromEntries(batched)).toEqual(Object.fromEntries(single));
    // The positive control: the candidates really differ (a grader that said one thing would match too).
    expect(batched.get("b1:ref")).toBe("pass");
    expect(batched.get("b1:buggy")).toBe("fail_hidden");
    expect(batched.get("b1:syntax")).toBe("fail_syntax");
    expect(batched.get("b1:str")).toBe("fail_public");
    expect(batched.get("b1:loop")).toBe("timeout");
    expect(b?.progress).toMatchObject({ done: items.length, total: items.length });
  });

  it("grades a teacher collection in batches and retries the candidate its batch failed alone", async () => {
    const oracle = await caller.providers.create({
      name: "oracle",
      kind: "reference",
      model: "reference",
      extraParams: {},
    });
    const c = await caller.collections.create({ splitId, providerId: oracle.id, parts: ["train"] });
    const train = await srv.app.services.db
      .select()
      .from(schema.splitAssignments)
      .where(and(eq(schema.splitAssignments.splitId, splitId), eq(schema.splitAssignments.part, "train")));
    grader.flaky = [...train.map((r) => r.taskId)].sort()[0] ?? null;
    await awaitCollection(srv.app.services, c.id);
    const done = await waitFor(
      async () => {
        const x = await caller.collections.byId({ id: c.id });
        return x.state === "done" && x;
      },
      120_000,
      200,
    );
    // Every oracle answer passes, the flaky one included (its retry graded it).
    expect(done.verdicts).toEqual({ pass: done.samplesTotal });
    expect(grader.failed).toEqual([grader.flaky]);
    const jobs = await srv.app.services.db.select().from(schema.jobs);
    const batches = jobs.filter((j) => j.type === "grade-batch" && GradeBatchJobPayload.safeParse(j.payload).success);
    const mine = batches.filter((j) =>
      GradeBatchJobPayload.parse(j.payload).items.some((i) => i.candidate[0]?.content.includes("return x +")),
    );
    expect(mine.length).toBeGreaterThanOrEqual(1);
    // Alone: exactly one single grade job, for the flaky task's candidate only (the others kept their batch verdicts).
    const alone = jobs.filter((j) => j.type === "grade" && j.dedupeKey?.startsWith("grade:candidate:"));
    expect(alone.map((j) => JOB_CONTRACTS.grade.payload.parse(j.payload).task.id)).toEqual([grader.flaky]);
    expect(done.samplesTotal).toBeGreaterThan(1);
  });

  it("stops a canceled batch between items and reports the items it graded", async () => {
    const t = TASKS[5];
    if (!t) throw new Error("no task");
    // Two sandboxes: the first two items start at once; the loops hold them until the cancel.
    const items = [
      { key: "quick", task: t, candidate: t.reference, isolation: "judge" as const },
      { key: "loop1", task: t, candidate: file(LOOP), isolation: "judge" as const },
      ...Array.from({ length: 6 }, (_, i) => ({
        key: `later${i}`,
        task: t,
        candidate: file(`${LOOP}# ${i}\n`),
        isolation: "judge" as const,
      })),
    ];
    const [payload] = gradeBatchPayloads(items);
    if (!payload) throw new Error("no payload");
    const job = await srv.app.services.queue.enqueue({
      type: "grade-batch",
      payload,
      maxAttempts: 1,
      maxDurationS: 900,
    });
    await waitFor(
      async () => {
        const [r] = await jobRows([job.id]);
        const p = r?.progress as { done?: number } | null;
        return (p?.done ?? 0) >= 1 && r;
      },
      60_000,
      100,
    );
    await srv.app.services.queue.cancel(job.id);
    const [row] = await finished([job.id]);
    expect(row?.state).toBe("canceled");
    const parsed = GradeBatchJobResult.safeParse(row?.result);
    expect(parsed.success).toBe(true);
    const reported = parsed.success ? parsed.data.items : [];
    expect(reported.find((i) => i.key === "quick")).toMatchObject({ status: "graded", grade: { verdict: "pass" } });
    // Not every item was started: the batch stopped instead of grading the loops one after another.
    expect(reported.length).toBeLessThan(items.length);
  });
});
