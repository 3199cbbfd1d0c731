import { z } from "zod";
import { DomainError, reportToCsv, reportToJson, reportToMarkdown } from "@agentlab/core";
import { getReport, listReports, reportByExperiment } from "@agentlab/db";
import { router, viewerProcedure } from "../trpc/init";
import { taskDetail } from "../experiments/task-detail";

async function reportOrThrow(db: Parameters<typeof getReport>[0], id: string) {
  const row = await getReport(db, id);
  if (!row) throw new DomainError("NOT_FOUND", "no such report");
  return row;
}

export const exporters = { json: reportToJson, csv: reportToCsv, markdown: reportToMarkdown } as const;

export const reportsRouter = router({
  list: viewerProcedure
    .input(z.object({ limit: z.number().int().min(1).max(200).default(50) }).default({ limit: 50 }))
    .query(({ ctx, input }) => listReports(ctx.db, input)),

  byId: viewerProcedure.input(z.object({ id: z.string().uuid() })).query(async ({ ctx, input }) => {
    const row = await reportOrThrow(ctx.db, input.id);
    return {
      id: row.id,
      experimentId: row.experimentId,
      createdAt: row.createdAt,
      report: row.body,
    };
  }),

  byExperiment: viewerProcedure.input(z.object({ experimentId: z.string().uuid() })).query(async ({ ctx, input }) => {
    const row = await reportByExperiment(ctx.db, input.experimentId);
    return row ? { id: row.id } : null;
  }),

  /**
   * One task's buggy main files and the answers of the given models (all when omitted) with the
   * files parsed from them and their grader output: the per-task diff view.
   */
  taskDetail: viewerProcedure
    .input(
      z.object({
        reportId: z.string().uuid(),
        split: z.enum(["dev", "test"]),
        taskId: z.string().min(1).max(200),
        modelKeys: z.array(z.string().min(1).max(64)).min(1).max(8).optional(),
      }),
    )
    .query(async ({ ctx, input }) => {
      const row = await reportOrThrow(ctx.db, input.reportId);
      return taskDetail(ctx.db, {
        experimentId: row.experimentId,
        split: input.split,
        taskId: input.taskId,
        modelKeys: input.modelKeys,
      });
    }),

  export: viewerProcedure
    .input(z.object({ id: z.string().uuid(), format: z.enum(["json", "csv", "markdown"]) }))
    .query(async ({ ctx, input }) => {
      const row = await reportOrThrow(ctx.db, input.id);
      return { format: input.format, content: exporters[input.format](row.body) };
    }),
});
