import { and, eq } from "drizzle-orm";
import { reportByExperiment, schema, type Db } from "@agentlab/db";
import type { ExperimentConfigInput, TaskSpec } from "@agentlab/core";
import { createExperimentRunner } from "../../../apps/web/server/experiments/runner";
import { createExperiment } from "../../../apps/web/server/experiments/service";
import { createDataset } from "../../../apps/web/server/teacher/datasets";
import type { Services } from "../../../apps/web/server/services";
import { referenceCollection } from "../../integration/helpers/reference-collection";
import { simDpo } from "../../integration/helpers/sim-dpo";
import { simGrpo } from "../../integration/helpers/sim-grpo";
import { agentStep, makeAgent, type Behaviour } from "../../integration/experiments-harness";

// sft+dpo and sft+grpo experiments run to their reports for the browser tests, on the integration
// harness's simulated agent (answers and verdicts known in advance, DPO by helpers/sim-dpo.ts, GRPO
// by helpers/sim-grpo.ts); the data, stages, pairs, selection and report are the server's own. As
// in tests/integration/experiments-dpo.test.ts: the SFT data are the reference answers of the train
// tasks; on dev and test the base fixes nothing, SFT half the source groups, DPO or GRPO three
// quarters; on train the policy fails its first sample of a task and fixes its second.

/** A verified SFT snapshot of reference answers for the given train tasks, as the teacher module stores one. */
async function referenceDataset(
  s: Services,
  splitId: string,
  tasks: Map<string, TaskSpec>,
  ids: string[],
): Promise<string> {
  const col = await referenceCollection(s.db, { splitId, tasks, taskIds: ids });
  return (await createDataset(s, { name: "reference", splitId, collectionIds: [col] })).id;
}

async function trainIds(db: Db, splitId: string): Promise<string[]> {
  const rows = await db
    .select({ taskId: schema.splitAssignments.taskId })
    .from(schema.splitAssignments)
    .where(and(eq(schema.splitAssignments.splitId, splitId), eq(schema.splitAssignments.part, "train")));
  return rows.map((r) => r.taskId).sort();
}

type Run = { experimentId: string; reportId: string };

export async function runDpoExperiment(
  s: Services,
  splitId: string,
  tasks: Map<string, TaskSpec>,
  name: string,
): Promise<Run> {
  const train = await trainIds(s.db, splitId);
  const trainSet = new Set(train);
  // The start policy already prefers the chosen answer of every third train task: those pairs are dropped.
  const behaviour: Behaviour = {
    fixes: fixesEval,
    fixesSample: (m, t, i) => (trainSet.has(t.id) ? i === 1 : fixesEval(m, t)),
    dpo: (p) =>
      simDpo({
        read: (sha) => s.artifacts.read(sha),
        margin: (pairId) => (train.indexOf(pairId.split(":")[0] ?? "") % 3 === 0 ? 1.5 : -0.5),
        calls: [],
      })(p),
  };
  const dpo = { rounds: 1, samples: 2, epochs: 2, beta: 0.2 };
  return runToReport(s, { splitId, tasks, name }, { method: "sft+dpo", dpo }, behaviour);
}

/** sft+grpo: 4 steps with a snapshot every 2 (simulated steps and snapshots, helpers/sim-grpo.ts). */
export async function runGrpoExperiment(
  s: Services,
  splitId: string,
  tasks: Map<string, TaskSpec>,
  name: string,
): Promise<Run> {
  const grpo = { steps: 4, snapshotEverySteps: 2, numGenerations: 4, promptsPerStep: 2 };
  return runToReport(s, { splitId, tasks, name }, { method: "sft+grpo", grpo }, { fixes: fixesEval, grpo: simGrpo() });
}

const group = (t: TaskSpec) => Number(t.source_group.replace(/\D/g, ""));
/** On dev and test: the base fixes nothing, SFT epochs half the groups, DPO and GRPO snapshots three quarters. */
const fixesEval = (m: string, t: TaskSpec) =>
  m.startsWith("dpo-") || m.startsWith("grpo-") ? group(t) % 4 !== 3 : m.startsWith("s1e") ? group(t) % 2 === 0 : false;

async function runToReport(
  s: Services,
  { splitId, tasks, name }: { splitId: string; tasks: Map<string, TaskSpec>; name: string },
  method: Pick<ExperimentConfigInput, "method" | "dpo" | "grpo">,
  behaviour: Behaviour,
): Promise<Run> {
  const db = s.db;
  const datasetId = await referenceDataset(s, splitId, tasks, await trainIds(db, splitId));
  const exp = await createExperiment(
    db,
    {
      name,
      splitId,
      teacher: { providerId: "00000000-0000-4000-8000-00000000000a" },
      datasetId,
      baseModel: { source: "path", ref: "/models/tiny" },
      training: { epochs: 2 },
      evaluation: { graderVersion: "sim-grader/1" },
      seeds: [1],
      bootstrap: { iterations: 500, seed: 3 },
      ...method,
    },
    null,
  );
  const runner = createExperimentRunner(s, { autoStart: false });
  const fit = await makeAgent(db);
  for (let tick = 0; tick < 150; tick++) {
    await runner.advance(exp.id);
    while ((await agentStep(db, fit, tasks, behaviour)).claimed);
    const [row] = await db
      .select({ state: schema.experiments.state, error: schema.experiments.error })
      .from(schema.experiments)
      .where(eq(schema.experiments.id, exp.id));
    if (row && row.state !== "running") {
      if (row.state !== "succeeded") throw new Error(`${name}: ${row.state}: ${row.error}`);
      const report = await reportByExperiment(db, exp.id);
      if (!report) throw new Error(`${name}: no report`);
      return { experimentId: exp.id, reportId: report.id };
    }
  }
  throw new Error(`${name}: did not finish in 150 ticks`);
}
