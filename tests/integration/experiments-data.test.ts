import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { PROMPT_TEMPLATE_HASH, promptHashOf, type PromptVariant } from "@agentlab/core";
import {
  allDatasetSamples,
  listCollections,
  listDatasets,
  createSplit,
  datasetSamplesPage,
  getCollection,
  getDataset,
  importPool,
  insertProvider,
  listStages,
  schema,
  setExperimentState,
} from "@agentlab/db";
import { Grader } from "../../apps/agent/src/grading/grader";
import { gradeJobHandlers } from "../../apps/agent/src/jobs/grade-batch";
import { createExperiment } from "../../apps/web/server/experiments/service";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import pino from "pino";
import { Supervisor } from "../../apps/agent/src/supervisor";
import type { JobHandler } from "../../apps/agent/src/jobs/types";
import { enrollTestAgent, startTestServer, testCapabilities, waitFor, type TestServer } from "./helpers/server";
import { baseConfig } from "./experiments-harness";
import { makePool, toJsonl } from "../fixtures/tasks/generate";
import { simTokenize } from "./helpers/sim-tokenize";
import { withPromptVariant } from "../../apps/web/server/experiments/prompt-variant";
import { writeSnapshot } from "../../apps/web/server/teacher/datasets";

// The data stages wired to the teacher module: the server's own experiment runner starts a
// collection of the split's train tasks (SFT data is train-only; dev serves selection only) with the reference provider, a real in-process agent grades the
// candidates in the sandbox, the passing ones become an SFT snapshot that is replayed, and the
// dataset stage records the survivors. A second experiment reuses every candidate from the cache.
// A recipe whose training prompts leave out part of the public context trains on a child snapshot
// of the same answers under re-rendered prompts.

let srv: TestServer;
let grader: Grader;
let agent: Supervisor;

// dev_eval:base starts at once, beside the data stages; this test is about data, so the agent holds
// generate jobs until the experiment is canceled (a real generate is tests/integration/agent-trainer's).
const holdUntilCanceled: JobHandler = (ctx) =>
  new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve({ reason: "canceled" })));
// The base tokenizer's lengths, simulated: samples of the tasks in `longTasks` measure 5,000 tokens.
let longTasks = new Set<string>();
const simulatedTokenize: JobHandler = async (ctx) => ({
  reason: "succeeded",
  result: await simTokenize(srv.app.services.db, ctx.payload, (k) => (longTasks.has(k) ? 5000 : 100)),
});
let splitId = "";
let providerId = "";
let parts: Map<string, string>;

beforeAll(async () => {
  srv = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
  grader = new Grader(
    {
      backend: "process",
      graderDir: join(process.cwd(), "apps/agent/grader"),
      uid: 65534,
      gid: 65534,
      scratchDir: "/tmp/agentlab-test-scratch-exp",
    },
    { workers: 2, limits: { wallTimeoutS: 20, memoryMb: 256, pids: 48 } },
  );
  const { credential } = await enrollTestAgent(srv.db, "grader");
  agent = new Supervisor({
    serverUrl: srv.url,
    credential,
    stateDir: await mkdtemp(join(tmpdir(), "agentlab-exp-agent-")),
    capabilities: testCapabilities(),
    concurrency: 3,
    handlers: { ...gradeJobHandlers(grader), generate: holdUntilCanceled, tokenize: simulatedTokenize },
    runtime: { python: null, sandboxBackend: "process", sandboxOk: true },
    log: pino({ level: "silent" }),
    pollMs: 200,
  });
  await agent.start();
  const db = srv.app.services.db;
  const imp = await importPool(db, { name: "exp-data", lines: [new TextEncoder().encode(toJsonl(makePool(12, 1)))] });
  if (!imp.ok) throw new Error("pool import failed");
  splitId = (await createSplit(db, { poolId: imp.poolId, seed: 3, devRatio: 0.25, testRatio: 0.25 })).split.id;
  const rows = await db.select().from(schema.splitAssignments);
  parts = new Map(rows.filter((r) => r.splitId === splitId).map((r) => [r.taskId, r.part]));
  providerId = (
    await insertProvider(db, {
      name: "oracle",
      kind: "reference",
      baseUrl: null,
      model: "reference",
      apiKeySealed: null,
      extraParams: {},
    })
  ).id;
}, 120_000);

afterAll(async () => {
  await agent?.stop(0);
  grader?.close();
  await srv?.close();
});

/** The dataset hash each train job of the experiment fetches. */
async function trainDatasetHashes(experimentId: string | undefined) {
  return (await srv.app.services.db.select().from(schema.jobs))
    .filter((j) => j.type === "train" && j.experimentId === experimentId)
    .map((j) => ("datasetHash" in j.payload ? j.payload.datasetHash : null));
}

async function runDataStages(name: string, maxLength = 2048, promptVariant?: PromptVariant) {
  const db = srv.app.services.db;
  const { datasetId: _none, ...config } = baseConfig(splitId, {
    name,
    teacher: { providerId, n: 1 },
    training: { epochs: 2, maxLength, promptVariant },
  });
  const exp = await createExperiment(db, config, null);
  const stages = await waitFor(
    async () => {
      const rows = new Map((await listStages(db, exp.id)).map((r) => [r.key, r]));
      const failed = [...rows.values()].find(
        (r) => r.state === "failed" && ["collect", "verify", "dataset"].includes(r.kind),
      );
      if (failed) throw new Error(`${failed.key} failed: ${failed.error}`);
      return rows.get("dataset")?.state === "succeeded" && rows;
    },
    120_000,
    200,
  );
  // The runner ticked many times meanwhile: still one collection and one snapshot for this experiment.
  expect((await listCollections(db, { experimentId: exp.id })).length).toBe(1);
  // (and its child re-rendered under a prompt variant, and, when samples were over the max length,
  // a child without them)
  const children = (promptVariant ? 1 : 0) + (longTasks.size ? 1 : 0);
  expect((await listDatasets(db, { experimentId: exp.id })).length).toBe(1 + children);
  // Training is another test's business: stop the experiment here.
  await setExperimentState(db, exp.id, "canceled", "data stages only");
  for (const j of await db.select().from(schema.jobs))
    if (j.experimentId === exp.id && (j.state === "queued" || j.state === "running"))
      await srv.app.services.queue.cancel(j.id);
  return stages;
}

describe("experiment data stages through the teacher module", () => {
  it("collects train tasks only with the reference teacher, grades, snapshots, replays, and never touches a dev or test task", async () => {
    const db = srv.app.services.db;
    const stages = await runDataStages("data-1");
    const collect = stages.get("collect")?.output as {
      collectionId: string;
      tasks: number;
      samplesTotal: number;
      reusedCandidates: number;
      costUsd: number;
    };
    const trainOnly = [...parts.values()].filter((p) => p === "train").length;
    expect(collect.tasks).toBe(trainOnly);
    expect(collect.reusedCandidates).toBe(0);
    const col = await getCollection(db, collect.collectionId);
    expect(col?.parts).toEqual(["train"]);
    expect(col?.state).toBe("done");

    const verify = stages.get("verify")?.output as {
      verdicts: Record<string, number>;
      kept: number;
      dropped: unknown[];
      resultDatasetId: string;
      draftDatasetId: string;
    };
    expect(verify.verdicts).toEqual({ pass: trainOnly });
    expect(verify.kept).toBe(trainOnly);
    expect(verify.dropped).toEqual([]);
    expect(verify.resultDatasetId).toBe(verify.draftDatasetId);

    const out = stages.get("dataset")?.output as {
      datasetId: string;
      datasetHash: string;
      samples: number;
      oracleSamples: number;
      reusedCandidates: number;
      costUsd: number;
    };
    const ds = await getDataset(db, out.datasetId);
    expect(ds?.hash).toBe(out.datasetHash);
    expect(out.samples).toBe(trainOnly);
    expect(out.oracleSamples).toBe(trainOnly);
    expect(out.costUsd).toBe(0);
    // The snapshot's bytes are in the artifact store under its hash, for the train job.
    expect(await srv.app.services.artifacts.has(out.datasetHash)).toBe(true);
    const samples = await datasetSamplesPage(db, out.datasetId, { limit: 1000 });
    expect(new Set(samples.items.map((s) => parts.get(s.taskKey)))).toEqual(new Set(["train"]));
  }, 150_000);

  it("a second experiment reuses every cached candidate and records it", async () => {
    const stages = await runDataStages("data-2");
    const collect = stages.get("collect")?.output as {
      samplesTotal: number;
      reusedCandidates: number;
      costUsd: number;
    };
    expect(collect.reusedCandidates).toBe(collect.samplesTotal);
    const out = stages.get("dataset")?.output as { reusedCandidates: number; samples: number };
    expect(out.reusedCandidates).toBe(collect.samplesTotal);
    expect(out.samples).toBe(collect.samplesTotal);
  }, 150_000);

  it("drops samples longer than the max length at the dataset stage, before training, and reports them", async () => {
    const db = srv.app.services.db;
    const train = [...parts.entries()].filter(([, p]) => p === "train").map(([id]) => id);
    longTasks = new Set(train.slice(0, 2));
    try {
      const stages = await runDataStages("data-long", 3000);
      const out = stages.get("dataset")?.output as {
        datasetId: string;
        samples: number;
        overLength: {
          count: number;
          taskIds: string[];
          maxLength: number;
          measuredDatasetId: string;
          longestTokens: number;
        };
      };
      expect(out.overLength).toMatchObject({ count: 2, maxLength: 3000, longestTokens: 5000 });
      expect(new Set(out.overLength.taskIds)).toEqual(longTasks);
      // training gets the child snapshot without them; the measured one keeps the report
      const child = await getDataset(db, out.datasetId);
      const measured = await getDataset(db, out.overLength.measuredDatasetId);
      expect(child?.parentId).toBe(measured?.id);
      expect(out.samples).toBe((measured?.sampleCount ?? 0) - 2);
      const kept = await datasetSamplesPage(db, out.datasetId, { limit: 1000 });
      expect(kept.items.some((s) => longTasks.has(s.taskKey))).toBe(false);
      expect(measured?.tokenCounts?.overLength).toEqual({ maxLength: 3000, count: 2, taskIds: out.overLength.taskIds });
      expect(await srv.app.services.artifacts.has(child?.hash ?? "")).toBe(true);
      // nothing is trained on the uncut data: the runner may start training as soon as the dataset
      // stage ends (it is woken by the stage's end, before this test cancels the experiment), and
      // then only on the cut snapshot
      const hashes = await trainDatasetHashes(stages.get("dataset")?.experimentId);
      expect(hashes.filter((h) => h !== child?.hash)).toEqual([]);
    } finally {
      longTasks = new Set();
    }
  }, 150_000);

  it("keeps every sample when none is over the max length (positive control)", async () => {
    const stages = await runDataStages("data-short", 3000);
    const out = stages.get("dataset")?.output as {
      datasetId: string;
      overLength: { count: number; measuredDatasetId: string };
    };
    expect(out.overLength.count).toBe(0);
    expect(out.datasetId).toBe(out.overLength.measuredDatasetId);
  }, 150_000);

  it("trains on the snapshot's answers under prompts without the public tests (training.promptVariant)", async () => {
    const db = srv.app.services.db;
    const stages = await runDataStages("data-no-tests", 3000, "no_public_tests");
    const out = stages.get("dataset")?.output as { datasetId: string; overLength: { measuredDatasetId: string } };
    const child = await getDataset(db, out.datasetId);
    const parent = await getDataset(db, child?.parentId ?? "");
    expect(child?.promptHash).toBe(promptHashOf("no_public_tests"));
    expect(parent?.promptHash).toBe(PROMPT_TEMPLATE_HASH);
    // the length check measured the prompts training sees
    expect(out.overLength.measuredDatasetId).toBe(child?.id);
    const [shown, full] = await Promise.all([
      allDatasetSamples(db, child?.id ?? ""),
      allDatasetSamples(db, parent?.id ?? ""),
    ]);
    expect(shown).toHaveLength(full.length);
    const user = (r: (typeof full)[number]) => r.sample.messages.find((m) => m.role === "user")?.content ?? "";
    // control: the parent's prompts show the public tests the child's leave out
    expect(full.every((r) => user(r).includes("## Public test"))).toBe(true);
    expect(shown.some((r) => user(r).includes("## Public test"))).toBe(false);
    expect(shown.every((r) => user(r).includes("(no public tests)"))).toBe(true);
    // the same answers, candidate for candidate
    const answers = (rows: typeof full) =>
      new Map(rows.map((r) => [r.sample.candidateId, r.sample.messages.at(-1)?.content]));
    expect(answers(shown)).toEqual(answers(full));
    expect(await srv.app.services.artifacts.has(child?.hash ?? "")).toBe(true);
    // any train job of this experiment fetches the re-rendered snapshot, never the parent
    const hashes = await trainDatasetHashes(stages.get("dataset")?.experimentId);
    expect(hashes.filter((h) => h !== child?.hash)).toEqual([]);
  }, 150_000);

  it("refuses a prompt variant on a snapshot rendered with other prompts (an episode's turns), naming it", async () => {
    const services = srv.app.services;
    const source = (await listDatasets(services.db)).find((d) => d.promptHash === PROMPT_TEMPLATE_HASH);
    const rows = await allDatasetSamples(services.db, source?.id ?? "");
    expect(rows.length).toBeGreaterThan(0);
    const other = await writeSnapshot(
      services,
      {
        name: "other prompts",
        splitId,
        experimentId: null,
        sourceCollectionIds: [],
        parentId: null,
        createdBy: null,
        promptHash: "e".repeat(64),
      },
      rows.map((r) => ({ ...r.sample, line: JSON.stringify({ messages: r.sample.messages }) })),
    );
    await expect(withPromptVariant(services, other, "no_dependencies")).rejects.toThrow(
      /"other prompts" was rendered with another prompt/,
    );
    // the full context asks for nothing to be rendered again
    expect((await withPromptVariant(services, other, "full")).id).toBe(other.id);
  });
});
