import { z } from "zod";
import { DomainError, shareableReport } from "@agentlab/core";
import { createShareLink, listShareLinks, revokeShareLink, shareTokenState } from "@agentlab/db";
import { memberProcedure, publicProcedure, router, viewerProcedure } from "../trpc/init";

export const shareRouter = router({
  list: viewerProcedure
    .input(z.object({ reportId: z.string().uuid() }))
    .query(({ ctx, input }) => listShareLinks(ctx.db, input.reportId)),

  /** The token is returned once; the URL is /share/<token>. */
  create: memberProcedure
    .input(
      z.object({
        reportId: z.string().uuid(),
        expiresInHours: z
          .number()
          .positive()
          .max(24 * 365)
          .optional(),
        label: z.string().max(200).optional(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const expiresAt = input.expiresInHours ? new Date(Date.now() + input.expiresInHours * 3600_000) : null;
      const { link, token } = await createShareLink(ctx.db, {
        reportId: input.reportId,
        expiresAt,
        label: input.label ?? null,
        createdBy: ctx.viewer.userId,
      });
      ctx.log.info({ shareLinkId: link.id, reportId: link.reportId }, "share link created");
      return { link, token, path: `/share/${token}` };
    }),

  revoke: memberProcedure
    .input(z.object({ id: z.string().uuid() }))
    .mutation(({ ctx, input }) => revokeShareLink(ctx.db, input.id)),

  /**
   * Without a login: exactly the one report the token opens, read-only; nothing else is reachable
   * through it. A dead link says whether it was revoked or expired, and when.
   */
  view: publicProcedure.input(z.object({ token: z.string().min(10).max(200) })).query(async ({ ctx, input }) => {
    const s = await shareTokenState(ctx.db, input.token);
    if (s.state === "revoked")
      throw new DomainError("NOT_FOUND", `this share link was revoked on ${s.at.toISOString()}`);
    if (s.state === "expired") throw new DomainError("NOT_FOUND", `this share link expired on ${s.at.toISOString()}`);
    if (s.state === "invalid") throw new DomainError("NOT_FOUND", "this share link is invalid");
    // Outside the workspace: no agent ids or names, kernel, RAM, local paths, provider id, dataset hash.
    return { report: shareableReport(s.report.body), createdAt: s.report.createdAt, expiresAt: s.expiresAt };
  }),
});
