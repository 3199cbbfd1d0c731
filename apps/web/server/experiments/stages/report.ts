import {
  allDatasetSamples,
  evaluationIsolation,
  getSelection,
  listEvaluations,
  noVerdictGenerations,
  answerParseCounts,
  saveReport,
  splitTestReads,
  trainedDpoAnswers,
} from "@agentlab/db";
import {
  DomainError,
  answerContaminationCheck,
  answerRepeats,
  assertSameProtocol,
  buildReport,
  contaminationCheck,
  devContaminationCheck,
  dpoRecipeOf,
  groupVerdicts,
  modelLabel,
  pairsKey,
  protocolsByModel,
  type SftDoc,
  type TaskOutcome,
  type TrainedAnswer,
} from "@agentlab/core";
import { agenticReport } from "../../episodes/report";
import { headerFacts } from "../report-facts";
import { recordedOutput, type StageCtx, type StageResult } from "./context";
import { splitTasks } from "../tasks";

// The report stage: every stored verdict (dev and test), checked for one protocol, paired by the
// report (pure, packages/core), with the pairs that never got a verdict excluded and counted, and
// the contamination checks of test and dev against what the experiment learned from.

type SftData = { docs: SftDoc[]; answers: TrainedAnswer[] };

/** The SFT samples as trained on (question side) and their assistant turns (answer side). */
async function sftData(c: StageCtx): Promise<SftData> {
  const out = recordedOutput(c, "dataset", "dataset");
  if (!out) return { docs: [], answers: [] };
  const rows = await allDatasetSamples(c.services.db, out.datasetId);
  return {
    docs: rows.map((r) => ({
      taskId: r.sample.taskKey,
      ordinal: r.sample.ordinal,
      text: r.sample.messages.map((m) => m.content).join("\n"),
      task: { id: r.task.taskId, instruction: r.task.instruction, files: r.task.files },
    })),
    answers: rows.flatMap((r) =>
      r.sample.messages
        .filter((m) => m.role === "assistant")
        .map((m) => ({
          source: "sft" as const,
          id: `${r.sample.taskKey}#${r.sample.ordinal}`,
          text: m.content,
          mains: r.task.files.filter((f) => f.role === "main").map((f) => f.path),
        })),
    ),
  };
}

/** Both sides of every DPO pair were trained on: the chosen towards, the rejected away from. */
async function dpoAnswers(c: StageCtx): Promise<TrainedAnswer[]> {
  if (!dpoRecipeOf(c.config)) return [];
  return (await trainedDpoAnswers(c.services.db, c.experimentId)).flatMap((p) => [
    { source: "dpo_chosen" as const, id: `r${p.round}:${p.pairKey}`, text: p.chosen, mains: p.mains },
    { source: "dpo_rejected" as const, id: `r${p.round}:${p.pairKey}`, text: p.rejected, mains: p.mains },
  ]);
}

/** sft+dpo: each round's policy and pair statistics, for the report's DPO section (core dpoSection). */
function dpoRounds(c: StageCtx) {
  const rounds = dpoRecipeOf(c.config)?.rounds ?? 0;
  return Array.from({ length: rounds }, (_, i) => {
    const out = recordedOutput(c, pairsKey(i + 1), "pairs");
    if (!out) throw new DomainError("PRECONDITION_FAILED", `no pairs recorded for round ${i + 1}`);
    return { round: i + 1, policy: out.policy, policyLabel: modelLabel(out.policy), stats: out.stats ?? null };
  });
}

export async function reportStage(c: StageCtx): Promise<StageResult<"report">> {
  const { db } = c.services;
  const selection = await getSelection(db, c.experimentId);
  if (!selection) throw new DomainError("PRECONDITION_FAILED", "no selection decision stored");
  const testOut = recordedOutput(c, "test_eval", "test_eval");
  const testAdapters = (testOut?.models ?? []).filter((m) => m.model === "adapter");
  const [dev, test, noVerdict, isolation, parseCounts] = await Promise.all([
    listEvaluations(db, { experimentId: c.experimentId, split: "dev" }),
    listEvaluations(db, { experimentId: c.experimentId, split: "test" }),
    noVerdictGenerations(db, c.experimentId),
    evaluationIsolation(db, c.experimentId),
    answerParseCounts(db, c.experimentId),
  ]);
  // The grading isolation of each verdict (GradeResult.isolation), counted on the report.
  const inProcess = new Set(
    isolation.filter((r) => r.isolation === "in_process").map((r) => `${r.split}:${r.modelKey}:${r.taskId}`),
  );
  // One outcome per model and task; with n samples per task it lists every sample's verdict.
  const group = (rows: typeof dev): Record<string, TaskOutcome[]> =>
    groupVerdicts(
      rows.map((r) => ({
        ...r,
        group: r.sourceGroup,
        ...clusterOf(r.taskId),
        isolation: inProcess.has(`${r.split}:${r.modelKey}:${r.taskId}`) ? "in_process" : "judge",
      })),
      c.config.evaluation.samples,
    );
  const graded = new Set([...dev, ...test].map((r) => `${r.split}:${r.modelKey}:${r.taskId}`));
  // Dev and test ran under one protocol (dev's was already checked at selection): refuse otherwise.
  const protocols = protocolsByModel([...dev, ...test]);
  assertSameProtocol(protocols);
  const excluded = (split: "dev" | "test") => {
    const out: Record<string, string[]> = {};
    // A task keeps its pair while any of its samples has a verdict (its rate is over the graded ones).
    for (const g of noVerdict)
      if (g.split === split && !graded.has(`${g.split}:${g.modelKey}:${g.taskId}`))
        (out[g.modelKey] ??= []).push(g.taskId);
    return out;
  };
  const [trainTasks, devTasks, testTasks, sft, dpo, testReads] = await Promise.all([
    splitTasks(db, c.config.splitId, "train"),
    splitTasks(db, c.config.splitId, "dev"),
    splitTasks(db, c.config.splitId, "test"),
    sftData(c),
    dpoAnswers(c),
    splitTestReads(db, c.config.splitId),
  ]);
  const generatedAt = new Date().toISOString();
  const header = await headerFacts(db, {
    experimentId: c.experimentId,
    config: c.config,
    rows: c.rows,
    selected: selection.selected,
    testModels: testOut?.models ?? [],
    protocol: Object.values(protocols)[0] ?? null,
    reportAt: generatedAt,
  });
  const clusters = new Map(
    [...trainTasks, ...devTasks, ...testTasks].flatMap((x) => (x.cluster ? [[x.id, x.cluster] as const] : [])),
  );
  // The declared unit of dependence, passed with every per-task row to the statistics.
  function clusterOf(taskId: string): { cluster?: string } {
    const c = clusters.get(taskId);
    return c === undefined ? {} : { cluster: c };
  }
  const parts = [
    ...trainTasks.map((t) => ({ ...t, part: "train" as const })),
    ...devTasks.map((t) => ({ ...t, part: "dev" as const })),
    ...testTasks.map((t) => ({ ...t, part: "test" as const })),
  ];
  const report = buildReport({
    experimentId: c.experimentId,
    name: c.config.name,
    generatedAt,
    header: { ...header, answerRepeats: answerRepeats(parts) },
    config: c.config,
    selection,
    protocols,
    dev: group(dev),
    test: group(test),
    noVerdict: { dev: excluded("dev"), test: excluded("test") },
    testAdapters,
    contamination: contaminationCheck({ test: testTasks, train: trainTasks, dev: devTasks, sft: sft.docs }),
    devContamination: devContaminationCheck({ dev: devTasks, sft: sft.docs }),
    answerContamination: answerContaminationCheck({
      test: testTasks,
      dev: devTasks,
      answers: [...sft.answers, ...dpo],
    }),
    ...(dpoRecipeOf(c.config) ? { dpoRounds: dpoRounds(c) } : {}),
    testReads,
    // Train-split generations are the DPO sampler's, not an evaluation.
    parsing: parseCounts.flatMap((p) => (p.split === "train" ? [] : [{ ...p, split: p.split }])),
  });
  const agentic = await agenticReport(db, { splitId: c.config.splitId, devTasks, bootstrap: c.config.bootstrap });
  const row = await saveReport(db, c.experimentId, { ...report, ...agentic });
  return { state: "succeeded", output: { reportId: row.id } };
}
