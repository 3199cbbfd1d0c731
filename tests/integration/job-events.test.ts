import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import { claimJob, finishAttempt, getExperiment, openDatabase, schema, type Database } from "@agentlab/db";
import { createApp, type App } from "../../apps/web/server/app";
import { loadEnv } from "../../apps/web/server/env";
import { createLogger } from "../../apps/web/server/logger";
import { baseConfig, makeAgent, makeSplit, startExperiment } from "./experiments-harness";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { userErrorResult } from "./helpers/job-ends";
import { waitFor } from "./helpers/server";

// One job-completion path: a job's end wakes the experiment runner through the queue's events,
// never through a poll. The safety sweep is set to 10 minutes here, so anything that happens within
// a test's few seconds came through an event: in-process (this server wrote the end) or a
// Postgres NOTIFY (another connection wrote it). The control: the same end written by another
// connection to a server that does not LISTEN is not seen until the runner is woken by hand.

const SWEEP_MS = "600000";

async function startApp(t: TestDb, listen: boolean): Promise<{ app: App; close(): Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), "agentlab-events-"));
  const env = loadEnv({
    NODE_ENV: "test",
    AGENTLAB_DATA_DIR: dataDir,
    LOG_LEVEL: "silent",
    AGENTLAB_SWEEP_MS: SWEEP_MS,
  });
  const app = await createApp({
    env,
    db: t.db,
    log: createLogger("silent"),
    secret: "test-secret-test-secret-test-secret-0123",
    ...(listen ? { listen: t.listen } : {}),
  });
  return {
    app,
    async close() {
      await app.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function withApp(t: TestDb, listen: boolean, fn: (app: App) => Promise<void>): Promise<void> {
  const srv = await startApp(t, listen);
  try {
    await fn(srv.app);
  } finally {
    await srv.close();
  }
}

/** An experiment woken once (as experiments.create does) and advanced to its queued train jobs. */
async function experimentAtTraining(app: App, splitId: string): Promise<{ id: string; trainJobs: string[] }> {
  // The earlier tests' experiments leave a queued train job each; the claims below must get this one's.
  await app.services.db
    .update(schema.jobs)
    .set({ state: "canceled", terminalReason: "canceled" })
    .where(eq(schema.jobs.state, "queued"));
  const id = await startExperiment(app.services, baseConfig(splitId, { name: `ev-${Math.random()}` }));
  await app.services.queue.wakeExperiment(id);
  const trainJobs = await waitFor(async () => {
    const rows = await app.services.db
      .select({ id: schema.jobs.id })
      .from(schema.jobs)
      .where(and(eq(schema.jobs.experimentId, id), eq(schema.jobs.type, "train")));
    return rows.length === 2 && rows.map((r) => r.id);
  }, 20_000);
  // The advance that enqueued them is done: the latencies below are the wake's alone.
  await app.background?.runner.idle();
  return { id, trainJobs };
}

/** Another connection claims one of the experiment's train jobs and ends it as a user error. */
async function failFromOtherConnection(other: Database, fit: Awaited<ReturnType<typeof makeAgent>>) {
  const claimed = await claimJob(other.db, fit);
  if (claimed?.type !== "train") throw new Error(`expected to claim a train job, got ${claimed?.type}`);
  const out = await finishAttempt(other.db, userErrorResult(claimed, "trainer crashed"), fit.agentId);
  expect(out).toMatchObject({ accepted: true, state: "failed", requeued: false });
  return Date.now();
}

const failedWithin = (app: App, id: string, ms: number) =>
  waitFor(
    async () => {
      const e = await getExperiment(app.services.db, id);
      return e?.state === "failed" && e;
    },
    ms,
    5,
  );

describe("job completion wakes the runner through events", () => {
  let t: TestDb;
  let other: Database;
  let splitId: string;
  beforeAll(async () => {
    t = await createTestDatabase();
    other = await openDatabase({ url: t.url, maxConnections: 2 });
    ({ splitId } = await makeSplit(t.db));
  }, 60_000);
  afterAll(async () => {
    await other?.close();
    await t?.drop();
  });

  it("a job ended in this process wakes its experiment at once (in-process event)", async () => {
    await withApp(t, false, async (app) => {
      const exp = await experimentAtTraining(app, splitId);
      const t0 = Date.now();
      await app.services.queue.cancel(exp.trainJobs[0] ?? "");
      const failed = await failedWithin(app, exp.id, 10_000);
      console.log(`[job-events] in-process: job end -> experiment failed in ${Date.now() - t0} ms`);
      expect(failed.error).toMatch(/^train:s\d: .*canceled/);
    });
  });

  it("without LISTEN, an end written by another connection is not seen before the sweep (control)", async () => {
    await withApp(t, false, async (app) => {
      const exp = await experimentAtTraining(app, splitId);
      await failFromOtherConnection(other, await makeAgent(t.db));
      await new Promise((r) => setTimeout(r, 1500));
      expect((await getExperiment(t.db, exp.id))?.state).toBe("running");
      // Positive control: the end is there to be seen; a sweep (a full wake) sees it.
      app.background?.runner.wake();
      await failedWithin(app, exp.id, 10_000);
    });
  });

  it("with LISTEN, an end written by another connection reaches the runner by NOTIFY", async () => {
    await withApp(t, true, async (app) => {
      const exp = await experimentAtTraining(app, splitId);
      const t0 = await failFromOtherConnection(other, await makeAgent(t.db));
      const failed = await failedWithin(app, exp.id, 10_000);
      console.log(`[job-events] NOTIFY: job end on another connection -> experiment failed in ${Date.now() - t0} ms`);
      expect(failed.error).toMatch(/^train:s\d: .*trainer crashed/);
    });
  });

  it("a rolled-back end is never announced", async () => {
    await withApp(t, true, async (app) => {
      const exp = await experimentAtTraining(app, splitId);
      const fit = await makeAgent(t.db);
      const claimed = await claimJob(other.db, fit);
      if (!claimed) throw new Error("nothing to claim");
      const rolledBack = await other.db
        .transaction(async (tx) => {
          await finishAttempt(tx, userErrorResult(claimed), fit.agentId);
          throw new Error("roll back");
        })
        .catch((e: unknown) => e);
      expect(rolledBack).toBeInstanceOf(Error);
      await new Promise((r) => setTimeout(r, 1000));
      const [job] = await t.db.select().from(schema.jobs).where(eq(schema.jobs.id, claimed.jobId));
      expect(job?.state).toBe("running");
      expect((await getExperiment(t.db, exp.id))?.state).toBe("running");
    });
  });
});
