import { and, asc, desc, eq, inArray } from "drizzle-orm";
import type { KilledMutant, NearMissAudit, SplitPart } from "@agentlab/core";
import type { Db } from "../client";
import { splitAssignments, taskAuditMutants, taskAudits } from "../schema";

// What near-miss pairs are built from: per task of one part of a split, its newest passed
// admission audit's buggy-file verdict and the mutants it saw killed. A task without a passed
// audit has no near-miss answers (its labels would be guesses).

/** Task key → its newest passed audit's near-miss material, for the tasks of `part` only. */
export async function nearMissAudits(
  db: Db,
  opts: { splitId: string; part: SplitPart },
): Promise<Map<string, NearMissAudit>> {
  const audits = await db
    .selectDistinctOn([taskAudits.taskRowId], {
      auditId: taskAudits.id,
      taskRowId: taskAudits.taskRowId,
      taskKey: splitAssignments.taskId,
      result: taskAudits.result,
    })
    .from(taskAudits)
    .innerJoin(
      splitAssignments,
      and(eq(splitAssignments.taskRowId, taskAudits.taskRowId), eq(splitAssignments.splitId, opts.splitId)),
    )
    .where(and(eq(splitAssignments.part, opts.part), eq(taskAudits.status, "passed")))
    .orderBy(taskAudits.taskRowId, desc(taskAudits.createdAt));
  const ids = audits.map((a) => a.auditId);
  const mutants = ids.length
    ? await db
        .select()
        .from(taskAuditMutants)
        .where(inArray(taskAuditMutants.auditId, ids))
        .orderBy(asc(taskAuditMutants.auditId), asc(taskAuditMutants.position))
    : [];
  const byAudit = new Map<string, KilledMutant[]>();
  for (const m of mutants) {
    const list = byAudit.get(m.auditId) ?? [];
    list.push({
      operator: m.operator,
      path: m.path,
      line: m.line,
      description: m.description,
      source: m.source,
      verdict: m.verdict,
      failingTests: m.failingTests,
    });
    byAudit.set(m.auditId, list);
  }
  const out = new Map<string, NearMissAudit>();
  for (const a of audits) {
    if (!a.result) continue;
    out.set(a.taskKey, {
      buggyVerdict: a.result.buggyVerdict,
      buggyFailingTests: a.result.buggyFailingTests ?? [],
      killed: byAudit.get(a.auditId) ?? [],
      isolation: a.result.isolation,
    });
  }
  return out;
}
