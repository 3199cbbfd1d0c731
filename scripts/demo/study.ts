// `npm run demo -- --study`: two of the lab's research questions as ONE study on the CPU family,
// through the product's own operations (collection, grading, snapshots of a chosen answer quality,
// tokenize, budget, shuffle, study, one test claim, Holm):
//   Q1 data quality at equal supervised tokens: the teacher's verified answers (reference arm)
//      against its unverified answers (any that parses), with a shuffled-answers control;
//   Q2 public context on cross-file tasks (every learnable task reads limits.LIMIT from a
//      dependency file): the reference recipe against training and evaluating without dependency
//      files (promptVariant no_dependencies).
// The teacher is a simulation (sim-teacher.ts: half of the train tasks answered with the reference,
// half with the buggy file unchanged). The arms' snapshots are budgeted to the reference's measured
// supervised tokens (±0.5%, checked again when the study is created), and every arm trains the same
// optimizer steps of token-sized batches (stepTraining). The outcome is whatever it is;
// the last line is one JSON object naming the study report's JSON file.
import { cpuDemoRecipe, type StudyDefinitionInput, type StudyReport } from "@agentlab/core";
import { getDataset, insertProvider, type DatasetRow } from "@agentlab/db";
import type { Services } from "../../apps/web/server/services";
import { createDataset } from "../../apps/web/server/teacher/datasets";
import { shuffleAnswers } from "../../apps/web/server/teacher/shuffle";
import { budgetDataset } from "../../apps/web/server/teacher/budget";
import { enqueueTokenize, syncTokenizeJobs } from "../../apps/web/server/teacher/token-counts";
import { createStudy } from "../../apps/web/server/studies/service";
import { DISCLAIMER, say } from "./options";
import type { DemoWorld } from "./setup";
import { SIM_TEACHER_MODEL, startSimTeacher } from "./sim-teacher";
import { collectTrain, endStudyDemo, studyReportOf, until } from "./study-run";

/** Training seeds of every arm: three, so the contrasts' scope is the recipe (seed variance included). */
const STUDY_SEEDS = (process.env.AGENTLAB_DEMO_STUDY_SEEDS ?? "1,2,3").split(",").map(Number);
/** B as a share of the smallest arm pool's supervised tokens (room for the ±0.5% draw). */
const BUDGET_SHARE = 0.95;

/** Supervised-token counts measured by the base model's tokenizer on the agent (a tokenize job). */
async function measured(services: Services, ds: DatasetRow, model: string): Promise<DatasetRow> {
  await enqueueTokenize(services, ds.id, model);
  return until(`the token counts of "${ds.name}"`, async () => {
    await syncTokenizeJobs(services);
    const d = await getDataset(services.db, ds.id);
    return d?.tokenCounts?.perSample ? d : null;
  });
}

/** The teacher's answers to the train tasks, graded in the judge: verified, unverified and shuffled pools. */
async function teacherPools(w: DemoWorld) {
  const { services } = w.app;
  const sim = await startSimTeacher(w.train);
  try {
    const provider = await insertProvider(services.db, {
      name: `simulated teacher ${new Date().toISOString()}`,
      kind: "openai",
      baseUrl: sim.url,
      model: SIM_TEACHER_MODEL,
      apiKeySealed: services.secrets.seal("sk-simulated-teacher"),
      extraParams: {},
      createdBy: w.adminId,
    });
    const collectionId = await collectTrain(w, provider.id, "study demo: simulated teacher, train");
    say(`simulated teacher: ${sim.wrong.size} train tasks answered with the buggy file`);
    const base = { splitId: w.split.id, collectionIds: [collectionId], createdBy: w.adminId };
    const verified = await createDataset(services, { ...base, name: "study demo: verified answers" });
    const unverified = await createDataset(services, {
      ...base,
      name: "study demo: unverified answers",
      quality: "unverified",
    });
    const shuffled = await shuffleAnswers(services, { datasetId: verified.id, seed: 1, createdBy: w.adminId });
    return { providerId: provider.id, pools: { verified, unverified, shuffled } };
  } finally {
    await sim.close();
  }
}

/** Each pool measured, then drawn to B: the reference's first, the others to its measured tokens. */
async function budgeted(w: DemoWorld, pools: Record<"verified" | "unverified" | "shuffled", DatasetRow>) {
  const { services } = w.app;
  const m = {
    verified: await measured(services, pools.verified, w.tiny.path),
    unverified: await measured(services, pools.unverified, w.tiny.path),
    shuffled: await measured(services, pools.shuffled, w.tiny.path),
  };
  const smallest = Math.min(...Object.values(m).map((d) => d.tokenCounts?.supervisedTokens ?? 0));
  const B = Math.floor(smallest * BUDGET_SHARE);
  const draw = (d: DatasetRow, tokens: number) =>
    budgetDataset(services, { datasetId: d.id, tokens, seed: 0, createdBy: w.adminId });
  const ref = await draw(m.verified, B);
  const others = {
    unverified: await draw(m.unverified, ref.budget.tokens),
    shuffled: await draw(m.shuffled, ref.budget.tokens),
  };
  for (const [name, r] of Object.entries({ verified: ref, ...others }))
    say(
      `${name}: ${r.budget.tokens} supervised tokens, ${r.dataset.sampleCount} samples of ${r.dataset.taskCount} tasks`,
    );
  return { B, verified: ref.dataset, unverified: others.unverified.dataset, shuffled: others.shuffled.dataset };
}

/** Snapshots per seed that dev evaluates: each costs a generation pass over dev, 12 runs of them. */
const STUDY_SNAPSHOTS = Number(process.env.AGENTLAB_DEMO_STUDY_SNAPSHOTS ?? "4");

/**
 * The preset's training, its length fixed in optimizer steps with token batches: as many steps as
 * the preset's epochs take on the reference's data, each batch about the preset's batch size of
 * its average sample (prompt and answer), so every arm takes the same updates of about the same
 * tokens whatever its samples' lengths; STUDY_SNAPSHOTS snapshots at equal step intervals.
 */
function stepTraining(reference: DatasetRow) {
  const { training } = cpuDemoRecipe();
  const total = reference.tokenCounts?.totalTokens;
  if (!total) throw new Error(`the reference snapshot "${reference.name}" has no measured tokens`);
  const steps = training.epochs * Math.ceil(reference.sampleCount / training.batchSize);
  const batchTokens = Math.round((training.batchSize * total) / reference.sampleCount);
  return { ...training, steps, batchTokens, epochs: STUDY_SNAPSHOTS };
}

function definition(
  w: DemoWorld,
  providerId: string,
  data: { verified: DatasetRow; unverified: DatasetRow; shuffled: DatasetRow },
): StudyDefinitionInput {
  const preset = cpuDemoRecipe();
  return {
    name: `study demo ${new Date().toISOString().slice(0, 16)}: data quality and public context`,
    splitId: w.split.id,
    baseModel: { source: "path", ref: w.tiny.path },
    evaluation: preset.evaluation,
    seeds: STUDY_SEEDS,
    reference: {
      name: "verified",
      recipe: {
        teacher: { providerId, n: 1 },
        datasetId: data.verified.id,
        training: stepTraining(data.verified),
        bootstrap: { iterations: 2000, seed: 0 },
        disclaimer: `${DISCLAIMER.replace("the teacher is the reference oracle", "the teacher is SIMULATED (half of the train tasks answered with the reference, half with the buggy file)")}${w.baseNote}`,
      },
    },
    arms: [
      { name: "unverified", factor: "datasetId", recipe: { datasetId: data.unverified.id } },
      { name: "shuffled", factor: "datasetId", recipe: { datasetId: data.shuffled.id } },
      {
        name: "no-deps",
        factor: "promptVariant",
        recipe: { training: { promptVariant: "no_dependencies" }, evaluation: { promptVariant: "no_dependencies" } },
      },
    ],
    contrasts: [
      { arms: ["verified", "unverified"] },
      { arms: ["verified", "shuffled"] },
      { arms: ["verified", "no-deps"] },
    ],
    tokenMatching: { tolerance: 0.005 },
  };
}

export async function runStudyDemo(w: DemoWorld, runDir: string): Promise<void> {
  let run: { studyId: string; report: StudyReport };
  try {
    const { providerId, pools } = await teacherPools(w);
    const data = await budgeted(w, pools);
    const created = await createStudy(w.app.services.db, definition(w, providerId, data), w.adminId);
    const studyId = created.study.id;
    const t = stepTraining(data.verified);
    say(
      `study ${studyId}: ${created.experimentIds.length} arms × ${STUDY_SEEDS.length} seeds, ${t.steps} optimizer steps of ≤ ${t.batchTokens} tokens each, ${t.epochs} snapshots`,
    );
    run = { studyId, report: await studyReportOf(w, studyId) };
  } finally {
    await w.agent.stop();
  }
  await endStudyDemo(w, runDir, "study", run.studyId, run.report, { seeds: STUDY_SEEDS });
}
