import { z } from "zod";
import { DomainError, reportToCsv, reportToJson, reportToMarkdown, type ExperimentReport } from "@agentlab/core";
import { getExperiment, getReport, listReports, reportByExperiment, taskEvaluations } from "@agentlab/db";
import { router, viewerProcedure } from "../trpc/init";
import { splitTasks } from "../experiments/tasks";

async function reportOrThrow(db: Parameters<typeof getReport>[0], id: string) {
  const row = await getReport(db, id);
  if (!row) throw new DomainError("NOT_FOUND", "no such report");
  return row;
}

export const exporters = { json: reportToJson, csv: reportToCsv, markdown: reportToMarkdown } as const;

export const reportsRouter = router({
  list: viewerProcedure.input(z.object({ limit: z.number().int().min(1).max(200).default(50) }).default({ limit: 50 })).query(({ ctx, input }) => listReports(ctx.db, input)),

  byId: viewerProcedure.input(z.object({ id: z.string().uuid() })).query(async ({ ctx, input }) => {
    const row = await reportOrThrow(ctx.db, input.id);
    return { id: row.id, experimentId: row.experimentId, createdAt: row.createdAt, report: row.body as unknown as ExperimentReport };
  }),

  byExperiment: viewerProcedure.input(z.object({ experimentId: z.string().uuid() })).query(async ({ ctx, input }) => {
    const row = await reportByExperiment(ctx.db, input.experimentId);
    return row ? { id: row.id } : null;
  }),

  /** One task's buggy main files and every model's answer with its grader output: the side-by-side diff view. */
  taskDetail: viewerProcedure
    .input(z.object({ reportId: z.string().uuid(), split: z.enum(["dev", "test"]), taskId: z.string().min(1).max(200) }))
    .query(async ({ ctx, input }) => {
      const row = await reportOrThrow(ctx.db, input.reportId);
      const exp = await getExperiment(ctx.db, row.experimentId);
      if (!exp) throw new DomainError("NOT_FOUND", "no such experiment");
      const task = (await splitTasks(ctx.db, exp.splitId, input.split)).find((t) => t.id === input.taskId);
      if (!task) throw new DomainError("NOT_FOUND", "no such task in this split part");
      const evals = await taskEvaluations(ctx.db, { experimentId: exp.id, split: input.split, taskId: input.taskId });
      return {
        taskId: task.id,
        instruction: task.instruction,
        buggy: task.files.filter((f) => f.role === "main").map((f) => ({ path: f.path, content: f.content })),
        answers: evals.map((e) => ({ modelKey: e.modelKey, verdict: e.verdict, answer: e.answer, grade: e.grade })),
      };
    }),

  export: viewerProcedure.input(z.object({ id: z.string().uuid(), format: z.enum(["json", "csv", "markdown"]) })).query(async ({ ctx, input }) => {
    const row = await reportOrThrow(ctx.db, input.id);
    return { format: input.format, content: exporters[input.format](row.body as unknown as ExperimentReport) };
  }),
});
