import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { getJob, listJobArtifacts } from "@agentlab/db";
import { DpoJobResult, ScoreJobResult, TrainJobResult } from "@agentlab/core";
import { findPython } from "../../apps/agent/src/trainer/python";
import { buildTinyModel } from "./helpers/tiny-model";
import { startInProcessAgent, startTestServer, waitFor, type TestServer } from "./helpers/server";

// An SFT train job, then dpo jobs from its adapter through the real queue: the pairs and
// the start adapter travel by hash, the start adapter's tree hash is checked, each DPO epoch's
// adapter is uploaded, and the run record (with the reference margins per pair) is the job result;
// then a score job of the run's epochs against its start, which agrees with the run's own Δ.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const python = findPython(null, { root: join(ROOT, "apps/agent") });
let server: TestServer;
let agent: Awaited<ReturnType<typeof startInProcessAgent>>;
let model: string;

beforeAll(async () => {
  server = await startTestServer({ AGENTLAB_LEASE_TTL_MS: "30000", AGENTLAB_HEARTBEAT_MS: "1000" });
  model = await buildTinyModel(python);
  agent = await startInProcessAgent(server, "trainer", { python, pollMs: 500 });
}, 300_000);
afterAll(async () => {
  await agent?.stop();
  await server?.close();
});

const prompt = (i: number) => [
  { role: "system" as const, content: "You fix Python programs." },
  { role: "user" as const, content: `Fix add_${i}:\ndef add_${i}(a, b):\n    return a - b` },
];
const fixed = (i: number) => `\`\`\`python\ndef add_${i}(a, b):\n    return a + b\n\`\`\``;
const buggy = (i: number) => `\`\`\`python\ndef add_${i}(a, b):\n    return a - b\n\`\`\``;
const LORA = { r: 4, alpha: 8, dropout: 0, target_modules: ["q_proj", "v_proj"] };

const finished = (id: string) =>
  waitFor(
    async () => {
      const j = await getJob(server.db.db, id);
      return j && ["succeeded", "failed", "canceled"].includes(j.state) ? j : null;
    },
    240_000,
    250,
  );

describe("dpo jobs on the agent", () => {
  it("trains DPO from an SFT snapshot, uploading each epoch, and scores pairs", async () => {
    const sft = Array.from({ length: 6 }, (_, i) =>
      JSON.stringify({ messages: [...prompt(i), { role: "assistant", content: fixed(i) }] }),
    );
    const datasetHash = await server.app.services.artifacts.put(`${sft.join("\n")}\n`);
    const train = await server.app.services.queue.enqueue({
      type: "train",
      payload: {
        datasetHash,
        spec: { base_model: model, epochs: 1, batch_size: 3, max_length: 128, local_files_only: true, lora: LORA },
      },
    });
    const trained = TrainJobResult.parse((await finished(train.id)).result);
    const start = trained.snapshots[0];
    expect(start?.artifact).toMatch(/^[0-9a-f]{64}$/);

    const pairs = Array.from({ length: 6 }, (_, i) =>
      JSON.stringify({ pair_id: `p${i}`, prompt: prompt(i), chosen: fixed(i), rejected: buggy(i) }),
    );
    const pairsHash = await server.app.services.artifacts.put(`${pairs.join("\n")}\n`);
    const spec = { base_model: model, epochs: 2, batch_size: 2, max_length: 128, local_files_only: true, beta: 0.1 };
    const dpo = await server.app.services.queue.enqueue({
      type: "dpo",
      payload: { pairsHash, startAdapterArtifact: start?.artifact, startAdapterSha256: start?.sha256, spec },
    });
    const done = await finished(dpo.id);
    expect(done.error).toBeNull();
    const record = DpoJobResult.parse(done.result);
    expect(record.mode).toBe("train");
    expect(record.reference).toBe("start_adapter");
    expect(record.start_adapter_sha256).toBe(start?.sha256);
    expect(record.pairs.map((p) => p.pair_id)).toEqual(["p0", "p1", "p2", "p3", "p4", "p5"]);
    expect(record.snapshots.map((s) => s.epoch)).toEqual([1, 2]);
    const artifacts = await listJobArtifacts(server.db.db, dpo.id);
    expect(artifacts.map((a) => a.name).sort()).toEqual(["adapter-epoch-1", "adapter-epoch-2"]);
    expect(record.snapshots[1]?.artifact).toBe(artifacts.find((a) => a.name === "adapter-epoch-2")?.sha256);

    // Scoring from the same start gives the same reference margins as the training run used.
    const score = await server.app.services.queue.enqueue({
      type: "dpo",
      payload: {
        pairsHash,
        startAdapterArtifact: start?.artifact,
        startAdapterSha256: start?.sha256,
        spec: { ...spec, score_only: true },
      },
    });
    const scored = DpoJobResult.parse((await finished(score.id)).result);
    expect(scored.mode).toBe("score");
    expect(scored.snapshots).toEqual([]);
    for (const [i, p] of scored.pairs.entries()) expect(p.margin).toBeCloseTo(record.pairs[i]?.margin ?? Number.NaN, 4);

    // A score job on the agent: the pairs under the start and each epoch snapshot, fetched by hash.
    // Same reference, batches and eval mode as the run's own end-of-epoch pass, so the Δ agree.
    const policies = record.snapshots.map((x) => ({
      name: `epoch-${x.epoch}`,
      adapterArtifact: x.artifact ?? "",
      adapterSha256: x.sha256,
    }));
    const held = await server.app.services.queue.enqueue({
      type: "score",
      payload: {
        pairsHash,
        referenceAdapterArtifact: start?.artifact,
        referenceAdapterSha256: start?.sha256,
        policies,
        spec: { base_model: model, batch_size: 2, max_length: 128, local_files_only: true },
      },
    });
    const heldDone = await finished(held.id);
    expect(heldDone.error).toBeNull();
    const heldRecord = ScoreJobResult.parse(heldDone.result);
    expect(heldRecord.reference).toBe("reference_adapter");
    expect(heldRecord.policies.map((x) => x.name)).toEqual(["epoch-1", "epoch-2"]);
    for (const [i, x] of heldRecord.policies.entries()) {
      expect(x.adapter_sha256).toBe(record.snapshots[i]?.sha256);
      expect(x.chosen_logp_delta).toBeCloseTo(record.snapshots[i]?.chosen_logp_delta ?? Number.NaN, 3);
      expect(x.rejected_logp_delta).toBeCloseTo(record.snapshots[i]?.rejected_logp_delta ?? Number.NaN, 3);
    }

    // A start adapter named by a hash its archive does not have is refused by the trainer (user_error).
    const wrong = await server.app.services.queue.enqueue({
      type: "dpo",
      payload: { pairsHash, startAdapterArtifact: start?.artifact, startAdapterSha256: "0".repeat(64), spec },
      maxAttempts: 1,
    });
    const refused = await finished(wrong.id);
    expect(refused.state).toBe("failed");
    expect(refused.error).toContain("hash mismatch");
  }, 480_000);
});
