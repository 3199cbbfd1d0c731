import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import pino from "pino";
import { sha256Hex, treeHash, type EpisodeJobResult, type EpisodePolicySpec } from "@agentlab/core";
import { getEpisode, listEpisodes, schema, useEpisodesForTraining, type Db } from "@agentlab/db";
import { loadStoredState, storeEpisodeJob, syncEpisodes } from "../../apps/web/server/episodes/store";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { makeSplit } from "./experiments-harness";
import { episodeRig, finishedEpisodeJob, type EpisodeRig } from "./episodes-rig";

// Episodes into the database: a real episode job's result (run on the sandbox and judge) stored by
// the server's sweep in one transaction, content addresses checked first, read back as episodes,
// steps, branch points with their pass rate and states that rebuild; and the train-only guard,
// in the server's function and in the table's trigger, each with the train episode as control.

let tdb: TestDb;
let db: Db;
let rig: EpisodeRig;
let splitId: string;
const taskOf: Record<"train" | "dev", string> = { train: "", dev: "" };
const log = pino({ level: "silent" });

beforeAll(async () => {
  tdb = await createTestDatabase();
  db = tdb.db;
  rig = episodeRig();
  ({ splitId } = await makeSplit(db));
  for (const part of ["train", "dev"] as const) {
    const [row] = await db
      .select({ id: schema.splitAssignments.taskRowId })
      .from(schema.splitAssignments)
      .where(and(eq(schema.splitAssignments.splitId, splitId), eq(schema.splitAssignments.part, part)))
      .limit(1);
    if (!row) throw new Error(`no ${part} task`);
    taskOf[part] = row.id;
  }
});
afterAll(async () => {
  rig.close();
  await tdb.drop();
});

const finishedJob = (taskRowId: string, policy: EpisodePolicySpec, k: number) =>
  finishedEpisodeJob(db, rig, { taskRowId, policy, seed: 1, branching: { k, seedBase: 50 } });

let trainEpisode = "";
let devEpisode = "";
let recovered: EpisodeJobResult | null = null;

describe("storing episode jobs", () => {
  it("the sweep stores main episodes, continuations, steps, branch points and states, once", async () => {
    const a = await finishedJob(taskOf.train, { kind: "scripted", name: "recoverer" }, 2);
    await finishedJob(taskOf.dev, { kind: "scripted", name: "solver" }, 0);
    recovered = a.result;
    expect(a.result.episode.verdict).toBe("pass");
    expect(await syncEpisodes({ db, log })).toBe(2);
    expect(await syncEpisodes({ db, log })).toBe(0);
    const main = await listEpisodes(db, { mainOnly: true });
    expect(main).toHaveLength(2);
    trainEpisode = main.find((e) => e.taskRowId === taskOf.train)?.id ?? "";
    devEpisode = main.find((e) => e.taskRowId === taskOf.dev)?.id ?? "";
    const got = await getEpisode(db, trainEpisode);
    if (!got) throw new Error("not stored");
    expect(got.episode).toMatchObject({ verdict: "pass", policyName: "scripted:recoverer", turns: 7, testRuns: 2 });
    expect(got.steps.map((s) => s.tool)).toEqual(a.result.episode.steps.map((s) => s.call.tool));
    // Branch points with their value: the start and the recovery state, two continuations each.
    expect(got.branches.map((x) => [x.kind, x.continuations, x.passes, x.passRate]).sort()).toEqual([
      ["after_failed_tests", 2, 2, 1],
      ["start", 2, 2, 1],
    ]);
    expect(got.continuations).toHaveLength(4);
    expect(got.continuations.every((c) => c.fromStateHash && c.branchId && c.verdict === "pass")).toBe(true);
    // A continuation's steps continue the parent's numbering.
    const recovery = got.branches.find((x) => x.kind === "after_failed_tests");
    const cont = got.continuations.find((c) => c.branchId === recovery?.id);
    const contSteps = cont ? await getEpisode(db, cont.id) : null;
    expect(contSteps?.steps[0]?.index).toBe(4);
    // The same job stored again is left alone.
    expect(
      (await storeEpisodeJob(db, { id: a.jobId, payload: (await jobRow(a.jobId)).payload, result: a.result })).created,
    ).toBe(false);
  });

  it("a stored state rebuilds its workspace from the stored files", async () => {
    const recovery = recovered?.values.find((v) => v.kind === "after_failed_tests");
    if (!recovery || !recovered) throw new Error("no recovery state");
    const { state, files } = await loadStoredState(db, recovery.state);
    expect(state.t).toBe(4);
    const manifest = { files: files.map((f) => ({ path: f.path, sha256: sha256Hex(f.content) })) };
    expect(treeHash(manifest)).toBe(state.treeHash);
    expect(files.map((f) => f.path)).not.toContain("test_hidden.py");
  });

  it("a result whose content does not hash to its address is refused and writes nothing (control: the intact one stores)", async () => {
    const a = await finishedJob(taskOf.train, { kind: "scripted", name: "wrong" }, 0);
    const before = await count();
    const [h] = Object.keys(a.result.blobs);
    if (!h) throw new Error("no blob");
    const forged = { ...a.result, blobs: { ...a.result.blobs, [h]: "def f(x):\n    return x + 1\n" } };
    const payload = (await jobRow(a.jobId)).payload;
    await expect(storeEpisodeJob(db, { id: a.jobId, payload, result: forged })).rejects.toThrow(
      new RegExp(`blobs\\.${h} does not hash`),
    );
    const verdictForged = { ...a.result, episode: { ...a.result.episode, steps: a.result.episode.steps.slice(1) } };
    await expect(storeEpisodeJob(db, { id: a.jobId, payload, result: verdictForged })).rejects.toThrow(/index|chain/);
    expect(await count()).toBe(before);
    expect((await storeEpisodeJob(db, { id: a.jobId, payload, result: a.result })).created).toBe(true);
    expect(await count()).toBe(before + 1);
  });
});

describe("the train-only guard", () => {
  it("refuses a dev episode for training; the train episode is the control", async () => {
    expect(await useEpisodesForTraining(db, { splitId, episodeIds: [trainEpisode], purpose: "sft:test" })).toBe(1);
    await expect(
      useEpisodesForTraining(db, { splitId, episodeIds: [trainEpisode, devEpisode], purpose: "sft:test2" }),
    ).rejects.toThrow(/is dev in the split: episodes for training come from train tasks only/);
    // Nothing of the refused call was written (one transaction).
    const uses = await db.select().from(schema.episodeTrainingUses);
    expect(uses.map((u) => u.purpose)).toEqual(["sft:test"]);
  });

  it("the trigger refuses a dev episode written past the function; a train one passes", async () => {
    await db.insert(schema.episodeTrainingUses).values({ episodeId: trainEpisode, splitId, purpose: "raw:train" });
    const refused = await db
      .insert(schema.episodeTrainingUses)
      .values({ episodeId: devEpisode, splitId, purpose: "raw:dev" })
      .then(
        () => "written",
        (e: { cause?: { message?: string }; message?: string }) => String(e.cause?.message ?? e.message),
      );
    expect(refused).toMatch(/episodes for training come from train tasks only: episode .* is dev in the split/);
  });
});

async function jobRow(id: string) {
  const [row] = await db.select().from(schema.jobs).where(eq(schema.jobs.id, id));
  if (!row) throw new Error("no job");
  return row;
}

const count = async () => (await db.select({ n: sql<number>`count(*)::int` }).from(schema.episodes))[0]?.n ?? 0;
