// `npm run bench -- grpo`: online RL on the tiny CPU model through the agent's real grpo handler
// (TRL GRPOTrainer + LoRA, rewards over the Unix socket from the isolated bwrap judge). Figures:
// optimizer steps/s and reward calls/s over the run's train time (generation, the reward round
// trip and the update are all inside a step), completions scored/s, the share of train time spent
// waiting for rewards; and, because the tiny model writes no code block (every completion is
// `unparseable`, scored without the judge), the judge's own throughput on the same reward path:
// parsed completions (half the reference, half the bug) graded per second by gradeCompletions.
// Ends with exactly one JSON line.
import { createHash } from "node:crypto";
import { mkdtemp, readFile } from "node:fs/promises";
import { Writable } from "node:stream";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { formatAnswer, GrpoJobPayload, GrpoJobResult, type TaskSpec } from "@agentlab/core";
import { Grader } from "../apps/agent/src/grading/grader";
import { ReferenceIds } from "../apps/agent/src/grading/reference-ids";
import { makeGradeBatchHandler } from "../apps/agent/src/jobs/grade-batch";
import { grpoJob } from "../apps/agent/src/jobs/grpo";
import { gradeCompletions } from "../apps/agent/src/jobs/grpo-reward";
import type { JobContext } from "../apps/agent/src/jobs/types";
import { findPython, runPython } from "../apps/agent/src/trainer/python";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const python = findPython(null, { root: join(root, "apps", "agent") });
const STEPS = 4;
const GENERATIONS = 4;
const JUDGE_REPS = 3;
const JUDGE_BATCH = 16;

const dir = await mkdtemp(join(tmpdir(), "agentlab-bench-grpo-"));
const model = join(dir, "model");
await runPython(
  "tiny-model",
  { output_dir: model, corpus: [join(root, "apps/agent/python/tests/fixtures/corpus.py.txt")], vocab_size: 512 },
  { python },
);
const task = (i: number): TaskSpec => ({
  id: `add-${i}`,
  source_group: `add/${i}`,
  language: "python",
  instruction: `Fix add_${i}.`,
  metadata: {},
  files: [{ path: "solution.py", role: "main", content: `def add_${i}(a, b):\n    return a - b\n` }],
  public_tests: [],
  hidden_tests: [
    {
      path: "test_hidden.py",
      content: `from solution import add_${i}\n\ndef test_add():\n    assert add_${i}(2, 3) == 5\n`,
    },
  ],
  reference: [{ path: "solution.py", content: `def add_${i}(a, b):\n    return a + b\n` }],
});
const tasks = Array.from({ length: 4 }, (_, i) => task(i));
const grader = new Grader(
  {
    backend: "bwrap",
    graderDir: join(root, "apps/agent/grader"),
    uid: 65534,
    gid: 65534,
    scratchDir: join(dir, "scratch"),
  },
  { workers: 2, limits: { wallTimeoutS: 20, testTimeoutS: 5, memoryMb: 256, pids: 48 } },
);
const refs = new ReferenceIds(grader);
// The handler logs its reward totals (batches = the trainer's reward calls): read them back from the log.
const logged: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    for (const line of String(chunk).split("\n")) if (line.trim()) logged.push(JSON.parse(line));
    done();
  },
});
const ctx = async (payload: Record<string, unknown>): Promise<JobContext> => ({
  jobId: "bench",
  attemptId: "a1",
  attempt: 1,
  earlierArtifacts: [],
  type: "grpo",
  payload,
  signal: new AbortController().signal,
  abortReason: () => null,
  log: pino({ level: "info" }, sink),
  emitLog: () => {},
  progress: () => {},
  // nothing is uploaded: the archive's hash stands for the store's answer
  uploadArtifact: async (path) =>
    createHash("sha256")
      .update(await readFile(path))
      .digest("hex"),
  workDir: await mkdtemp(join(dir, "work-")),
  agent: {
    serverUrl: "http://127.0.0.1:9",
    credential: "",
    stateDir: join(dir, "state"),
    python,
    sandboxBackend: "bwrap",
    sandboxOk: true,
  },
});

try {
  const payload = {
    splitId: "00000000-0000-4000-8000-000000000001",
    tasks: tasks.map((t) => ({ task: t, part: "train" })),
    spec: {
      base_model: model,
      local_files_only: true,
      device: "cpu",
      torch_threads: 1,
      lora: { r: 8, alpha: 16, dropout: 0, target_modules: ["q_proj", "k_proj", "v_proj", "o_proj"] },
      num_generations: GENERATIONS,
      max_completion_length: 32,
      max_steps: STEPS,
      snapshot_every_steps: STEPS,
    },
  };
  const out = await grpoJob(500, { grader, refs })(await ctx(payload));
  if (out.reason !== "succeeded") throw new Error(`grpo run ${out.reason}: ${out.error ?? ""}`);
  const rec = GrpoJobResult.parse(out.result);
  const totals = logged.find((l) => l.msg === "grpo rewards graded");
  const calls = Number(totals?.batches ?? Number.NaN);

  // The judge on the reward path: parsed completions, half passing, half failing, graded in one request each rep.
  const gradeBatch = makeGradeBatchHandler(grader, refs);
  const byId = new Map(GrpoJobPayload.parse(payload).tasks.map((t) => [t.task.id, t]));
  const judge: number[] = [];
  for (let r = 0; r < JUDGE_REPS; r++) {
    const items = Array.from({ length: JUDGE_BATCH }, (_, i) => {
      const t = task(i % tasks.length);
      const files = i % 2 === 0 ? t.reference : t.files;
      return { task_id: t.id, completion: formatAnswer(files.map((f) => ({ path: f.path, content: f.content }))) };
    });
    const started = performance.now();
    const verdicts = await gradeCompletions(await ctx({}), gradeBatch, byId, { id: r, step: 0, items });
    judge.push(JUDGE_BATCH / ((performance.now() - started) / 1000));
    const passed = verdicts.filter((v) => v.verdict === "pass").length;
    if (passed !== JUDGE_BATCH / 2) throw new Error(`judge control: ${passed} of ${JUDGE_BATCH} passed, expected half`);
  }
  const sorted = [...judge].sort((a, b) => a - b);
  const r2 = (x: number) => Number(x.toFixed(3));
  console.log(
    JSON.stringify({
      bench: "grpo",
      steps: rec.steps,
      num_generations: GENERATIONS,
      completions: rec.graded_completions,
      train_time_s: r2(rec.train_time_s),
      steps_per_s: r2(rec.steps / rec.train_time_s),
      steps_per_min: r2((60 * rec.steps) / rec.train_time_s),
      reward_calls: calls,
      reward_calls_per_s: r2(calls / rec.train_time_s),
      completions_scored_per_s: r2(rec.graded_completions / rec.train_time_s),
      reward_wait_share: r2(rec.grade_time_s / rec.train_time_s),
      unparseable: rec.step_metrics.reduce((n, s) => n + s.audit.unparseable, 0),
      judge_batch: JUDGE_BATCH,
      judge_grades_per_s: {
        median: r2(sorted[sorted.length >> 1] ?? 0),
        min: r2(sorted[0] ?? 0),
        max: r2(sorted.at(-1) ?? 0),
      },
    }),
  );
} finally {
  grader.close();
}
