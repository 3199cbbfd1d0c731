import { mkdtemp } from "node:fs/promises";
import { eq } from "drizzle-orm";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  claimJob,
  createEnrollmentToken,
  createSplit,
  enrollAgent,
  finishAttempt,
  importPool,
  recordProgress,
  schema,
  updateStage,
  type Db,
} from "@agentlab/db";
import {
  GradeBatchJobPayload,
  formatAnswer,
  sha256Hex,
  type ExperimentConfigInput,
  type TaskSpec,
} from "@agentlab/core";
import { createQueue } from "../../apps/web/server/queue";
import { loadEnv } from "../../apps/web/server/env";
import { createLogger } from "../../apps/web/server/logger";
import { createArtifactStore } from "../../apps/web/server/artifacts/store";
import { createSecretBox } from "../../apps/web/server/auth/secret-box";
import type { Services } from "../../apps/web/server/services";
import { createExperiment } from "../../apps/web/server/experiments/service";
import type { ExperimentRunner } from "../../apps/web/server/experiments/runner";
import { makePool, toJsonl } from "../fixtures/tasks/generate";
import { simTokenize } from "./helpers/sim-tokenize";
import { modelOf, simGenerateSummary, simGrade, simRunRecord } from "./helpers/sim-trainer";

export { adapterSha, simRunRecord } from "./helpers/sim-trainer";

// The agent side of the experiment protocol, driven from the test: it claims real queued jobs and
// answers them. Its "model" is a table saying which model fixes which task; its grader passes a
// candidate exactly when it equals the task's reference. Everything on the server side is real.

export type Behaviour = {
  fixes(model: string, task: TaskSpec): boolean;
  /** With samples > 1: whether answer `sample` of the task fixes it (default: `fixes` for every sample). */
  fixesSample?(model: string, task: TaskSpec, sample: number): boolean;
  maxNewTokens?(model: string): number | undefined;
  /** The adapter hash the simulated trainer reports having loaded (default: the one it was sent). */
  loadedAdapter?(model: string, sent: string | null): string | null;
  /** The method the simulated trainer reports (default: lora-fp32, what a CPU-only fleet resolves). */
  trainMethod?(seed: number): string;
  /** When true, this generate job fails (the trainer crashed); `split` from its dedupe key. */
  generateFails?(model: string, split: string): boolean;
  /** When true, this grade job fails as an infrastructure error (the grader never ran). */
  gradeInfraError?(model: string, taskId: string): boolean;
  /** A train sample's length in tokens, as the simulated tokenize job measures it. */
  sampleTokens?(taskKey: string): number;
  /** The result of a dpo job (helpers/sim-dpo.ts); without it a dpo job is unexpected. */
  dpo?(payload: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** The result of a score job (held-out dev pairs); without it a score job is unexpected. */
  score?(payload: Record<string, unknown>): Promise<Record<string, unknown>>;
  /**
   * The result of a grpo job (the real handler in experiment-grpo.test.ts); without it a grpo job
   * is unexpected. `record` stores a progress event of the job as the server does.
   */
  grpo?(
    payload: Record<string, unknown>,
    record: (event: Record<string, unknown>) => Promise<void>,
  ): Promise<Record<string, unknown>>;
};

/** Every spec the simulated agent received, by job type: what the server actually sent. */
export const received: { train: Record<string, unknown>[]; generate: Record<string, unknown>[] } = {
  train: [],
  generate: [],
};

export async function makeServices(db: Db): Promise<Services> {
  const dir = await mkdtemp(join(tmpdir(), "agentlab-exp-"));
  const env = loadEnv({ NODE_ENV: "test", AGENTLAB_DATA_DIR: dir, LOG_LEVEL: "silent" });
  return {
    env,
    db,
    log: createLogger("silent"),
    queue: createQueue(db),
    artifacts: createArtifactStore(join(dir, "artifacts")),
    secrets: createSecretBox("test-secret-test-secret-test-secret-0123"),
    agentHub: { disconnect: () => {} },
  };
}

export async function makeSplit(db: Db): Promise<{ splitId: string; tasks: Map<string, TaskSpec> }> {
  const pool = makePool(40, 2);
  const res = await importPool(db, {
    name: `exp-pool-${Math.random()}`,
    lines: [new TextEncoder().encode(toJsonl(pool))],
  });
  if (!res.ok) throw new Error("pool import failed");
  const { split } = await createSplit(db, { poolId: res.poolId, seed: 1, devRatio: 0.25, testRatio: 0.25 });
  return { splitId: split.id, tasks: new Map(pool.map((t) => [t.id, t])) };
}

export async function makeUser(db: Db, role: "member" | "viewer" = "member") {
  const [u] = await db
    .insert(schema.users)
    .values({ email: `${Math.random()}@x.test`, name: "u", passwordHash: "x", role })
    .returning();
  if (!u) throw new Error("no user");
  return u;
}

export const baseConfig = (splitId: string, over: Partial<ExperimentConfigInput> = {}): ExperimentConfigInput => ({
  name: "exp",
  splitId,
  teacher: { providerId: "00000000-0000-4000-8000-00000000000a" },
  datasetId: "00000000-0000-4000-8000-00000000000b",
  baseModel: { source: "path", ref: "/models/tiny" },
  training: { epochs: 2 },
  evaluation: { graderVersion: "sim-grader/1" },
  seeds: [1, 2],
  bootstrap: { iterations: 500, seed: 3 },
  ...over,
});

/** Creates the experiment with its data stages already done (collection is another engineer's runner). */
export async function startExperiment(
  s: Services,
  config: ExperimentConfigInput,
  createdBy: string | null = null,
): Promise<string> {
  const exp = await createExperiment(s.db, config, createdBy);
  await markDataReady(s.db, exp.id);
  return exp.id;
}

/** The experiment's data stages marked done with the harness's one SFT snapshot, so its next step is training. */
export async function markDataReady(db: Db, experimentId: string): Promise<void> {
  await updateStage(db, experimentId, "collect", { state: "succeeded" });
  await updateStage(db, experimentId, "verify", { state: "succeeded" });
  await updateStage(db, experimentId, "dataset", {
    state: "succeeded",
    output: { datasetId: "00000000-0000-4000-8000-00000000000b", datasetHash: sha256Hex("ds"), samples: 1, tasks: 1 },
  });
}

/** `shellJobs`: enrolled with the shell-job opt-in (the claim gives shell jobs only to such an agent). */
export async function makeAgent(db: Db, opts: { shellJobs?: boolean } = {}) {
  const { token } = await createEnrollmentToken(db, { name: `a${Math.random()}`, ttlS: 60, shellJobs: opts.shellJobs });
  const { agentId } = await enrollAgent(db, token);
  return { agentId, labels: [], gpuCount: 0, gpuMemoryMb: 0, sandbox: "bwrap", leaseTtlMs: 600_000 };
}

/** Answers one claimed job; returns false when nothing was queued. */
export async function agentStep(
  db: Db,
  fit: Awaited<ReturnType<typeof makeAgent>>,
  tasks: Map<string, TaskSpec>,
  behaviour: Behaviour,
  opts: { leaveTrainRunning?: boolean } = {},
) {
  const job = await claimJob(db, fit);
  if (!job) return { claimed: null };
  const p = job.payload as Record<string, unknown> & { spec?: Record<string, unknown> };
  let result: Record<string, unknown>;
  if (job.type === "train") {
    if (opts.leaveTrainRunning) return { claimed: job };
    received.train.push(p.spec ?? {});
    const seed = Number(p.spec?.seed);
    const method = behaviour.trainMethod?.(seed) ?? "lora-fp32";
    if (method !== "lora-fp32" && method !== "lora-bf16" && method !== "qlora-nf4")
      throw new Error(`unknown method ${method}`);
    result = simRunRecord(seed, method);
  } else if (job.type === "generate") {
    received.generate.push(p.spec ?? {});
    const model = modelOf(p.adapterSha256);
    const key = String(
      (await db.select({ k: schema.jobs.dedupeKey }).from(schema.jobs).where(eq(schema.jobs.id, job.jobId)))[0]?.k ??
        "",
    );
    if (behaviour.generateFails?.(model, /:(dev|test):gen:/.exec(key)?.[1] ?? "?")) {
      await finishAttempt(db, {
        jobId: job.jobId,
        attemptId: job.attemptId,
        reason: "user_error",
        exitCode: 1,
        signal: null,
        result: {},
        error: "CUDA error: an illegal memory access",
      });
      return { claimed: job };
    }
    const prompts = (p.spec?.prompts ?? []) as { task_id: string }[];
    // n answers per prompt, as the trainer's generate command returns them (one event per sample).
    const n = Number(p.spec?.samples ?? 1);
    const sampled = Boolean(p.spec?.do_sample) || n > 1;
    const outputs = prompts.flatMap(({ task_id }) => {
      const t = tasks.get(task_id);
      if (!t) throw new Error(`unknown task ${task_id}`);
      const main = t.files.filter((f) => f.role === "main");
      return Array.from({ length: n }, (_, i) => {
        const fixed = behaviour.fixesSample ? behaviour.fixesSample(model, t, i) : behaviour.fixes(model, t);
        const files = fixed
          ? t.reference.map((r) => ({ path: r.path, content: r.content }))
          : main.map((f) => ({ path: f.path, content: f.content }));
        return {
          task_id,
          sample_index: i,
          seed: sampled ? Number(p.spec?.seed) * 1000 + i : null,
          text: `Here is the fix.\n\n${formatAnswer(files)}`,
          finish_reason: "stop",
          completion_tokens: 1,
        };
      });
    });
    const maxNew = behaviour.maxNewTokens?.(model) ?? Number(p.spec?.max_new_tokens);
    const sent = typeof p.adapterSha256 === "string" ? p.adapterSha256 : null;
    const adapter = behaviour.loadedAdapter ? behaviour.loadedAdapter(model, sent) : sent;
    result = {
      outputs,
      summary: simGenerateSummary(
        String(p.spec?.base_model),
        adapter,
        sampled
          ? {
              do_sample: true,
              samples: n,
              temperature: Number(p.spec?.temperature),
              top_p: Number(p.spec?.top_p),
              seed: Number(p.spec?.seed),
              max_new_tokens: maxNew,
            }
          : { do_sample: false, samples: 1, temperature: 0, top_p: 1, seed: 0, max_new_tokens: maxNew },
        outputs.length,
      ),
    };
  } else if (job.type === "grade") {
    const task = p.task as TaskSpec;
    const key = String(
      (await db.select({ k: schema.jobs.dedupeKey }).from(schema.jobs).where(eq(schema.jobs.id, job.jobId)))[0]?.k ??
        "",
    );
    const model = /:grade:([^:]+):/.exec(key)?.[1] ?? "?";
    if (behaviour.gradeInfraError?.(model, task.id)) {
      await finishAttempt(db, {
        jobId: job.jobId,
        attemptId: job.attemptId,
        reason: "user_error",
        exitCode: 1,
        signal: null,
        result: {},
        error: "sandbox vanished",
      });
      return { claimed: job };
    }
    result = simGrade(task, p.candidate as { path: string; content: string }[], p.isolation);
  } else if (job.type === "grade-batch") {
    // Items keyed `model:task:sample` (grade-batches.ts); an infra error is that item's alone.
    const batch = GradeBatchJobPayload.parse(p);
    const byFp = new Map(batch.tasks.map((t) => [t.fingerprint, t.task]));
    const items = batch.items.map((it) => {
      const task = byFp.get(it.task);
      if (!task) throw new Error(`batch item ${it.key} names no task`);
      if (behaviour.gradeInfraError?.(it.key.split(":")[0] ?? "?", task.id))
        return { key: it.key, status: "error", reason: "infra_error", error: "sandbox vanished", grade: null };
      return { key: it.key, status: "graded", grade: simGrade(task, it.candidate, it.isolation) };
    });
    result = { items };
  } else if (job.type === "tokenize") {
    result = await simTokenize(db, p, behaviour.sampleTokens);
  } else if (job.type === "dpo" && behaviour.dpo) {
    result = await behaviour.dpo(p);
  } else if (job.type === "score" && behaviour.score) {
    result = await behaviour.score(p);
  } else if (job.type === "grpo" && behaviour.grpo) {
    // The job's progress is stored as the gateway stores it: one row per event of this attempt.
    let seq = 0;
    result = await behaviour.grpo(p, (event) =>
      recordProgress(db, fit.agentId, job.jobId, job.attemptId, seq++, event).then(() => undefined),
    );
  } else throw new Error(`unexpected job type ${job.type}`);
  await finishAttempt(db, {
    jobId: job.jobId,
    attemptId: job.attemptId,
    reason: "succeeded",
    exitCode: 0,
    signal: null,
    result,
    error: null,
  });
  return { claimed: job };
}

/** Ticks the runner and lets the agent drain the queue until the experiment leaves `running`. */
export async function drive(
  db: Db,
  runner: Pick<ExperimentRunner, "advance">,
  experimentId: string,
  fit: Awaited<ReturnType<typeof makeAgent>>,
  tasks: Map<string, TaskSpec>,
  behaviour: Behaviour,
) {
  for (let round = 0; round < 40; round++) {
    await runner.advance(experimentId);
    while ((await agentStep(db, fit, tasks, behaviour)).claimed);
    const [row] = await db
      .select({ state: schema.experiments.state, error: schema.experiments.error })
      .from(schema.experiments)
      .where(eqId(experimentId));
    if (row && row.state !== "running") return row;
  }
  throw new Error("experiment did not finish in 40 rounds");
}

const eqId = (id: string) => eq(schema.experiments.id, id);
