import {
  getDataset,
  getExperiment,
  getJob,
  getStudy,
  listEvaluations,
  listStages,
  listStudyArms,
  saveStudyReport,
  splitTestReads,
  studyTestClaim,
  type Db,
  type StudyRow,
} from "@agentlab/db";
import {
  DomainError,
  ExperimentConfig,
  buildStudyReport,
  modelKey,
  parseJobResult,
  parseStageOutput,
  trainKey,
  type ArmOutcomes,
  type ModelRef,
  type StudyReport,
} from "@agentlab/core";
import { splitTasks } from "../experiments/tasks";

// The study report, built once every arm's test evaluation has finished: per arm and test task the
// pass rate of each seed's test model (the DPO or GRPO one where the arm trained one, else the SFT one),
// paired across arms by core buildStudyReport (pooled seeds, clustered, Holm over the primary
// contrasts). Stored once; later reads return the stored body.

type Eval = Awaited<ReturnType<typeof listEvaluations>>[number];

/** Each seed's final test model: the arm's method's own (its DPO epoch or GRPO snapshot) when it has one, else its SFT epoch. */
function finalPerSeed(models: readonly ModelRef[], seeds: readonly number[]): ModelRef[] {
  return seeds.map((seed) => {
    const mine = models.filter((m) => m.model !== "base" && m.seed === seed);
    const m =
      mine.find((x) => x.model === "dpo") ??
      mine.find((x) => x.model === "grpo") ??
      mine.find((x) => x.model === "adapter");
    if (!m) throw new DomainError("PRECONDITION_FAILED", `no test model for seed ${seed}`);
    return m;
  });
}

const passRates = (rows: readonly Eval[]) => {
  const by = new Map<string, { pass: number; n: number }>();
  for (const r of rows) {
    const k = `${r.modelKey}\u0000${r.taskId}`;
    const v = by.get(k) ?? { pass: 0, n: 0 };
    v.pass += r.verdict === "pass" ? 1 : 0;
    v.n += 1;
    by.set(k, v);
  }
  return (model: string, task: string) => {
    const v = by.get(`${model}\u0000${task}`);
    return v ? v.pass / v.n : undefined;
  };
};

async function armOutcomes(
  db: Db,
  arm: Awaited<ReturnType<typeof listStudyArms>>[number],
  clusters: Map<string, string | undefined>,
): Promise<ArmOutcomes | null> {
  const exp = await getExperiment(db, arm.experimentId);
  if (!exp) throw new DomainError("NOT_FOUND", `arm "${arm.name}": its experiment is gone`);
  const stages = await listStages(db, arm.experimentId);
  if (stages.find((s) => s.key === "test_eval")?.state !== "succeeded" || !arm.testModels) return null;
  const config = ExperimentConfig.parse(exp.config);
  const finals = finalPerSeed(arm.testModels, config.seeds).map(modelKey);
  const [test, dev] = await Promise.all([
    listEvaluations(db, { experimentId: arm.experimentId, split: "test", modelKeys: finals }),
    listEvaluations(db, { experimentId: arm.experimentId, split: "dev", modelKeys: finals }),
  ]);
  const rate = passRates(test);
  const tasks = [...new Map(test.map((r) => [r.taskId, r.sourceGroup])).entries()].flatMap(([taskId, group]) => {
    const bySeed = finals.map((k) => rate(k, taskId));
    // A task pairs only where every seed's model has a verdict on it.
    if (bySeed.some((x) => x === undefined)) return [];
    return [{ taskId, group, cluster: clusters.get(taskId), bySeed: bySeed.map((x) => x ?? 0) }];
  });
  const datasetId =
    parseStageOutput("dataset", "dataset", stages.find((s) => s.key === "dataset")?.output)?.datasetId ??
    config.datasetId;
  const ds = datasetId ? await getDataset(db, datasetId) : undefined;
  // The optimizer steps behind each seed's SFT test model, from its train job's run record.
  const steps = await Promise.all(
    finalPerSeed(arm.testModels, config.seeds).map(async (m) => {
      if (m.model !== "adapter") return null;
      const jobId = parseStageOutput(
        "train",
        trainKey(m.seed),
        stages.find((s) => s.key === trainKey(m.seed))?.output,
      )?.jobId;
      const job = jobId ? await getJob(db, jobId) : undefined;
      const run = job ? parseJobResult("train", job.result) : null;
      return run?.snapshots.find((s) => s.epoch === m.epoch)?.step ?? null;
    }),
  );
  return {
    steps,
    name: arm.name,
    role: arm.role,
    factor: arm.factor,
    experimentId: arm.experimentId,
    seeds: config.seeds,
    dev: dev.length ? dev.filter((r) => r.verdict === "pass").length / dev.length : null,
    supervisedTokens: ds?.tokenCounts?.supervisedTokens ?? null,
    dataQuality: ds?.quality ?? null,
    trainSamples: ds?.sampleCount ?? null,
    trainTasks: ds?.taskCount ?? null,
    tasks,
  };
}

/** The stored report, or the one built now when every arm's test evaluation has finished; null before and for a failed study. */
export async function studyReport(db: Db, study: StudyRow): Promise<StudyReport | null> {
  if (study.report) return study.report;
  // A failed study lost an arm: no contrasts from the arms that happened to finish (settle.ts).
  if (study.state !== "running" || !study.testClaimId) return null;
  const arms = await listStudyArms(db, study.id);
  const test = await splitTasks(db, study.splitId, "test");
  const clusters = new Map(test.map((t) => [t.id, t.cluster]));
  const outcomes: ArmOutcomes[] = [];
  for (const a of arms) {
    const o = await armOutcomes(db, a, clusters);
    if (!o) return null;
    outcomes.push(o);
  }
  const [claim, reads] = await Promise.all([studyTestClaim(db, study.testClaimId), splitTestReads(db, study.splitId)]);
  if (!claim) throw new DomainError("INTERNAL", "the study's ledger entry is missing");
  const d = study.definition;
  const reference = arms.find((a) => a.role === "reference");
  const refConfig = reference ? await getExperiment(db, reference.experimentId) : undefined;
  const bootstrap = refConfig ? ExperimentConfig.parse(refConfig.config).bootstrap : { iterations: 10_000, seed: 0 };
  const report = buildStudyReport({
    studyId: study.id,
    name: study.name,
    generatedAt: new Date().toISOString(),
    alpha: d.alpha,
    bootstrap,
    arms: outcomes,
    contrasts: d.contrasts,
    testClaim: {
      splitId: study.splitId,
      claimedAt: claim.claimedAt.toISOString(),
      models: claim.models,
      readsOfSplit: reads.count,
    },
    tokenMatching: d.tokenMatching ?? null,
  });
  await saveStudyReport(db, study.id, report);
  // The stored one: this one, or another reader's built a moment earlier; none when the study failed meanwhile.
  return (await getStudy(db, study.id))?.report ?? null;
}
