import { insertGenerations, listGenerations, stageJobs, type Db } from "@agentlab/db";
import {
  DomainError,
  GenerateJobResult,
  isTerminal,
  PROMPT_TEMPLATE_HASH,
  generateJobPayload,
  generateJobRequirements,
  generationProtocol,
  mainPaths,
  parseAnswer,
  recipeMismatches,
  type ExperimentConfig,
  type TaskSpec,
  type TrainMethod,
} from "@agentlab/core";
import type { Services } from "../services";
import { gradeStep } from "./grade-batches";

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
/** `regenerate[model]`: how often a failed generate job was replaced on resume (its dedupe key's round). */
export type EvalState = {
  generate: Record<string, string>;
  done: Record<string, { graded: number; noVerdict: number }>;
  regenerate?: Record<string, number>;
};
/** `jobIds`: the stage's generate jobs and every grade job tried, for the stage's job list. */
export type EvalStep = { state: "running" | "succeeded"; output: EvalState; jobIds: string[] };
type Ctx = {
  experimentId: string;
  config: ExperimentConfig;
  split: "dev" | "test";
  tasks: TaskSpec[];
  models: EvalModel[];
};

export const emptyEval = (): EvalState => ({ generate: {}, done: {} });

/** Reads a finished generate job, checks its protocol against the recipe and stores its answers. */
async function storeGenerations(services: Services, ctx: Ctx, m: EvalModel, genId: string): Promise<boolean> {
  const [gen] = await stageJobs(services.db, [genId]);
  if (!gen || !isTerminal(gen.state)) return false;
  const what = `generation for ${m.key} on ${ctx.split}`;
  if (gen.state !== "succeeded")
    throw new DomainError("PRECONDITION_FAILED", `${what} ${gen.state}: ${gen.error ?? "no error given"}`);
  const parsed = GenerateJobResult.safeParse(gen.result);
  if (!parsed.success)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `${what} returned an unreadable result: ${parsed.error.issues[0]?.message ?? ""}`,
    );
  const protocol = generationProtocol(parsed.data.summary, {
    promptTemplateHash: PROMPT_TEMPLATE_HASH,
    trainingMethod: m.trainingMethod,
    samples: ctx.config.evaluation.samples,
  });
  const mismatches = recipeMismatches(protocol, ctx.config.evaluation, {
    promptTemplateHash: PROMPT_TEMPLATE_HASH,
    adapterSha256: m.adapter?.sha256 ?? null,
  });
  if (mismatches.length)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `protocol mismatch on ${ctx.split} for ${m.key}: ${mismatches.join("; ")}`,
    );
  const texts = new Map(parsed.data.outputs.map((o) => [o.task_id, o.text]));
  const missing = ctx.tasks.filter((t) => !texts.has(t.id));
  if (missing.length)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `${what} returned no answer for ${missing.length} task(s), e.g. ${missing[0]?.id}`,
    );
  await insertGenerations(
    services.db,
    ctx.tasks.map((t) => {
      const text = texts.get(t.id) ?? "";
      return {
        experimentId: ctx.experimentId,
        split: ctx.split,
        modelKey: m.key,
        taskId: t.id,
        sourceGroup: t.source_group,
        text,
        parsed: parseAnswer(text, mainPaths(t)).ok,
        protocol,
        generateJobId: genId,
      };
    }),
  );
  return true;
}

/**
 * On resume: forgets generate jobs that ended without a result (failed or canceled) and stored no
 * answer, so the next tick enqueues a fresh one. A job that succeeded is never replaced: its
 * answers exist (or were refused for their protocol), so the test split is never generated twice.
 */
export async function forgetFailedGenerations(
  db: Db,
  experimentId: string,
  split: "dev" | "test",
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
    if ((await listGenerations(db, { experimentId, split, modelKey: key })).length > 0) continue;
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
  };
  for (const m of ctx.models) {
    if (next.done[m.key]) continue;
    const genId = next.generate[m.key];
    if (!genId) {
      const round = next.regenerate?.[m.key] ?? 0;
      const job = await queue.enqueue({
        type: "generate",
        experimentId: ctx.experimentId,
        dedupeKey: `exp:${ctx.experimentId}:${ctx.split}:gen:${m.key}${round ? `:r${round}` : ""}`,
        maxDurationS: 6 * 3600,
        requirements: generateJobRequirements(ctx.config),
        // Everything that decides the answers comes from the recipe, never from the claiming agent.
        payload: generateJobPayload(ctx.config, ctx.tasks, m.adapter),
      });
      next.generate[m.key] = job.id;
      continue;
    }
    let rows = await listGenerations(db, { experimentId: ctx.experimentId, split: ctx.split, modelKey: m.key });
    if (rows.length === 0) {
      if (!(await storeGenerations(services, ctx, m, genId))) continue;
      rows = await listGenerations(db, { experimentId: ctx.experimentId, split: ctx.split, modelKey: m.key });
    }
    if ((await gradeStep(services, ctx, m, rows)) > 0) continue;
    const final = await listGenerations(db, { experimentId: ctx.experimentId, split: ctx.split, modelKey: m.key });
    if (final.some((g) => g.gradeState === "pending")) continue;
    const graded = final.filter((g) => g.gradeState === "graded").length;
    next.done[m.key] = { graded, noVerdict: final.length - graded };
  }
  const finished = ctx.models.every((m) => next.done[m.key]);
  const grades = (await listGenerations(db, { experimentId: ctx.experimentId, split: ctx.split })).flatMap(
    (g) => g.gradeJobIds,
  );
  return {
    state: finished ? "succeeded" : "running",
    output: next,
    jobIds: [...Object.values(next.generate), ...grades].slice(0, 10_000),
  };
}
