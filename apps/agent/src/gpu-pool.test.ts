import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GpuPool, gpuNeed, pinGpus } from "./gpu-pool";
import { jobHandlers } from "./jobs";
import type { JobContext, JobOutcome } from "./jobs/types";

// With AGENTLAB_CONCURRENCY > 1 each running GPU job gets its own GPUs.
describe("GpuPool", () => {
  it("leases the lowest free indices, takes nothing when short, and releases once", () => {
    const pool = new GpuPool(4);
    const a = pool.acquire(2);
    const b = pool.acquire(1);
    expect([a?.indices, b?.indices]).toEqual([[0, 1], [2]]);
    expect(pool.acquire(2)).toBeNull();
    expect(pool.available).toBe(1); // the refused lease took nothing
    a?.release();
    a?.release(); // idempotent: a second release does not free GPUs someone else holds now
    const c = pool.acquire(2);
    expect(c?.indices).toEqual([0, 1]);
    expect(pool.acquire(2)).toBeNull();
    expect(pool.available).toBe(1);
    expect(() => pool.acquire(0)).toThrow(/positive integer/);
  });

  it("reads a trainer job's GPU need from its payload", () => {
    const spec = (s: Record<string, unknown>) => ({ spec: s });
    expect(gpuNeed("train", spec({ world_size: 4, method: "lora-bf16" }))).toEqual({ kind: "exact", gpus: 4 });
    expect(gpuNeed("train", spec({ world_size: 2, device: "auto" }))).toEqual({ kind: "exact", gpus: 2 });
    expect(gpuNeed("dpo", spec({ method: "qlora-nf4" }))).toEqual({ kind: "exact", gpus: 1 });
    expect(gpuNeed("generate", spec({ device: "cuda" }))).toEqual({ kind: "exact", gpus: 1 });
    expect(gpuNeed("generate", spec({ backend: "vllm" }))).toEqual({ kind: "exact", gpus: 1 });
    expect(gpuNeed("train", spec({ world_size: 2, method: "lora-fp32" }))).toEqual({ kind: "cpu" });
    expect(gpuNeed("generate", spec({ device: "cpu" }))).toEqual({ kind: "cpu" });
    expect(gpuNeed("generate", spec({ device: "auto" }))).toEqual({ kind: "auto" });
    expect(gpuNeed("tokenize", spec({ model: "m" }))).toEqual({ kind: "cpu" });
    // grpo is one trainer process: a GPU method or CUDA device pins one card, CPU pins none
    expect(gpuNeed("grpo", spec({ method: "qlora-nf4" }))).toEqual({ kind: "exact", gpus: 1 });
    expect(gpuNeed("grpo", spec({ device: "cuda" }))).toEqual({ kind: "exact", gpus: 1 });
    expect(gpuNeed("grpo", spec({ device: "cpu" }))).toEqual({ kind: "cpu" });
    expect(gpuNeed("grpo", spec({ method: "lora-fp32" }))).toEqual({ kind: "cpu" });
    expect(gpuNeed("grpo", spec({ device: "auto" }))).toEqual({ kind: "auto" });
  });

  it("pins CUDA_VISIBLE_DEVICES: the lease's GPUs, none for a CPU job, a refusal when short", () => {
    const base = { PATH: "/bin" };
    expect(pinGpus(undefined, { kind: "exact", gpus: 1 }, base)).toEqual({ env: undefined, lease: null });
    expect(pinGpus(new GpuPool(0), { kind: "cpu" }, base)).toEqual({ env: undefined, lease: null });
    const pool = new GpuPool(2);
    const two = pinGpus(pool, { kind: "exact", gpus: 2 }, base);
    if ("refusal" in two) throw new Error(two.refusal);
    expect(two.env).toEqual({ PATH: "/bin", CUDA_DEVICE_ORDER: "PCI_BUS_ID", CUDA_VISIBLE_DEVICES: "0,1" });
    expect(pinGpus(pool, { kind: "exact", gpus: 1 }, base)).toEqual({
      refusal: "needs 1 free GPU(s) on this agent; 0 of 2 are free (the others are held by running jobs)",
    });
    // an auto job with nothing free, and a CPU job, see no GPU (they cannot land on a held card)
    for (const need of [{ kind: "auto" }, { kind: "cpu" }] as const) {
      const p = pinGpus(pool, need, base);
      expect("refusal" in p ? p : p.env?.CUDA_VISIBLE_DEVICES).toBe("");
    }
    two.lease?.release();
    const auto = pinGpus(pool, { kind: "auto" }, base);
    expect("refusal" in auto ? null : auto.env?.CUDA_VISIBLE_DEVICES).toBe("0");
  });
});

// Through the real generate handler and runPython: a stand-in interpreter records the
// CUDA_VISIBLE_DEVICES it was started with and waits for a go file, then fails (no result).
describe("concurrent GPU jobs on one agent", () => {
  let dir = "";
  let python = "";
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "gpu-pool-"));
    python = join(dir, "python");
    await writeFile(
      python,
      `#!/bin/sh\necho "$CUDA_VISIBLE_DEVICES" > "${dir}/seen.$$"\nwhile [ ! -e "${dir}/go" ]; do sleep 0.05; done\nexit 1\n`,
    );
    await chmod(python, 0o755);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const seen = async () => {
    const files = (await readdir(dir)).filter((f) => f.startsWith("seen."));
    return (await Promise.all(files.map((f) => readFile(join(dir, f), "utf8")))).map((s) => s.trim()).sort();
  };
  const until = async (ok: () => Promise<boolean>) => {
    for (let i = 0; i < 400 && !(await ok()); i++) await new Promise((r) => setTimeout(r, 25));
  };

  it("concurrent jobs get disjoint GPUs, one with none free is refused, and every GPU returns (failure, cancel)", async () => {
    const pool = new GpuPool(3);
    const generate = jobHandlers({ graceMs: 200 }).generate;
    if (!generate) throw new Error("no generate handler");
    const job = (id: string, device: string, signal = new AbortController().signal): Promise<JobOutcome> => {
      const ctx: JobContext = {
        jobId: id,
        attemptId: id,
        earlierArtifacts: [],
        attempt: 1,
        type: "generate",
        payload: {
          spec: { base_model: "m", prompts: [{ task_id: "t", messages: [{ role: "user", content: "x" }] }], device },
        },
        signal,
        abortReason: () => (signal.aborted ? "canceled" : null),
        log: pino({ level: "silent" }),
        emitLog: () => {},
        progress: () => {},
        uploadArtifact: async () => "",
        workDir: dir,
        agent: {
          serverUrl: "",
          credential: "",
          stateDir: dir,
          python,
          sandboxBackend: "process",
          sandboxOk: false,
          gpus: pool,
        },
      };
      return generate(ctx);
    };
    const cancelA = new AbortController();
    const a = job("a", "cuda", cancelA.signal);
    const b = job("b", "cuda");
    await until(async () => (await seen()).length === 2);
    expect(await seen()).toEqual(["0", "1"]); // disjoint: each process sees one GPU of its own
    expect(pool.available).toBe(1);
    // a CPU job alongside sees no GPU at all
    const cpu = job("c", "cpu");
    await until(async () => (await seen()).length === 3);
    expect(await seen()).toEqual(["", "0", "1"]);
    expect(pool.available).toBe(1);
    // cancel: the stopped job's GPU returns to the pool while the other still runs
    cancelA.abort();
    expect(await a).toMatchObject({ reason: "canceled" });
    expect(pool.available).toBe(2);
    const d = job("d", "cuda");
    await until(async () => (await seen()).length === 4);
    expect((await seen()).filter((s) => s === "0")).toHaveLength(2); // a's GPU 0, now d's; b keeps 1
    // the pool is full: a job needing a GPU is refused before anything starts (requeued by the server)
    const e = job("e", "cuda");
    const e2 = job("e2", "cuda");
    expect(await e2).toEqual({
      reason: "infra_error",
      error: "generate job needs 1 free GPU(s) on this agent; 0 of 3 are free (the others are held by running jobs)",
    });
    expect(pool.available).toBe(0);
    await writeFile(join(dir, "go"), "");
    const rest = await Promise.all([b, cpu, d, e]);
    expect(rest.map((o) => o.reason)).toEqual(["infra_error", "infra_error", "infra_error", "infra_error"]);
    expect(pool.available).toBe(3); // every failed run released its GPU
  });
});
