import { and, asc, desc, eq, isNull } from "drizzle-orm";
import { DomainError, type ArmRole, type ModelRef, type StudyDefinition, type StudyReport } from "@agentlab/core";
import type { Db } from "../client";
import { splitFinals, splitTestClaims, splits, studies, studyArms, users } from "../schema";

// Studies and their arms (schema/studies.ts). The study's test claim is one ledger row with the
// study's id and no experiment: recorded under the study row's lock, refused a second time.

export type StudyRow = typeof studies.$inferSelect;
export type StudyArmRecord = typeof studyArms.$inferSelect;

export async function insertStudy(
  db: Db,
  p: { name: string; splitId: string; definition: StudyDefinition; createdBy: string | null },
): Promise<StudyRow> {
  const [row] = await db.insert(studies).values(p).returning();
  if (!row) throw new DomainError("INTERNAL", "study insert returned nothing");
  return row;
}

export async function insertStudyArm(
  db: Db,
  p: { studyId: string; name: string; ordinal: number; role: ArmRole; factor: string | null; experimentId: string },
): Promise<void> {
  await db.insert(studyArms).values(p);
}

export async function getStudy(db: Db, id: string): Promise<StudyRow | undefined> {
  const [row] = await db.select().from(studies).where(eq(studies.id, id));
  return row;
}

export async function listStudies(db: Db, limit = 100) {
  return db
    .select({
      id: studies.id,
      name: studies.name,
      splitId: studies.splitId,
      state: studies.state,
      testClaimId: studies.testClaimId,
      reportAt: studies.reportAt,
      createdAt: studies.createdAt,
    })
    .from(studies)
    .orderBy(desc(studies.createdAt))
    .limit(limit);
}

export async function listStudyArms(db: Db, studyId: string): Promise<StudyArmRecord[]> {
  return db.select().from(studyArms).where(eq(studyArms.studyId, studyId)).orderBy(asc(studyArms.ordinal));
}

/** The study an experiment is an arm of, with that arm; undefined for a stand-alone experiment. */
export async function studyOfExperiment(db: Db, experimentId: string) {
  const [row] = await db
    .select({ study: studies, arm: studyArms })
    .from(studyArms)
    .innerJoin(studies, eq(studies.id, studyArms.studyId))
    .where(eq(studyArms.experimentId, experimentId));
  return row;
}

/**
 * The study's one test claim: one ledger row (study id, no experiment) naming every arm's test
 * models, and each arm's models fixed on its row, in the caller's transaction. Refused when the
 * study already claimed (CONFLICT) and when the split is final (a study has no override path).
 */
export async function recordStudyTestClaim(
  db: Db,
  p: { studyId: string; recipeHash: string; arms: { name: string; models: ModelRef[]; labels: string[] }[] },
): Promise<{ claimId: string; claimedAt: Date }> {
  const [study] = await db.select().from(studies).where(eq(studies.id, p.studyId)).for("update");
  if (!study) throw new DomainError("NOT_FOUND", `no study ${p.studyId}`);
  if (study.testClaimId) {
    const [c] = await db.select().from(splitTestClaims).where(eq(splitTestClaims.id, study.testClaimId));
    throw new DomainError(
      "CONFLICT",
      `study "${study.name}" has already claimed its split's test set${c ? ` (${c.claimedAt.toISOString()})` : ""}; a study reads it once`,
    );
  }
  const [split] = await db
    .select({ id: splits.id, name: splits.name })
    .from(splits)
    .where(eq(splits.id, study.splitId))
    .for("update");
  if (!split) throw new DomainError("NOT_FOUND", `no split ${study.splitId}`);
  const [final] = await db.select().from(splitFinals).where(eq(splitFinals.splitId, split.id));
  if (final)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `split "${split.name}" is final: its test set may not be read again by a study`,
    );
  const [who] = study.createdBy
    ? await db.select({ name: users.name }).from(users).where(eq(users.id, study.createdBy))
    : [];
  const [claim] = await db
    .insert(splitTestClaims)
    .values({
      splitId: split.id,
      experimentId: null,
      studyId: study.id,
      claimerName: study.name,
      recipeHash: p.recipeHash,
      models: p.arms.flatMap((a) => a.labels.map((l) => `${a.name}: ${l}`)),
      claimedBy: study.createdBy,
      claimedByName: who?.name || null,
    })
    .returning({ id: splitTestClaims.id, claimedAt: splitTestClaims.claimedAt });
  if (!claim) throw new DomainError("INTERNAL", "ledger insert returned nothing");
  const updated = await db
    .update(studies)
    .set({ testClaimId: claim.id, updatedAt: new Date() })
    .where(and(eq(studies.id, study.id), isNull(studies.testClaimId)))
    .returning({ id: studies.id });
  if (updated.length === 0) throw new DomainError("CONFLICT", `study "${study.name}" has already claimed its test set`);
  for (const a of p.arms)
    await db
      .update(studyArms)
      .set({ testModels: a.models })
      .where(and(eq(studyArms.studyId, study.id), eq(studyArms.name, a.name)));
  return { claimId: claim.id, claimedAt: claim.claimedAt };
}

export async function studyTestClaim(db: Db, claimId: string) {
  const [row] = await db.select().from(splitTestClaims).where(eq(splitTestClaims.id, claimId));
  return row;
}

/** Stores the report once, on a running study only (a failed study never gets one); false otherwise. */
export async function saveStudyReport(db: Db, studyId: string, report: StudyReport): Promise<boolean> {
  const rows = await db
    .update(studies)
    .set({ report, reportAt: new Date(report.generatedAt), state: "succeeded", updatedAt: new Date() })
    .where(and(eq(studies.id, studyId), eq(studies.state, "running"), isNull(studies.report)))
    .returning({ id: studies.id });
  return rows.length > 0;
}

/** Ends a running study without a report, with why; false when it had already ended (or has its report). */
export async function failStudy(db: Db, studyId: string, error: string): Promise<boolean> {
  const rows = await db
    .update(studies)
    .set({ state: "failed", error, updatedAt: new Date() })
    .where(and(eq(studies.id, studyId), eq(studies.state, "running"), isNull(studies.report)))
    .returning({ id: studies.id });
  return rows.length > 0;
}
