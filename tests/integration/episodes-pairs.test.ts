import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import pino from "pino";
import { branchPrompt, episodeBranchPairs, type PreferencePair } from "@agentlab/core";
import { insertPreferencePairs, listPreferencePairs, schema, type Db } from "@agentlab/db";
import { coin } from "../../apps/agent/src/episodes/policies";
import { syncEpisodes } from "../../apps/web/server/episodes/store";
import { episodeBranchStates } from "../../apps/web/server/experiments/episode-pairs";
import type { Services } from "../../apps/web/server/services";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { baseConfig, makeServices, makeSplit, startExperiment } from "./experiments-harness";
import { episodeRig, finishedEpisodeJob, type EpisodeRig } from "./episodes-rig";

// Same-state DPO pairs from episode branches, on episodes run on the sandbox and the judge and
// stored by the server's sweep. The seeded coin takes the wrong path on its main seed (a wrong
// edit, a failed public-test run: a recovery state) and its continuations from the start and from
// that state pass or fail by their seed, so each state gives pairs; a train task's pairs are
// stored with their source and state, a dev task's branches give none (control: read as dev they
// would, and the database refuses them).

let tdb: TestDb;
let db: Db;
let services: Services;
let rig: EpisodeRig;
let splitId = "";
const task = { train: { row: "", key: "" }, dev: { row: "", key: "" } };
const log = pino({ level: "silent" });
const K = 3;
// The main episode takes the wrong path; the continuations' seeds give both verdicts.
const mainSeed = Array.from({ length: 100 }, (_, i) => i).find((s) => !coin(s)) ?? 0;
const seedBase =
  Array.from({ length: 100 }, (_, i) => 200 + i).find((b) => {
    const flips = Array.from({ length: K }, (_, i) => coin(b + i));
    return flips.includes(true) && flips.includes(false);
  }) ?? 200;

async function taskIn(part: "train" | "dev") {
  const [row] = await db
    .select({ id: schema.splitAssignments.taskRowId, key: schema.splitAssignments.taskId })
    .from(schema.splitAssignments)
    .where(and(eq(schema.splitAssignments.splitId, splitId), eq(schema.splitAssignments.part, part)));
  if (!row) throw new Error(`no ${part} task`);
  return { row: row.id, key: row.key };
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  db = tdb.db;
  services = await makeServices(db);
  rig = episodeRig();
  ({ splitId } = await makeSplit(db));
  task.train = await taskIn("train");
  task.dev = await taskIn("dev");
  for (const t of [task.train, task.dev])
    await finishedEpisodeJob(db, rig, {
      taskRowId: t.row,
      policy: { kind: "scripted", name: "coin" },
      seed: mainSeed,
      branching: { k: K, seedBase },
    });
  expect(await syncEpisodes({ db, log })).toBe(2);
}, 240_000);

afterAll(async () => {
  rig?.close();
  await tdb?.drop();
});

/** The database's refusal (drizzle wraps it as "Failed query: …" with the Postgres error as cause); "" when written. */
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => "",
    (e: unknown) => (e instanceof Error && e.cause instanceof Error ? e.cause.message : String(e)),
  );

const pairsOf = async (t: { key: string }, part?: "train" | "dev") =>
  episodeBranchPairs({ states: await episodeBranchStates(db, { splitId, tasks: [{ id: t.key }], part }) }).pairs;

describe("same-state pairs from episode branches", () => {
  it("each branch state of a train task gives pass-vs-fail pairs whose prompt ends at the state", async () => {
    const pairs = await pairsOf(task.train);
    const branches = await db.select().from(schema.episodeBranches);
    const kinds = new Map(branches.map((b) => [b.stateHash, b.kind]));
    // Both branch points (the start and the recovery state) pair: each has a pass and a failure.
    expect(new Set(pairs.map((p) => kinds.get(p.stateHash ?? "")))).toEqual(new Set(["start", "after_failed_tests"]));
    const fails = Array.from({ length: K }, (_, i) => coin(seedBase + i)).filter((x) => !x).length;
    expect(pairs).toHaveLength(2 * fails);
    for (const p of pairs) {
      expect(p).toMatchObject({ taskId: task.train.key, pairSource: "episode_branch", chosenSource: "episode" });
      const [chosen] = await db
        .select()
        .from(schema.episodes)
        .where(eq(schema.episodes.id, p.chosenEpisodeId ?? ""));
      const [rejected] = await db
        .select()
        .from(schema.episodes)
        .where(eq(schema.episodes.id, p.rejectedEpisodeId ?? ""));
      expect(chosen).toMatchObject({ verdict: "pass", fromStateHash: p.stateHash, taskRowId: task.train.row });
      expect(rejected?.verdict).not.toBe("pass");
      expect(rejected?.fromStateHash).toBe(p.stateHash);
      // The prompt holds exactly the state's t calls: the transcript to it, none of the continuation.
      const [state] = await db
        .select()
        .from(schema.episodeStates)
        .where(eq(schema.episodeStates.hash, p.stateHash ?? ""));
      const user = p.prompt[1]?.content ?? "";
      const t = state?.t ?? -1;
      expect(user.includes(`[call ${t + 1}]`)).toBe(false);
      if (t > 0) expect(user).toContain(`[call ${t}]`);
      if (kinds.get(p.stateHash ?? "") === "after_failed_tests") {
        expect(t).toBeGreaterThan(0);
        expect(user).toMatch(/public tests: failed[\s\S]*$/);
        // The last thing before the answer is the failed run's result, as the policy saw it.
        expect(user.slice(user.lastIndexOf(`[result ${t}]`))).toContain("public tests: failed");
      } else expect(p.prompt).toEqual(branchPrompt(p.prompt[1]?.content ?? "", []));
      // The answers are the two continuations' own calls: the chosen one ends with its submit after the fix.
      expect(p.chosenText.split("\n").at(-1)).toBe('{"args":{},"tool":"submit"}');
      expect(p.chosenText).toContain("edit_file");
      expect(p.chosenText).not.toBe(p.rejectedText);
    }
  });

  it("stores the pairs with their source and state; a dev task's branches give none (controls: read as dev they pair, the database refuses them)", async () => {
    const train = await pairsOf(task.train);
    // The stage's reader, asked for the dev task, reads nothing: it reads the train part only.
    expect(await pairsOf(task.dev)).toEqual([]);
    // Control: the dev task's branches do pair when read as dev (so the empty list is the guard, not a lack of data).
    const dev = await pairsOf(task.dev, "dev");
    expect(dev.length).toBeGreaterThan(0);
    const experimentId = await startExperiment(services, baseConfig(splitId));
    const scored = (ps: PreferencePair[]) => ps.map((p) => ({ ...p, marginBefore: 0 }));
    expect(await refusal(insertPreferencePairs(db, { experimentId, round: 1, pairs: scored(dev) }))).toMatch(
      /train tasks only: task .* is dev/,
    );
    // A train pair whose rejected continuation is another task's episode is refused too.
    const [first] = train;
    if (!first) throw new Error("no train pair");
    const foreign = { ...first, pairKey: `${first.pairKey}:x`, rejectedEpisodeId: dev[0]?.rejectedEpisodeId };
    expect(await refusal(insertPreferencePairs(db, { experimentId, round: 1, pairs: scored([foreign]) }))).toMatch(
      /not on its task/,
    );
    expect(await insertPreferencePairs(db, { experimentId, round: 1, pairs: scored(train) })).toBe(train.length);
    const stored = await listPreferencePairs(db, { experimentId, pairSource: "episode_branch" });
    expect(stored.map((r) => [r.pairKey, r.stateHash, r.chosenEpisodeId, r.rejectedEpisodeId])).toEqual(
      [...train]
        .sort((a, b) => (a.pairKey < b.pairKey ? -1 : 1))
        .map((p) => [p.pairKey, p.stateHash, p.chosenEpisodeId, p.rejectedEpisodeId]),
    );
    expect(await listPreferencePairs(db, { experimentId, pairSource: "on_policy" })).toEqual([]);
  });
});
