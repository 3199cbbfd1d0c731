import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, sql } from "drizzle-orm";
import { CollectionInput, NAME_MAX_LENGTH } from "@agentlab/core";
import { getExperiment, insertProvider, listCollections, listStages, schema } from "@agentlab/db";
import { createExperiment } from "../../apps/web/server/experiments/service";
import { createExperimentRunner } from "../../apps/web/server/experiments/runner";
import type { Services } from "../../apps/web/server/services";
import { awaitCollection } from "../../apps/web/server/teacher/collection-runs";
import { baseConfig, makeServices, makeSplit } from "./experiments-harness";
import { createTestDatabase, type TestDb } from "./helpers/db";

// A runner error that is not a domain refusal is retried a bounded number of
// times with backoff, then the experiment fails with the reason (the page shows `error`); and a
// maximal experiment name no longer breaks the collect stage (it used to fail every 2 s forever).

let t: TestDb;
let s: Services;
let splitId = "";
let providerId = "";
beforeAll(async () => {
  t = await createTestDatabase();
  s = await makeServices(t.db);
  splitId = (await makeSplit(t.db)).splitId;
  providerId = (
    await insertProvider(t.db, {
      name: "oracle",
      kind: "reference",
      baseUrl: null,
      model: "reference",
      apiKeySealed: null,
      extraParams: {},
    })
  ).id;
}, 60_000);
afterAll(async () => t?.drop());

describe("runner errors", () => {
  it("retries a crashing experiment a bounded number of times, then fails it with the reason", async () => {
    const { datasetId: _none, ...config } = baseConfig(splitId, { name: "crashy", teacher: { providerId, n: 1 } });
    const exp = await createExperiment(t.db, config, null);
    // A config the runner cannot parse: a ZodError on every advance, never a DomainError.
    await t.db
      .update(schema.experiments)
      .set({ config: sql`'{"name": "crashy"}'::jsonb` })
      .where(eq(schema.experiments.id, exp.id));
    const runner = createExperimentRunner(s, { autoStart: false, retries: { maxRetries: 2, baseMs: 20, capMs: 20 } });
    for (let i = 0; i < 2; i++) {
      await runner.tick();
      // Positive control: a failure within the budget is retried, the experiment still runs.
      expect((await getExperiment(t.db, exp.id))?.state).toBe("running");
      await new Promise((r) => setTimeout(r, 30));
    }
    await runner.tick(); // within the backoff nothing happens; after it, the third failure is final
    await new Promise((r) => setTimeout(r, 30));
    await runner.tick();
    const failed = await getExperiment(t.db, exp.id);
    expect(failed?.state).toBe("failed");
    expect(failed?.error).toMatch(/^runner: .*failed 3 times in a row/s);
    await runner.stop();
  });

  it("backs off between retries instead of failing every tick", async () => {
    const { datasetId: _none, ...config } = baseConfig(splitId, { name: "slow-crash", teacher: { providerId, n: 1 } });
    const exp = await createExperiment(t.db, config, null);
    await t.db.update(schema.experiments).set({ config: sql`'{}'::jsonb` }).where(eq(schema.experiments.id, exp.id));
    const runner = createExperimentRunner(s, { autoStart: false, retries: { maxRetries: 1, baseMs: 60_000 } });
    await runner.tick();
    await runner.tick(); // inside the 60 s backoff: not retried, so not yet over the budget
    expect((await getExperiment(t.db, exp.id))?.state).toBe("running");
    await runner.stop();
  });
});

describe("long names", () => {
  it("a maximal experiment name gets through the collect stage, and the collection name fits", async () => {
    const name = "n".repeat(NAME_MAX_LENGTH);
    // Positive control: the name the collect stage used to build is refused by the collection schema.
    expect(CollectionInput.safeParse({ name: `${name}: train n=1`, splitId, providerId }).success).toBe(false);
    const { datasetId: _none, ...config } = baseConfig(splitId, { name, teacher: { providerId, n: 1 } });
    const exp = await createExperiment(t.db, config, null);
    const runner = createExperimentRunner(s, { autoStart: false, retries: { maxRetries: 0 } });
    await runner.tick();
    expect((await getExperiment(t.db, exp.id))?.state).toBe("running");
    const collect = (await listStages(t.db, exp.id)).find((r) => r.key === "collect");
    expect(collect?.state).not.toBe("failed");
    const [col] = await listCollections(t.db, { experimentId: exp.id });
    expect(col?.name.length).toBeLessThanOrEqual(NAME_MAX_LENGTH);
    expect(col?.name.startsWith("nnnn")).toBe(true);
    await runner.stop();
    await awaitCollection(s, col?.id ?? "");
  });

  it("the database refuses a name longer than the forms and zod allow", async () => {
    const { datasetId: _none, ...config } = baseConfig(splitId, { name: "ok", teacher: { providerId, n: 1 } });
    const exp = await createExperiment(t.db, config, null);
    const err: unknown = await t.db
      .update(schema.experiments)
      .set({ name: "x".repeat(NAME_MAX_LENGTH + 1) })
      .where(eq(schema.experiments.id, exp.id))
      .catch((e: unknown) => e);
    expect(String((err as { cause?: unknown }).cause)).toMatch(/experiments_name_length/);
    // Positive control: a name at the limit is fine.
    await t.db
      .update(schema.experiments)
      .set({ name: "x".repeat(NAME_MAX_LENGTH) })
      .where(eq(schema.experiments.id, exp.id));
  });
});
