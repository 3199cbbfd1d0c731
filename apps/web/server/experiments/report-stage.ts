import { allDatasetSamples, getSelection, listEvaluations, noVerdictGenerations, saveReport } from "@agentlab/db";
import {
  DomainError, assertSameProtocol, buildReport, contaminationCheck, devContaminationCheck, protocolsByModel,
  type ModelRef, type SelectionDecision, type SftDoc,
} from "@agentlab/core";
import type { StageCtx, StageResult } from "./stages";
import { splitTasks } from "./tasks";

// The report stage: every stored verdict (dev and test), checked for one protocol, paired by the
// report (pure, packages/core), with the pairs that never got a verdict excluded and counted, and
// the contamination checks of test and dev against what the experiment learned from.

type Outcome = { taskId: string; group: string; verdict: string };

async function sftDocs(c: StageCtx): Promise<SftDoc[]> {
  const out = c.rows.get("dataset")?.output as { datasetId?: string } | undefined;
  if (!out?.datasetId) return [];
  return (await allDatasetSamples(c.services.db, out.datasetId)).map((r) => ({
    taskId: r.sample.taskKey,
    ordinal: r.sample.ordinal,
    text: r.sample.messages.map((m) => m.content).join("\n"),
    task: { id: r.task.taskId, instruction: r.task.instruction, files: r.task.files },
  }));
}

export async function reportStage(c: StageCtx): Promise<StageResult> {
  const { db } = c.services;
  const selection = (await getSelection(db, c.experimentId)) as unknown as SelectionDecision | undefined;
  if (!selection) throw new DomainError("PRECONDITION_FAILED", "no selection decision stored");
  const testOut = c.rows.get("test_eval")?.output as { models?: ModelRef[] } | undefined;
  const testAdapters = (testOut?.models ?? []).filter((m) => m.model === "adapter");
  const [dev, test, noVerdict] = await Promise.all([
    listEvaluations(db, { experimentId: c.experimentId, split: "dev" }),
    listEvaluations(db, { experimentId: c.experimentId, split: "test" }),
    noVerdictGenerations(db, c.experimentId),
  ]);
  const group = (rows: typeof dev) => {
    const out: Record<string, Outcome[]> = {};
    for (const r of rows) (out[r.modelKey] ??= []).push({ taskId: r.taskId, group: r.sourceGroup, verdict: r.verdict });
    return out;
  };
  // Dev and test ran under one protocol (dev's was already checked at selection): refuse otherwise.
  const protocols = protocolsByModel([...dev, ...test]);
  assertSameProtocol(protocols);
  const excluded = (split: "dev" | "test") => {
    const out: Record<string, string[]> = {};
    for (const g of noVerdict) if (g.split === split) (out[g.modelKey] ??= []).push(g.taskId);
    return out;
  };
  const [trainTasks, devTasks, testTasks, sft] = await Promise.all([
    splitTasks(db, c.config.splitId, "train"), splitTasks(db, c.config.splitId, "dev"), splitTasks(db, c.config.splitId, "test"), sftDocs(c),
  ]);
  const report = buildReport({
    experimentId: c.experimentId,
    name: c.config.name,
    generatedAt: new Date().toISOString(),
    config: c.config,
    selection,
    protocols,
    dev: group(dev),
    test: group(test),
    noVerdict: { dev: excluded("dev"), test: excluded("test") },
    testAdapters,
    contamination: contaminationCheck({ test: testTasks, train: trainTasks, dev: devTasks, sft }),
    devContamination: devContaminationCheck({ dev: devTasks, sft }),
  });
  const row = await saveReport(db, c.experimentId, report as unknown as Record<string, unknown>);
  return { state: "succeeded", output: { reportId: row.id } };
}
