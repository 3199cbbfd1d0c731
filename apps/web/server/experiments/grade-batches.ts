import {
  addGradeJob,
  getSplit,
  inProcessTaskIds,
  insertEvaluations,
  modelsWithGenerations,
  setGradeState,
  stageJobs,
  type GenerationRow,
  type NewEvaluation,
} from "@agentlab/db";
import {
  DomainError,
  GRADE_BATCH_MAX_ITEMS,
  GenerationProtocol,
  batchItemOutcomes,
  gradeBatchId,
  gradeBatchMaxDurationS,
  gradeBatchPayloads,
  isTerminal,
  mainPaths,
  parseAnswer,
  parseJobPayload,
  parseJobResult,
  type BatchItemOutcome,
  type CandidateFile,
  type EnqueueJob,
  type ExperimentConfig,
  type GradeBatchInput,
  type GradingIsolation,
  type TaskSpec,
  type GenerationSplit,
} from "@agentlab/core";
import type { Services } from "../services";

// The grading half of an evaluation (evaluate.ts): stored answers graded through the queue. An
// answer's first grading goes in a `grade-batch` job of up to 64 answers (of any model and task of
// the split), so the queue sees tens of jobs, not thousands. An answer that ends without a verdict
// (its item failed, or the whole batch did) is retried ALONE, as a single `grade` job, within the
// same MAX_GRADE_ATTEMPTS jobs per answer: one bad candidate cannot sink a batch twice. Batches run
// once (maxAttempts 1) for the same reason; the queue's own retries are for single jobs.

export const MAX_GRADE_ATTEMPTS = 3;
/** A batch smaller than this waits for more answers while some model's answers are not stored yet. */
const MIN_EARLY_BATCH = 32;

/** What grading needs of an evaluation step (evaluate.ts's context). */
type Ctx = {
  experimentId: string;
  config: ExperimentConfig;
  split: GenerationSplit;
  tasks: TaskSpec[];
  models: { key: string }[];
};
type EvalModel = { key: string };

/** Answers never graded yet, gathered over every model of one step, then enqueued in batches. */
export type GradeBatchQueue = { fresh: { g: GenerationRow; input: GradeBatchInput }[] };
export const newGradeBatchQueue = (): GradeBatchQueue => ({ fresh: [] });

/** The answer's name inside a batch (its result carries it back). */
const itemKey = (g: GenerationRow): string => `${g.modelKey}:${g.taskId}:${g.sampleIndex}`;

// The answer itself stays in experiment_generations (whether it parsed included); the job carries the candidate files only.
function candidateOf(t: TaskSpec, g: GenerationRow): CandidateFile[] {
  const answer = parseAnswer(g.text, mainPaths(t));
  // An unparseable answer is graded too (with the buggy file unchanged) so that its row carries the grader's version.
  return answer.ok
    ? answer.files
    : t.files.filter((f) => f.role === "main").map((f) => ({ path: f.path, content: f.content }));
}

/** A retry alone: one answer, one `grade` job (its attempt number in the dedupe key). */
function gradeJob(ctx: Ctx, m: EvalModel, t: TaskSpec, g: GenerationRow, isolation: GradingIsolation): EnqueueJob {
  const attempt = g.gradeJobIds.length + 1;
  const sample = g.sampleIndex > 0 ? `:s${g.sampleIndex}` : "";
  const key = `exp:${ctx.experimentId}:${ctx.split}:grade:${m.key}:${t.id}${sample}${attempt > 1 ? `:a${attempt}` : ""}`;
  return {
    type: "grade" as const,
    experimentId: ctx.experimentId,
    dedupeKey: key,
    maxDurationS: 900,
    payload: { task: t, candidate: candidateOf(t, g), isolation },
  };
}

type StageJob = Awaited<ReturnType<typeof stageJobs>>[number];

/** What the answer's last grade job says about it, whether that job was a batch or a single grade. */
function outcomeOf(job: StageJob, g: GenerationRow, batches: Map<string, Map<string, BatchItemOutcome>>) {
  if (job.type === "grade-batch") {
    const read = batches.get(job.id);
    if (read) return read.get(itemKey(g)) ?? { status: "error" as const, error: "not an item of its batch" };
    // Read once per batch: every item's key of the job's payload.
    const parsed = parseJobPayload("grade-batch", job.payload);
    const keys = parsed.ok ? parsed.payload.items.map((i) => i.key) : [];
    const all = batchItemOutcomes(job, keys);
    batches.set(job.id, all);
    return all.get(itemKey(g)) ?? { status: "error" as const, error: "not an item of its batch" };
  }
  const grade = job.state === "succeeded" ? parseJobResult("grade", job.result) : null;
  if (grade && grade.verdict !== "infra_error") return { status: "graded" as const, grade };
  const error = grade ? `grader infra_error: ${grade.reasons.join("; ")}` : (job.error ?? `grade job ${job.state}`);
  return { status: "error" as const, error };
}

/** One grading step for one model: verdicts stored, retries alone enqueued, fresh answers queued for batches. Returns the answers still pending. */
export async function gradeStep(
  services: Services,
  ctx: Ctx,
  m: EvalModel,
  rows: GenerationRow[],
  queue: GradeBatchQueue,
): Promise<number> {
  const { db } = services;
  const tasks = new Map(ctx.tasks.map((t) => [t.id, t]));
  const pending = rows.filter((g) => g.gradeState === "pending");
  const jobs = new Map(
    (await stageJobs(db, [...new Set(pending.flatMap((g) => g.gradeJobIds.slice(-1)))])).map((j) => [j.id, j]),
  );
  const batches = new Map<string, Map<string, BatchItemOutcome>>();
  const retries: { g: GenerationRow; input: EnqueueJob }[] = [];
  const verdicts: NewEvaluation[] = [];
  // Tasks whose audit found they need in-process grading (usually none) say so in their payloads.
  const split = pending.length ? await getSplit(db, ctx.config.splitId) : null;
  const inProcess = split ? await inProcessTaskIds(db, split.poolId) : new Set<string>();
  const isolationOf = (t: TaskSpec): GradingIsolation => (inProcess.has(t.id) ? "in_process" : "judge");
  let waiting = 0;
  for (const g of pending) {
    const t = tasks.get(g.taskId);
    if (!t) throw new DomainError("INTERNAL", `stored answer for unknown task ${g.taskId}`);
    const lastId = g.gradeJobIds[g.gradeJobIds.length - 1];
    if (!lastId) {
      queue.fresh.push({
        g,
        input: { key: itemKey(g), task: t, candidate: candidateOf(t, g), isolation: isolationOf(t) },
      });
      waiting += 1;
      continue;
    }
    const job = jobs.get(lastId);
    if (!job || !isTerminal(job.state)) {
      waiting += 1;
      continue;
    }
    const outcome = outcomeOf(job, g, batches);
    if (outcome.status === "graded") {
      const grade = outcome.grade;
      if (grade.graderVersion !== ctx.config.evaluation.graderVersion) {
        throw new DomainError(
          "PRECONDITION_FAILED",
          `protocol mismatch on ${ctx.split}: graded by ${grade.graderVersion}, the recipe says ${ctx.config.evaluation.graderVersion}`,
        );
      }
      const protocol = { ...GenerationProtocol.parse(g.protocol), graderVersion: grade.graderVersion };
      verdicts.push({
        experimentId: ctx.experimentId,
        split: ctx.split,
        modelKey: m.key,
        taskId: g.taskId,
        sampleIndex: g.sampleIndex,
        seed: g.seed,
        sourceGroup: g.sourceGroup,
        verdict: g.parsed ? grade.verdict : "no_answer",
        answer: g.text,
        grade: { ...grade, answerParsed: g.parsed, attempts: g.gradeJobIds.length },
        protocol,
        generateJobId: g.generateJobId,
        gradeJobId: job.id,
      });
      continue;
    }
    if (g.gradeJobIds.length < MAX_GRADE_ATTEMPTS) {
      retries.push({ g, input: gradeJob(ctx, m, t, g, isolationOf(t)) });
      waiting += 1;
      continue;
    }
    await setGradeState(
      db,
      g,
      "no_verdict",
      `${g.gradeJobIds.length} grade attempts without a verdict; last: ${outcome.error}`,
    );
  }
  // Verdicts first, then the state flip: a crash in between re-reads the same job and inserts nothing new.
  await insertEvaluations(db, verdicts);
  const graded = new Set(verdicts.map((v) => `${v.taskId}:${v.sampleIndex ?? 0}`));
  for (const g of pending) if (graded.has(`${g.taskId}:${g.sampleIndex}`)) await setGradeState(db, g, "graded");
  if (retries.length) {
    const created = await services.queue.enqueueMany(retries.map((e) => e.input));
    for (const [i, e] of retries.entries()) {
      const j = created[i];
      if (j) await addGradeJob(db, e.g, j.id);
    }
  }
  return waiting;
}

/** Whether every model of the step has its answers stored: then no further answer can join a batch. */
async function allAnswersStored(services: Services, ctx: Ctx): Promise<boolean> {
  const stored = await modelsWithGenerations(services.db, ctx.experimentId, ctx.split);
  return ctx.models.every((m) => stored.has(m.key));
}

/**
 * Enqueues the step's fresh answers in batches of 64 in a fixed order (model, task, sample), so
 * the same answers make the same batches and dedupe keys after a restart. A last, smaller batch
 * goes now when it holds at least 32 answers or when nothing else can join it.
 */
export async function enqueueGradeBatches(services: Services, ctx: Ctx, queue: GradeBatchQueue): Promise<void> {
  if (queue.fresh.length === 0) return;
  const fresh = [...queue.fresh].sort((a, b) => (a.input.key < b.input.key ? -1 : a.input.key > b.input.key ? 1 : 0));
  const rows = new Map(fresh.map((f) => [f.input.key, f.g]));
  const payloads = gradeBatchPayloads(fresh.map((f) => f.input));
  const last = payloads[payloads.length - 1];
  if (
    last &&
    last.items.length < Math.min(MIN_EARLY_BATCH, GRADE_BATCH_MAX_ITEMS) &&
    !(await allAnswersStored(services, ctx))
  )
    payloads.pop();
  for (const payload of payloads) {
    const keys = payload.items.map((i) => i.key);
    const job = await services.queue.enqueue({
      type: "grade-batch",
      experimentId: ctx.experimentId,
      dedupeKey: `exp:${ctx.experimentId}:${ctx.split}:grade-batch:${gradeBatchId(keys)}`,
      maxDurationS: gradeBatchMaxDurationS(payload),
      maxAttempts: 1,
      payload,
    });
    // All of the batch's answers linked at once: a crash cannot leave half of them linked.
    await services.db.transaction(async (tx) => {
      for (const k of keys) {
        const g = rows.get(k);
        if (g) await addGradeJob(tx, g, job.id);
      }
    });
  }
}
