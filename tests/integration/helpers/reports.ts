import {
  buildReport,
  contaminationCheck,
  ExperimentConfig,
  selectByDev,
  type DevCandidate,
  type RecordedProtocol,
  type TaskOutcome,
} from "@agentlab/core";
import { getExperiment, reportByExperiment, saveReport, setExperimentState, type Db } from "@agentlab/db";

// A real report (core buildReport over given per-task outcomes), stored for an experiment, so the
// runs table, compare view and CLI read the same JSON the runner writes.

const outcomes = (passes: readonly number[]): TaskOutcome[] =>
  passes.map((v, i) => ({ taskId: `t${i}`, group: `g${Math.floor(i / 2)}`, verdict: v ? "pass" : "fail_hidden" }));

/** The report row the runner stored for an experiment; throws (failing the test) when there is none. */
export async function storedReport(db: Db, experimentId: string) {
  const row = await reportByExperiment(db, experimentId);
  if (!row) throw new Error(`no report stored for experiment ${experimentId}`);
  return row;
}

/** `base`/`sft` are the test outcomes (1 = pass) of the base and of seed 0's adapter; `keepBase` makes dev keep the base. */
export async function storeReport(
  db: Db,
  experimentId: string,
  opts: { base: number[]; sft: number[]; keepBase?: boolean },
) {
  const exp = await getExperiment(db, experimentId);
  if (!exp) throw new Error("no experiment");
  const config = ExperimentConfig.parse(exp.config);
  const seed = config.seeds[0] ?? 0;
  const adapter = { model: "adapter" as const, seed, seedIndex: 0, epoch: 1 };
  const cands: DevCandidate[] = [
    { ref: { model: "base" }, passed: 2, n: 4 },
    { ref: adapter, passed: opts.keepBase ? 1 : 3, n: 4 },
  ];
  const recorded: RecordedProtocol = {
    promptTemplateHash: config.evaluation.promptTemplateHash,
    chatTemplateSha256: "c".repeat(64),
    decoding: { doSample: false, temperature: 1, topP: 1 },
    maxNewTokens: config.evaluation.maxNewTokens,
    samples: 1,
    seed: 0,
    stop: ["<|im_end|>"],
    generationConfig: "recipe",
    backend: "transformers",
    backendVersion: "4.57.1",
    dtype: "float32",
    device: "cpu",
    model: { ref: config.baseModel.ref, revision: null, weightsSha256: "a".repeat(64) },
    adapterSha256: null,
    trainingMethod: null,
    graderVersion: config.evaluation.graderVersion,
  };
  const key = `s${seed}e1`;
  const report = buildReport({
    experimentId,
    name: exp.name,
    generatedAt: new Date().toISOString(),
    config,
    selection: selectByDev(cands),
    protocols: { base: recorded, sft: recorded },
    dev: { base: outcomes([1, 1, 0, 0]), [key]: outcomes(opts.keepBase ? [1, 0, 0, 0] : [1, 1, 1, 0]) },
    test: { base: outcomes(opts.base), [key]: outcomes(opts.sft) },
    testAdapters: [adapter],
    contamination: contaminationCheck({ test: [], train: [], sft: [], dev: [] }),
  });
  const row = await saveReport(db, experimentId, report);
  await setExperimentState(db, experimentId, "succeeded");
  return { reportId: row.id, report };
}
