import {
  reportAgents,
  reportDatasetFacts,
  reportExperimentTimes,
  reportJobCounts,
  reportSplitFacts,
  type Db,
  type StageRow,
} from "@agentlab/db";
import {
  Capabilities,
  modelKey,
  parseStageOutput,
  trainKey,
  reportHeader,
  type ExperimentConfig,
  type ModelRef,
  type RecordedProtocol,
  type ReportHeader,
} from "@agentlab/core";

// The facts of the report header, read from the rows the experiment left behind: the train stages'
// snapshots (sha256, method, job), the dataset and split rows, the jobs and the agents that ran them.

export async function headerFacts(
  db: Db,
  p: {
    experimentId: string;
    config: ExperimentConfig;
    rows: Map<string, StageRow>;
    selected: ModelRef;
    testModels: ModelRef[];
    protocol: RecordedProtocol | null;
    reportAt: string;
  },
): Promise<ReportHeader> {
  const datasetId = parseStageOutput("dataset", "dataset", p.rows.get("dataset")?.output)?.datasetId;
  const [times, split, dataset, jobs, agents] = await Promise.all([
    reportExperimentTimes(db, p.experimentId),
    reportSplitFacts(db, p.config.splitId),
    datasetId ? reportDatasetFacts(db, datasetId) : Promise.resolve(undefined),
    reportJobCounts(db, p.experimentId),
    reportAgents(db, p.experimentId),
  ]);
  const trainJobs: { seed: number; jobId: string }[] = [];
  const adapters = p.config.seeds.flatMap((seed) => {
    const out = parseStageOutput("train", trainKey(seed), p.rows.get(trainKey(seed))?.output) ?? {};
    if (out.jobId) trainJobs.push({ seed, jobId: out.jobId });
    return (out.snapshots ?? []).map((s) => ({
      seed,
      epoch: s.epoch,
      sha256: s.sha256,
      method: out.method ?? null,
      trainJobId: out.jobId ?? null,
    }));
  });
  return reportHeader({
    experiment: {
      id: p.experimentId,
      name: p.config.name,
      createdAt: (times?.createdAt ?? new Date(p.reportAt)).toISOString(),
      reportAt: p.reportAt,
    },
    baseModel: p.config.baseModel,
    training: p.config.training,
    seeds: p.config.seeds,
    adapters,
    protocol: p.protocol,
    selectedKey: modelKey(p.selected),
    testKeys: p.testModels.map(modelKey),
    dataset: dataset
      ? {
          id: dataset.id,
          name: dataset.name,
          hash: dataset.hash,
          samples: dataset.samples,
          tasks: dataset.tasks,
          oracleSamples: dataset.oracleSamples,
          quality: dataset.quality,
          supervisedTokens: dataset.tokenCounts?.supervisedTokens ?? null,
          totalTokens: dataset.tokenCounts?.totalTokens ?? null,
        }
      : null,
    split: split ?? null,
    jobs: jobs.map((j) => ({ type: j.type, count: j.n, firstStart: j.started, lastFinish: j.finished })),
    trainJobs,
    hardware: agents.map((a) => {
      // Capabilities are stored as the agent sent them at hello; an older agent may lack fields.
      const caps = Capabilities.partial().safeParse(a.capabilities ?? {});
      const c = caps.success ? caps.data : {};
      return {
        id: a.id,
        name: a.name,
        os: c.os ?? null,
        cpuCores: c.cpuCores ?? null,
        ramMb: c.ramMb ?? null,
        gpus: (c.gpus ?? []).map((g) => `${g.name} (${Math.round(g.memoryMb / 1024)} GiB)`),
        torch: c.torch ?? null,
        cuda: c.cuda ?? null,
        jobTypes: a.types,
        attempts: a.attempts,
      };
    }),
  });
}
