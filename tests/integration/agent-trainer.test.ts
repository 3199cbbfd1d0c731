import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { getJob, listJobArtifacts } from "@agentlab/db";
import {
  ChatMessage,
  EvalProtocol,
  GenerateJobResult,
  PROMPT_TEMPLATE_HASH,
  answerProtocol,
  generationProtocol,
  recipeMismatches,
} from "@agentlab/core";
import { findPython } from "../../apps/agent/src/trainer/python";
import { buildTinyModel, tinyTrainSpec } from "./helpers/tiny-model";
import { startInProcessAgent, startTestServer, waitFor, type TestServer } from "./helpers/server";

// A train job, then generate jobs, on the tiny local model through the real queue: adapters are
// uploaded per epoch, the run record is stored, and a generate job on the adapter fetches it by hash.
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

const sample = (i: number) => ({
  messages: [
    { role: "system", content: "You fix Python programs." },
    { role: "user", content: `Fix add_${i}:\ndef add_${i}(a, b):\n    return a - b` },
    { role: "assistant", content: `\`\`\`python\ndef add_${i}(a, b):\n    return a + b\n\`\`\`` },
  ],
});

const finished = (id: string) =>
  waitFor(
    async () => {
      const j = await getJob(server.db.db, id);
      return j && ["succeeded", "failed", "canceled"].includes(j.state) ? j : null;
    },
    240_000,
    250,
  );

describe("trainer jobs on the agent", () => {
  it("trains with a snapshot per epoch uploaded, then generates with the adapter fetched by hash", async () => {
    const jsonl = Array.from({ length: 12 }, (_, i) => JSON.stringify(sample(i))).join("\n") + "\n";
    const datasetHash = await server.app.services.artifacts.put(jsonl);
    const train = await server.app.services.queue.enqueue({
      type: "train",
      payload: {
        datasetHash,
        spec: tinyTrainSpec(model),
      },
    });
    const done = await finished(train.id);
    expect(done.error).toBeNull();
    expect(done.state).toBe("succeeded");
    const record = done.result as {
      method: string;
      dataset_sha256: string;
      snapshots: Array<{ epoch: number; artifact: string | null; sha256: string }>;
      supervised_tokens_per_s: number;
    };
    expect(record.method).toBe("lora-fp32");
    expect(record.dataset_sha256).toBe(datasetHash);
    expect(record.snapshots.map((s) => s.epoch)).toEqual([1, 2]);
    const artifacts = await listJobArtifacts(server.db.db, train.id);
    // every epoch's adapter, and the state a resumption after epoch 1 would load
    expect(artifacts.map((a) => a.name).sort()).toEqual([
      "adapter-epoch-1",
      "adapter-epoch-2",
      "trainer-state-epoch-1",
    ]);
    const last = record.snapshots[1];
    expect(last?.artifact).toBe(artifacts.find((a) => a.name === "adapter-epoch-2")?.sha256);
    expect(await server.app.services.artifacts.has(last?.artifact ?? "")).toBe(true);

    const prompts = [0, 1, 2].map((i) => ({
      task_id: `t${i}`,
      messages: ChatMessage.array().parse(sample(i).messages.slice(0, 2)),
    }));
    const gen = await server.app.services.queue.enqueue({
      type: "generate",
      payload: {
        spec: {
          base_model: model,
          prompts,
          max_new_tokens: 16,
          local_files_only: true,
          expected_adapter_sha256: last?.sha256,
        },
        adapterSha256: last?.sha256,
        adapterArtifact: last?.artifact,
      },
    });
    const genDone = await finished(gen.id);
    expect(genDone.error).toBeNull();
    const out = genDone.result as {
      outputs: Array<{ task_id: string; text: string }>;
      summary: { adapter_sha256: string | null; decoding: { do_sample: boolean } };
    };
    expect(out.outputs.map((o) => o.task_id).sort()).toEqual(["t0", "t1", "t2"]);
    expect(out.summary.decoding.do_sample).toBe(false);
    // The unpacked adapter hashes exactly like the trained snapshot (the trainer refused otherwise).
    expect(out.summary.adapter_sha256).toBe(last?.sha256);
    // The real trainer's summary is what the experiment runner reads and checks against a recipe.
    const parsed = GenerateJobResult.parse(genDone.result);
    const recipe = EvalProtocol.parse({ graderVersion: "g", maxNewTokens: 16, device: "cpu", dtype: "float32" });
    const protocol = generationProtocol(parsed.summary, {
      promptTemplateHash: PROMPT_TEMPLATE_HASH,
      trainingMethod: "lora-fp32",
      samples: 1,
    });
    expect(protocol).toMatchObject({
      backend: "transformers",
      device: "cpu",
      dtype: "float32",
      generationConfig: "recipe",
      model: { ref: model, revision: null, weightsSha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
    expect(protocol.stop.length).toBeGreaterThan(0);
    // Each task's rendered-prompt hash reaches its answers' protocol (compared across models per task).
    expect(Object.keys(parsed.summary.task_prompts_sha256 ?? {}).sort()).toEqual(["t0", "t1", "t2"]);
    expect(answerProtocol(protocol, parsed.summary, "t1").promptSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(
      recipeMismatches(protocol, recipe, {
        promptTemplateHash: PROMPT_TEMPLATE_HASH,
        adapterSha256: last?.sha256 ?? null,
      }),
    ).toEqual([]);
  });

  it("a run whose agent is lost resumes on the next agent after the last epoch it uploaded", async () => {
    const rows = Array.from({ length: 160 }, (_, i) => JSON.stringify(sample(i))).join("\n") + "\n";
    const datasetHash = await server.app.services.artifacts.put(rows);
    const epochs = 6; // five epochs of slack between the first state upload and the end of the run
    const train = await server.app.services.queue.enqueue({
      type: "train",
      maxAttempts: 2,
      payload: {
        datasetHash,
        spec: tinyTrainSpec(model, {
          epochs,
          seed: 2,
          lora: { r: 4, alpha: 8, dropout: 0.1, target_modules: ["q_proj", "v_proj"] },
        }),
      },
    });
    const firstState = await waitFor(
      async () => (await listJobArtifacts(server.db.db, train.id)).find((a) => a.kind === "trainer_state"),
      240_000,
      50,
    );
    await agent.stop(); // the box goes away mid-run: its attempt ends as an infra error and is retried
    const lost = await listJobArtifacts(server.db.db, train.id);
    expect((await getJob(server.db.db, train.id))?.state).not.toBe("succeeded");
    agent = await startInProcessAgent(server, "trainer-2", { python, pollMs: 500 });
    const done = await finished(train.id);
    expect(done.error).toBeNull();
    expect([done.state, done.attempts]).toEqual(["succeeded", 2]);
    const record = done.result as {
      resumed_from_epoch?: number;
      snapshots: Array<{ epoch: number; artifact: string | null }>;
      steps: number;
      total_steps: number;
    };
    const k = record.resumed_from_epoch ?? 0;
    expect(k).toBeGreaterThanOrEqual(Number(firstState.meta.epoch));
    expect(k).toBeLessThan(epochs);
    expect(record.snapshots.map((s) => s.epoch)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(record.steps).toBe(record.total_steps);
    // epochs 1..k are the lost attempt's uploads, not trained again
    const lostAdapter = (e: number) => lost.find((a) => a.kind === "adapter" && a.meta.epoch === e)?.sha256;
    for (const s of record.snapshots.filter((x) => x.epoch <= k)) expect(s.artifact).toBe(lostAdapter(s.epoch));
    expect(record.snapshots.every((s) => s.artifact !== null)).toBe(true);
  }, 300_000);
});
