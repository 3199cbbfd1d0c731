import { z } from "zod";
import { memberProcedure, router, viewerProcedure } from "../trpc/init";
import { enqueueInspect, enqueueTinyModel, modelJob } from "../models/jobs";
import { largestGpuMb } from "../experiments/memory-fit";

// Base models: the experiment form's picker checks a model on an agent and
// builds the tiny demo model; both are jobs, polled with `job`.
export const modelsRouter = router({
  /** Enqueues an `inspect-model` job for a local folder (on the agent's machine) or a hub id. */
  inspect: memberProcedure
    .input(z.object({ ref: z.string().trim().min(1).max(500), revision: z.string().trim().max(200).optional() }))
    .mutation(({ ctx, input }) => enqueueInspect(ctx, input.ref, input.revision || null)),

  /**
   * Enqueues a `tiny-model` job whose tokenizer is fitted on the split's train tasks; `cpu-demo`:
   * the CPU demo preset's base, warmed on the train tasks (minutes on a CPU).
   */
  buildTiny: memberProcedure
    .input(z.object({ splitId: z.string().uuid(), kind: z.enum(["plain", "cpu-demo"]).default("plain") }))
    .mutation(({ ctx, input }) => enqueueTinyModel(ctx, input.splitId, input.kind)),

  /** A picker job's state and facts (inspect) or built model (tiny). */
  job: viewerProcedure
    .input(z.object({ jobId: z.string().uuid() }))
    .query(({ ctx, input }) => modelJob(ctx, input.jobId)),

  /** The per-GPU memory the form compares its estimate with (null: no GPU agent enrolled). */
  gpuTarget: viewerProcedure.query(async ({ ctx }) => ({ gpuMemoryMb: await largestGpuMb(ctx.db) })),
});
