// The A/A control: the main's selected adapter evaluated twice on the split's test tasks, sampling
// at T = 0.7 with seeds 1 and 2, paired task by task (each answer's prompt hash checked) and
// compared with the report's clustered statistics. Both sides are one model, so a "significant"
// result here would be the sampling noise read as an effect. Outside the product's experiment (no
// selection, no decision follows), written next to the reports.
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Db, schema } from "@agentlab/db";
import {
  modelLabel,
  parseStageOutput,
  significanceLabel,
  trainKey,
  type ExperimentReport,
  type TaskSpec,
} from "@agentlab/core";
import { and, eq } from "drizzle-orm";
import { Grader } from "../../apps/agent/src/grading/grader";
import { compareOutcomes, generate, generateSpec, grade, type Snapshot } from "../learning-proof-eval";
import { ROOT, say } from "./options";

const AA_TEMPERATURE = 0.7;

export type AaControl = NonNullable<Awaited<ReturnType<typeof aaControl>>>;

export async function aaControl(
  db: Db,
  report: ExperimentReport,
  test: readonly TaskSpec[],
  base: string,
  python: string,
  runDir: string,
) {
  // The selected adapter; when the base was kept, the best adapter on dev (what was compared).
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
  // The local agent removes a job's work folder after the job; the snapshot then lives only as an
  // artifact archive, which this direct path does not unpack yet: the A/A is skipped, not faked.
  if (!existsSync(snap.path)) {
    say(`A/A skipped: the snapshot folder ${snap.path} is gone (kept only as artifact ${snap.artifact ?? "none"})`);
    return null;
  }
  const adapter: Snapshot = { path: snap.path, sha256: snap.sha256 };
  const grader = new Grader(
    {
      backend: "bwrap",
      graderDir: join(ROOT, "apps/agent/grader"),
      uid: 65534,
      gid: 65534,
      scratchDir: join(ROOT, ".agentlab/scratch"),
    },
    { workers: 2 },
  );
  try {
    const run = async (seed: number) =>
      grade(
        grader,
        test,
        await generate(python, generateSpec(base, test, adapter, { seed, temperature: AA_TEMPERATURE })),
      );
    const [a, b] = [await run(1), await run(2)];
    const stats = compareOutcomes(test, a, b);
    const body = {
      kind: "aa-control",
      synthetic: true,
      comparison: `${modelLabel(ref)} sampling seed 1 vs seed 2 (T = ${AA_TEMPERATURE})`,
      experimentId: report.experimentId,
      adapterSha256: adapter.sha256,
      tasks: test.length,
      stats,
      label: significanceLabel(stats),
    };
    const file = join(runDir, "aa-report.json");
    await writeFile(file, JSON.stringify(body, null, 2) + "\n");
    say(`A/A: ${body.label}`);
    return { body, file };
  } finally {
    grader.close();
  }
}
