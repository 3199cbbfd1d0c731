// The A/A control: the main's selected adapter evaluated twice on the split's test tasks, sampling
// at T = 0.7 with seeds 1 and 2, paired task by task (each answer's prompt hash checked) and
// compared with the report's clustered statistics. Both sides are one model, so a "significant"
// result here would be the sampling noise read as an effect. Outside the product's experiment (no
// selection, no decision follows), written next to the reports.
// Each side is a `generate` job built from the experiment's own recipe (generateJobPayload): the
// agent that claims it fetches the adapter from the artifact store by its archive's hash, as the
// evaluation stages' jobs do, so the A/A needs no trained folder on any machine.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Db, getExperiment, getJob, schema } from "@agentlab/db";
import {
  ExperimentConfig,
  GenerateJobResult,
  generateJobPayload,
  generateJobRequirements,
  isTerminal,
  type JobState,
  modelLabel,
  parseStageOutput,
  significanceLabel,
  trainKey,
  type ExperimentReport,
  type TaskSpec,
} from "@agentlab/core";
import { and, eq } from "drizzle-orm";
import type { Services } from "../../apps/web/server/services";
import { Grader } from "../../apps/agent/src/grading/grader";
import { type Answers, compareOutcomes, grade } from "../learning-proof-eval";
import { ROOT, say } from "./options";

const AA_TEMPERATURE = 0.7;
const AA_SEEDS = [1, 2] as const;

/** An adapter as the store holds it: the snapshot folder's tree hash and its archive's blob hash. */
export type StoredAdapter = { label: string; sha256: string; artifact: string };

/** The main's selected adapter; when the base was kept, the best adapter on dev (what was compared). */
export async function selectedAdapter(db: Db, report: ExperimentReport): Promise<StoredAdapter | null> {
  const ref =
    report.outcome.selected.model === "adapter"
      ? report.outcome.selected
      : [...report.selection.table].filter((r) => r.ref.model === "adapter").sort((a, b) => b.pass1 - a.pass1)[0]?.ref;
  if (ref?.model !== "adapter") return null;
  const [stage] = await db
    .select()
    .from(schema.experimentStages)
    .where(
      and(
        eq(schema.experimentStages.experimentId, report.experimentId),
        eq(schema.experimentStages.key, trainKey(ref.seed)),
      ),
    );
  const snap = parseStageOutput("train", trainKey(ref.seed), stage?.output)?.snapshots?.find(
    (x) => x.epoch === ref.epoch,
  );
  if (!snap) throw new Error(`no snapshot of ${modelLabel(ref)}`);
  if (!snap.artifact) throw new Error(`the snapshot of ${modelLabel(ref)} was never uploaded to the artifact store`);
  return { label: modelLabel(ref), sha256: snap.sha256, artifact: snap.artifact };
}

/** The grader the demo's direct paths use: the real judge under bwrap, two workers. */
export const demoGrader = () =>
  new Grader(
    {
      backend: "bwrap",
      graderDir: join(ROOT, "apps/agent/grader"),
      uid: 65534,
      gid: 65534,
      scratchDir: join(ROOT, ".agentlab/scratch"),
    },
    { workers: 2 },
  );

async function jobEnd(db: Db, id: string) {
  for (;;) {
    const job = await getJob(db, id);
    if (!job) throw new Error(`A/A generate job ${id} is gone`);
    if (isTerminal(job.state as JobState)) return job;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** One sampled answer per task under the recipe's protocol, at T = 0.7 with this base seed. */
async function sampledAnswers(
  services: Services,
  config: ExperimentConfig,
  tasks: readonly TaskSpec[],
  adapter: StoredAdapter,
  seed: number,
): Promise<{ jobId: string; answers: Answers }> {
  const sampling: ExperimentConfig = {
    ...config,
    evaluation: {
      ...config.evaluation,
      samples: 1,
      seed,
      decoding: { doSample: true, temperature: AA_TEMPERATURE, topP: 1 },
    },
  };
  const job = await services.queue.enqueue({
    type: "generate",
    requirements: generateJobRequirements(sampling),
    maxDurationS: 3600,
    payload: generateJobPayload(sampling, tasks, adapter),
  });
  const end = await jobEnd(services.db, job.id);
  if (end.state !== "succeeded")
    throw new Error(`A/A generate job ${job.id} (${adapter.label}, seed ${seed}) ${end.state}: ${end.error ?? ""}`);
  const { outputs, summary } = GenerateJobResult.parse(end.result);
  if (summary.adapter_sha256 !== adapter.sha256)
    throw new Error(`A/A generate job ${job.id} ran adapter ${String(summary.adapter_sha256)}, not ${adapter.sha256}`);
  const hashes = summary.task_prompts_sha256 ?? {};
  return {
    jobId: job.id,
    answers: new Map(outputs.map((o) => [o.task_id, { text: o.text, promptSha256: hashes[o.task_id] ?? null }])),
  };
}

/** Both sides generated through the queue, graded by the real judge and compared. */
export async function runAaControl(
  services: Services,
  opts: { config: ExperimentConfig; tasks: readonly TaskSpec[]; adapter: StoredAdapter; grader: Grader },
) {
  const { config, tasks, adapter, grader } = opts;
  const sides = [];
  for (const seed of AA_SEEDS) {
    const { jobId, answers } = await sampledAnswers(services, config, tasks, adapter, seed);
    sides.push({ jobId, outcomes: await grade(grader, tasks, answers) });
  }
  const [a, b] = sides;
  if (!a || !b) throw new Error("the A/A needs two sides");
  const stats = compareOutcomes(tasks, a.outcomes, b.outcomes);
  return {
    kind: "aa-control",
    synthetic: true,
    comparison: `${adapter.label} sampling seed ${AA_SEEDS[0]} vs seed ${AA_SEEDS[1]} (T = ${AA_TEMPERATURE})`,
    adapterSha256: adapter.sha256,
    adapterArtifact: adapter.artifact,
    generateJobs: [a.jobId, b.jobId],
    tasks: tasks.length,
    stats,
    label: significanceLabel(stats),
  };
}

export type AaControl = NonNullable<Awaited<ReturnType<typeof aaControl>>>;

/** The demo's A/A on the main experiment's test tasks, written to the run's folder as aa-report.json. */
export async function aaControl(
  services: Services,
  report: ExperimentReport,
  test: readonly TaskSpec[],
  runDir: string,
) {
  const adapter = await selectedAdapter(services.db, report);
  if (!adapter) return null;
  const exp = await getExperiment(services.db, report.experimentId);
  if (!exp) throw new Error(`no experiment ${report.experimentId}`);
  const grader = demoGrader();
  try {
    const result = await runAaControl(services, {
      config: ExperimentConfig.parse(exp.config),
      tasks: test,
      adapter,
      grader,
    });
    const body = { ...result, experimentId: report.experimentId };
    const file = join(runDir, "aa-report.json");
    await writeFile(file, JSON.stringify(body, null, 2) + "\n");
    say(`A/A: ${body.label}`);
    return { body, file };
  } finally {
    grader.close();
  }
}
