import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventEmitter } from "node:events";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pino from "pino";
import { getJob, listAttempts } from "@agentlab/db";
import { epochUploads, trainerJob } from "../../apps/agent/src/jobs/trainer-common";
import { failJobsOnUnhandledRejections } from "../../apps/agent/src/background-failures";
import type { JobHandler } from "../../apps/agent/src/jobs/types";
import { tokenizePayload } from "./helpers/payloads";
import { startInProcessAgent, startTestServer, waitFor, type TestServer } from "./helpers/server";

// A background failure in the agent (an adapter upload the server refuses, any rejection nobody
// awaited) fails the job it belongs to with its reason, and the agent process stays up.

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let s: TestServer;
let dir = "";

beforeAll(async () => {
  // A limit smaller than one adapter: every adapter upload is refused (413, not retried).
  s = await startTestServer({ AGENTLAB_MAX_UPLOAD_BYTES: "1024" });
  dir = await mkdtemp(join(tmpdir(), "agentlab-bgfail-"));
});
afterAll(async () => {
  await s?.close();
  await rm(dir, { recursive: true, force: true });
});

const trainPayload = () => ({
  datasetHash: "b".repeat(64),
  spec: {
    base_model: "tiny",
    epochs: 1,
    batch_size: 1,
    grad_accum: 1,
    max_length: 32,
    seed: 1,
    learning_rate: 0.01,
    lr_schedule: "constant" as const,
    device: "cpu" as const,
    local_files_only: true,
    lora: { r: 4, alpha: 8, dropout: 0, target_modules: ["q_proj"] },
  },
});
const ended = (id: string) =>
  waitFor(
    async () =>
      ((j) => (j && ["succeeded", "failed", "canceled"].includes(j.state) ? j : null))(await getJob(s.db.db, id)),
    60_000,
  );

describe("background failures in the agent", () => {
  it("a refused adapter upload fails the train job with the reason; the agent keeps taking work", async () => {
    const adapter = join(dir, "adapter");
    await mkdir(adapter);
    await writeFile(join(adapter, "adapter_model.bin"), Buffer.alloc(64 * 1024, 7));
    // The train job's own upload chain (epochUploads inside trainerJob), with the trainer replaced
    // by a report of one epoch and a pause in which the failed upload sits unawaited: what used to
    // end the agent process with an unhandled rejection.
    const train: JobHandler = trainerJob("train", 500, async (ctx) => {
      const uploads = epochUploads(ctx);
      uploads.add({
        epoch: 1,
        path: adapter,
        sha256: "c".repeat(64),
        train_loss: 1,
        eval_loss: null,
        step: 1,
        files: [],
      });
      await new Promise((r) => setTimeout(r, 1500));
      await uploads.done();
      return { reason: "infra_error", error: "the upload did not fail" };
    });
    let tokenized = 0;
    const agent = await startInProcessAgent(s, "uploader", {
      pollMs: 100,
      python: "python3",
      handlers: {
        train,
        tokenize: async () => (tokenized++, { reason: "user_error", error: "probe job" }),
      },
    });
    try {
      const job = await s.app.services.queue.enqueue({ type: "train", maxAttempts: 1, payload: trainPayload() });
      const done = await ended(job.id);
      expect(done).toMatchObject({ state: "failed", terminalReason: "infra_error" });
      expect(done.error).toMatch(/the adapter of epoch 1 could not be uploaded: .*exceeds 1024 bytes/);
      // Still alive: it claims and runs the next job.
      const probe = await s.app.services.queue.enqueue({
        type: "tokenize",
        maxAttempts: 1,
        payload: tokenizePayload(),
      });
      await ended(probe.id);
      expect(tokenized).toBe(1);
    } finally {
      await agent.stop();
    }
  }, 90_000);

  it("an unhandled rejection fails the running job with its message and the supervisor carries on", async () => {
    const proc = new EventEmitter();
    const blocked: JobHandler = (ctx) =>
      new Promise((resolve) =>
        ctx.signal.addEventListener("abort", () => resolve({ reason: "infra_error", error: "stopped" }), {
          once: true,
        }),
      );
    const agent = await startInProcessAgent(s, "rejecting", { pollMs: 100, handlers: { tokenize: blocked } });
    const off = failJobsOnUnhandledRejections(proc as never, agent.supervisor, pino({ level: "silent" }));
    try {
      const job = await s.app.services.queue.enqueue({
        type: "tokenize",
        maxAttempts: 1,
        payload: tokenizePayload(),
      });
      await waitFor(async () => (await getJob(s.db.db, job.id))?.state === "running");
      proc.emit("unhandledRejection", new Error("socket hang up in a background upload"));
      const done = await ended(job.id);
      expect(done).toMatchObject({ state: "failed", terminalReason: "infra_error" });
      expect(done.error).toBe(
        "agent failure during the job: unhandled rejection: socket hang up in a background upload",
      );
      expect((await listAttempts(s.db.db, job.id)).length).toBe(1);
      // The next job is claimed as usual.
      const next = await s.app.services.queue.enqueue({
        type: "tokenize",
        maxAttempts: 1,
        payload: tokenizePayload(),
      });
      await waitFor(async () => (await getJob(s.db.db, next.id))?.state === "running");
      await s.app.services.queue.cancel(next.id);
    } finally {
      off();
      await agent.stop();
    }
  }, 60_000);

  it("in a real process the guard keeps it alive; without it Node exits (positive control)", async () => {
    const guardModule = join(ROOT, "apps/agent/src/background-failures.ts");
    const script = (guard: boolean) => `
      import { failJobsOnUnhandledRejections } from ${JSON.stringify(guardModule)};
      const failed = [];
      ${guard ? "failJobsOnUnhandledRejections(process, { failRunning: (w) => failed.push(w) }, { error() {} });" : ""}
      Promise.reject(new Error("upload refused"));
      setTimeout(() => { console.log(JSON.stringify({ alive: true, failed })); }, 300);
    `;
    const file = (guard: boolean) => join(dir, `guard-${guard}.mts`);
    const exec = async (guard: boolean) => {
      await writeFile(file(guard), script(guard));
      try {
        const { stdout } = await run(process.execPath, ["--import", "tsx", file(guard)], { cwd: ROOT });
        return { code: 0, out: stdout };
      } catch (err) {
        return { code: (err as { code?: number }).code ?? -1, out: "" };
      } finally {
        await rm(file(guard), { force: true });
      }
    };
    const guarded = await exec(true);
    expect(guarded.code).toBe(0);
    expect(JSON.parse(guarded.out)).toEqual({ alive: true, failed: ["unhandled rejection: upload refused"] });
    const bare = await exec(false);
    expect(bare.code).not.toBe(0);
  }, 60_000);
});
