import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { getJob, listAttempts, listJobArtifacts, readLogs, readProgress } from "@agentlab/db";
import { TrainJobResult } from "@agentlab/core";
import { jobHandlers } from "../../apps/agent/src/jobs";
import { findPython } from "../../apps/agent/src/trainer/python";
import { buildTinyModel } from "./helpers/tiny-model";
import { startInProcessAgent, startTestServer, waitFor, type TestServer } from "./helpers/server";

// Multi-GPU training on a box without GPUs: a train job with world_size 2 runs under torchrun as 2 gloo CPU
// ranks (the agent's AGENTLAB_TRAIN_CPU_RANKS opt-in) through the real queue, and returns the run
// record and snapshots of one process within float tolerance; a killed rank fails the job with
// torchrun's account of it and leaves no process behind; cancel stops every rank.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const python = findPython(null, { root: join(ROOT, "apps/agent") });
let server: TestServer;
let agent: Awaited<ReturnType<typeof startInProcessAgent>>;
let model: string;
let datasetHash: string;

// Unequal lengths (0–3 extra lines): the ranks' shares of a window hold different token counts.
const sample = (i: number) => ({
  messages: [
    { role: "system", content: "You fix Python programs." },
    {
      role: "user",
      content: `Fix add_${i}:\ndef add_${i}(a, b):\n${"    # keep a and b\n".repeat(i % 4)}    return a - b`,
    },
    { role: "assistant", content: `\`\`\`python\ndef add_${i}(a, b):\n    return a + b\n\`\`\`` },
  ],
});

beforeAll(async () => {
  server = await startTestServer({ AGENTLAB_LEASE_TTL_MS: "30000", AGENTLAB_HEARTBEAT_MS: "1000" });
  model = await buildTinyModel(python);
  // 2 epochs of 5 windows (batch 2 x accumulation 2), the last one short: rank 1 idles in it.
  const jsonl = Array.from({ length: 17 }, (_, i) => JSON.stringify(sample(i))).join("\n") + "\n";
  datasetHash = await server.app.services.artifacts.put(jsonl);
  agent = await startInProcessAgent(server, "multi-rank", {
    python,
    pollMs: 300,
    handlers: jobHandlers({ graceMs: 2000, training: { gpus: 0, cpuRanks: true } }),
  });
}, 300_000);
afterAll(async () => {
  await agent?.stop();
  await server?.close();
});

const enqueueTrain = (worldSize: number, epochs = 2) =>
  server.app.services.queue.enqueue({
    type: "train",
    maxAttempts: 1,
    payload: {
      datasetHash,
      spec: {
        base_model: model,
        epochs,
        batch_size: 2,
        grad_accum: 2,
        max_length: 128,
        seed: 1,
        learning_rate: 5e-3,
        lr_schedule: "constant",
        device: "cpu",
        local_files_only: true,
        torch_threads: 1,
        lora: { r: 4, alpha: 8, dropout: 0, target_modules: ["q_proj", "v_proj", "down_proj"] },
        world_size: worldSize,
      },
    },
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

/** Live (not zombie) processes of this agent's jobs: their command line names its state dir. */
async function jobProcesses(): Promise<Array<{ pid: number; rank: string | null }>> {
  const out: Array<{ pid: number; rank: string | null }> = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const cmd = await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => "");
    if (!cmd.includes(agent.stateDir)) continue;
    const stat = await readFile(`/proc/${name}/stat`, "utf8").catch(() => "");
    if (!stat || /^\d+ \(.*\) [ZX]/.test(stat)) continue;
    const env = await readFile(`/proc/${name}/environ`, "utf8").catch(() => "");
    const rank = env.split("\0").find((e) => e.startsWith("RANK="));
    out.push({ pid: Number(name), rank: rank ? rank.slice(5) : null });
  }
  return out;
}

/** Once the job reported its first step and both ranks' processes are alive. */
const trainingOnBothRanks = (id: string) =>
  waitFor(
    async () => {
      const j = await getJob(server.db.db, id);
      const step = (j?.progress as { step?: number } | null)?.step ?? 0;
      return step >= 1 && (await jobProcesses()).filter((p) => p.rank !== null).length === 2;
    },
    120_000,
    100,
  );

const noneLeft = () => waitFor(async () => (await jobProcesses()).length === 0, 15_000, 200);

const close = (a: number, b: number) => expect(Math.abs(a - b)).toBeLessThanOrEqual(1e-4 * Math.max(1, Math.abs(b)));

describe("multi-rank train jobs (torchrun, gloo on the CPU)", () => {
  it("a world_size 2 job returns one process's run record and snapshots, with rank 0's progress only", async () => {
    const one = await enqueueTrain(1);
    const two = await enqueueTrain(2);
    const [d1, d2] = [await finished(one.id), await finished(two.id)];
    expect(d1.error).toBeNull();
    expect(d2.error).toBeNull();
    expect([d1.state, d2.state]).toEqual(["succeeded", "succeeded"]);
    const r1 = TrainJobResult.parse(d1.result);
    const r2 = TrainJobResult.parse(d2.result);
    expect([r1.world_size, r2.world_size]).toEqual([1, 2]);
    expect(r2.steps).toBe(r1.steps);
    expect(r2.total_steps).toBe(10);
    // the supervised tokens are all-reduced across the ranks: exactly the single process's
    expect(r2.supervised_tokens).toBe(r1.supervised_tokens);
    expect(r2.snapshots.map((s) => s.epoch)).toEqual([1, 2]);
    r2.snapshots.forEach((s, i) => close(s.train_loss, r1.snapshots[i]?.train_loss ?? Number.NaN));
    close(r2.final_train_loss ?? Number.NaN, r1.final_train_loss ?? Number.NaN);
    // one archive per epoch, uploaded from rank 0's snapshots
    const artifacts = await listJobArtifacts(server.db.db, two.id);
    expect(artifacts.map((a) => a.name).sort()).toEqual(["adapter-epoch-1", "adapter-epoch-2"]);
    expect(r2.snapshots.map((s) => s.artifact)).toEqual(
      ["adapter-epoch-1", "adapter-epoch-2"].map((n) => artifacts.find((a) => a.name === n)?.sha256),
    );
    // one progress event per step: rank 1's events never reach the job
    const [attempt] = await listAttempts(server.db.db, two.id);
    const steps = (await readProgress(server.db.db, attempt?.id ?? "")).map((p) => (p.data as { step: number }).step);
    expect(steps).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    await noneLeft();
  });

  it("a killed rank fails the job with torchrun's account of it, and no rank is left running", async () => {
    // 30 epochs: far longer than the kill takes; the same run with 2 epochs succeeds above.
    const job = await enqueueTrain(2, 30);
    const rank1 = await waitFor(
      async () => {
        const j = await getJob(server.db.db, job.id);
        const step = (j?.progress as { step?: number } | null)?.step ?? 0;
        const r = step >= 1 ? (await jobProcesses()).find((p) => p.rank === "1") : undefined;
        return r ?? null;
      },
      120_000,
      100,
    );
    process.kill(rank1.pid, "SIGKILL");
    const done = await finished(job.id);
    expect(done.state).toBe("failed");
    expect(done.terminalReason).toBe("infra_error");
    expect(done.error).toMatch(/rank 1 .*SIGKILL|rank 1 .*-9/);
    expect(done.error).toContain("torchrun exited");
    await noneLeft();
    const [attempt] = await listAttempts(server.db.db, job.id);
    const log = (await readLogs(server.db.db, attempt?.id ?? "", -1, 5000)).map((l) => l.data).join("");
    expect(log).toContain("ChildFailedError");
  });

  it("ranks die with their launcher: SIGKILL of the job's process group (a cancel's grace run out) leaves no rank", async () => {
    // torchrun starts each rank in a session of its own, so the group kill reaches torchrun and the
    // trainer's launcher only; the ranks must follow torchrun (without that, they lived on: the
    // cancel test failed under load, a rank left running 15 s after the job was canceled).
    const job = await enqueueTrain(2, 30);
    await trainingOnBothRanks(job.id);
    for (const p of (await jobProcesses()).filter((x) => x.rank === null)) process.kill(p.pid, "SIGKILL");
    await noneLeft();
    expect((await finished(job.id)).state).toBe("failed");
  });

  it("cancel stops every rank and the launcher", async () => {
    const job = await enqueueTrain(2, 30);
    await trainingOnBothRanks(job.id);
    await server.app.services.queue.cancel(job.id);
    const done = await finished(job.id);
    expect(done.state).toBe("canceled");
    await noneLeft();
  });
});
