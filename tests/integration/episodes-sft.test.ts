import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq, sql } from "drizzle-orm";
import pino from "pino";
import { EPISODE_PROMPT_HASH, GradeJobPayload, SftSample, ToolCall, type EpisodePolicySpec } from "@agentlab/core";
import { allDatasetSamples, listEpisodes, schema, type Db } from "@agentlab/db";
import type { Services } from "../../apps/web/server/services";
import { syncEpisodes } from "../../apps/web/server/episodes/store";
import { exportDataset, startReplay } from "../../apps/web/server/teacher/datasets";
import { callerAs, type Caller } from "./helpers/callers";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { makeServices, makeSplit } from "./experiments-harness";
import { episodeRig, finishedEpisodeJob, type EpisodeRig } from "./episodes-rig";

// Verified episode trajectories into SFT snapshots (episodes.toDataset), on episodes run on the
// sandbox and the judge and stored by the server's sweep: the recoverer's pass after a failed
// attempt is a recovery trajectory, the solver's (its failing test run reproduces the bug before
// any edit) a success one; the rows export to the snapshot hash and replay the episode's
// submission. The train-only guarantee: a named dev episode, a failing one, and rows written past
// the function (the sft_samples triggers) are refused, each beside the train episode that passes.

let tdb: TestDb;
let db: Db;
let services: Services;
let rig: EpisodeRig;
let member: Caller;
let splitId = "";
const tasks = { train1: "", train2: "", dev: "" };
const main = { recoverer: "", solver: "", wrong: "", dev: "" };
const log = pino({ level: "silent" });

async function taskIn(part: "train" | "dev", skip: string[] = []) {
  const rows = await db
    .select({ id: schema.splitAssignments.taskRowId })
    .from(schema.splitAssignments)
    .where(and(eq(schema.splitAssignments.splitId, splitId), eq(schema.splitAssignments.part, part)));
  const row = rows.find((r) => !skip.includes(r.id));
  if (!row) throw new Error(`no ${part} task`);
  return row.id;
}

const finishedJob = async (taskRowId: string, policy: EpisodePolicySpec, k: number) =>
  (await finishedEpisodeJob(db, rig, { taskRowId, policy, seed: 1, branching: { k, seedBase: 50 } })).jobId;

beforeAll(async () => {
  tdb = await createTestDatabase();
  db = tdb.db;
  services = await makeServices(db);
  rig = episodeRig();
  ({ splitId } = await makeSplit(db));
  tasks.train1 = await taskIn("train");
  tasks.train2 = await taskIn("train", [tasks.train1]);
  tasks.dev = await taskIn("dev");
  const jobs = {
    recoverer: await finishedJob(tasks.train1, { kind: "scripted", name: "recoverer" }, 1),
    solver: await finishedJob(tasks.train2, { kind: "scripted", name: "solver" }, 0),
    wrong: await finishedJob(tasks.train2, { kind: "scripted", name: "wrong" }, 0),
    dev: await finishedJob(tasks.dev, { kind: "scripted", name: "solver" }, 0),
  };
  expect(await syncEpisodes({ db, log })).toBe(4);
  const stored = await listEpisodes(db, { mainOnly: true });
  for (const k of Object.keys(jobs) as (keyof typeof jobs)[])
    main[k] = stored.find((e) => e.jobId === jobs[k])?.id ?? "";
  member = await callerAs(services, "member");
}, 240_000);

afterAll(async () => {
  rig?.close();
  await tdb?.drop();
});

const datasetCount = async () =>
  (await db.select({ n: sql<number>`count(*)::int` }).from(schema.sftDatasets))[0]?.n ?? 0;
const samplesOf = async (datasetId: string) => (await allDatasetSamples(db, datasetId)).map((r) => r.sample);

describe("episode trajectories into SFT snapshots", () => {
  it("a success snapshot holds the solver's trajectory as multi-turn SFT (calls supervised, observations between)", async () => {
    const d = await member.episodes.toDataset({ name: "success", splitId, kinds: "success" });
    expect(d).toMatchObject({ sampleCount: 1, taskCount: 1, oracleSamples: 1, promptHash: EPISODE_PROMPT_HASH });
    const [s] = await samplesOf(d.id);
    expect(s).toMatchObject({ episodeId: main.solver, candidateId: null, taskRowId: tasks.train2 });
    const messages = SftSample.parse({ messages: s?.messages }).messages;
    expect(messages.slice(0, 2).map((m) => m.role)).toEqual(["system", "user"]);
    expect(messages[1]?.content).toMatch(/Files in the workspace: .*solution\.py/);
    const calls = messages.filter((m) => m.role === "assistant").map((m) => ToolCall.parse(JSON.parse(m.content)));
    const [ep] = await db.select().from(schema.episodes).where(eq(schema.episodes.id, main.solver));
    expect(calls).toHaveLength(ep?.turns ?? -1);
    expect(calls.at(-1)?.tool).toBe("submit");
    // Roles alternate after the prompt: each call, then what it returned; the submit ends it.
    expect(messages.slice(2).every((m, i) => m.role === (i % 2 === 0 ? "assistant" : "user"))).toBe(true);
    expect(messages.some((m) => m.role === "user" && m.content.startsWith("public tests: failed"))).toBe(true);
    // The export is the snapshot's bytes, each line a trainer sample.
    const { jsonl } = await exportDataset(services, d.id);
    expect(jsonl.trim().split("\n")).toHaveLength(1);
    // The episodes it trains on are recorded as training uses.
    const uses = await db
      .select()
      .from(schema.episodeTrainingUses)
      .where(eq(schema.episodeTrainingUses.purpose, `sft:${d.hash}`));
    expect(uses.map((u) => u.episodeId)).toEqual([main.solver]);
  });

  it("a recovery snapshot holds the recoverer's trajectories (the wrong edit, the failed run, the fix); both holds all", async () => {
    const d = await member.episodes.toDataset({ name: "recovery", splitId, kinds: "recovery" });
    const samples = await samplesOf(d.id);
    // The main episode and its two continuations (from the start and from the recovery state).
    // Each qualifies alone; together a snapshot keeps one sample per distinct transcript (a
    // continuation that replays its parent's steps to the byte, pytest's timings included, is the
    // same sample), so the expected set is computed from the single-episode snapshots.
    const continuations = await db
      .select({ id: schema.episodes.id })
      .from(schema.episodes)
      .where(eq(schema.episodes.parentEpisodeId, main.recoverer));
    expect(continuations).toHaveLength(2);
    const alone = new Map<string, string>();
    for (const id of [main.recoverer, ...continuations.map((c) => c.id)]) {
      const one = await member.episodes.toDataset({
        name: `recovery-${id}`,
        splitId,
        kinds: "recovery",
        episodeIds: [id],
      });
      const [s] = await samplesOf(one.id);
      expect(s?.episodeId).toBe(id);
      const text = JSON.stringify(s?.messages);
      if (!alone.has(text)) alone.set(text, id);
    }
    expect(new Set(samples.map((s) => s.episodeId))).toEqual(new Set(alone.values()));
    expect(new Set(samples.map((s) => JSON.stringify(s.messages)))).toEqual(new Set(alone.keys()));
    for (const s of samples) {
      const firstEdit = s.messages.findIndex((m) => m.role === "assistant" && m.content.includes('"tool":"edit_file"'));
      const failed = s.messages.findIndex((m) => m.role === "user" && m.content.startsWith("public tests: failed"));
      expect(firstEdit).toBeGreaterThan(0);
      expect(failed).toBeGreaterThan(firstEdit);
    }
    const both = await member.episodes.toDataset({ name: "both", splitId, kinds: "both" });
    expect(both.sampleCount).toBe(samples.length + 1);
    expect(new Set((await samplesOf(both.id)).map((s) => s.taskRowId))).toEqual(new Set([tasks.train1, tasks.train2]));
  });

  it("refuses a named dev episode and writes nothing; the same call with the train episode is the control", async () => {
    const before = await datasetCount();
    await expect(
      member.episodes.toDataset({ name: "leak", splitId, kinds: "both", episodeIds: [main.solver, main.dev] }),
    ).rejects.toMatchObject({ code: "PRECONDITION_FAILED", message: expect.stringMatching(/train tasks only.*dev/) });
    expect(await datasetCount()).toBe(before);
    const ok = await member.episodes.toDataset({ name: "named", splitId, kinds: "both", episodeIds: [main.solver] });
    expect(ok.sampleCount).toBe(1);
    expect(await datasetCount()).toBe(before + 1);
  });

  it("refuses a named failing episode (the judge did not pass it); the passing one is the control", async () => {
    await expect(
      member.episodes.toDataset({ name: "fail", splitId, kinds: "both", episodeIds: [main.wrong] }),
    ).rejects.toMatchObject({ code: "PRECONDITION_FAILED", message: expect.stringMatching(/verdict is fail_/) });
    await expect(
      member.episodes.toDataset({ name: "pass", splitId, kinds: "both", episodeIds: [main.recoverer] }),
    ).resolves.toMatchObject({ sampleCount: 1 });
  });

  it("the triggers refuse a dev or failing episode's row written past the function; the train episode's row passes", async () => {
    const [d] = await db
      .insert(schema.sftDatasets)
      .values({
        name: "raw",
        hash: "0".repeat(64),
        splitId,
        sourceCollectionIds: [],
        promptHash: EPISODE_PROMPT_HASH,
        sampleCount: 1,
        taskCount: 1,
      })
      .returning();
    if (!d) throw new Error("no dataset");
    const [dev] = await db.select().from(schema.tasks).where(eq(schema.tasks.id, tasks.dev));
    const [train] = await db.select().from(schema.tasks).where(eq(schema.tasks.id, tasks.train2));
    const row = (ordinal: number, episodeId: string, task: typeof train) => ({
      datasetId: d.id,
      ordinal,
      hash: String(ordinal).repeat(64),
      episodeId,
      taskRowId: task?.id ?? "",
      taskKey: task?.taskId ?? "",
      oracle: true,
      messages: [{ role: "user" as const, content: "x" }],
    });
    const refused = (p: Promise<unknown>) =>
      p.then(
        () => "written",
        (e: { cause?: { message?: string }; message?: string }) => String(e.cause?.message ?? e.message),
      );
    expect(await refused(db.insert(schema.sftSamples).values(row(1, main.dev, dev)))).toMatch(
      /SFT data comes from train tasks only/,
    );
    expect(await refused(db.insert(schema.sftSamples).values(row(2, main.wrong, train)))).toMatch(
      /need a passing episode: episode .* is fail_/,
    );
    // An episode's row names the episode's own task.
    expect(await refused(db.insert(schema.sftSamples).values(row(3, main.solver, dev)))).toMatch(
      /train tasks only|is not the task of episode/,
    );
    // A sample names one source: a teacher candidate or an episode.
    expect(
      await refused(db.insert(schema.sftSamples).values({ ...row(4, main.solver, train), episodeId: null })),
    ).toMatch(/sft_samples_one_source/);
    expect(await refused(db.insert(schema.sftSamples).values(row(5, main.solver, train)))).toBe("written");
  });

  it("a replay grades each episode sample's submission: its final workspace less the public tests", async () => {
    const d = await member.episodes.toDataset({ name: "replay", splitId, kinds: "success" });
    const r = await startReplay(services, d.id);
    const [jobId] = Object.values(r.jobs);
    const [job] = await db
      .select()
      .from(schema.jobs)
      .where(eq(schema.jobs.id, jobId ?? ""));
    const payload = GradeJobPayload.parse(job?.payload);
    const paths = payload.candidate.map((f) => f.path);
    expect(paths).toContain("solution.py");
    expect(paths.some((p) => p.startsWith("test_"))).toBe(false);
    const solution = payload.candidate.find((f) => f.path === "solution.py")?.content;
    const reference = payload.task.reference.find((f) => f.path === "solution.py")?.content;
    expect(solution?.trimEnd()).toBe(reference?.trimEnd());
  });
});
