import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import type { TaskSpec } from "@agentlab/core";
import { allDatasetSamples, getDataset, schema, type DatasetRow } from "@agentlab/db";
import type { Services } from "../../apps/web/server/services";
import { createDataset } from "../../apps/web/server/teacher/datasets";
import { recordTokenCounts } from "../../apps/web/server/teacher/token-counts";
import { callerAs, type Caller } from "./helpers/callers";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { referenceCollection } from "./helpers/reference-collection";
import { simTokenize } from "./helpers/sim-tokenize";
import { makeServices, makeSplit } from "./experiments-harness";

// Token matching as a dataset operation (datasets.budget): from a verified snapshot whose
// per-sample supervised tokens the tokenize job measured, a child snapshot of whole tasks holding
// B ± 0.5% supervised tokens, with its parent recorded and its own counts. Refused, writing nothing,
// without per-sample counts (the same call after the counts arrive is the control) and for a B the
// parent cannot reach.

let t: TestDb;
let s: Services;
let member: Caller;
let parent: DatasetRow;
let tasks: Map<string, TaskSpec>;
let splitId = "";
// Task lengths that differ (the draw must pick, not take everything): 40 + 13·k tokens a task.
const lengthOf = (taskKey: string) => 40 + 13 * (Number(/\d+/.exec(taskKey)?.[0] ?? 0) % 9);

beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  ({ splitId, tasks } = await makeSplit(t.db));
  const train = (
    await t.db.select().from(schema.splitAssignments).where(eq(schema.splitAssignments.splitId, splitId))
  ).flatMap((r) => (r.part === "train" ? [r.taskId] : []));
  const col = await referenceCollection(t.db, { splitId, tasks, taskIds: train });
  parent = await createDataset(s, { name: "verified", splitId, collectionIds: [col] });
  member = await callerAs(s, "member");
});
afterAll(async () => t?.drop());

const datasetCount = async () =>
  (await t.db.select({ n: sql<number>`count(*)::int` }).from(schema.sftDatasets))[0]?.n ?? 0;

describe("a budget snapshot (token matching)", () => {
  it("is refused, writing nothing, before the parent's per-sample counts exist", async () => {
    const before = await datasetCount();
    await expect(member.datasets.budget({ id: parent.id, tokens: 200, seed: 1 })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringContaining("tokenize it with the base model first"),
    });
    expect(await datasetCount()).toBe(before);
    const measured = await simTokenize(t.db, { datasetId: parent.id }, lengthOf);
    expect(await recordTokenCounts(s, parent.id, "/models/tiny", measured.tokenize)).toBe(true);
  });

  it("draws whole tasks to B ± 0.5% supervised tokens, records its parent and its own counts", async () => {
    const counts = (await getDataset(t.db, parent.id))?.tokenCounts;
    const perSample = counts?.perSample ?? [];
    expect(perSample).toHaveLength(parent.sampleCount);
    const total = perSample.reduce((a, b) => a + b, 0);
    const target = Math.round(total / 2);
    const r = await member.datasets.budget({ id: parent.id, tokens: target, seed: 7 });
    const child = r.dataset;
    expect(child.parentId).toBe(parent.id);
    expect(child.splitId).toBe(parent.splitId);
    expect(child.sampleCount).toBeLessThan(parent.sampleCount);
    // Its samples are the parent's, and their measured tokens add up to the reported total.
    const parentRows = await allDatasetSamples(t.db, parent.id);
    const tokensOf = new Map(parentRows.map((p) => [p.sample.hash, perSample[p.sample.ordinal] ?? NaN]));
    const childRows = await allDatasetSamples(t.db, child.id);
    const sum = childRows.reduce((a, c) => a + (tokensOf.get(c.sample.hash) ?? NaN), 0);
    expect(sum).toBe(r.budget.tokens);
    expect(Math.abs(sum - target) / target).toBeLessThanOrEqual(0.005);
    // Whole tasks: every parent sample of a drawn task is in the child.
    const drawnTasks = new Set(childRows.map((c) => c.sample.taskRowId));
    expect(childRows).toHaveLength(parentRows.filter((p) => drawnTasks.has(p.sample.taskRowId)).length);
    // The API shows the counts without the per-sample arrays, which only this operation reads.
    expect(child.tokenCounts).toMatchObject({ model: "/models/tiny", supervisedTokens: sum });
    expect(child.perSampleCounts).toBe(true);
    expect("perSample" in (child.tokenCounts ?? {})).toBe(false);
    const stored = (await getDataset(t.db, child.id))?.tokenCounts;
    expect(stored?.perSample).toEqual(childRows.map((c) => tokensOf.get(c.sample.hash)));
    expect((await member.datasets.byId({ id: parent.id })).perSampleCounts).toBe(true);
    // Seeded: the same call draws the same snapshot.
    const again = await member.datasets.budget({ id: parent.id, tokens: target, seed: 7 });
    expect(again.dataset.hash).toBe(child.hash);
  });

  it("is refused, writing nothing, for a B the parent cannot reach; a reachable one is the control", async () => {
    const total = (await getDataset(t.db, parent.id))?.tokenCounts?.supervisedTokens ?? 0;
    const before = await datasetCount();
    await expect(member.datasets.budget({ id: parent.id, tokens: total * 2, seed: 1 })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
      message: expect.stringContaining(`the pool holds ${total}`),
    });
    expect(await datasetCount()).toBe(before);
    await member.datasets.budget({ id: parent.id, tokens: total, seed: 1 });
    expect(await datasetCount()).toBe(before + 1);
  });
});
