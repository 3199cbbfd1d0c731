import { and, asc, eq } from "drizzle-orm";
import { DomainError, type ExperimentReport, type TestClaim, type TestReads } from "@agentlab/core";
import type { Db } from "../client";
import { experiments, splitFinals, splitTestClaims, splitTestOverrides, splits, users } from "../schema";

// The test-read ledger of a split, its final mark and the admins' overrides (schema/test-reads.ts).
// A claim and a final mark both lock the split's row first, so a claim racing the mark either
// lands before it (and is counted) or sees the split final.

// The display name only, never the e-mail address: the ledger is printed on public share pages.
const userName = async (db: Db, id: string | null) => {
  if (!id) return null;
  const [u] = await db.select({ name: users.name }).from(users).where(eq(users.id, id));
  return u?.name || null;
};

async function lockSplit(db: Db, splitId: string) {
  const [split] = await db
    .select({ id: splits.id, name: splits.name, frozen: splits.frozen })
    .from(splits)
    .where(eq(splits.id, splitId))
    .for("update");
  if (!split) throw new DomainError("NOT_FOUND", `no split ${splitId}`);
  return split;
}

const isFinal = async (db: Db, splitId: string) =>
  (await db.select({ id: splitFinals.splitId }).from(splitFinals).where(eq(splitFinals.splitId, splitId))).length > 0;

const claimCount = async (db: Db, splitId: string) =>
  (await db.select({ id: splitTestClaims.id }).from(splitTestClaims).where(eq(splitTestClaims.splitId, splitId)))
    .length;

/**
 * Records an experiment's test claim on its split: run it in the transaction that claims the test
 * run, so a refused claim claims nothing. On a final split it needs an admin's override for this
 * experiment (grantTestOverride), whose reason the claim carries; otherwise it is refused, naming
 * the split and how many times its test set has been read.
 */
export async function recordTestClaim(
  db: Db,
  p: { experimentId: string; recipeHash: string; models: string[] },
): Promise<void> {
  const [exp] = await db
    .select({ splitId: experiments.splitId, name: experiments.name, createdBy: experiments.createdBy })
    .from(experiments)
    .where(eq(experiments.id, p.experimentId));
  if (!exp) throw new DomainError("NOT_FOUND", `no experiment ${p.experimentId}`);
  const split = await lockSplit(db, exp.splitId);
  let override: typeof splitTestOverrides.$inferSelect | undefined;
  if (await isFinal(db, split.id)) {
    [override] = await db
      .select()
      .from(splitTestOverrides)
      .where(and(eq(splitTestOverrides.splitId, split.id), eq(splitTestOverrides.experimentId, p.experimentId)));
    if (!override) {
      const n = await claimCount(db, split.id);
      throw new DomainError(
        "PRECONDITION_FAILED",
        `split "${split.name}" (${split.id}) is final: its test set has been read ${n} time${n === 1 ? "" : "s"}, ` +
          "and a further test claim needs an admin's override with a reason (split page, or splits.overrideFinal)",
      );
    }
  }
  await db.insert(splitTestClaims).values({
    splitId: split.id,
    experimentId: p.experimentId,
    claimerName: exp.name,
    recipeHash: p.recipeHash,
    models: p.models,
    claimedBy: exp.createdBy,
    claimedByName: await userName(db, exp.createdBy),
    overrideReason: override?.reason ?? null,
    overrideBy: override?.grantedBy ?? null,
    overrideByName: override?.grantedByName ?? null,
  });
}

/** Marks a frozen split final (once; it stays final). Returns whether this call marked it. */
export async function markSplitFinal(
  db: Db,
  p: { splitId: string; by: string | null; note?: string },
): Promise<{ marked: boolean }> {
  return db.transaction(async (tx) => {
    const split = await lockSplit(tx, p.splitId);
    if (!split.frozen) throw new DomainError("PRECONDITION_FAILED", `split "${split.name}" is not frozen`);
    const rows = await tx
      .insert(splitFinals)
      .values({ splitId: split.id, markedBy: p.by, markedByName: await userName(tx, p.by), note: p.note ?? "" })
      .onConflictDoNothing()
      .returning({ id: splitFinals.splitId });
    return { marked: rows.length > 0 };
  });
}

/**
 * An admin's leave for one experiment of a final split to claim its test part. Refused when the
 * split is not final (nothing to override) or the experiment already claimed its test run.
 */
export async function grantTestOverride(
  db: Db,
  p: { splitId: string; experimentId: string; reason: string; by: string | null },
): Promise<void> {
  const reason = p.reason.trim();
  if (!reason) throw new DomainError("BAD_REQUEST", "reason: an override needs a reason");
  await db.transaction(async (tx) => {
    const split = await lockSplit(tx, p.splitId);
    if (!(await isFinal(tx, split.id)))
      throw new DomainError("PRECONDITION_FAILED", `split "${split.name}" is not final: no override is needed`);
    const [exp] = await tx
      .select({ splitId: experiments.splitId })
      .from(experiments)
      .where(eq(experiments.id, p.experimentId));
    if (!exp || exp.splitId !== split.id)
      throw new DomainError("NOT_FOUND", `experiment ${p.experimentId} is not on split "${split.name}"`);
    const [claimed] = await tx
      .select({ id: splitTestClaims.id })
      .from(splitTestClaims)
      .where(eq(splitTestClaims.experimentId, p.experimentId));
    if (claimed) throw new DomainError("CONFLICT", "this experiment has already claimed its test evaluation");
    const byName = await userName(tx, p.by);
    await tx
      .insert(splitTestOverrides)
      .values({ splitId: split.id, experimentId: p.experimentId, reason, grantedBy: p.by, grantedByName: byName })
      .onConflictDoUpdate({
        target: [splitTestOverrides.splitId, splitTestOverrides.experimentId],
        set: { reason, grantedBy: p.by, grantedByName: byName, grantedAt: new Date() },
      });
  });
}

/** The split's ledger, oldest claim first, and its final mark. `countAtReport` is the count now. */
export async function splitTestReads(db: Db, splitId: string): Promise<TestReads> {
  const [rows, [final]] = await Promise.all([
    db
      .select()
      .from(splitTestClaims)
      .where(eq(splitTestClaims.splitId, splitId))
      .orderBy(asc(splitTestClaims.claimedAt)),
    db.select().from(splitFinals).where(eq(splitFinals.splitId, splitId)),
  ]);
  const claims: TestClaim[] = rows.map((r) => ({
    experimentId: r.experimentId,
    studyId: r.studyId,
    claimerName: r.claimerName,
    recipeHash: r.recipeHash,
    models: r.models,
    claimedAt: r.claimedAt.toISOString(),
    claimedBy: r.claimedByName,
    override: r.overrideReason ? { reason: r.overrideReason, by: r.overrideByName } : null,
  }));
  return {
    splitId,
    count: claims.length,
    claims,
    final: final ? { at: final.markedAt.toISOString(), by: final.markedByName, note: final.note } : null,
    countAtReport: claims.length,
  };
}

/**
 * A stored report with its split's ledger as it is now: reads made after the report was built
 * still bear on it (whoever picks among several test reads selects on test). `countAtReport`
 * counts the claims made up to the report's build.
 */
export async function withTestReads<R extends { body: ExperimentReport }>(db: Db, row: R): Promise<R> {
  const splitId = row.body.config.splitId;
  const live = await splitTestReads(db, splitId);
  const built = Date.parse(row.body.generatedAt);
  const countAtReport = Number.isFinite(built)
    ? live.claims.filter((c) => Date.parse(c.claimedAt) <= built).length
    : live.count;
  return { ...row, body: { ...row.body, testReads: { ...live, countAtReport } } };
}
