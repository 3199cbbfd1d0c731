import { z } from "zod";
import { insertEvaluations, stageJobs, type NewEvaluation } from "@agentlab/db";
import {
  DomainError, GradeResult, PROMPT_TEMPLATE_HASH, mainPaths, parseAnswer, publicContext, renderRepairPrompt,
  type EvalProtocol, type ExperimentConfig, type TaskSpec,
} from "@agentlab/core";
import type { Services } from "../services";

// Generation + grading of one split for a set of models, advanced one step per runner tick. The
// job ids live in the stage output and every job has a stable dedupe key, so a restart picks up
// the same jobs instead of starting new ones.

export type EvalModel = { key: string; adapter: { path: string; sha256: string; artifact: string | null } | null };
export type EvalState = { generate: Record<string, string>; grade: Record<string, Record<string, string>>; done: Record<string, { n: number; passed: number }> };
export type EvalStep = { state: "running" | "succeeded"; output: EvalState };

// What a `generate` job returns (the trainer's generate command, wrapped by the agent's handler).
const GenerateJobResult = z.object({
  outputs: z.array(z.object({ task_id: z.string(), text: z.string() })),
  summary: z.object({ decoding: z.object({ do_sample: z.boolean(), temperature: z.number(), top_p: z.number(), max_new_tokens: z.number().int() }) }).partial().optional(),
});

// Greedy decoding ignores temperature and top_p; the trainer reports them as 0 then, which the
// protocol schema (and a fair comparison) reads as "not used": greedy is recorded canonically.
function usedDecoding(d: { do_sample?: boolean; temperature?: number; top_p?: number } | undefined, cfg: EvalProtocol["decoding"]): EvalProtocol["decoding"] {
  const doSample = d?.do_sample ?? cfg.doSample;
  if (!doSample) return { doSample: false, temperature: 1, topP: 1 };
  return { doSample, temperature: d?.temperature ?? cfg.temperature, topP: d?.top_p ?? cfg.topP };
}

export const emptyEval = (): EvalState => ({ generate: {}, grade: {}, done: {} });

export async function advanceEvaluation(
  services: Services,
  ctx: { experimentId: string; config: ExperimentConfig; split: "dev" | "test"; tasks: TaskSpec[]; models: EvalModel[] },
  state: EvalState,
): Promise<EvalStep> {
  const { db, queue } = services;
  const { experimentId, config, split, tasks } = ctx;
  const ev = config.evaluation;
  const next: EvalState = { generate: { ...state.generate }, grade: { ...state.grade }, done: { ...state.done } };
  const prefix = `exp:${experimentId}:${split}`;

  for (const m of ctx.models) {
    if (next.done[m.key]) continue;
    if (!next.generate[m.key]) {
      const job = await queue.enqueue({
        type: "generate",
        experimentId,
        dedupeKey: `${prefix}:gen:${m.key}`,
        maxDurationS: 6 * 3600,
        payload: {
          spec: {
            base_model: config.baseModel.ref,
            prompts: tasks.map((t) => ({ task_id: t.id, messages: renderRepairPrompt(publicContext(t)) })),
            max_new_tokens: ev.maxNewTokens,
            do_sample: ev.decoding.doSample,
            temperature: ev.decoding.temperature,
            top_p: ev.decoding.topP,
            seed: 0,
            local_files_only: config.baseModel.source === "path",
          },
          adapterSha256: m.adapter?.sha256 ?? null,
          adapterArtifact: m.adapter?.artifact ?? null,
          promptTemplateHash: PROMPT_TEMPLATE_HASH,
        },
      });
      next.generate[m.key] = job.id;
      continue;
    }
    const genId = next.generate[m.key] as string;
    const gradeIds = next.grade[m.key];
    if (!gradeIds) {
      const [gen] = await stageJobs(db, [genId]);
      if (!gen || gen.state === "queued" || gen.state === "running" || gen.state === "canceling") continue;
      if (gen.state !== "succeeded") throw new DomainError("PRECONDITION_FAILED", `generation for ${m.key} on ${split} ${gen.state}: ${gen.error ?? "no error given"}`);
      const parsed = GenerateJobResult.safeParse(gen.result);
      if (!parsed.success) throw new DomainError("PRECONDITION_FAILED", `generation for ${m.key} returned an unreadable result`);
      const texts = new Map(parsed.data.outputs.map((o) => [o.task_id, o.text]));
      const ids: Record<string, string> = {};
      const inputs = tasks.map((t) => {
        const answer = parseAnswer(texts.get(t.id) ?? "", mainPaths(t));
        // An unparseable answer is graded too (with the buggy file unchanged) so that every row carries the grader's verdict and version.
        const candidate = answer.ok ? answer.files : t.files.filter((f) => f.role === "main").map((f) => ({ path: f.path, content: f.content }));
        return { t, input: { type: "grade" as const, experimentId, dedupeKey: `${prefix}:grade:${m.key}:${t.id}`, payload: { task: t, candidate, meta: { answer: texts.get(t.id) ?? "", parsed: answer.ok } } } };
      });
      const jobs = await queue.enqueueMany(inputs.map((i) => i.input));
      inputs.forEach((i, idx) => {
        const j = jobs[idx];
        if (j) ids[i.t.id] = j.id;
      });
      next.grade[m.key] = ids;
      continue;
    }
    const jobs = await stageJobs(db, Object.values(gradeIds));
    if (jobs.length < Object.keys(gradeIds).length || jobs.some((j) => !["succeeded", "failed", "canceled"].includes(j.state))) continue;
    const [gen] = await stageJobs(db, [genId]);
    const decoding = GenerateJobResult.safeParse(gen?.result).data?.summary?.decoding;
    const rows: NewEvaluation[] = [];
    const byId = new Map(jobs.map((j) => [j.id, j]));
    for (const t of tasks) {
      const job = byId.get(gradeIds[t.id] ?? "");
      const grade = GradeResult.safeParse(job?.result);
      const meta = (job?.payload.meta ?? {}) as { answer?: string; parsed?: boolean };
      const verdict = meta.parsed === false ? "no_answer" : grade.success ? grade.data.verdict : "infra_error";
      const protocol: EvalProtocol = {
        promptTemplateHash: PROMPT_TEMPLATE_HASH,
        decoding: usedDecoding(decoding, ev.decoding),
        maxNewTokens: decoding?.max_new_tokens ?? ev.maxNewTokens,
        graderVersion: grade.success ? grade.data.graderVersion : "ungraded",
      };
      rows.push({
        experimentId, split, modelKey: m.key, taskId: t.id, sourceGroup: t.source_group, verdict, answer: meta.answer ?? "",
        grade: grade.success ? { ...grade.data, answerParsed: meta.parsed ?? false } : { error: job?.error ?? "grade job did not succeed" },
        protocol, generateJobId: genId, gradeJobId: job?.id ?? null,
      });
    }
    await insertEvaluations(db, rows);
    next.done[m.key] = { n: rows.length, passed: rows.filter((r) => r.verdict === "pass").length };
  }
  const finished = ctx.models.every((m) => next.done[m.key]);
  return { state: finished ? "succeeded" : "running", output: next };
}
