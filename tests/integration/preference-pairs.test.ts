import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { insertPreferencePairs, listPreferencePairs, preferencePairCounts, queryRows, schema } from "@agentlab/db";
import { ExperimentConfig, type ScoredPair } from "@agentlab/core";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { baseConfig, makeSplit } from "./experiments-harness";

// Preference pairs come from train tasks only. The query layer writes a round in one
// transaction; the database (trigger preference_pairs_train_only) refuses a dev or test task
// whatever code path writes the row. Each refusal has a train-task insert as its positive control.

let t: TestDb;
let splitId: string;
let experimentId: string;
const part = new Map<string, string>();
beforeAll(async () => {
  t = await createTestDatabase();
  ({ splitId } = await makeSplit(t.db));
  for (const r of await t.db.select().from(schema.splitAssignments).where(eq(schema.splitAssignments.splitId, splitId)))
    part.set(r.taskId, r.part);
  const [exp] = await t.db
    .insert(schema.experiments)
    .values({ name: "dpo", splitId, config: ExperimentConfig.parse(baseConfig(splitId)) })
    .returning({ id: schema.experiments.id });
  if (!exp) throw new Error("no experiment");
  experimentId = exp.id;
});
afterAll(async () => t?.drop());

const ids = (p: string) =>
  [...part]
    .filter(([, v]) => v === p)
    .map(([k]) => k)
    .sort();
const dbError = (p: Promise<unknown>) =>
  p.then(
    () => "no error",
    (e: { cause?: { message?: string }; message?: string }) => String(e.cause?.message ?? e.message),
  );

const pair = (taskId: string, sample = 0, over: Partial<ScoredPair> = {}): ScoredPair => ({
  pairKey: `${taskId}:base:${sample}`,
  taskId,
  pairSource: "cross_state",
  prompt: [{ role: "user", content: `fix ${taskId}` }],
  chosenSource: "reference",
  chosenText: "def f():\n    return 1\n",
  rejectedSource: "on_policy",
  rejectedModelKey: "base",
  rejectedSample: sample,
  rejectedText: "def f():\n    return 0\n",
  rejectedVerdict: "fail_hidden",
  failingLayer: "hidden",
  failingTests: ["test_h.py::test_one"],
  marginBefore: -1.5,
  weight: 1,
  ...over,
});

describe("preference pairs", () => {
  it("stores a round of train-task pairs once (a re-run writes nothing) and counts them by layer", async () => {
    const [a, b] = ids("train");
    const pairs = [
      pair(a ?? ""),
      pair(a ?? "", 1),
      pair(b ?? "", 0, { failingLayer: "syntax", rejectedVerdict: "fail_syntax" }),
    ];
    expect(await insertPreferencePairs(t.db, { experimentId, round: 0, pairs })).toBe(3);
    expect(await insertPreferencePairs(t.db, { experimentId, round: 0, pairs })).toBe(0);
    const rows = await listPreferencePairs(t.db, { experimentId, round: 0 });
    expect(rows.map((r) => r.pairKey).sort()).toEqual(pairs.map((p) => p.pairKey).sort());
    expect(rows.find((r) => r.taskKey === a)?.failingTests).toEqual(["test_h.py::test_one"]);
    expect(await preferencePairCounts(t.db, experimentId)).toEqual([
      { round: 0, failingLayer: "hidden", pairs: 2 },
      { round: 0, failingLayer: "syntax", pairs: 1 },
    ]);
  });

  it("refuses a round holding a dev task as a whole: no pair of it is written", async () => {
    const [train] = ids("train").slice(5);
    const [dev] = ids("dev");
    const err = await dbError(
      insertPreferencePairs(t.db, { experimentId, round: 1, pairs: [pair(train ?? ""), pair(dev ?? "")] }),
    );
    expect(err).toMatch(/train tasks only: task \S+ is dev in the split/);
    expect(await listPreferencePairs(t.db, { experimentId, round: 1 })).toEqual([]);
    // positive control: the train pair alone is accepted
    expect(await insertPreferencePairs(t.db, { experimentId, round: 1, pairs: [pair(train ?? "")] })).toBe(1);
  });

  it("the database refuses a dev or test pair whatever code path writes it, and a rejected answer that passed", async () => {
    const insert = (taskId: string, key: string, verdict = "fail_public") =>
      queryRows(
        t.db,
        sql`insert into preference_pairs (experiment_id, round, pair_key, split_id, task_row_id, task_key, prompt,
          chosen_source, chosen_text, rejected_source, rejected_model_key, rejected_sample, rejected_text,
          rejected_verdict, failing_layer, failing_tests, margin_before, weight)
        select ${experimentId}, 2, ${key}, ${splitId}, a.task_row_id, a.task_id, '[]'::jsonb, 'teacher', 'good',
          'on_policy', 'base', 0, 'bad', ${verdict}, 'public', '[]'::jsonb, 0, 1
        from split_assignments a where a.split_id = ${splitId} and a.task_id = ${taskId}`,
      );
    await expect(insert(ids("train")[7] ?? "", "ok")).resolves.toBeDefined();
    expect(await dbError(insert(ids("dev")[0] ?? "", "d"))).toMatch(/train tasks only: task \S+ is dev in the split/);
    expect(await dbError(insert(ids("test")[0] ?? "", "t"))).toMatch(/train tasks only: task \S+ is test in the split/);
    expect(await dbError(insert(ids("train")[8] ?? "", "p", "pass"))).toContain("preference_pairs_rejected_fails");
    expect(await dbError(insert(ids("train")[8] ?? "", "i", "infra_error"))).toContain(
      "preference_pairs_rejected_fails",
    );
  });
});
