// The demo's experiments through the product: the recipe on the tiny base, then main (reference
// fixes) and, unless DPO is on, the control (the main's dataset with answers shuffled across
// train tasks), each waited for and its report written to the run's folder.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Db, reportByExperiment, schema } from "@agentlab/db";
import {
  cpuDemoRecipe,
  parseStageOutput,
  reportToJson,
  type ExperimentConfigInput,
  type ExperimentReport,
} from "@agentlab/core";
import { and, eq } from "drizzle-orm";
import type { Services } from "../../apps/web/server/services";
import { createExperiment } from "../../apps/web/server/experiments/service";
import { shuffleAnswers } from "../../apps/web/server/teacher/shuffle";
import { DEMO_DPO, DEMO_GRPO, DISCLAIMER, DPO_RECIPE, SAMPLING, grpoRecipe, say } from "./options";

export type DemoReport = { body: ExperimentReport; file: string; id: string };

/** What every demo recipe shares: the frozen split, the reference teacher and the tiny base. */
export type RecipeBase = { splitId: string; providerId: string; basePath: string; baseNote: string };

/** The method part: GRPO (its control: rewards shuffled), DPO on the main, or plain SFT. */
const methodOf = (datasetId: string | undefined, control: boolean) =>
  DEMO_GRPO ? grpoRecipe(control) : datasetId ? {} : DPO_RECIPE;

export function demoRecipe(
  base: RecipeBase,
  name: string,
  datasetId?: string,
  control = datasetId !== undefined,
): ExperimentConfigInput {
  const preset = cpuDemoRecipe();
  return {
    name,
    splitId: base.splitId,
    teacher: { providerId: base.providerId, n: 1 },
    ...(datasetId ? { datasetId } : {}),
    baseModel: { source: "path", ref: base.basePath },
    training: preset.training,
    evaluation: { ...preset.evaluation, ...SAMPLING },
    seeds: preset.seeds,
    bootstrap: { iterations: 2000, seed: 0 },
    ...methodOf(datasetId, control),
    disclaimer:
      DISCLAIMER +
      base.baseNote +
      (datasetId ? " CONTROL: answers shuffled across train tasks; the adapter cannot learn the repair." : "") +
      (DEMO_GRPO && control ? " CONTROL: GRPO rewards shuffled within each group; RL cannot learn from them." : ""),
  };
}

async function waitForExperiment(db: Db, id: string, tag: string): Promise<void> {
  let last = "";
  for (;;) {
    const [row] = await db.select().from(schema.experiments).where(eq(schema.experiments.id, id));
    const stages = await db.select().from(schema.experimentStages).where(eq(schema.experimentStages.experimentId, id));
    const line = stages.map((s) => `${s.key}:${s.state}`).join(" ");
    if (line !== last) say(`${tag} ${line}`);
    last = line;
    if (!row || row.state !== "running") {
      if (row?.state !== "succeeded")
        throw new Error(`${tag} experiment ${row?.state ?? "missing"}: ${row?.error ?? ""}`);
      return;
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
}

const experimentName = (kind: "main" | "control") =>
  kind === "main"
    ? `learning proof${DEMO_GRPO ? " (SFT then GRPO)" : ""}: synthetic family, tiny model`
    : DEMO_GRPO
      ? "learning proof CONTROL: GRPO rewards shuffled"
      : "learning proof CONTROL: answers shuffled";

/** The main experiment, then the control (shuffled answers, or with GRPO shuffled rewards; skipped with DPO). */
export async function runExperiments(
  services: Services,
  base: RecipeBase,
  adminId: string | null,
  runDir: string,
): Promise<{ main: DemoReport; control: DemoReport | undefined }> {
  const { db } = services;
  const reports: Record<string, DemoReport> = {};
  for (const kind of DEMO_DPO ? (["main"] as const) : (["main", "control"] as const)) {
    let datasetId: string | undefined;
    // GRPO's control keeps the main's data and shuffles the rewards instead (its recipe).
    if (kind === "control" && !DEMO_GRPO) {
      const mainId = reports.main?.body.experimentId ?? "";
      const [stage] = await db
        .select()
        .from(schema.experimentStages)
        .where(and(eq(schema.experimentStages.experimentId, mainId), eq(schema.experimentStages.key, "dataset")));
      const source = parseStageOutput("dataset", "dataset", stage?.output)?.datasetId;
      if (!source) throw new Error("the main experiment recorded no dataset");
      datasetId = (await shuffleAnswers(services, { datasetId: source, seed: 1, createdBy: adminId })).id;
    }
    const exp = await createExperiment(
      db,
      demoRecipe(base, experimentName(kind), datasetId, kind === "control"),
      adminId,
    );
    say(`${kind} experiment ${exp.id} started`);
    await waitForExperiment(db, exp.id, kind);
    const report = await reportByExperiment(db, exp.id);
    if (!report) throw new Error(`no ${kind} report stored`);
    const body = report.body;
    const file = join(runDir, `${kind}-report.json`);
    await writeFile(file, reportToJson(body));
    reports[kind] = { body, file, id: report.id };
    say(`${kind}: ${body.outcome.headline}`);
  }
  const { main, control } = reports;
  if (!main || (!control && !DEMO_DPO)) throw new Error("a report is missing");
  return { main, control };
}
