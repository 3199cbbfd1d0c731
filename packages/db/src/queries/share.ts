import { desc, eq, sql } from "drizzle-orm";
import { DomainError } from "@agentlab/core";
import type { Db } from "../client";
import { reports, shareLinks, studies } from "../schema";
import { hashToken, newToken } from "../secrets";
import type { ReportRow } from "./reports";
import { withTestReads } from "./test-reads";

export type ShareLinkRow = typeof shareLinks.$inferSelect;
export type PublicShareLink = Omit<ShareLinkRow, "tokenHash">;

const publicCols = {
  id: shareLinks.id,
  reportId: shareLinks.reportId,
  studyId: shareLinks.studyId,
  label: shareLinks.label,
  expiresAt: shareLinks.expiresAt,
  revokedAt: shareLinks.revokedAt,
  createdBy: shareLinks.createdBy,
  createdAt: shareLinks.createdAt,
};

/** What one link opens: an experiment's report, or a study (its arms and, once built, its report). */
export type ShareTarget = { reportId: string } | { studyId: string };

async function targetExists(db: Db, target: ShareTarget): Promise<boolean> {
  const rows =
    "reportId" in target
      ? await db.select({ id: reports.id }).from(reports).where(eq(reports.id, target.reportId))
      : await db.select({ id: studies.id }).from(studies).where(eq(studies.id, target.studyId));
  return rows.length > 0;
}

const targetOf = (target: ShareTarget) =>
  "reportId" in target ? { reportId: target.reportId, studyId: null } : { reportId: null, studyId: target.studyId };

/** Returns the token once; only its hash is stored. */
export async function createShareLink(
  db: Db,
  input: ShareTarget & { expiresAt?: Date | null; label?: string | null; createdBy?: string | null },
): Promise<{ link: PublicShareLink; token: string }> {
  if (!(await targetExists(db, input)))
    throw new DomainError("NOT_FOUND", "reportId" in input ? "no such report" : "no such study");
  if (input.expiresAt && input.expiresAt.getTime() <= Date.now())
    throw new DomainError("BAD_REQUEST", "the expiry must lie in the future");
  const token = newToken("als");
  const [link] = await db
    .insert(shareLinks)
    .values({
      ...targetOf(input),
      tokenHash: hashToken(token),
      expiresAt: input.expiresAt ?? null,
      label: input.label ?? null,
      createdBy: input.createdBy ?? null,
    })
    .returning(publicCols);
  if (!link) throw new Error("share link insert returned nothing");
  return { link, token };
}

export const listShareLinks = (db: Db, target: ShareTarget): Promise<PublicShareLink[]> =>
  db
    .select(publicCols)
    .from(shareLinks)
    .where("reportId" in target ? eq(shareLinks.reportId, target.reportId) : eq(shareLinks.studyId, target.studyId))
    .orderBy(desc(shareLinks.createdAt));

export async function revokeShareLink(db: Db, id: string): Promise<PublicShareLink> {
  const [row] = await db
    .update(shareLinks)
    .set({ revokedAt: sql`coalesce(${shareLinks.revokedAt}, now())` })
    .where(eq(shareLinks.id, id))
    .returning(publicCols);
  if (!row) throw new DomainError("NOT_FOUND", "no such share link");
  return row;
}

/**
 * What a token opens: its report or study while the link is live, otherwise why not. Telling
 * "revoked" and "expired" apart leaks nothing a holder of a random 256-bit token does not already
 * know, and it tells a reader whom to ask; an unknown token stays "invalid".
 */
export type ShareTokenState =
  | {
      state: "live";
      expiresAt: Date | null;
      target: { kind: "report"; report: ReportRow } | { kind: "study"; studyId: string };
    }
  | { state: "revoked"; at: Date }
  | { state: "expired"; at: Date }
  | { state: "invalid" };

export async function shareTokenState(db: Db, token: string): Promise<ShareTokenState> {
  const [row] = await db
    .select({
      report: reports,
      studyId: shareLinks.studyId,
      revokedAt: shareLinks.revokedAt,
      expiresAt: shareLinks.expiresAt,
      now: sql<Date>`now()`,
    })
    .from(shareLinks)
    .leftJoin(reports, eq(reports.id, shareLinks.reportId))
    .where(eq(shareLinks.tokenHash, hashToken(token)));
  if (!row) return { state: "invalid" };
  if (row.revokedAt) return { state: "revoked", at: row.revokedAt };
  // The database's clock decides, as everywhere else a lease or an expiry is compared.
  if (row.expiresAt && row.expiresAt.getTime() <= new Date(row.now).getTime())
    return { state: "expired", at: row.expiresAt };
  if (row.studyId) return { state: "live", expiresAt: row.expiresAt, target: { kind: "study", studyId: row.studyId } };
  if (!row.report) return { state: "invalid" };
  return {
    state: "live",
    expiresAt: row.expiresAt,
    target: { kind: "report", report: await withTestReads(db, row.report) },
  };
}
