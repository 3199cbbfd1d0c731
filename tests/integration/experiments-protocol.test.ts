import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import { listGenerations, queryRows, reportByExperiment, schema } from "@agentlab/db";
import type { TaskSpec } from "@agentlab/core";
import { sql } from "drizzle-orm";
import { createExperimentRunner } from "../../apps/web/server/experiments/runner";
import { MAX_GRADE_ATTEMPTS } from "../../apps/web/server/experiments/grade-batches";
import { resumeExperiment } from "../../apps/web/server/experiments/service";
import { createDataset } from "../../apps/web/server/teacher/datasets";
import type { Services } from "../../apps/web/server/services";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { referenceCollection } from "./helpers/reference-collection";
import { storedReport } from "./helpers/reports";
import {
  baseConfig,
  drive,
  makeAgent,
  makeServices,
  makeSplit,
  received,
  startExperiment,
  type Behaviour,
} from "./experiments-harness";

// Train-only SFT data (dataset layer and database), infra errors that never count as
// model failures, and one protocol checked for every evaluation. The server side is real; the
// agent is the harness's simulated one, so each failure is injected exactly where it matters.

let t: TestDb;
let s: Services;
let splitId: string;
let tasks: Map<string, TaskSpec>;
let fit: Awaited<ReturnType<typeof makeAgent>>;
const part = new Map<string, string>();
beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  ({ splitId, tasks } = await makeSplit(t.db));
  fit = await makeAgent(t.db);
  for (const r of await t.db.select().from(schema.splitAssignments).where(eq(schema.splitAssignments.splitId, splitId)))
    part.set(r.taskId, r.part);
});
afterAll(async () => t?.drop());

const ids = (p: string) =>
  [...part]
    .filter(([, v]) => v === p)
    .map(([k]) => k)
    .sort();
const learns: Behaviour = { fixes: (m) => m.startsWith("s1e") };
// drizzle wraps the database's error; its message (from our triggers) is the cause's.
const dbError = (p: Promise<unknown>) =>
  p.then(
    () => "no error",
    (e: { cause?: { message?: string }; message?: string }) => String(e.cause?.message ?? e.message),
  );
const experimentRow = async (id: string) =>
  (await t.db.select().from(schema.experiments).where(eq(schema.experiments.id, id)))[0];

describe("SFT data comes from train tasks only", () => {
  // A collection with one passing candidate per given task, written as the teacher runner would.
  const collectionOf = (taskIds: string[]) =>
    referenceCollection(t.db, { splitId, tasks, taskIds, parts: ["train", "dev", "test"] });

  it("the dataset layer refuses dev and test tasks with a clear error, and builds from train tasks (positive control)", async () => {
    const [train0, train1] = ids("train");
    const [dev0] = ids("dev");
    const [test0] = ids("test");
    const ok = await createDataset(s, {
      name: "train only",
      splitId,
      collectionIds: [await collectionOf([train0 ?? "", train1 ?? ""])],
    });
    expect(ok.sampleCount).toBe(2);
    await expect(
      createDataset(s, { name: "with dev", splitId, collectionIds: [await collectionOf([train0 ?? "", dev0 ?? ""])] }),
    ).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringContaining(`${dev0} (dev)`),
    });
    await expect(
      createDataset(s, { name: "with test", splitId, collectionIds: [await collectionOf([test0 ?? ""])] }),
    ).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringContaining(`${test0} (test)`),
    });
  });

  it("the database refuses an SFT sample of a dev or test task whatever code path writes it (train insert as positive control)", async () => {
    const [ds] = await queryRows<{ id: string; candidate_id: string }>(
      t.db,
      sql`select d.id, s.candidate_id from sft_datasets d join sft_samples s on s.dataset_id = d.id where d.split_id = ${splitId} limit 1`,
    );
    if (!ds) throw new Error("no dataset from the previous test");
    const insert = (taskId: string, ordinal: number) =>
      queryRows(
        t.db,
        sql`insert into sft_samples (dataset_id, ordinal, hash, candidate_id, task_row_id, task_key, oracle, messages)
        select ${ds.id}, ${ordinal}, 'h', ${ds.candidate_id}, a.task_row_id, a.task_id, true, '[]'::jsonb from split_assignments a where a.split_id = ${splitId} and a.task_id = ${taskId}`,
      );
    await expect(insert(ids("train")[5] ?? "", 100)).resolves.toBeDefined();
    expect(await dbError(insert(ids("dev")[0] ?? "", 101))).toMatch(/train tasks only: task \S+ is dev in the split/);
    expect(await dbError(insert(ids("test")[0] ?? "", 102))).toMatch(/train tasks only: task \S+ is test in the split/);
  });
});

describe("infra errors never count as model failures", () => {
  it("retries a failed grade job, excludes and counts a pair still without a verdict, and still reports", async () => {
    const [flaky, lost] = ids("test");
    const attempts = new Map<string, number>();
    const behaviour: Behaviour = {
      ...learns,
      gradeInfraError: (model, taskId) => {
        const k = `${model}:${taskId}`;
        attempts.set(k, (attempts.get(k) ?? 0) + 1);
        if (model === "base" && taskId === lost) return true; // never graded
        return model === "base" && taskId === flaky && (attempts.get(k) ?? 0) === 1; // graded on the second try
      },
    };
    const id = await startExperiment(s, baseConfig(splitId, { name: "lost grade", seeds: [1] }));
    const end = await drive(t.db, createExperimentRunner(s, { autoStart: false }), id, fit, tasks, behaviour);
    expect(end).toEqual({ state: "succeeded", error: null });
    expect(attempts.get(`base:${lost}`)).toBe(MAX_GRADE_ATTEMPTS);
    expect(attempts.get(`base:${flaky}`)).toBe(2);
    const gens = await listGenerations(t.db, { experimentId: id, split: "test", modelKey: "base" });
    expect(gens.find((g) => g.taskId === lost)).toMatchObject({
      gradeState: "no_verdict",
      gradeJobIds: expect.any(Array),
    });
    expect(gens.find((g) => g.taskId === flaky)?.gradeState).toBe("graded");
    // No second generation: one generate job per model and split.
    const genJobs = await t.db
      .select()
      .from(schema.jobs)
      .where(and(eq(schema.jobs.experimentId, id), eq(schema.jobs.type, "generate")));
    expect(genJobs.length).toBe(1 + 2 + 2); // dev: base + 2 epochs; test: base + the seed's best
    const report = (await storedReport(t.db, id)).body;
    const test = report.summary.find((r) => r.split === "test");
    expect(test?.n).toBe(ids("test").length - 1);
    expect(report.excluded.find((e) => e.split === "test" && e.comparison.startsWith("base vs"))).toMatchObject({
      count: 1,
      taskIds: [lost],
      note: "1 pair excluded: no verdict",
    });
    expect(report.tasks.some((r) => r.taskId === lost)).toBe(false);
    expect(report.protocol.ok).toBe(true);
    expect(report.protocol.protocol).toMatchObject({
      device: "cpu",
      dtype: "float32",
      backend: "transformers",
      generationConfig: "recipe",
      graderVersion: "sim-grader/1",
    });
  });

  it("a failed generation leaves the experiment resumable: resume generates afresh, keeps what exists, and reports", async () => {
    const runner = createExperimentRunner(s, { autoStart: false });
    const id = await startExperiment(s, baseConfig(splitId, { name: "resume", seeds: [1] }));
    let crash = true;
    const failed = await drive(t.db, runner, id, fit, tasks, {
      ...learns,
      generateFails: (m, split) => crash && split === "test" && m !== "base",
    });
    expect(failed.state).toBe("failed");
    expect(failed.error).toMatch(/^test_eval: generation for s1e\d on test failed: CUDA error/);
    crash = false;
    await resumeExperiment(t.db, id);
    expect(await drive(t.db, runner, id, fit, tasks, learns)).toEqual({ state: "succeeded", error: null });
    const gen = await t.db
      .select()
      .from(schema.jobs)
      .where(and(eq(schema.jobs.experimentId, id), eq(schema.jobs.type, "generate")));
    const keys = gen.map((j) => (j.dedupeKey ?? "").replace(`exp:${id}:`, "")).sort();
    // The base's test answers were stored before the failure and are not generated again; only the failed one is.
    expect(keys.filter((k) => k.startsWith("test:"))).toEqual([
      "test:gen:base",
      expect.stringMatching(/^test:gen:s1e\d$/),
      expect.stringMatching(/^test:gen:s1e\d:r1$/),
    ]);
    expect(await reportByExperiment(t.db, id)).toBeDefined();
    await expect(resumeExperiment(t.db, id)).rejects.toMatchObject({ code: "PRECONDITION_FAILED" }); // a succeeded one is not resumed
  });

  it("the database refuses a test generation before the test run is claimed", async () => {
    const id = await startExperiment(s, baseConfig(splitId, { name: "unclaimed", seeds: [1] }));
    const row = (
      g: string,
    ) => sql`insert into experiment_generations (experiment_id, split, model_key, task_id, source_group, text, parsed, protocol, generate_job_id)
      values (${id}, ${g}, 'base', 't', 'g', '', false, '{}'::jsonb, gen_random_uuid())`;
    await expect(queryRows(t.db, row("dev"))).resolves.toBeDefined(); // positive control: dev needs no claim
    expect(await dbError(queryRows(t.db, row("test")))).toMatch(/claimed test run/);
  });
});

describe("one protocol for every evaluation", () => {
  it("refuses a protocol mismatch on dev", async () => {
    const id = await startExperiment(s, baseConfig(splitId, { name: "dev mismatch", seeds: [3] }));
    const end = await drive(t.db, createExperimentRunner(s, { autoStart: false }), id, fit, tasks, {
      ...learns,
      maxNewTokens: (m) => (m === "base" ? 256 : undefined),
    });
    expect(end.state).toBe("failed");
    expect(end.error).toMatch(/^dev_eval:base: protocol mismatch on dev for base: maxNewTokens 256 ≠ 512/);
  });

  it("refuses an adapter whose hash is not the trained snapshot's", async () => {
    const id = await startExperiment(s, baseConfig(splitId, { name: "adapter mismatch", seeds: [4] }));
    const end = await drive(t.db, createExperimentRunner(s, { autoStart: false }), id, fit, tasks, {
      ...learns,
      loadedAdapter: (m, sent) => (m === "base" ? sent : "f".repeat(64)),
    });
    expect(end.state).toBe("failed");
    expect(end.error).toMatch(
      /^dev_eval:s4: protocol mismatch on dev for s4e1: adapter hash mismatch: generated with f{64}, trained snapshot is [0-9a-f]{64}/,
    );
  });

  it("sends the hub revision and the resolved protocol in the train and generate payloads", async () => {
    received.train.length = 0;
    received.generate.length = 0;
    const id = await startExperiment(
      s,
      baseConfig(splitId, {
        name: "hub",
        seeds: [5],
        baseModel: { source: "hub", ref: "org/tiny", revision: "0123456789abcdef0123456789abcdef01234567" },
      }),
    );
    const end = await drive(t.db, createExperimentRunner(s, { autoStart: false }), id, fit, tasks, learns);
    expect(end.state).toBe("succeeded");
    expect(received.train).toEqual([
      expect.objectContaining({
        base_model: "org/tiny",
        revision: "0123456789abcdef0123456789abcdef01234567",
        method: "lora-fp32",
        local_files_only: false,
      }),
    ]);
    expect(received.generate.length).toBeGreaterThan(0);
    for (const g of received.generate) {
      expect(g).toMatchObject({
        base_model: "org/tiny",
        revision: "0123456789abcdef0123456789abcdef01234567",
        device: "cpu",
        dtype: "float32",
        backend: "transformers",
        use_checkpoint_generation_config: false,
      });
    }
    const [exp] = await t.db.select().from(schema.experiments).where(eq(schema.experiments.id, id));
    expect(exp?.config).toMatchObject({
      training: { method: "lora-fp32" },
      evaluation: { device: "cpu", dtype: "float32" },
    });
    expect((await experimentRow(id))?.state).toBe("succeeded");
  });

  it("refuses a seed trained with another method than the one resolved at creation", async () => {
    const id = await startExperiment(s, baseConfig(splitId, { name: "method", seeds: [6, 8] }));
    const end = await drive(t.db, createExperimentRunner(s, { autoStart: false }), id, fit, tasks, {
      ...learns,
      trainMethod: (seed) => (seed === 8 ? "lora-bf16" : "lora-fp32"),
    });
    expect(end.state).toBe("failed");
    expect(end.error).toMatch(/^train:s8: training seed 8 ran lora-bf16, the experiment resolved lora-fp32/);
  });

  it("resolves device, dtype and method once at creation from the fleet, and pins GPU jobs to GPU agents", async () => {
    const gpu = await makeAgent(t.db);
    await t.db.update(schema.agents).set({ gpuCount: 1 }).where(eq(schema.agents.id, gpu.agentId));
    try {
      const id = await startExperiment(s, baseConfig(splitId, { name: "gpu fleet", seeds: [1] }));
      expect((await experimentRow(id))?.config).toMatchObject({
        training: { method: "lora-bf16" },
        evaluation: { device: "cuda", dtype: "bfloat16" },
      });
      await createExperimentRunner(s, { autoStart: false }).advance(id);
      const jobs = await t.db.select().from(schema.jobs).where(eq(schema.jobs.experimentId, id));
      expect(jobs.map((j) => [j.type, j.minGpus])).toEqual(
        expect.arrayContaining([
          ["train", 1],
          ["generate", 1],
        ]),
      );
      // The CPU-only agent cannot claim them; an explicit recipe is kept as written.
      const nf4 = await startExperiment(
        s,
        baseConfig(splitId, {
          name: "nf4",
          seeds: [1],
          training: { epochs: 2, quantization: "nf4" },
          evaluation: { graderVersion: "g", device: "cpu" },
        }),
      );
      expect((await experimentRow(nf4))?.config).toMatchObject({
        training: { method: "qlora-nf4" },
        evaluation: { device: "cpu", dtype: "float32" },
      });
    } finally {
      await t.db.update(schema.agents).set({ gpuCount: 0 }).where(eq(schema.agents.id, gpu.agentId));
    }
  });
});
