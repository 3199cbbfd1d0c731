import { listGenerations, stageJobs, type Db } from "@agentlab/db";
import {
  generateJobPayload,
  generateJobRequirements,
  type ExperimentConfig,
  type TaskSpec,
  type TrainMethod,
  type GenerationSplit,
} from "@agentlab/core";
import type { Services } from "../services";
import { reuseCachedAnswers, storeGeneratedAnswers } from "./generate-answers";
import { enqueueGradeBatches, gradeStep, newGradeBatchQueue } from "./grade-batches";
import { studySharing } from "../studies/shared-jobs";

// Generation + grading of one split for a set of models, advanced one step per runner tick.
// Answers are stored (experiment_generations) as soon as their generate job succeeds; grading
// reads them from there. A grade job that ends without a verdict (failed, canceled, an
// unreadable result or the grader's own infra_error) is retried from the stored answer, up to
// MAX_GRADE_ATTEMPTS jobs (grade-batches.ts); an answer still without a verdict is marked no_verdict and excluded
// from every comparison, never counted as a model failure. Every job has a stable dedupe key,
// so a restart picks up the same jobs instead of starting new ones.

export type EvalModel = {
  key: string;
  adapter: { path: string; sha256: string; artifact: string | null } | null;
  trainingMethod: TrainMethod | null;
};
/**
 * `regenerate[model]`: how often a failed generate job was replaced on resume (its dedupe key's round).
 * `reused[model]`: answers copied from the generation cache instead of generated (generate-answers.ts).
 */
export type EvalState = {
  generate: Record<string, string>;
  reused?: Record<string, number>;
  done: Record<string, { graded: number; noVerdict: number }>;
  regenerate?: Record<string, number>;
};
/** `jobIds`: the stage's generate jobs and every grade job tried, for the stage's job list. */
export type EvalStep = { state: "running" | "succeeded"; output: EvalState; jobIds: string[] };
type Ctx = {
  experimentId: string;
  config: ExperimentConfig;
  split: GenerationSplit;
  tasks: TaskSpec[];
  models: EvalModel[];
};

export const emptyEval = (): EvalState => ({ generate: {}, done: {} });

/**
 * On resume: forgets generate jobs that ended without a result (failed or canceled) and stored no
 * answer, so the next tick enqueues a fresh one. A job that succeeded is never replaced: its
 * answers exist (or were refused for their protocol), so the test split is never generated twice.
 */
export async function forgetFailedGenerations(
  db: Db,
  experimentId: string,
  split: GenerationSplit,
  state: EvalState,
): Promise<EvalState> {
  const next: EvalState = {
    generate: { ...state.generate },
    done: { ...state.done },
    regenerate: { ...state.regenerate },
  };
  const jobs = new Map((await stageJobs(db, Object.values(state.generate))).map((j) => [j.id, j]));
  for (const [key, id] of Object.entries(state.generate)) {
    const j = jobs.get(id);
    if (!j || (j.state !== "failed" && j.state !== "canceled")) continue;
    // Answers this job stored are never generated again; answers reused from the cache are not its own.
    const stored = await listGenerations(db, { experimentId, split, modelKey: key });
    if (stored.some((g) => g.generateJobId === id)) continue;
    delete next.generate[key];
    next.regenerate = { ...next.regenerate, [key]: (next.regenerate?.[key] ?? 0) + 1 };
  }
  return next;
}

export async function advanceEvaluation(services: Services, ctx: Ctx, state: EvalState): Promise<EvalStep> {
  const { db, queue } = services;
  const next: EvalState = {
    generate: { ...state.generate },
    done: { ...state.done },
    regenerate: { ...state.regenerate },
    reused: { ...state.reused },
  };
  const expected = ctx.tasks.length * ctx.config.evaluation.samples;
  const batches = newGradeBatchQueue();
  for (const m of ctx.models) {
    if (next.done[m.key]) continue;
    const list = () => listGenerations(db, { experimentId: ctx.experimentId, split: ctx.split, modelKey: m.key });
    let rows = await list();
    if (rows.length < expected) {
      const have = new Set(rows.map((g) => g.taskId));
      const unanswered = ctx.tasks.filter((t) => !have.has(t.id));
      const genId = next.generate[m.key];
      if (genId) {
        if (!(await storeGeneratedAnswers(services, ctx, m, genId, unanswered))) continue;
      } else {
        const { missing } = await reuseCachedAnswers(services, ctx, m, unanswered);
        if (missing.length) {
          const round = next.regenerate?.[m.key] ?? 0;
          const work = {
            requirements: generateJobRequirements(ctx.config),
            // Everything that decides the answers comes from the recipe, never from the claiming agent.
            payload: generateJobPayload(ctx.config, missing, m.adapter),
          };
          // A study's arms evaluating one adapter on the same tasks share its generate job, when the
          // recipe shares answers at all (answerCache "shared").
          const sharing =
            ctx.config.evaluation.answerCache === "shared" ? await studySharing(db, ctx.experimentId) : null;
          const key = sharing?.key(`${ctx.split}:gen:r${round}`, work) ?? {
            dedupeKey: `exp:${ctx.experimentId}:${ctx.split}:gen:${m.key}${round ? `:r${round}` : ""}`,
          };
          const job = await queue.enqueue({
            type: "generate",
            experimentId: ctx.experimentId,
            ...key,
            maxDurationS: 6 * 3600,
            ...work,
          });
          next.generate[m.key] = job.id;
          continue;
        }
      }
      rows = await list();
    }
    if ((await gradeStep(services, ctx, m, rows, batches)) > 0) continue;
    const final = await listGenerations(db, { experimentId: ctx.experimentId, split: ctx.split, modelKey: m.key });
    if (final.some((g) => g.gradeState === "pending")) continue;
    const graded = final.filter((g) => g.gradeState === "graded").length;
    next.done[m.key] = { graded, noVerdict: final.length - graded };
    // Answers not from this model's own generate job came from the cache.
    next.reused = { ...next.reused, [m.key]: final.filter((g) => g.generateJobId !== next.generate[m.key]).length };
  }
  // Answers never graded go out in batches over every model of the step (grade-batches.ts).
  await enqueueGradeBatches(services, ctx, batches);
  const finished = ctx.models.every((m) => next.done[m.key]);
  // Many answers share one batch job: each job once.
  const grades = new Set(
    (await listGenerations(db, { experimentId: ctx.experimentId, split: ctx.split })).flatMap((g) => g.gradeJobIds),
  );
  return {
    state: finished ? "succeeded" : "running",
    output: next,
    jobIds: [...Object.values(next.generate), ...grades].slice(0, 10_000),
  };
}
