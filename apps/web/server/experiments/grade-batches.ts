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
  GenerationProtocol,
  isTerminal,
  mainPaths,
  parseAnswer,
  type CandidateFile,
  type ExperimentConfig,
  type GradeBatchInput,
  type GradingIsolation,
  type TaskSpec,
  type GenerationSplit,
} from "@agentlab/core";
import type { Services } from "../services";
import { studySharing, type StudySharing } from "../studies/shared-jobs";
import {
  createGradeReader,
  enqueueGradeBatches as enqueueBatches,
  enqueueRetriesAlone,
  type GradingOwner,
  type RetryAlone,
} from "../grading/batches";

// The grading half of an evaluation (evaluate.ts): stored answers graded through the queue by
// the batched-grading service (grading/batches.ts), whose batches hold answers of any model and
// task of the split. An answer that ends without a verdict is retried alone from its stored
// answer, within MAX_GRADE_ATTEMPTS jobs per answer (its batch included); a grader's own
// infra_error earns a retry too. Still without a verdict after that, it is marked no_verdict.

export const MAX_GRADE_ATTEMPTS = 3;
const POLICY = { maxJobs: MAX_GRADE_ATTEMPTS, retryGraderInfraError: true };

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

/** A retry alone: one answer, one `grade` job from its stored answer (its attempt number in the dedupe key). */
function retryAlone(ctx: Ctx, m: EvalModel, t: TaskSpec, g: GenerationRow, isolation: GradingIsolation): RetryAlone {
  const attempt = g.gradeJobIds.length + 1;
  const sample = g.sampleIndex > 0 ? `:s${g.sampleIndex}` : "";
  return {
    key: itemKey(g),
    dedupeKey: `exp:${ctx.experimentId}:${ctx.split}:grade:${m.key}:${t.id}${sample}${attempt > 1 ? `:a${attempt}` : ""}`,
    payload: { task: t, candidate: candidateOf(t, g), isolation },
  };
}

/**
 * The step's answers as the grading service's owner: jobs of the experiment, linked by item key. A
 * study's arms grading the same answers of the same models (a shared adapter) share the batch.
 */
function owner(ctx: Ctx, rows: ReadonlyMap<string, GenerationRow>, sharing: StudySharing | null): GradingOwner {
  return {
    experimentId: ctx.experimentId,
    batchKey: (id) => `exp:${ctx.experimentId}:${ctx.split}:grade-batch:${id}`,
    ...(sharing ? { sharedKey: (batch: unknown) => sharing.key(`${ctx.split}:grade-batch`, batch) } : {}),
    async link(db, keys, jobId) {
      for (const k of keys) {
        const g = rows.get(k);
        if (g) await addGradeJob(db, g, jobId);
      }
    },
  };
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
  const reader = createGradeReader(POLICY);
  const retries: RetryAlone[] = [];
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
    const step = reader.step(job, itemKey(g), g.gradeJobIds.length);
    if (step.kind === "graded") {
      const grade = step.grade;
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
    if (step.kind === "retry") {
      retries.push(retryAlone(ctx, m, t, g, isolationOf(t)));
      waiting += 1;
      continue;
    }
    await setGradeState(
      db,
      g,
      "no_verdict",
      `${g.gradeJobIds.length} grade attempts without a verdict; last: ${step.error}`,
    );
  }
  // Verdicts first, then the state flip: a crash in between re-reads the same job and inserts nothing new.
  await insertEvaluations(db, verdicts);
  const graded = new Set(verdicts.map((v) => `${v.taskId}:${v.sampleIndex ?? 0}`));
  for (const g of pending) if (graded.has(`${g.taskId}:${g.sampleIndex}`)) await setGradeState(db, g, "graded");
  await enqueueRetriesAlone(services, owner(ctx, new Map(pending.map((g) => [itemKey(g), g])), null), retries);
  return waiting;
}

/** Whether every model of the step has its answers stored: then no further answer can join a batch. */
async function allAnswersStored(services: Services, ctx: Ctx): Promise<boolean> {
  const stored = await modelsWithGenerations(services.db, ctx.experimentId, ctx.split);
  return ctx.models.every((m) => stored.has(m.key));
}

/**
 * Enqueues the step's fresh answers in batches (grading/batches.ts), ordered by model, task and
 * sample; a last, smaller batch goes now when it holds at least 32 answers or when nothing else
 * can join it.
 */
export async function enqueueGradeBatches(services: Services, ctx: Ctx, queue: GradeBatchQueue): Promise<void> {
  const rows = new Map(queue.fresh.map((f) => [f.input.key, f.g]));
  await enqueueBatches(
    services,
    owner(
      ctx,
      rows,
      // Shared answers only where the recipe shares answers (answerCache "shared").
      ctx.config.evaluation.answerCache === "shared" ? await studySharing(services.db, ctx.experimentId) : null,
    ),
    queue.fresh.map((f) => f.input),
    { moreMayJoin: async () => !(await allAnswersStored(services, ctx)) },
  );
}
