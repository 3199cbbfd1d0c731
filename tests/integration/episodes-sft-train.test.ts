import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { and, eq } from "drizzle-orm";
import { TrainJobResult } from "@agentlab/core";
import { allDatasetSamples, getJob, schema } from "@agentlab/db";
import { findPython, runPython } from "../../apps/agent/src/trainer/python";
import { syncEpisodes } from "../../apps/web/server/episodes/store";
import { callerAs } from "./helpers/callers";
import { startInProcessAgent, startTestServer, waitFor, type TestServer } from "./helpers/server";
import { makeSplit } from "./experiments-harness";
import { episodeRig, finishedEpisodeJob, type EpisodeRig } from "./episodes-rig";

// Episode trajectories as SFT data that train: a snapshot of the recoverer's and the solver's
// verified trajectories (episodes.toDataset) goes by its hash to a train job on an in-process
// agent, which fine-tunes the tiny random model on it with the real trainer: every assistant turn
// (each tool call) supervised, the observations masked; with the failed-attempt mask, the
// recoverer's wrong edit is context only.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const python = findPython(null, { root: join(ROOT, "apps/agent") });
let srv: TestServer;
let rig: EpisodeRig;
let agent: Awaited<ReturnType<typeof startInProcessAgent>>;
let model = "";
let splitId = "";
let member: Awaited<ReturnType<typeof callerAs>>;

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
  member = await callerAs(srv.app.services, "member");
}, 300_000);

afterAll(async () => {
  await agent?.stop();
  rig?.close();
  await srv?.close();
});

/** Trains the tiny model one epoch on a snapshot through the queue and the agent; the run record. */
async function trainOn(datasetHash: string) {
  const job = await srv.app.services.queue.enqueue({
    type: "train",
    payload: {
      datasetHash,
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
  return TrainJobResult.parse(done.result);
}

describe("episode trajectories train", () => {
  it("a trajectory snapshot fine-tunes the tiny model, every call supervised", async () => {
    const d = await member.episodes.toDataset({ name: "trajectories", splitId, kinds: "both" });
    expect(d.sampleCount).toBe(2);
    const record = await trainOn(d.hash);
    expect(record.dataset_sha256).toBe(d.hash);
    expect(record.samples).toBe(2);
    expect(record.steps).toBeGreaterThan(0);
    expect(record.supervised_tokens_per_epoch).toBeGreaterThan(0);
    expect(record.final_train_loss).not.toBeNull();
  });

  it("with the failed-attempt mask, the recovery's wrong edit is context: the same sample, fewer supervised tokens", async () => {
    const plain = await member.episodes.toDataset({ name: "recovery", splitId, kinds: "recovery" });
    const masked = await member.episodes.toDataset({
      name: "recovery, failed attempt masked",
      splitId,
      kinds: "recovery",
      maskFailedAttempts: true,
    });
    expect(masked.sampleCount).toBe(1);
    expect(masked.hash).not.toBe(plain.hash);
    const [row] = await allDatasetSamples(srv.app.services.db, masked.id);
    const unsupervised = row?.sample.messages.filter((m) => m.train === false) ?? [];
    expect(unsupervised.length).toBeGreaterThan(0);
    expect(unsupervised.every((m) => m.role === "assistant" && m.content.includes('"tool":"edit_file"'))).toBe(true);
    // the plain snapshot of the same trajectory is the control
    const [withEdit, withoutEdit] = [await trainOn(plain.hash), await trainOn(masked.hash)];
    expect(withoutEdit.samples).toBe(withEdit.samples);
    expect(withoutEdit.supervised_tokens_per_epoch).toBeLessThan(withEdit.supervised_tokens_per_epoch);
    expect(withoutEdit.supervised_tokens_per_epoch).toBeGreaterThan(0);
  });
});
