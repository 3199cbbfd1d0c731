import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { getJob } from "@agentlab/db";
import { ExperimentConfig, GenerateJobResult, TrainJobResult } from "@agentlab/core";
import { findPython } from "../../apps/agent/src/trainer/python";
import { demoGrader, runAaControl, type StoredAdapter } from "../../scripts/demo/aa-control";
import { learnableTasks } from "../../scripts/learning-proof";
import { buildTinyModel, tinyTrainSpec } from "./helpers/tiny-model";
import { jobEnded } from "./helpers/job-ends";
import { startInProcessAgent, startTestServer, type TestServer } from "./helpers/server";

// The demo's A/A control runs on a trained adapter that exists only in the artifact store: its
// snapshot folder is removed before the A/A, and the agent fetches the archive by its hash for each
// side's generate job. Positive control: with the store's copy of the archive removed as well, the
// A/A fails and says which job and which artifact.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const python = findPython(null, { root: join(ROOT, "apps/agent") });
let server: TestServer;
let agent: Awaited<ReturnType<typeof startInProcessAgent>>;
let model: string;
let snapshots: TrainJobResult["snapshots"];
const grader = demoGrader();
const tasks = learnableTasks().slice(0, 6);
// Short samples of another repair: the tiny test tokenizer keeps them within max_length (a learnable
// task's prompt is not), and what the adapter learned does not matter to the plumbing checked here.
const sample = (i: number) => ({
  messages: [
    { role: "user", content: `Fix add_${i}:\ndef add_${i}(a, b):\n    return a - b` },
    { role: "assistant", content: `def add_${i}(a, b):\n    return a + b` },
  ],
});

beforeAll(async () => {
  server = await startTestServer({ AGENTLAB_LEASE_TTL_MS: "30000", AGENTLAB_HEARTBEAT_MS: "1000" });
  model = await buildTinyModel(python);
  agent = await startInProcessAgent(server, "trainer", { python, pollMs: 500 });
  const jsonl = Array.from({ length: 8 }, (_, i) => JSON.stringify(sample(i))).join("\n") + "\n";
  const job = await server.app.services.queue.enqueue({
    type: "train",
    payload: {
      datasetHash: await server.app.services.artifacts.put(jsonl),
      spec: tinyTrainSpec(model),
    },
  });
  const done = await jobEnded(server.db.db, job.id);
  expect(done.error).toBeNull();
  snapshots = TrainJobResult.parse(done.result).snapshots;
  // No trained folder anywhere: only the store's archives remain.
  for (const s of snapshots) await rm(s.path, { recursive: true, force: true });
}, 400_000);
afterAll(async () => {
  grader.close();
  await agent?.stop();
  await server?.close();
});

const config = () =>
  ExperimentConfig.parse({
    name: "aa",
    splitId: "00000000-0000-4000-8000-000000000001",
    teacher: { providerId: "00000000-0000-4000-8000-000000000002" },
    baseModel: { source: "path", ref: model },
    training: { epochs: 2, learningRate: 1e-3, lora: { r: 4, alpha: 8, dropout: 0, targets: ["q_proj", "v_proj"] } },
    evaluation: { graderVersion: "g", maxNewTokens: 24, device: "cpu", dtype: "float32" },
    seeds: [1],
  });

const stored = (epoch: number): StoredAdapter => {
  const s = snapshots.find((x) => x.epoch === epoch);
  if (!s?.artifact) throw new Error(`epoch ${epoch} has no archive`);
  return { label: `seed 1 epoch ${epoch}`, sha256: s.sha256, artifact: s.artifact };
};

describe("the demo's A/A control", () => {
  it("samples the adapter twice from its archive in the store, with no trained folder on the machine", async () => {
    const adapter = stored(1);
    expect(snapshots.every((s) => !existsSync(s.path))).toBe(true);
    const aa = await runAaControl(server.app.services, { config: config(), tasks, adapter, grader });
    expect(aa.tasks).toBe(tasks.length);
    expect(aa.stats.units).toBe(new Set(tasks.map((t) => t.cluster ?? t.source_group)).size);
    // Both sides ran the stored adapter, each at T = 0.7 with its own seed.
    const summaries = await Promise.all(
      aa.generateJobs.map(async (id) => GenerateJobResult.parse((await getJob(server.db.db, id))?.result).summary),
    );
    expect(summaries.map((s) => s.adapter_sha256)).toEqual([adapter.sha256, adapter.sha256]);
    expect(summaries.map((s) => [s.decoding.do_sample, s.decoding.temperature])).toEqual([
      [true, 0.7],
      [true, 0.7],
    ]);
    expect(aa.stats.significant).toBe(false);
  }, 300_000);

  it("fails, naming the job and the archive, when the store has lost the adapter (positive control)", async () => {
    const adapter = stored(2);
    await rm(join(server.dataDir, "artifacts", adapter.artifact.slice(0, 2), adapter.artifact));
    expect(await server.app.services.artifacts.has(adapter.artifact)).toBe(false);
    await expect(runAaControl(server.app.services, { config: config(), tasks, adapter, grader })).rejects.toThrow(
      new RegExp(`A/A generate job .* failed: .*artifact ${adapter.artifact} could not be fetched: 404`),
    );
  }, 300_000);
});
