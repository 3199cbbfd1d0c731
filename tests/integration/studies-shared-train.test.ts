import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import { enqueueJob, listStudyArms, reportJobCounts, schema } from "@agentlab/db";
import type { StudyDefinitionInput, TaskSpec } from "@agentlab/core";
import { createExperimentRunner, type ExperimentRunner } from "../../apps/web/server/experiments/runner";
import { createStudy } from "../../apps/web/server/studies/service";
import type { Services } from "../../apps/web/server/services";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { agentStep, makeAgent, makeServices, makeSplit, markDataReady, type Behaviour } from "./experiments-harness";

// A study's arms that differ only after SFT (here a DPO arm and the swapped-labels control) share
// one train job per seed with the reference: one adapter, trained once, and the generate and grade
// jobs of an adapter they evaluate at the same time. An arm whose training
// differs (a learning rate) trains its own: the positive control that the sharing is by content.
// The queue still refuses a key held by an experiment outside the sharing (the planting attack).

let t: TestDb;
let s: Services;
let splitId: string;
let tasks: Map<string, TaskSpec>;
let fit: Awaited<ReturnType<typeof makeAgent>>;
let runner: ExperimentRunner;
beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  ({ splitId, tasks } = await makeSplit(t.db));
  fit = await makeAgent(t.db);
  runner = createExperimentRunner(s, { autoStart: false });
});
afterAll(async () => {
  await runner?.stop();
  await t?.drop();
});

const DATASET = "00000000-0000-4000-8000-00000000000b";
const definition: () => StudyDefinitionInput = () => ({
  name: "dpo over sft",
  splitId,
  baseModel: { source: "path", ref: "/models/tiny" },
  evaluation: { graderVersion: "sim-grader/1", answerCache: "shared" },
  seeds: [1, 2],
  reference: {
    name: "sft",
    recipe: {
      teacher: { providerId: "00000000-0000-4000-8000-00000000000a" },
      datasetId: DATASET,
      training: { epochs: 2 },
    },
  },
  arms: [
    { name: "dpo", factor: "method", recipe: { method: "sft+dpo", dpo: { pairSources: ["near_miss"] } } },
    {
      name: "swapped",
      factor: "method",
      recipe: { method: "sft+dpo", dpo: { pairSources: ["near_miss"], labels: "swapped" } },
    },
    { name: "high-lr", factor: "training.learningRate", recipe: { training: { learningRate: 1e-3 } } },
  ],
  contrasts: [{ arms: ["dpo", "sft"] }],
});

const behaviour: Behaviour = { fixes: () => false };

async function stagesOf(id: string) {
  const rows = await t.db.select().from(schema.experimentStages).where(eq(schema.experimentStages.experimentId, id));
  return new Map(rows.map((r) => [r.key, r]));
}

/** Advances the arm, answering its jobs, until both seeds' train stages succeeded; returns their job ids. */
async function trainJobsOf(id: string): Promise<string[]> {
  await markDataReady(s.db, id);
  for (let round = 0; round < 20; round++) {
    await runner.advance(id);
    while ((await agentStep(t.db, fit, tasks, behaviour)).claimed);
    const st = await stagesOf(id);
    const train = ["train:s1", "train:s2"].map((k) => st.get(k));
    if (train.every((x) => x?.state === "succeeded")) return train.flatMap((x) => x?.jobIds ?? []);
  }
  throw new Error(`arm ${id} did not finish training`);
}

describe("a study's shared training", () => {
  it("trains once per seed for the arms whose train job is the same work, and apart for the others", async () => {
    const { study } = await createStudy(s.db, definition(), null);
    const arms = await listStudyArms(s.db, study.id);
    const ids = Object.fromEntries(arms.map((a) => [a.name, a.experimentId]));
    const jobs = {
      sft: await trainJobsOf(ids.sft ?? ""),
      dpo: await trainJobsOf(ids.dpo ?? ""),
      swapped: await trainJobsOf(ids.swapped ?? ""),
      highLr: await trainJobsOf(ids["high-lr"] ?? ""),
    };
    expect(jobs.sft).toHaveLength(2);
    expect(jobs.dpo).toEqual(jobs.sft);
    expect(jobs.swapped).toEqual(jobs.sft);
    // positive control: a different training recipe is different work, so its own jobs
    expect(jobs.highLr).toHaveLength(2);
    expect(jobs.highLr.some((j) => jobs.sft.includes(j))).toBe(false);
    const trainJobs = await t.db.select().from(schema.jobs).where(eq(schema.jobs.type, "train"));
    expect(trainJobs).toHaveLength(4);
    // Each arm's report states the training it stands on, the adopted job included.
    const counts = await reportJobCounts(t.db, ids.dpo ?? "");
    expect(counts.find((c) => c.type === "train")?.n).toBe(2);
  });

  it("shares the generate job of an adapter that two arms evaluate at once", async () => {
    const [study] = await t.db.select().from(schema.studies);
    if (!study) throw new Error("no study");
    const arms = await listStudyArms(s.db, study.id);
    const ids = Object.fromEntries(arms.map((a) => [a.name, a.experimentId]));
    // Both arms step into their dev evaluation before any answer exists (no agent step between).
    for (const id of [ids.sft ?? "", ids.dpo ?? ""]) await runner.advance(id);
    const jobsOf = async (id: string) => {
      const st = await stagesOf(id);
      const out = st.get("dev_eval:s1")?.output as { generate?: Record<string, string> } | undefined;
      return out?.generate ?? {};
    };
    const [sft, dpo] = [await jobsOf(ids.sft ?? ""), await jobsOf(ids.dpo ?? "")];
    expect(Object.keys(sft).length).toBeGreaterThan(0);
    expect(dpo).toEqual(sft);
    // The answers come back once; both arms store them and grade them in the same batch jobs.
    while ((await agentStep(t.db, fit, tasks, behaviour)).claimed);
    for (const id of [ids.sft ?? "", ids.dpo ?? ""]) await runner.advance(id);
    const gradeJobs = async (id: string) =>
      new Set(
        (
          await t.db
            .select({ jobs: schema.generations.gradeJobIds })
            .from(schema.generations)
            .where(eq(schema.generations.experimentId, id))
        ).flatMap((r) => r.jobs),
      );
    const [gs, gd] = [await gradeJobs(ids.sft ?? ""), await gradeJobs(ids.dpo ?? "")];
    expect(gs.size).toBeGreaterThan(0);
    expect(gd).toEqual(gs);
  });

  it("adopts a held key only for an experiment named as sharing it, and only for the same work", async () => {
    const [a, b] = await t.db.select({ id: schema.experiments.id }).from(schema.experiments).limit(2);
    if (!a || !b) throw new Error("no experiments");
    const job = {
      type: "shell" as const,
      payload: { argv: ["true"] },
      dedupeKey: "study:test:shared",
      maxAttempts: 1,
    };
    const held = await enqueueJob(t.db, { ...job, experimentId: a.id });
    // the planting attack: another experiment's enqueue under the held key is refused...
    await expect(enqueueJob(t.db, { ...job, experimentId: b.id })).rejects.toThrow(/experimentId/);
    // ...unless it names the holder as sharing the work
    expect((await enqueueJob(t.db, { ...job, experimentId: b.id, sharedWith: [a.id] })).id).toBe(held.id);
    // and never for other work
    await expect(
      enqueueJob(t.db, { ...job, payload: { argv: ["false"] }, experimentId: b.id, sharedWith: [a.id] }),
    ).rejects.toThrow(/payload/);
  });
});
