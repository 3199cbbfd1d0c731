import { z } from "zod";
import { DomainError, shareableReport } from "@agentlab/core";
import { createShareLink, listShareLinks, revokeShareLink, shareTokenState, type ShareTokenState } from "@agentlab/db";
import { memberProcedure, publicProcedure, router, viewerProcedure } from "../trpc/init";
import { shareableStudy, studyView } from "../studies/view";

/** One link opens one experiment report or one study. */
const Target = z.union([z.object({ reportId: z.string().uuid() }), z.object({ studyId: z.string().uuid() })]);
const Token = z.object({ token: z.string().min(10).max(200) });

/** The live link's target, or NOT_FOUND saying whether it was revoked, expired or never existed. */
function liveTarget(s: ShareTokenState) {
  if (s.state === "revoked") throw new DomainError("NOT_FOUND", `this share link was revoked on ${s.at.toISOString()}`);
  if (s.state === "expired") throw new DomainError("NOT_FOUND", `this share link expired on ${s.at.toISOString()}`);
  if (s.state === "invalid") throw new DomainError("NOT_FOUND", "this share link is invalid");
  return { target: s.target, expiresAt: s.expiresAt };
}

export const shareRouter = router({
  list: viewerProcedure.input(Target).query(({ ctx, input }) => listShareLinks(ctx.db, input)),

  /** The token is returned once; the URL is /share/<token> (a study's: /share/study/<token>). */
  create: memberProcedure
    .input(
      z.intersection(
        Target,
        z.object({
          expiresInHours: z
            .number()
            .positive()
            .max(24 * 365)
            .optional(),
          label: z.string().max(200).optional(),
        }),
      ),
    )
    .mutation(async ({ ctx, input }) => {
      const expiresAt = input.expiresInHours ? new Date(Date.now() + input.expiresInHours * 3600_000) : null;
      const target = "reportId" in input ? { reportId: input.reportId } : { studyId: input.studyId };
      const { link, token } = await createShareLink(ctx.db, {
        ...target,
        expiresAt,
        label: input.label ?? null,
        createdBy: ctx.viewer.userId,
      });
      ctx.log.info({ shareLinkId: link.id, ...target }, "share link created");
      return { link, token, path: "studyId" in target ? `/share/study/${token}` : `/share/${token}` };
    }),

  revoke: memberProcedure
    .input(z.object({ id: z.string().uuid() }))
    .mutation(({ ctx, input }) => revokeShareLink(ctx.db, input.id)),

  /**
   * Without a login: exactly the one report the token opens, read-only; nothing else is reachable
   * through it. A dead link says whether it was revoked or expired, and when.
   */
  view: publicProcedure.input(Token).query(async ({ ctx, input }) => {
    const { target, expiresAt } = liveTarget(await shareTokenState(ctx.db, input.token));
    if (target.kind !== "report") throw new DomainError("NOT_FOUND", "this share link opens a study, not a report");
    // Outside the workspace: no agent ids or names, kernel, RAM, local paths, provider id, dataset hash.
    return { report: shareableReport(target.report.body), createdAt: target.report.createdAt, expiresAt };
  }),

  /**
   * Without a login: the one study the token opens (its arms' names, factors and states, the test
   * claim and the report once built), read-only, with the same dead-link answers as `view`.
   */
  study: publicProcedure.input(Token).query(async ({ ctx, input }) => {
    const { target, expiresAt } = liveTarget(await shareTokenState(ctx.db, input.token));
    if (target.kind !== "study") throw new DomainError("NOT_FOUND", "this share link opens a report, not a study");
    return { study: shareableStudy(await studyView(ctx.db, target.studyId)), expiresAt };
  }),
});
