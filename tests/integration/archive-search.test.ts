import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRPCError } from "@trpc/server";
import { sql } from "drizzle-orm";
import { importPool, queryRows, schema } from "@agentlab/db";
import type { TaskSpec } from "@agentlab/core";
import { callerAs, type Caller } from "./helpers/callers";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { makeServices } from "./experiments-harness";
import { makePool, makeTask, toJsonl } from "../fixtures/tasks/generate";

// Instruction search, archive and delete-when-unused for pools, splits, datasets and providers,
// on the real Postgres with the migration's immutability triggers in force.
let t: TestDb;
let admin: Caller;
let member: Caller;
const enc = (tasks: readonly TaskSpec[]) => [new TextEncoder().encode(toJsonl(tasks))];

beforeAll(async () => {
  t = await createTestDatabase();
  const services = await makeServices(t.db);
  admin = await callerAs(services, "admin", "admin@example.test");
  member = await callerAs(services, "member", "member@example.test");
});
afterAll(async () => t?.drop());

async function poolWith(name: string, tasks: TaskSpec[]) {
  const res = await importPool(t.db, { name, lines: enc(tasks) });
  if (!res.ok) throw new Error(JSON.stringify(res.problems.slice(0, 3)));
  return res;
}

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => "OK",
    (e: unknown) => (e instanceof TRPCError ? `${e.code}: ${e.message}` : `not a TRPCError: ${String(e)}`),
  );
// The database's own refusal (drizzle wraps it as "Failed query: …" with the Postgres error as cause).
const refusal = (query: ReturnType<typeof sql>) =>
  t.db.execute(query).then(
    () => "accepted",
    (e: unknown) => (e instanceof Error && e.cause instanceof Error ? e.cause.message : String(e)),
  );
const count = async (query: ReturnType<typeof sql>) => (await queryRows<{ n: number }>(t.db, query))[0]?.n;

async function split(poolId: string, seed: number) {
  return member.splits.create({ poolId, seed, devRatio: 0.2, testRatio: 0.2 });
}

async function experimentOn(splitId: string, config: Record<string, unknown> = {}) {
  const [e] = await t.db
    .insert(schema.experiments)
    // A hand-made row with only the keys under test (sql: the typed column wants a whole config).
    .values({ name: "uses it", splitId, config: sql`${JSON.stringify(config)}::jsonb`, state: "succeeded" })
    .returning();
  if (!e) throw new Error("no experiment");
  return e.id;
}

// A dataset snapshot with one real sample row (the sample triggers must let the delete through).
async function datasetOn(splitId: string, name: string) {
  const [task] = await queryRows<{ id: string; taskId: string }>(
    t.db,
    sql`select t.id, t.task_id as "taskId" from tasks t join split_assignments a on a.task_row_id = t.id
      where a.split_id = ${splitId} and a.part = 'train' limit 1`,
  );
  if (!task) throw new Error("no task");
  const [cand] = await t.db
    .insert(schema.teacherCandidates)
    .values({
      cacheKey: `k-${name}`,
      fingerprint: "f",
      promptHash: "p",
      model: "m",
      paramsHash: "h",
      sampleIndex: 0,
      providerKind: "reference",
      oracle: true,
      answer: "a",
    })
    .returning();
  const [ds] = await t.db
    .insert(schema.sftDatasets)
    .values({
      name,
      hash: "0".repeat(64),
      splitId,
      sourceCollectionIds: [],
      promptHash: "p",
      sampleCount: 1,
      taskCount: 1,
    })
    .returning();
  if (!cand || !ds) throw new Error("no dataset");
  await t.db.insert(schema.sftSamples).values({
    datasetId: ds.id,
    ordinal: 0,
    hash: "s",
    candidateId: cand.id,
    taskRowId: task.id,
    taskKey: task.taskId,
    oracle: true,
    messages: [],
  });
  return ds.id;
}

describe("instruction search", () => {
  it("finds tasks by words and phrases in their instruction, best first, paged with the total", async () => {
    const words = (i: number) =>
      i % 3 === 0
        ? "Parse the CSV header and return the column names."
        : i % 3 === 1
          ? "Parsing the CSV drops quoted commas; parsing quoted fields must keep them."
          : "Fix the off-by-one error in the binary search.";
    const tasks = Array.from({ length: 90 }, (_, i) => makeTask(i, 0, { instruction: words(i) }));
    const pool = await poolWith("search", tasks);
    // Another pool with the same words: never part of this pool's results.
    await poolWith("search-other", [makeTask(0, 1, { id: "other", instruction: "CSV header parsing" })]);

    const first = await member.tasks.search({ poolId: pool.poolId, text: "csv", limit: 25 });
    expect(first.total).toBe(60);
    expect(first.items).toHaveLength(25);
    expect(first.items.every((h) => h.snippet.includes("«CSV»"))).toBe(true);
    const rest = await member.tasks.search({ poolId: pool.poolId, text: "csv", offset: 25, limit: 50 });
    expect(rest.items).toHaveLength(35);
    const seen = new Set([...first.items, ...rest.items].map((h) => h.taskId));
    expect(seen.size).toBe(60);
    // Stemming: "parsing" matches "Parse" too; ranked, the instruction saying it twice comes first.
    const stem = await member.tasks.search({ poolId: pool.poolId, text: "parsing", limit: 200 });
    expect(stem.total).toBe(60);
    expect(stem.items[0]?.snippet).toContain("quoted");
    expect(stem.items.map((h) => h.rank)).toEqual([...stem.items.map((h) => h.rank)].sort((a, b) => b - a));

    const phrase = await member.tasks.search({ poolId: pool.poolId, text: '"binary search"' });
    expect(phrase.total).toBe(30);
    const without = await member.tasks.search({ poolId: pool.poolId, text: "csv -quoted" });
    expect(without.total).toBe(30);
    expect((await member.tasks.search({ poolId: pool.poolId, text: "nonexistentword" })).total).toBe(0);
    // Past the end: an empty page with the total, never an error.
    expect(await member.tasks.search({ poolId: pool.poolId, text: "csv", offset: 100 })).toEqual({
      items: [],
      total: 60,
      offset: 100,
    });
    // Syntax a user may type never breaks the query.
    expect((await member.tasks.search({ poolId: pool.poolId, text: 'csv & | ! ( "' })).total).toBe(60);
  });

  it("refuses empty text and an offset past the bound with the field named", async () => {
    const pool = await poolWith("search-bad", makePool(3, 1));
    expect(await codeOf(member.tasks.search({ poolId: pool.poolId, text: "   " }))).toMatch(/^BAD_REQUEST/);
    expect(await codeOf(member.tasks.search({ poolId: pool.poolId, text: "x", offset: 20_000 }))).toMatch(
      /^BAD_REQUEST: offset: at most 10000/,
    );
  });
});

describe("archive", () => {
  it("hides pools, splits, datasets and providers from lists by default and brings them back", async () => {
    const pool = await poolWith("arch", makePool(30, 1));
    const s = await split(pool.poolId, 1);
    const ds = await datasetOn(s.id, "arch-ds");
    const provider = await admin.providers.create({ name: "arch-oracle", kind: "reference", model: "oracle" });

    await member.pools.archive({ id: pool.poolId, archived: true });
    await member.splits.archive({ id: s.id, archived: true });
    await member.datasets.archive({ id: ds, archived: true });
    await admin.providers.archive({ id: provider.id, archived: true });
    expect((await member.pools.list()).map((p) => p.name)).not.toContain("arch");
    expect((await member.splits.list({ poolId: pool.poolId })).map((x) => x.id)).toEqual([]);
    expect((await member.datasets.list()).map((d) => d.id)).not.toContain(ds);
    expect((await member.providers.list()).map((p) => p.id)).not.toContain(provider.id);
    // The toggle lists them, marked; the rows themselves stay reachable.
    expect(
      (await member.pools.list({ includeArchived: true })).find((p) => p.name === "arch")?.archivedAt,
    ).toBeTruthy();
    expect((await member.splits.list({ poolId: pool.poolId, includeArchived: true }))[0]?.archivedAt).toBeTruthy();
    expect((await member.splits.byId({ id: s.id })).manifestHash).toBe(s.manifestHash);

    await member.pools.archive({ id: pool.poolId, archived: false });
    await member.splits.archive({ id: s.id, archived: false });
    await member.datasets.archive({ id: ds, archived: false });
    await admin.providers.archive({ id: provider.id, archived: false });
    expect((await member.pools.list()).map((p) => p.name)).toContain("arch");
    expect((await member.splits.list({ poolId: pool.poolId })).map((x) => x.id)).toEqual([s.id]);
    expect((await member.datasets.list()).map((d) => d.id)).toContain(ds);
    expect((await member.providers.list()).map((p) => p.id)).toContain(provider.id);
    expect(await codeOf(member.splits.archive({ id: crypto.randomUUID(), archived: true }))).toMatch(/^NOT_FOUND/);
  });

  it("is the only change a frozen split or a dataset snapshot accepts", async () => {
    const pool = await poolWith("arch-frozen", makePool(30, 1));
    const s = await split(pool.poolId, 2);
    const ds = await datasetOn(s.id, "frozen-ds");
    await member.splits.archive({ id: s.id, archived: true });
    await member.datasets.archive({ id: ds, archived: true });
    // Positive control above; any other column is still refused by the triggers.
    expect(await refusal(sql`update splits set name = 'renamed' where id = ${s.id}`)).toMatch(/frozen/);
    expect(await refusal(sql`update splits set archived_at = now(), seed = 99 where id = ${s.id}`)).toMatch(/frozen/);
    expect(await refusal(sql`update sft_datasets set name = 'x' where id = ${ds}`)).toMatch(/immutable/);
    expect(await refusal(sql`delete from split_assignments where split_id = ${s.id}`)).toMatch(/frozen/);
  });
});

describe("delete", () => {
  it("deletes an unused split, refuses one an experiment uses, and leaves that one whole", async () => {
    const pool = await poolWith("del-split", makePool(30, 1));
    const used = await split(pool.poolId, 3);
    const unused = await split(pool.poolId, 4);
    await experimentOn(used.id);
    const assignments = (id: string) =>
      count(sql`select count(*)::int as n from split_assignments where split_id = ${id}`);
    const before = await assignments(used.id);
    expect(before).toBe(30);

    expect(await codeOf(admin.splits.delete({ id: used.id }))).toMatch(
      /^CONFLICT: split ".*" is used by 1 experiment; it cannot be deleted \(archive it/,
    );
    expect(await assignments(used.id)).toBe(before);
    expect((await admin.splits.byId({ id: used.id })).frozen).toBe(true);
    // Positive control: the unused split and its assignments go.
    expect(await codeOf(admin.splits.delete({ id: unused.id }))).toBe("OK");
    expect(await assignments(unused.id)).toBe(0);
    expect(await codeOf(admin.splits.byId({ id: unused.id }))).toMatch(/^NOT_FOUND/);
    // Without the named delete the database still refuses (the trigger, not only the router).
    expect(await refusal(sql`delete from splits where id = ${used.id}`)).toMatch(/frozen/);
  });

  it("deletes a pool only once no split pins it, never the built-in one", async () => {
    const pool = await poolWith("del-pool", makePool(20, 1));
    const s = await split(pool.poolId, 5);
    expect(await codeOf(admin.pools.delete({ id: pool.poolId }))).toMatch(
      /^CONFLICT: pool "del-pool" is used by 1 split/,
    );
    await admin.splits.delete({ id: s.id });
    expect(await codeOf(admin.pools.delete({ id: pool.poolId }))).toBe("OK");
    expect(await count(sql`select count(*)::int as n from tasks where pool_id = ${pool.poolId}`)).toBe(0);

    const builtin = await importPool(t.db, { name: "builtin-x", lines: enc(makePool(2, 1)), builtin: true });
    if (!builtin.ok) throw new Error("import failed");
    expect(await codeOf(admin.pools.delete({ id: builtin.poolId }))).toMatch(/^CONFLICT: pool "builtin-x" is built in/);
  });

  it("deletes an unused dataset with its samples, refuses one an experiment reuses or trained on", async () => {
    const pool = await poolWith("del-ds", makePool(30, 1));
    const s = await split(pool.poolId, 6);
    const reused = await datasetOn(s.id, "reused");
    const trained = await datasetOn(s.id, "trained");
    const free = await datasetOn(s.id, "free");
    await experimentOn(s.id, { datasetId: reused });
    const exp = await experimentOn(s.id);
    await t.db.insert(schema.experimentStages).values({
      experimentId: exp,
      key: "dataset",
      kind: "dataset",
      output: sql`${JSON.stringify({ datasetId: trained })}::jsonb`,
    });

    expect(await codeOf(admin.datasets.delete({ id: reused }))).toMatch(
      /^CONFLICT: dataset "reused" is used by 1 experiment/,
    );
    expect(await codeOf(admin.datasets.delete({ id: trained }))).toMatch(
      /^CONFLICT: dataset "trained" is used by 1 experiment/,
    );
    expect(await codeOf(admin.datasets.delete({ id: free }))).toBe("OK");
    const samples = (id: string) => count(sql`select count(*)::int as n from sft_samples where dataset_id = ${id}`);
    expect(await samples(free)).toBe(0);
    expect(await samples(reused)).toBe(1);
    // A split with datasets on it is pinned by them too.
    expect(await codeOf(admin.splits.delete({ id: s.id }))).toMatch(/used by 2 experiments, 2 datasets/);
    expect(await refusal(sql`delete from sft_datasets where id = ${reused}`)).toMatch(/immutable/);
  });
});

describe("duplicate imports", () => {
  it("counts the tasks whose fingerprint was already in the pool, not copies within the file", async () => {
    const tasks = makePool(12, 1);
    await poolWith("dups", tasks);
    // The same tasks under new ids (the 810 → 812 re-upload) plus one new task and one in-file copy.
    const again = tasks.slice(0, 5).map((x) => ({ ...x, id: `${x.id}-again` }));
    const fresh = makeTask(500, 0);
    const res = await poolWith("dups", [...again, fresh, { ...fresh, id: "fresh-copy" }]);
    expect(res).toMatchObject({ imported: 7, duplicatesOfExisting: 5, exactDuplicates: 7 });
    // Positive control: a first import has no duplicates of existing tasks.
    expect((await poolWith("dups-fresh", tasks)).duplicatesOfExisting).toBe(0);
  });
});
