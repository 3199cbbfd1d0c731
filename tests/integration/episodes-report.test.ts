import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import pino from "pino";
import type { EpisodePolicySpec } from "@agentlab/core";
import { schema, type Db } from "@agentlab/db";
import { agenticReport } from "../../apps/web/server/episodes/report";
import { syncEpisodes } from "../../apps/web/server/episodes/store";
import { splitTasks } from "../../apps/web/server/experiments/tasks";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { makeSplit } from "./experiments-harness";
import { episodeRig, finishedEpisodeJob, type EpisodeRig } from "./episodes-rig";

// The report's agentic section on stored episodes run on the sandbox and the judge: per policy,
// each dev task's pass rate over its seeds, with turns and test runs used; a train task's episode
// is on the split but not in the section (the control that the section reads dev tasks only).

let tdb: TestDb;
let db: Db;
let rig: EpisodeRig;
let splitId = "";
const bootstrap = { iterations: 200, seed: 0 };

async function rowsIn(part: "train" | "dev") {
  return db
    .select({ id: schema.splitAssignments.taskRowId })
    .from(schema.splitAssignments)
    .where(and(eq(schema.splitAssignments.splitId, splitId), eq(schema.splitAssignments.part, part)));
}

const storeRun = (taskRowId: string, policy: EpisodePolicySpec, seed: number) =>
  finishedEpisodeJob(db, rig, { taskRowId, policy, seed });

beforeAll(async () => {
  tdb = await createTestDatabase();
  db = tdb.db;
  rig = episodeRig();
  ({ splitId } = await makeSplit(db));
  const [d1, d2] = await rowsIn("dev");
  const [t1] = await rowsIn("train");
  if (!d1 || !d2 || !t1) throw new Error("no tasks");
  for (const seed of [1, 2]) {
    await storeRun(d1.id, { kind: "scripted", name: "solver" }, seed);
    await storeRun(d2.id, { kind: "scripted", name: "solver" }, seed);
  }
  await storeRun(d1.id, { kind: "scripted", name: "wrong" }, 3);
  await storeRun(t1.id, { kind: "scripted", name: "solver" }, 4);
  expect(await syncEpisodes({ db, log: pino({ level: "silent" }) })).toBe(6);
}, 240_000);

afterAll(async () => {
  rig?.close();
  await tdb?.drop();
});

describe("the report's agentic section", () => {
  it("reports pass@1 per policy over dev tasks and their seeds, with the budget used", async () => {
    const devTasks = await splitTasks(db, splitId, "dev");
    const { agentic } = await agenticReport(db, { splitId, devTasks, bootstrap });
    const byPolicy = new Map(agentic?.rows.map((r) => [r.policy, r]));
    expect([...byPolicy.keys()]).toEqual(["scripted:solver", "scripted:wrong"]);
    // Two dev tasks, two seeds each; the train task's episode is not among them.
    expect(byPolicy.get("scripted:solver")).toMatchObject({
      split: "dev",
      tasks: 2,
      episodes: 4,
      seedsPerTask: [2, 2],
    });
    expect(byPolicy.get("scripted:solver")?.passAt1.value).toBe(1);
    expect(byPolicy.get("scripted:solver")?.meanTestRuns).toBeGreaterThan(0);
    expect(byPolicy.get("scripted:wrong")).toMatchObject({ tasks: 1, episodes: 1 });
    expect(byPolicy.get("scripted:wrong")?.passAt1.value).toBe(0);
  });

  it("has no section when no episode ran on a dev task (control: the train episode exists)", async () => {
    const trainTasks = await splitTasks(db, splitId, "train");
    expect(await agenticReport(db, { splitId, devTasks: [], bootstrap })).toEqual({});
    // Read as if the train tasks were the evaluated ones, the train episode is found: the filter is the dev set.
    expect((await agenticReport(db, { splitId, devTasks: trainTasks, bootstrap })).agentic?.rows[0]?.episodes).toBe(1);
  });
});
