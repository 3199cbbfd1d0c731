import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TRPCError } from "@trpc/server";
import type { ScoredPair } from "@agentlab/core";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { callerAs, type Caller } from "./helpers/callers";
import { makeServices } from "./experiments-harness";
import { seedPreferencePairs, type SeededPairs } from "./helpers/preference-seed";

// The pair browser's reads (pairs.browse, pairs.figures): filters by round, failing layer
// and sources reach the database, the total counts the filtered pairs (not the page), the figures
// count the whole experiment by group and give the filtered margins. Expected values are counted
// from the seeded pairs, not written down.

let t: TestDb;
let viewer: Caller;
let seeded: SeededPairs;
const all = (): (ScoredPair & { round: number })[] =>
  [...seeded.pairs].flatMap(([round, ps]) => ps.map((p) => ({ ...p, round })));

beforeAll(async () => {
  t = await createTestDatabase();
  const s = await makeServices(t.db);
  seeded = await seedPreferencePairs(t.db);
  viewer = await callerAs(s, "viewer");
});
afterAll(async () => t?.drop());

describe("pairs.browse", () => {
  it("filters by round, layer and rejected source, with the filtered total and its tasks", async () => {
    const experimentId = seeded.experimentId;
    const want = all().filter((p) => p.round === 1 && p.failingLayer === "hidden");
    expect(want.length).toBeGreaterThan(1);
    const got = await viewer.pairs.browse({ experimentId, round: 1, failingLayer: "hidden" });
    expect(got.total).toBe(want.length);
    expect(got.tasks).toBe(new Set(want.map((p) => p.taskId)).size);
    expect(got.rows.map((r) => r.pairKey).sort()).toEqual(want.map((p) => p.pairKey).sort());
    expect(got.rows.every((r) => r.round === 1 && r.failingLayer === "hidden")).toBe(true);

    const mutants = all().filter((p) => p.rejectedSource === "mutant");
    expect(mutants.length).toBeGreaterThan(0);
    const m = await viewer.pairs.browse({ experimentId, rejectedSource: "mutant" });
    expect(m.rows.map((r) => r.pairKey).sort()).toEqual(mutants.map((p) => p.pairKey).sort());
    // positive control: without a filter every pair is there
    expect((await viewer.pairs.browse({ experimentId, limit: 200 })).total).toBe(all().length);
    // a filter that matches nothing is an empty page, not an error
    expect(await viewer.pairs.browse({ experimentId, round: 0, rejectedSource: "mutant" })).toEqual({
      total: 0,
      tasks: 0,
      rows: [],
    });
  });

  it("pages in the stored order (round, task, pair key) without losing or repeating a pair", async () => {
    const experimentId = seeded.experimentId;
    const seen: string[] = [];
    for (let offset = 0; offset < all().length; offset += 7) {
      const page = await viewer.pairs.browse({ experimentId, limit: 7, offset });
      expect(page.total).toBe(all().length);
      seen.push(...page.rows.map((r) => `${r.round}|${r.taskKey}|${r.pairKey}`));
    }
    expect(seen).toHaveLength(all().length);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...seen].sort());
  });

  it("refuses an unknown layer naming the field, and an unknown experiment", async () => {
    const bad = await viewer.pairs
      .browse({ experimentId: seeded.experimentId, failingLayer: "compile" as "syntax" })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(TRPCError);
    expect(String((bad as TRPCError).message)).toMatch(/failingLayer/);
    await expect(viewer.pairs.browse({ experimentId: "00000000-0000-4000-8000-0000000000ff" })).rejects.toThrow(
      /not found/,
    );
  });
});

describe("pairs.figures", () => {
  it("counts every round by layer and source, and gives the margins of the filtered pairs in order", async () => {
    const experimentId = seeded.experimentId;
    const f = await viewer.pairs.figures({ experimentId, failingLayer: "hidden" });
    expect(f.groups.reduce((a, g) => a + g.pairs, 0)).toBe(all().length);
    for (const g of f.groups) {
      const n = all().filter(
        (p) =>
          p.round === g.round &&
          p.failingLayer === g.failingLayer &&
          p.chosenSource === g.chosenSource &&
          p.rejectedSource === g.rejectedSource,
      ).length;
      expect(n).toBe(g.pairs);
    }
    const hidden = all().filter((p) => p.failingLayer === "hidden");
    expect(f.margins.map((m) => m.margin)).toEqual(hidden.map((p) => p.marginBefore).sort((a, b) => a - b));
    expect(f.margins.filter((m) => m.weight < 1).length).toBe(hidden.filter((p) => p.weight < 1).length);
  });
});
