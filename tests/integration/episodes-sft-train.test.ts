import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { and, eq } from "drizzle-orm";
import { TrainJobResult } from "@agentlab/core";
import { getJob, schema } from "@agentlab/db";
import { findPython, runPython } from "../../apps/agent/src/trainer/python";
import { syncEpisodes } from "../../apps/web/server/episodes/store";
import { callerAs } from "./helpers/callers";
import { startInProcessAgent, startTestServer, waitFor, type TestServer } from "./helpers/server";
import { makeSplit } from "./experiments-harness";
import { episodeRig, finishedEpisodeJob, type EpisodeRig } from "./episodes-rig";

// Episode trajectories as SFT data that train: a snapshot of the recoverer's and the solver's
// verified trajectories (episodes.toDataset) goes by its hash to a train job on an in-process
// agent, which fine-tunes the tiny random model on it with the real trainer: every assistant turn
// (each tool call) supervised, the observations masked.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const python = findPython(null, { root: join(ROOT, "apps/agent") });
let srv: TestServer;
let rig: EpisodeRig;
let agent: Awaited<ReturnType<typeof startInProcessAgent>>;
let model = "";
let splitId = "";

beforeAll(async () => {
  srv = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0", AGENTLAB_LEASE_TTL_MS: "30000" });
  const db = srv.app.services.db;
  rig = episodeRig();
  // The tiny model of the trainer tests, with room for a whole trajectory: with its 512-token
  // vocabulary a recoverer's transcript (file windows, pytest output) runs past 2048 tokens.
  model = join(await mkdtemp(join(tmpdir(), "agentlab-tiny-")), "model");
  await runPython(
    "tiny-model",
    {
      output_dir: model,
      corpus: [join(ROOT, "apps/agent/python/tests/fixtures/corpus.py.txt")],
      vocab_size: 512,
      hidden_size: 64,
      intermediate_size: 128,
      max_position_embeddings: 8192,
    },
    { python },
  );
  agent = await startInProcessAgent(srv, "trainer", { python, pollMs: 500 });
  ({ splitId } = await makeSplit(db));
  const train = await db
    .select({ id: schema.splitAssignments.taskRowId })
    .from(schema.splitAssignments)
    .where(and(eq(schema.splitAssignments.splitId, splitId), eq(schema.splitAssignments.part, "train")))
    .limit(2);
  const [a, b] = train;
  if (!a || !b) throw new Error("no train tasks");
  await finishedEpisodeJob(db, rig, { taskRowId: a.id, policy: { kind: "scripted", name: "recoverer" }, seed: 1 });
  await finishedEpisodeJob(db, rig, { taskRowId: b.id, policy: { kind: "scripted", name: "solver" }, seed: 1 });
  await syncEpisodes(srv.app.services);
}, 300_000);

afterAll(async () => {
  await agent?.stop();
  rig?.close();
  await srv?.close();
});

describe("episode trajectories train", () => {
  it("a trajectory snapshot fine-tunes the tiny model, every call supervised", async () => {
    const member = await callerAs(srv.app.services, "member");
    const d = await member.episodes.toDataset({ name: "trajectories", splitId, kinds: "both" });
    expect(d.sampleCount).toBe(2);
    const job = await srv.app.services.queue.enqueue({
      type: "train",
      payload: {
        datasetHash: d.hash,
        spec: {
          base_model: model,
          epochs: 1,
          batch_size: 2,
          max_length: 8192,
          local_files_only: true,
          lora: { r: 4, alpha: 8, dropout: 0, target_modules: ["q_proj", "v_proj"] },
        },
      },
    });
    const done = await waitFor(
      async () => {
        const j = await getJob(srv.db.db, job.id);
        return j && ["succeeded", "failed", "canceled"].includes(j.state) ? j : null;
      },
      240_000,
      250,
    );
    expect(done.state, done.error ?? "").toBe("succeeded");
    const record = TrainJobResult.parse(done.result);
    expect(record.dataset_sha256).toBe(d.hash);
    expect(record.samples).toBe(2);
    expect(record.steps).toBeGreaterThan(0);
    expect(record.supervised_tokens_per_epoch).toBeGreaterThan(0);
    expect(record.final_train_loss).not.toBeNull();
  });
});
