import { cachedGenerations, insertGenerations, stageJobs, type NewGeneration } from "@agentlab/db";
import {
  DomainError,
  answerProtocol,
  checkJobResult,
  isTerminal,
  promptHashOf,
  evaluationCacheKeys,
  generationProtocol,
  mainPaths,
  parseAnswer,
  recipeMismatches,
  type ExperimentConfig,
  type TaskSpec,
  type TrainMethod,
  type GenerationSplit,
} from "@agentlab/core";
import type { Services } from "../services";

// The generation half of an evaluation: n answers per task, each stored with its
// sample index, seed and cache key. With evaluation.answerCache = "shared", answers an earlier
// experiment stored under the same cache key are copied instead of generated; only tasks with an
// answer missing go into the generate job. This experiment's own answers are never generated twice.

export type AnswerModel = {
  key: string;
  adapter: { path: string; sha256: string; artifact: string | null } | null;
  trainingMethod: TrainMethod | null;
};
export type AnswerCtx = { experimentId: string; config: ExperimentConfig; split: GenerationSplit; tasks: TaskSpec[] };

const keysFor = (ctx: AnswerCtx, m: AnswerModel, tasks: readonly TaskSpec[]) =>
  evaluationCacheKeys(tasks, ctx.config.evaluation, ctx.config.baseModel, m.adapter?.sha256 ?? null);

/**
 * Copies the stored answers whose cache keys match into this evaluation, for every task whose n
 * answers are all cached (a task with one missing is generated whole). Idempotent. Returns the
 * tasks still without answers and how many answers were reused.
 */
export async function reuseCachedAnswers(
  services: Services,
  ctx: AnswerCtx,
  m: AnswerModel,
  tasks: readonly TaskSpec[],
): Promise<{ missing: TaskSpec[]; reused: number }> {
  if (ctx.config.evaluation.answerCache !== "shared") return { missing: [...tasks], reused: 0 };
  const keys = keysFor(ctx, m, tasks);
  const found = new Map(
    (await cachedGenerations(services.db, [...keys.values()].flat())).map((g) => [g.cacheKey ?? "", g]),
  );
  const rows: NewGeneration[] = [];
  const missing: TaskSpec[] = [];
  for (const t of tasks) {
    const hits = (keys.get(t.id) ?? []).map((k) => found.get(k));
    if (hits.length === 0 || hits.some((h) => h === undefined)) {
      missing.push(t);
      continue;
    }
    for (const h of hits)
      if (h)
        rows.push({
          experimentId: ctx.experimentId,
          split: ctx.split,
          modelKey: m.key,
          taskId: t.id,
          sampleIndex: h.sampleIndex,
          seed: h.seed,
          cacheKey: h.cacheKey,
          sourceGroup: t.source_group,
          text: h.text,
          parsed: parseAnswer(h.text, mainPaths(t)).ok,
          // What the answer was generated under, as recorded then (checked with every other answer).
          protocol: h.protocol,
          generateJobId: h.generateJobId,
        });
  }
  await insertGenerations(services.db, rows);
  return { missing, reused: rows.length };
}

/**
 * Reads a finished generate job, checks its protocol against the recipe and stores its n answers
 * for each of `tasks`. false while the job runs.
 */
export async function storeGeneratedAnswers(
  services: Services,
  ctx: AnswerCtx,
  m: AnswerModel,
  genId: string,
  tasks: readonly TaskSpec[],
): Promise<boolean> {
  const [gen] = await stageJobs(services.db, [genId]);
  if (!gen || !isTerminal(gen.state)) return false;
  const what = `generation for ${m.key} on ${ctx.split}`;
  if (gen.state !== "succeeded")
    throw new DomainError("PRECONDITION_FAILED", `${what} ${gen.state}: ${gen.error ?? "no error given"}`);
  const parsed = checkJobResult("generate", gen.result);
  if (!parsed.ok)
    throw new DomainError("PRECONDITION_FAILED", `${what} returned an unreadable result: ${parsed.error}`);
  const samples = ctx.config.evaluation.samples;
  const promptTemplateHash = promptHashOf(ctx.config.evaluation.promptVariant);
  const protocol = generationProtocol(parsed.result.summary, {
    promptTemplateHash,
    trainingMethod: m.trainingMethod,
    samples: parsed.result.summary.decoding.samples,
  });
  const mismatches = recipeMismatches(protocol, ctx.config.evaluation, {
    promptTemplateHash,
    adapterSha256: m.adapter?.sha256 ?? null,
  });
  if (mismatches.length)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `protocol mismatch on ${ctx.split} for ${m.key}: ${mismatches.join("; ")}`,
    );
  const outputs = new Map(parsed.result.outputs.map((o) => [`${o.task_id}\u0000${o.sample_index}`, o]));
  const keys = keysFor(ctx, m, tasks);
  const rows: NewGeneration[] = [];
  const short: string[] = [];
  for (const t of tasks) {
    // The task's rendered-prompt hash joins its answers' protocol (compared across models per task).
    const taskProtocol = answerProtocol(protocol, parsed.result.summary, t.id);
    for (let i = 0; i < samples; i++) {
      const o = outputs.get(`${t.id}\u0000${i}`);
      if (!o) {
        short.push(`${t.id} sample ${i}`);
        continue;
      }
      rows.push({
        experimentId: ctx.experimentId,
        split: ctx.split,
        modelKey: m.key,
        taskId: t.id,
        sampleIndex: i,
        seed: o.seed,
        cacheKey: keys.get(t.id)?.[i] ?? null,
        sourceGroup: t.source_group,
        text: o.text,
        parsed: parseAnswer(o.text, mainPaths(t)).ok,
        protocol: taskProtocol,
        generateJobId: genId,
      });
    }
  }
  if (short.length)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `${what} returned no answer for ${short.length} of ${tasks.length * samples} (task, sample) pairs, e.g. ${short[0]}`,
    );
  await insertGenerations(services.db, rows);
  return true;
}
