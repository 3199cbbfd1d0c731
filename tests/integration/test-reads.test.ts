import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { schema } from "@agentlab/db";
import { ExperimentConfig, recipeHash, type TaskSpec } from "@agentlab/core";
import { createExperimentRunner } from "../../apps/web/server/experiments/runner";
import { resolveProtocol } from "../../apps/web/server/experiments/service";
import type { Services } from "../../apps/web/server/services";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { callerAs, type Caller } from "./helpers/callers";
import { storedReport } from "./helpers/reports";
import { baseConfig, drive, makeAgent, makeServices, makeSplit, startExperiment } from "./experiments-harness";

// The test-read ledger of a split: every test claim is recorded (experiment, recipe hash, models,
// when, by whom) and printed on every report built on the split; a split marked final refuses a
// further claim, naming the split, unless an admin overrides it with a reason the report prints.

let t: TestDb;
let s: Services;
let splitId: string;
let tasks: Map<string, TaskSpec>;
let fit: Awaited<ReturnType<typeof makeAgent>>;
let admin: Caller;
let member: Caller;
let memberId: string;
beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  ({ splitId, tasks } = await makeSplit(t.db));
  fit = await makeAgent(t.db);
  admin = await callerAs(s, "admin", "admin@reads.test");
  member = await callerAs(s, "member", "member@reads.test");
  const [u] = await t.db.select().from(schema.users).where(eq(schema.users.email, "member@reads.test"));
  memberId = u?.id ?? "";
});
afterAll(async () => t?.drop());

const learns = { fixes: (m: string) => m.startsWith("s1e") };
const start = (name: string) => startExperiment(s, baseConfig(splitId, { name, seeds: [1] }), memberId);
const run = (id: string) => drive(t.db, createExperimentRunner(s, { autoStart: false }), id, fit, tasks, learns);
/** The database's own message for a refused statement ("" when it went through). */
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => "",
    (e: unknown) => String((e as { cause?: { message?: string } }).cause?.message ?? e),
  );
const testRunOf = async (id: string) => t.db.select().from(schema.testRuns).where(eq(schema.testRuns.experimentId, id));

describe("test-read ledger", () => {
  let first: string;
  it("records each claim on the split and prints the count on every report", async () => {
    first = await start("first read");
    expect(await run(first)).toEqual({ state: "succeeded", error: null });
    const a = await storedReport(t.db, first);
    expect(a.body.testReads).toMatchObject({ splitId, count: 1, countAtReport: 1, final: null });
    const [claim] = a.body.testReads?.claims ?? [];
    const [exp] = await t.db.select().from(schema.experiments).where(eq(schema.experiments.id, first));
    expect(claim).toMatchObject({
      experimentId: first,
      claimerName: "first read",
      claimedBy: "member",
      recipeHash: recipeHash(ExperimentConfig.parse(exp?.config)),
      override: null,
    });
    expect(claim?.models[0]).toBe("base");
    expect(claim?.models.length).toBeGreaterThan(1);

    const second = await start("second read");
    expect(await run(second)).toEqual({ state: "succeeded", error: null });
    // The earlier report, read now, counts the later read too, and says it came after it.
    const view = await member.reports.byId({ id: a.id });
    expect(view.report.testReads).toMatchObject({ count: 2, countAtReport: 1 });
    expect(view.report.testReads?.claims.map((c) => c.claimerName)).toEqual(["first read", "second read"]);
    const md = await member.reports.export({ id: a.id, format: "markdown" });
    expect(md.content).toContain("This test set has been read 2 times (1 after this report was built).");
    const { token } = await member.share.create({ reportId: a.id });
    const shared = await member.share.view({ token });
    expect(shared.report.testReads?.count).toBe(2);
  });

  it("a final split refuses a further claim, naming the split; an admin override with a reason lets it through", async () => {
    // Only admins mark a split final.
    await expect(member.splits.markFinal({ splitId })).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await admin.splits.markFinal({ splitId, note: "paper numbers" })).toEqual({ marked: true });
    expect(await admin.splits.markFinal({ splitId })).toEqual({ marked: false });
    const [split] = await t.db.select().from(schema.splits).where(eq(schema.splits.id, splitId));

    const third = await start("third read");
    const refused = await run(third);
    expect(refused.state).toBe("failed");
    expect(refused.error).toContain(`split "${split?.name}" (${splitId}) is final`);
    expect(refused.error).toContain("read 2 times");
    // The refusal claimed nothing: no test run, no ledger entry, no test answers.
    expect(await testRunOf(third)).toHaveLength(0);
    expect((await admin.splits.testReads({ splitId })).count).toBe(2);

    // An override needs an admin and a reason.
    await expect(
      member.splits.overrideFinal({ splitId, experimentId: third, reason: "rerun of the published recipe" }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(admin.splits.overrideFinal({ splitId, experimentId: third, reason: "  " })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    const reason = "reviewer asked for the published recipe on the held-out split";
    expect(await admin.splits.overrideFinal({ splitId, experimentId: third, reason })).toEqual({ resumed: true });
    expect(await run(third)).toEqual({ state: "succeeded", error: null });
    const c = await storedReport(t.db, third);
    const json = JSON.parse((await admin.reports.export({ id: c.id, format: "json" })).content) as {
      testReads: { count: number; final: unknown; claims: { claimerName: string; override: unknown }[] };
    };
    expect(json.testReads.count).toBe(3);
    expect(json.testReads.final).toMatchObject({ by: "admin", note: "paper numbers" });
    expect(json.testReads.claims[2]).toMatchObject({ claimerName: "third read", override: { reason, by: "admin" } });
    expect((await admin.reports.export({ id: c.id, format: "markdown" })).content).toContain(reason);
    // Once claimed, there is nothing left to override.
    await expect(admin.splits.overrideFinal({ splitId, experimentId: third, reason })).rejects.toMatchObject({
      code: "CONFLICT",
    });
  });

  it("the database keeps the ledger append-only and guards a final split whatever code writes", async () => {
    const [exp] = await t.db.select().from(schema.experiments).limit(1);
    const insert = (reason: string | null) =>
      t.db.execute(sql`insert into split_test_claims (split_id, claimer_name, recipe_hash, models, override_reason)
        values (${splitId}, 'raw', 'x', '[]'::jsonb, ${reason})`);
    expect(await refusal(insert(null))).toMatch(/is final: a test claim needs an admin override/);
    await insert("a raw write with its reason");
    expect(await refusal(t.db.execute(sql`update split_test_claims set models = '["x"]'::jsonb`))).toMatch(
      /append-only/,
    );
    expect(await refusal(t.db.execute(sql`delete from split_test_claims`))).toMatch(/append-only/);
    expect(await refusal(t.db.execute(sql`delete from split_finals`))).toMatch(/stays final/);
    // Deleting an experiment keeps its read (unlinked): the count does not go down.
    expect(exp).toBeDefined();
    const before = (await admin.splits.testReads({ splitId })).count;
    await t.db.execute(sql`update split_test_claims set experiment_id = null where experiment_id = ${exp?.id ?? ""}`);
    expect((await admin.splits.testReads({ splitId })).count).toBe(before);
  });

  it("a config change is a new recipe hash; the name is not part of it", async () => {
    const c = await resolveProtocol(t.db, ExperimentConfig.parse(baseConfig(splitId, { name: "x" })));
    expect(recipeHash({ ...c, name: "y" })).toBe(recipeHash(c));
    expect(recipeHash({ ...c, seeds: [9] })).not.toBe(recipeHash(c));
  });
});
