import { z } from "zod";
import { DomainError } from "@agentlab/core";
import { createEnrollmentToken, listAgents, registerAgent, revokeAgent } from "@agentlab/db";
import { explainStuck } from "../agents/stuck";
import { adminProcedure, router, viewerProcedure } from "../trpc/init";
import { restartLocalAgent } from "../bootstrap/local-agent";

export const agentsRouter = router({
  list: viewerProcedure.query(({ ctx }) => listAgents(ctx.db)),

  /** A one-time enrollment token; its value is returned once and only its hash is stored. */
  createEnrollmentToken: adminProcedure
    .input(
      z.object({
        name: z.string().min(1).max(100),
        labels: z.array(z.string().min(1).max(64)).max(32).default([]),
        // The server's half of the shell-job opt-in (the agent's own flags are the other half).
        shellJobs: z.boolean().default(false),
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
        shellJobs: input.shellJobs,
        ttlS: input.ttlMinutes * 60,
        createdBy: ctx.viewer.userId,
      }),
    ),

  /**
   * What the agent may claim from its next connect on: labels, the shell-job opt-in, GPUs. The
   * claim never takes more than this from what an agent says about itself.
   */
  register: adminProcedure
    .input(
      z.object({
        id: z.string().uuid(),
        labels: z.array(z.string().min(1).max(64)).max(32).optional(),
        shellJobs: z.boolean().optional(),
        gpus: z.number().int().min(0).max(64).optional(),
        gpuMemoryMb: z
          .number()
          .int()
          .min(0)
          .max(4 * 1024 * 1024)
          .optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const { id, ...registration } = input;
      const row = await registerAgent(ctx.db, id, registration);
      // A connected agent re-runs its self-test and says hello again, which reads the new
      // registration into what it may claim; the shell opt-in is checked by the claim itself.
      return { ...row, appliedNow: ctx.agentHub.retestSandbox?.(id) ?? false };
    }),

  revoke: adminProcedure.input(z.object({ id: z.string().uuid() })).mutation(async ({ ctx, input }) => {
    await revokeAgent(ctx.db, input.id);
    ctx.agentHub.disconnect(input.id);
    return { ok: true };
  }),

  /** Restarts the local agent this server supervises (`npm start`): its running jobs are handed back and requeued. */
  restartLocal: adminProcedure.mutation(({ ctx }) => {
    if (!restartLocalAgent())
      throw new DomainError(
        "PRECONDITION_FAILED",
        "this server runs no local agent (started without one, or stopping)",
      );
    ctx.log.info("local agent restart requested");
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
