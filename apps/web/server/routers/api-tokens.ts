import { z } from "zod";
import { createApiToken, listApiTokens, revokeApiToken } from "@agentlab/db";
import { DomainError } from "@agentlab/core";
import { router, viewerProcedure } from "../trpc/init";

export const CreateTokenInput = z.object({
  name: z.string().trim().min(1).max(100),
  ttlDays: z.number().int().min(1).max(365).nullable().default(90),
});
export type CreateTokenInput = z.infer<typeof CreateTokenInput>;

// Personal API tokens act with their owner's role, so any signed-in user may hold them; each user
// sees and revokes only their own.
export const tokensRouter = router({
  list: viewerProcedure.query(({ ctx }) => listApiTokens(ctx.db, ctx.viewer.userId)),

  /** The value is in this response only; afterwards just its prefix and hash exist. */
  create: viewerProcedure.input(CreateTokenInput).mutation(async ({ ctx, input }) => {
    // A token cannot mint further tokens: a leaked one then cannot outlive its own revocation.
    if (ctx.viewer.via !== "session") throw new DomainError("FORBIDDEN", "create API tokens from a signed-in browser");
    const t = await createApiToken(ctx.db, {
      userId: ctx.viewer.userId,
      name: input.name,
      ttlS: input.ttlDays ? input.ttlDays * 86_400 : null,
    });
    ctx.log.info({ userId: ctx.viewer.userId, tokenId: t.id }, "API token created");
    return t;
  }),

  revoke: viewerProcedure.input(z.object({ id: z.string().uuid() })).mutation(async ({ ctx, input }) => {
    await revokeApiToken(ctx.db, ctx.viewer.userId, input.id);
    ctx.log.info({ userId: ctx.viewer.userId, tokenId: input.id }, "API token revoked");
    return { ok: true };
  }),
});
