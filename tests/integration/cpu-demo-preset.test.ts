import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReadStream, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { text } from "node:stream/consumers";
import {
  CPU_DEMO_SHAPE,
  CPU_DEMO_SPLIT,
  cpuDemoWarmupSamples,
  parseJobPayload,
  parseJobResult,
  promptTemplateText,
  sftLine,
} from "@agentlab/core";
import { getJob, getSplit, importPool, listAttempts, readProgress } from "@agentlab/db";
import { LEARNABLE_POOL_FILE, LEARNABLE_POOL_NAME } from "../../apps/web/server/bootstrap/builtin-pool";
import { splitTasks } from "../../apps/web/server/experiments/tasks";
import { findPython } from "../../apps/agent/src/trainer/python";
import { learnableSplit } from "../../scripts/learning-proof";
import { callerAs } from "./helpers/callers";
import { jobEnded } from "./helpers/job-ends";
import { startInProcessAgent, startTestServer, type TestServer } from "./helpers/server";

// The CPU demo preset on the server and a real agent: one call makes the learnable pool's split
// with the preset's parameters (the split `npm run demo` makes), takes the reference oracle (an
// admin's call adds it; a member's is refused while there is none) and enqueues the warmed base's
// tiny-model job, whose warm-up data is the preset's samples of that split's train tasks. The
// agent builds it from the store's blobs (here with the warm-up cut to a few steps: the preset's
// own 250 take minutes, and the learning proof builds that recipe) and reports its steps.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const python = findPython(null, { root: join(ROOT, "apps/agent") });
let server: TestServer;
let poolId = "";

beforeAll(async () => {
  server = await startTestServer();
  const res = await importPool(server.db.db, {
    name: LEARNABLE_POOL_NAME,
    builtin: true,
    lines: createReadStream(LEARNABLE_POOL_FILE),
  });
  if (!res.ok) throw new Error("learnable pool import failed");
  poolId = res.poolId;
}, 120_000);
afterAll(async () => {
  await server?.close();
});

const blob = async (sha256: string) => text(await server.app.services.artifacts.read(sha256));

describe("the CPU demo preset", () => {
  it("prepares the demo's split, the oracle and the warmed base's job; the agent builds it", async () => {
    const { services } = server.app;
    const member = await callerAs(services, "member");
    // No reference provider yet: a member cannot add one.
    await expect(member.experiments.cpuDemo()).rejects.toThrow(/reference oracle.*an admin adds it/);
    const admin = await callerAs(services, "admin");
    const setup = await admin.experiments.cpuDemo();

    // The split `npm run demo` and the learning proof use (createSplit returns it for the same parameters).
    const split = await getSplit(services.db, setup.splitId);
    expect(split).toMatchObject({ poolId, seed: CPU_DEMO_SPLIT.seed });
    expect((await learnableSplit(services.db, poolId)).split.id).toBe(setup.splitId);
    // Once there is an oracle, a member's call takes it, and the same split.
    const again = await member.experiments.cpuDemo();
    expect([again.splitId, again.providerId]).toEqual([setup.splitId, setup.providerId]);
    await services.queue.cancel(again.tinyModelJobId);

    // The job carries the preset's recipe, built from the split's train tasks only.
    const job = await getJob(services.db, setup.tinyModelJobId);
    const parsed = parseJobPayload("tiny-model", job?.payload);
    if (!parsed.ok) throw new Error(parsed.error);
    const payload = parsed.payload;
    const train = await splitTasks(services.db, setup.splitId, "train");
    expect(payload.trainTaskIds).toEqual(train.map((t) => t.id));
    expect(payload.shape).toMatchObject({ vocab_size: CPU_DEMO_SHAPE.vocab, num_layers: CPU_DEMO_SHAPE.layers });
    expect(payload.warmup).toMatchObject({ steps: CPU_DEMO_SHAPE.warmupSteps, batchSize: CPU_DEMO_SHAPE.warmupBatch });
    expect(await blob(payload.warmup?.datasetSha256 ?? "")).toBe(
      `${cpuDemoWarmupSamples(train).map(sftLine).join("\n")}\n`,
    );
    expect(await blob(payload.textSha256s[0] ?? "")).toBe(promptTemplateText(train));
    const dev = await splitTasks(services.db, setup.splitId, "test");
    const corpus = await blob(payload.corpusSha256);
    for (const t of dev) expect(corpus).not.toContain(`"id":"${t.id}"`);

    // The agent builds it (the same payload, a 3-step warm-up) and reports the warm-up's steps.
    await services.queue.cancel(setup.tinyModelJobId);
    const warmup = payload.warmup;
    if (!warmup) throw new Error("no warm-up in the preset's job");
    const short = await services.queue.enqueue({
      type: "tiny-model",
      payload: { ...payload, warmup: { ...warmup, steps: 3, batchSize: 4 } },
    });
    const agent = await startInProcessAgent(server, "cpu-demo", { python, pollMs: 300 });
    try {
      const done = await jobEnded(services.db, short.id);
      expect([done.state, done.error]).toEqual(["succeeded", null]);
      const built = parseJobResult("tiny-model", done.result)?.tinyModel;
      expect(built?.warmup).toMatchObject({ steps: 3, dataset_sha256: warmup.datasetSha256 });
      expect(built?.warmup?.task_ids).toEqual(payload.trainTaskIds);
      // The corpus and the template text both fed the tokenizer.
      expect(built?.corpus_sha256).toHaveLength(2);
      expect(existsSync(join(built?.path ?? "", "agentlab-warmup.json"))).toBe(true);
      expect(JSON.parse(readFileSync(join(built?.path ?? "", "agentlab-warmup.json"), "utf8")).steps).toBe(3);
      const [attempt] = await listAttempts(services.db, short.id);
      const steps = (await readProgress(services.db, attempt?.id ?? "")).map((p) => p.data);
      expect(steps.at(-1)).toMatchObject({ event: "progress", step: 3, total_steps: 3 });
      // The form reads the build through the picker's job view.
      const view = await member.models.job({ jobId: short.id });
      expect(view).toMatchObject({ state: "succeeded", warmup: { step: 3, totalSteps: 3 } });
      expect(view.tinyModel?.path).toBe(built?.path);
    } finally {
      await agent.stop();
    }
  }, 300_000);
});
