import {
  getDataset,
  getSplit,
  insertStudy,
  insertStudyArm,
  recentThroughput,
  type Db,
  type StudyRow,
} from "@agentlab/db";
import {
  DomainError,
  checkStudyDefinition,
  estimateWork,
  evaluationWork,
  planStudyPower,
  type StudyArmPlan,
  type StudyDefinition,
} from "@agentlab/core";
import { summarizeFieldIssues } from "@agentlab/core/validation";
import { createExperiment } from "../experiments/service";
import { splitTasks } from "../experiments/tasks";

// Creating a study: the definition checked as a whole (one factor per arm, the field named when
// not), token matching checked on the arms' measured SFT snapshots, then the study and one
// experiment per arm written in one transaction. The arms run like any experiment up to their dev
// selection; their test evaluation waits for the study's one claim (test-hold.ts).

/** The checked definition and its arms, or a BAD_REQUEST naming every bad field. */
export function checkedDefinition(input: unknown): { definition: StudyDefinition; arms: StudyArmPlan[] } {
  const r = checkStudyDefinition(input);
  if (!r.ok) throw new DomainError("BAD_REQUEST", `study definition: ${summarizeFieldIssues(r.issues)}`, r.issues);
  return r;
}

/**
 * With `tokenMatching`: every arm trains on a measured SFT snapshot (datasetId with supervised-token
 * counts), and each lies within the tolerance of the reference's. Refused otherwise, naming the arm.
 */
export async function refuseUnmatchedTokens(db: Db, d: StudyDefinition, arms: StudyArmPlan[]): Promise<void> {
  if (!d.tokenMatching) return;
  const tol = d.tokenMatching.tolerance;
  const tokens = new Map<string, number>();
  for (const a of arms) {
    const id = a.config.datasetId;
    if (!id)
      throw new DomainError("PRECONDITION_FAILED", `token matching: arm "${a.name}" names no SFT snapshot (datasetId)`);
    const ds = await getDataset(db, id);
    if (!ds) throw new DomainError("NOT_FOUND", `token matching: arm "${a.name}": no dataset ${id}`);
    const n = ds.tokenCounts?.supervisedTokens;
    if (n === undefined)
      throw new DomainError(
        "PRECONDITION_FAILED",
        `token matching: arm "${a.name}": dataset "${ds.name}" has no measured supervised-token count yet`,
      );
    tokens.set(a.name, n);
  }
  const ref = arms.find((a) => a.role === "reference");
  const refTokens = ref ? (tokens.get(ref.name) ?? 0) : 0;
  for (const a of arms) {
    const n = tokens.get(a.name) ?? 0;
    const gap = refTokens > 0 ? Math.abs(n - refTokens) / refTokens : Number.POSITIVE_INFINITY;
    if (gap > tol)
      throw new DomainError(
        "PRECONDITION_FAILED",
        `token matching: arm "${a.name}" trains on ${n} supervised tokens, the reference on ${refTokens} ` +
          `(${(100 * gap).toFixed(2)}% apart; the study allows ±${(100 * tol).toFixed(2)}%)`,
      );
  }
}

export async function createStudy(
  db: Db,
  input: unknown,
  createdBy: string | null,
): Promise<{ study: StudyRow; experimentIds: string[] }> {
  const { definition, arms } = checkedDefinition(input);
  const split = await getSplit(db, definition.splitId);
  if (!split) throw new DomainError("NOT_FOUND", "no such split");
  if (!split.frozen) throw new DomainError("PRECONDITION_FAILED", "studies need a frozen split");
  await refuseUnmatchedTokens(db, definition, arms);
  return db.transaction(async (tx) => {
    const study = await insertStudy(tx, { name: definition.name, splitId: definition.splitId, definition, createdBy });
    const experimentIds: string[] = [];
    for (const [ordinal, a] of arms.entries()) {
      const exp = await createExperiment(tx, a.config, createdBy);
      await insertStudyArm(tx, {
        studyId: study.id,
        name: a.name,
        ordinal,
        role: a.role,
        factor: a.factor,
        experimentId: exp.id,
      });
      experimentIds.push(exp.id);
    }
    return { study, experimentIds };
  });
}

/** Power before cost: the MDE of each primary contrast on this split's test units, and the arms' evaluation work. */
export async function planStudy(db: Db, input: unknown) {
  const { definition: d, arms } = checkedDefinition(input);
  const split = await getSplit(db, d.splitId);
  if (!split) throw new DomainError("NOT_FOUND", "no such split");
  const test = await splitTasks(db, d.splitId, "test");
  const power = planStudyPower({
    testTasks: test.map((t) => ({ group: t.source_group, cluster: t.cluster })),
    contrasts: d.contrasts,
    alpha: d.alpha,
    seeds: d.seeds.length,
    samplesPerTask: d.evaluation.samples,
    changeRate: d.plan.changeRate,
    withinUnitCorrelation: d.plan.withinUnitCorrelation,
  });
  const perArm = arms.map((a) => ({
    name: a.name,
    work: evaluationWork({
      devTasks: split.counts.dev?.tasks ?? 0,
      testTasks: split.counts.test?.tasks ?? 0,
      seeds: a.config.seeds.length,
      epochs: a.config.training.epochs,
      samples: a.config.evaluation.samples,
    }),
  }));
  const total = perArm.reduce(
    (w, a) => ({
      samples: w.samples,
      dev: {
        tasks: w.dev.tasks,
        models: w.dev.models + a.work.dev.models,
        answers: w.dev.answers + a.work.dev.answers,
      },
      test: {
        tasks: w.test.tasks,
        models: w.test.models + a.work.test.models,
        answers: w.test.answers + a.work.test.answers,
      },
      answers: w.answers + a.work.answers,
    }),
    {
      samples: d.evaluation.samples,
      dev: { tasks: split.counts.dev?.tasks ?? 0, models: 0, answers: 0 },
      test: { tasks: split.counts.test?.tasks ?? 0, models: 0, answers: 0 },
      answers: 0,
    },
  );
  return { power, arms: perArm, work: total, estimate: estimateWork(total, await recentThroughput(db)) };
}
