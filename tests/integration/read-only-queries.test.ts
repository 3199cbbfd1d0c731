import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claimJob, finishAttempt, openDatabase, schema, type Database } from "@agentlab/db";
import { createApp, type App } from "../../apps/web/server/app";
import { loadEnv } from "../../apps/web/server/env";
import { createLogger } from "../../apps/web/server/logger";
import { appRouter } from "../../apps/web/server/routers";
import { createCallerFactory } from "../../apps/web/server/trpc/init";
import { awaitCollection } from "../../apps/web/server/teacher/collection-runs";
import { syncTeacher } from "../../apps/web/server/teacher/loops";
import type { Services } from "../../apps/web/server/services";
import { makeAgent, makeSplit } from "./experiments-harness";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { userErrorResult } from "./helpers/job-ends";

// The collections and datasets *queries* used to copy grade verdicts, finish replays and record
// token counts on every UI poll. They are reads now (the work moved to the queue's event consumer):
// here they run over a connection whose every transaction is READ ONLY, so any write they tried
// would fail the call. The control: the sync they used to run fails on that same connection, and
// there is real work for it (a finished grade job whose verdict is not copied yet).

const createCaller = createCallerFactory(appRouter);

let t: TestDb;
let ro: Database;
let app: App;
let dataDir: string;
let collectionId = "";
let caller: (db: Services["db"]) => ReturnType<typeof createCaller>;

beforeAll(async () => {
  t = await createTestDatabase();
  ro = await openDatabase({ url: `${t.url}?default_transaction_read_only=on`, maxConnections: 2 });
  dataDir = await mkdtemp(join(tmpdir(), "agentlab-ro-"));
  // The sweep is long, so no background pass copies the verdict during the test.
  const env = loadEnv({
    NODE_ENV: "test",
    AGENTLAB_DATA_DIR: dataDir,
    LOG_LEVEL: "silent",
    AGENTLAB_SWEEP_MS: "600000",
  });
  app = await createApp({
    env,
    db: t.db,
    log: createLogger("silent"),
    secret: "test-secret-test-secret-test-secret-0123",
  });
  const [u] = await t.db
    .insert(schema.users)
    .values({ email: "ro@lab.test", name: "ro", passwordHash: "x", role: "admin" })
    .returning();
  if (!u) throw new Error("no user");
  caller = (db) =>
    createCaller({
      ...app.services,
      db,
      viewer: { userId: u.id, email: u.email, name: u.name, role: "admin", via: "token", csrfToken: null },
      csrfHeader: null,
      ip: "127.0.0.1",
      sessionToken: null,
      setCookie: () => {},
    });
  const { splitId } = await makeSplit(t.db);
  const rw = caller(t.db);
  const oracle = await rw.providers.create({ name: "oracle", kind: "reference", model: "reference", extraParams: {} });
  const col = await rw.collections.create({ splitId, providerId: oracle.id, parts: ["train"], nSamples: 1 });
  collectionId = col.id;
  await awaitCollection(app.services, col.id);
  // One grading job ends (outside the app, so no event reaches it): its verdict waits for a sync.
  const fit = await makeAgent(t.db);
  const claimed = await claimJob(t.db, { ...fit, sandbox: "process" });
  // A grade job (or a batch of them, whichever the teacher enqueues) for the collection's candidates.
  if (!claimed?.type.startsWith("grade")) throw new Error(`expected a grading job, got ${claimed?.type}`);
  const out = await finishAttempt(t.db, userErrorResult(claimed), fit.agentId);
  if (out.state !== "failed") throw new Error(`the grading job did not end: ${out.state}`);
}, 120_000);

afterAll(async () => {
  await app?.close();
  await ro?.close();
  await t?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

// What the sync writes about candidates (verdicts, regrade jobs), as one comparable snapshot.
const candidateState = async () =>
  JSON.stringify(
    await t.db
      .select({
        id: schema.teacherCandidates.id,
        verdict: schema.teacherCandidates.verdict,
        job: schema.teacherCandidates.gradeJobId,
      })
      .from(schema.teacherCandidates)
      .orderBy(schema.teacherCandidates.id),
  );

const messages = (e: unknown): string =>
  e instanceof Error ? `${e.message} <- ${messages(e.cause)}` : String(e ?? "");

describe("collections and datasets queries are read-only", () => {
  it("control: the sync the queries used to run writes, and fails on a read-only connection", async () => {
    const err: unknown = await syncTeacher({ ...app.services, db: ro.db }).catch((e: unknown) => e);
    expect(messages(err)).toMatch(/read-only transaction/);
  });

  it("every query answers over a read-only connection and copies nothing", async () => {
    const q = caller(ro.db);
    const before = await candidateState();
    const list = await q.collections.list({});
    expect(list.map((c) => c.id)).toContain(collectionId);
    const col = await q.collections.byId({ id: collectionId });
    expect(col.state).toBe("grading");
    const tasks = await q.collections.tasks({ id: collectionId });
    expect(tasks.length).toBeGreaterThan(0);
    await q.collections.candidates({ id: collectionId, taskRowId: tasks[0]?.taskRowId ?? "" });
    await q.collections.ledger({ by: "collection" });
    await q.datasets.list({});
    const missing = "00000000-0000-4000-8000-000000000001";
    await expect(q.datasets.byId({ id: missing })).rejects.toThrow(/no such dataset/);
    await expect(q.datasets.replayStatus({ id: missing })).rejects.toThrow(/no such replay/);
    expect(await candidateState()).toBe(before);
    // Positive control: there was something to copy, and the sync (the consumer's job) writes it.
    await syncTeacher(app.services);
    expect(await candidateState()).not.toBe(before);
  });
});
