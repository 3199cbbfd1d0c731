import { desc, eq } from "drizzle-orm";
import type { ExperimentReport } from "@agentlab/core";
import type { Db } from "../client";
import { experiments, reports } from "../schema";
import { withTestReads } from "./test-reads";

export type ReportRow = typeof reports.$inferSelect;

/** One report per experiment: a second save returns the first (reports are immutable records). */
export async function saveReport(db: Db, experimentId: string, body: ExperimentReport): Promise<ReportRow> {
  await db.insert(reports).values({ experimentId, body }).onConflictDoNothing();
  const row = await reportByExperiment(db, experimentId);
  if (!row) throw new Error("report vanished after insert");
  return row;
}

// Every read of a stored report carries its split's test-read ledger as it is now (withTestReads).

export async function getReport(db: Db, id: string): Promise<ReportRow | undefined> {
  const [row] = await db.select().from(reports).where(eq(reports.id, id));
  return row && withTestReads(db, row);
}

export async function reportByExperiment(db: Db, experimentId: string): Promise<ReportRow | undefined> {
  const [row] = await db.select().from(reports).where(eq(reports.experimentId, experimentId));
  return row && withTestReads(db, row);
}

export async function listReports(db: Db, opts: { limit: number }) {
  return db
    .select({
      id: reports.id,
      experimentId: reports.experimentId,
      name: experiments.name,
      createdAt: reports.createdAt,
    })
    .from(reports)
    .innerJoin(experiments, eq(experiments.id, reports.experimentId))
    .orderBy(desc(reports.createdAt))
    .limit(opts.limit);
}
