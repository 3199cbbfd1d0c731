import {
  addGradeJob,
  getSplit,
  inProcessTaskIds,
  insertEvaluations,
  setGradeState,
  stageJobs,
  type GenerationRow,
  type NewEvaluation,
} from "@agentlab/db";
import {
  DomainError,
  GenerationProtocol,
  JOB_CONTRACTS,
  isTerminal,
  mainPaths,
  parseAnswer,
  type EnqueueJob,
  type ExperimentConfig,
  type TaskSpec,
} from "@agentlab/core";
import type { Services } from "../services";

// The grading half of an evaluation (evaluate.ts): stored answers graded through the queue.

export const MAX_GRADE_ATTEMPTS = 3;

/** What grading needs of an evaluation step (evaluate.ts's context). */
type Ctx = { experimentId: string; config: ExperimentConfig; split: "dev" | "test"; tasks: TaskSpec[] };
type EvalModel = { key: string };

// The answer itself stays in experiment_generations (whether it parsed included); the job carries the candidate files only.
function gradeJob(ctx: Ctx, m: EvalModel, t: TaskSpec, g: GenerationRow, inProcess: Set<string>): EnqueueJob {
  const answer = parseAnswer(g.text, mainPaths(t));
  // An unparseable answer is graded too (with the buggy file unchanged) so that its row carries the grader's version.
  const candidate = answer.ok
    ? answer.files
    : t.files.filter((f) => f.role === "main").map((f) => ({ path: f.path, content: f.content }));
  const attempt = g.gradeJobIds.length + 1;
  const sample = g.sampleIndex > 0 ? `:s${g.sampleIndex}` : "";
  const key = `exp:${ctx.experimentId}:${ctx.split}:grade:${m.key}:${t.id}${sample}${attempt > 1 ? `:a${attempt}` : ""}`;
  return {
    type: "grade" as const,
    experimentId: ctx.experimentId,
    dedupeKey: key,
    maxDurationS: 900,
    payload: { task: t, candidate, isolation: inProcess.has(t.id) ? ("in_process" as const) : ("judge" as const) },
  };
}

/** One grading step for one model: new/retried grade jobs, verdicts stored. Returns the answers still pending. */
export async function gradeStep(services: Services, ctx: Ctx, m: EvalModel, rows: GenerationRow[]): Promise<number> {
  const { db, queue } = services;
  const tasks = new Map(ctx.tasks.map((t) => [t.id, t]));
  const pending = rows.filter((g) => g.gradeState === "pending");
  const jobs = new Map(
    (
      await stageJobs(
        db,
        pending.flatMap((g) => g.gradeJobIds.slice(-1)),
      )
    ).map((j) => [j.id, j]),
  );
  const toEnqueue: { g: GenerationRow; input: ReturnType<typeof gradeJob> }[] = [];
  const verdicts: NewEvaluation[] = [];
  // Tasks whose audit found they need in-process grading (usually none) say so in their payloads.
  const split = pending.length ? await getSplit(db, ctx.config.splitId) : null;
  const inProcess = split ? await inProcessTaskIds(db, split.poolId) : new Set<string>();
  let waiting = 0;
  for (const g of pending) {
    const t = tasks.get(g.taskId);
    if (!t) throw new DomainError("INTERNAL", `stored answer for unknown task ${g.taskId}`);
    const key = {
      experimentId: ctx.experimentId,
      split: ctx.split,
      modelKey: m.key,
      taskId: g.taskId,
      sampleIndex: g.sampleIndex,
    };
    const lastId = g.gradeJobIds[g.gradeJobIds.length - 1];
    const job = lastId ? jobs.get(lastId) : undefined;
    if (lastId && (!job || !isTerminal(job.state))) {
      waiting += 1;
      continue;
    }
    const grade = job?.state === "succeeded" ? JOB_CONTRACTS.grade.result.safeParse(job.result) : null;
    if (grade?.success && grade.data.verdict !== "infra_error") {
      if (grade.data.graderVersion !== ctx.config.evaluation.graderVersion) {
        throw new DomainError(
          "PRECONDITION_FAILED",
          `protocol mismatch on ${ctx.split}: graded by ${grade.data.graderVersion}, the recipe says ${ctx.config.evaluation.graderVersion}`,
        );
      }
      const protocol = { ...GenerationProtocol.parse(g.protocol), graderVersion: grade.data.graderVersion };
      verdicts.push({
        experimentId: ctx.experimentId,
        split: ctx.split,
        modelKey: m.key,
        taskId: g.taskId,
        sampleIndex: g.sampleIndex,
        seed: g.seed,
        sourceGroup: g.sourceGroup,
        verdict: g.parsed ? grade.data.verdict : "no_answer",
        answer: g.text,
        grade: { ...grade.data, answerParsed: g.parsed, attempts: g.gradeJobIds.length },
        protocol,
        generateJobId: g.generateJobId,
        gradeJobId: job?.id ?? null,
      });
      continue;
    }
    if (g.gradeJobIds.length < MAX_GRADE_ATTEMPTS) {
      toEnqueue.push({ g, input: gradeJob(ctx, m, t, g, inProcess) });
      waiting += 1;
      continue;
    }
    const why = grade?.success
      ? `grader infra_error: ${grade.data.reasons.join("; ")}`
      : (job?.error ?? `grade job ${job?.state ?? "missing"}`);
    await setGradeState(
      db,
      key,
      "no_verdict",
      `${g.gradeJobIds.length} grade attempts without a verdict; last: ${why}`,
    );
  }
  // Verdicts first, then the state flip: a crash in between re-reads the same job and inserts nothing new.
  await insertEvaluations(db, verdicts);
  for (const v of verdicts)
    await setGradeState(
      db,
      {
        experimentId: ctx.experimentId,
        split: ctx.split,
        modelKey: m.key,
        taskId: v.taskId,
        sampleIndex: v.sampleIndex ?? 0,
      },
      "graded",
    );
  if (toEnqueue.length) {
    const created = await queue.enqueueMany(toEnqueue.map((e) => e.input));
    for (const [i, e] of toEnqueue.entries()) {
      const j = created[i];
      if (j)
        await addGradeJob(
          db,
          {
            experimentId: ctx.experimentId,
            split: ctx.split,
            modelKey: m.key,
            taskId: e.g.taskId,
            sampleIndex: e.g.sampleIndex,
          },
          j.id,
        );
    }
  }
  return waiting;
}
