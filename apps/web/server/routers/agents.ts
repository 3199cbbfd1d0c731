import { z } from "zod";
import { DomainError } from "@agentlab/core";
import { createEnrollmentToken, listAgents, revokeAgent } from "@agentlab/db";
import { explainStuck } from "../agents/stuck";
import { adminProcedure, router, viewerProcedure } from "../trpc/init";

export const agentsRouter = router({
  list: viewerProcedure.query(({ ctx }) => listAgents(ctx.db)),

  /** A one-time enrollment token; its value is returned once and only its hash is stored. */
  createEnrollmentToken: adminProcedure
    .input(
      z.object({
        name: z.string().min(1).max(100),
        labels: z.array(z.string().min(1).max(64)).max(32).default([]),
        ttlMinutes: z
          .number()
          .int()
          .min(1)
          .max(7 * 24 * 60)
          .default(60),
      }),
    )
    .mutation(({ ctx, input }) =>
      createEnrollmentToken(ctx.db, {
        name: input.name,
        labels: input.labels,
        ttlS: input.ttlMinutes * 60,
        createdBy: ctx.viewer.userId,
      }),
    ),

  revoke: adminProcedure.input(z.object({ id: z.string().uuid() })).mutation(async ({ ctx, input }) => {
    await revokeAgent(ctx.db, input.id);
    ctx.agentHub.disconnect(input.id);
    return { ok: true };
  }),

  /** The agent re-runs its sandbox self-test now (after installing bubblewrap, say), without a restart. */
  retestSandbox: adminProcedure.input(z.object({ id: z.string().uuid() })).mutation(({ ctx, input }) => {
    if (!ctx.agentHub.retestSandbox?.(input.id))
      throw new DomainError("PRECONDITION_FAILED", "this agent is not connected");
    return { ok: true };
  }),

  /** Queued jobs (of an experiment, a job, or all) that no online agent can claim: why, and the fix. */
  whyStuck: viewerProcedure
    .input(z.object({ experimentId: z.string().uuid().optional(), jobId: z.string().uuid().optional() }).default({}))
    .query(({ ctx, input }) => explainStuck(ctx.db, input)),
});
