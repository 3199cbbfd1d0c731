import { afterAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import postgres from "postgres";
import { eq } from "drizzle-orm";
import { formatAnswer } from "@agentlab/core";
import { createSplit, importPool, schema, type Db } from "@agentlab/db";
import { LEADER_LOCK_KEY } from "../../apps/web/server/events/leadership";
import type { Services } from "../../apps/web/server/services";
import { callerAs } from "./helpers/callers";
import { ADMIN_URL, createTestDatabase, type TestDb } from "./helpers/db";
import { startInstance, type Instance } from "./helpers/instance";
import { startTestServer, waitFor, type TestServer } from "./helpers/server";
import { teacherTask } from "./helpers/teacher-fixture";

// A teacher collection is the leader's work and lives in the database, like an experiment: stopped
// mid-way (the server restarted, or the leader's lock session cut and another instance leading),
// it resumes where its stored items end. No (task, sample) whose answer was stored is asked of
// the teacher again, every stored answer has one ledger line, and the collection finishes.
// Controls: while no process leads, the collection stays `running` with the same items and no
// request reaches the teacher (what finishes it is the resumption, not the old run going on; an
// in-memory run would be lost here); and the old run really let go of its requests (their
// connections closed) before the new one starts.

const ANSWER_FIRST = 4;

/**
 * A chat-completions server that answers the first ANSWER_FIRST requests and holds the others
 * until `release()`. `answered`: the (task, seed) of every answer it sent to a connected client.
 */
async function gatedTeacher() {
  const asked: string[] = [];
  const answered: string[] = [];
  const held: { key: string; answer: () => void; gone: () => boolean }[] = [];
  let closedByClient = 0;
  let open = false;
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      const task = /Fix task (t\d+)\./.exec(body)?.[1] ?? "?";
      const seed = (JSON.parse(body) as { seed?: number }).seed;
      const key = `${task}:${seed}`;
      asked.push(key);
      let sent = false;
      res.on("close", () => {
        if (!sent) closedByClient += 1;
      });
      const answer = () => {
        if (res.destroyed) return;
        sent = true;
        answered.push(key);
        res.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({
            id: "c1",
            object: "chat.completion",
            created: 1,
            model: "teach-1",
            choices: [
              {
                index: 0,
                message: {
                  role: "assistant",
                  content: formatAnswer([{ path: "solution.py", content: `def f():\n    return 1  # ${key}\n` }]),
                },
                finish_reason: "stop",
              },
            ],
            usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
          }),
        );
      };
      if (open || answered.length + held.length < ANSWER_FIRST) answer();
      else held.push({ key, answer, gone: () => res.destroyed });
    });
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port)),
  );
  return {
    url: `http://127.0.0.1:${port}/v1`,
    asked,
    answered,
    heldOpen: () => held.filter((h) => !h.gone()).length,
    closedByClient: () => closedByClient,
    /** Answers every request from now on, and the held ones whose client is still there. */
    release() {
      open = true;
      for (const h of held.splice(0)) if (!h.gone()) h.answer();
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
type Teacher = Awaited<ReturnType<typeof gatedTeacher>>;

async function makeSplit(db: Db): Promise<string> {
  const tasks = Array.from({ length: 8 }, (_, i) => teacherTask(i + 1));
  const imp = await importPool(db, {
    name: "resume",
    lines: [new TextEncoder().encode(tasks.map((x) => JSON.stringify(x)).join("\n"))],
  });
  if (!imp.ok) throw new Error("import failed");
  return (await createSplit(db, { poolId: imp.poolId, seed: 1, devRatio: 0, testRatio: 0.2 })).split.id;
}

/** Creates the collection through `services`' router (what the dashboard does). */
async function createCollection(services: Services, splitId: string, teacherUrl: string, email: string) {
  const caller = await callerAs(services, "admin", email);
  const p = await caller.providers.create({
    name: `teacher-${email}`,
    kind: "openai",
    baseUrl: teacherUrl,
    model: "teach-1",
    apiKey: "k",
    extraParams: {},
  });
  const col = await caller.collections.create({
    splitId,
    providerId: p.id,
    parts: ["train"],
    nSamples: 2,
    concurrency: 2,
    maxRetries: 0,
    timeoutMs: 60_000,
    grade: false,
    params: { temperature: 0.5, top_p: 1, max_tokens: 256, seed: 7 },
  });
  return Object.assign(col, { caller });
}

const collectionRow = async (db: Db, id: string) => {
  const [row] = await db.select().from(schema.teacherCollections).where(eq(schema.teacherCollections.id, id));
  return row;
};

/** What the finished collection stored: one item, one candidate and one ledger line per (task, sample). */
async function expectStoredOnce(db: Db, id: string, teacher: Teacher, stop: { answered: string[]; asked: number }) {
  const col = await collectionRow(db, id);
  expect(col?.state).toBe("done");
  const total = col?.samplesTotal ?? 0;
  expect(total).toBeGreaterThan(ANSWER_FIRST + 2);
  const items = await db
    .select()
    .from(schema.teacherCollectionItems)
    .where(eq(schema.teacherCollectionItems.collectionId, id));
  const ledger = await db.select().from(schema.teacherLedger).where(eq(schema.teacherLedger.collectionId, id));
  expect(items).toHaveLength(total);
  expect(col?.samplesDone).toBe(total);
  expect(new Set(items.map((i) => i.candidateId)).size).toBe(total);
  expect(ledger).toHaveLength(total);
  expect(new Set(ledger.map((l) => l.candidateId)).size).toBe(total);
  // The teacher answered each (task, sample) once; what it answered before the stop was never asked again.
  expect(teacher.answered).toHaveLength(total);
  expect(new Set(teacher.answered).size).toBe(total);
  expect(stop.answered).toHaveLength(ANSWER_FIRST);
  expect(teacher.asked.slice(stop.asked).filter((k) => stop.answered.includes(k))).toEqual([]);
}

const servers: TestServer[] = [];
const teachers: Teacher[] = [];
afterAll(async () => {
  for (const s of servers) await s.close();
  for (const t of teachers) await t.close();
});

describe("a teacher collection across a server restart", () => {
  it("resumes where its stored items end: no stored (task, sample) asked twice, and it finishes", async () => {
    const server = await startTestServer({ AGENTLAB_SWEEP_MS: "600000" });
    servers.push(server);
    const teacher = await gatedTeacher();
    teachers.push(teacher);
    const db = server.db.db;
    const splitId = await makeSplit(db);
    const col = await createCollection(server.app.services, splitId, teacher.url, "restart@lab.test");
    // Four answers stored, two requests held by the teacher (concurrency 2).
    await waitFor(async () => (await collectionRow(db, col.id))?.samplesDone === ANSWER_FIRST, 20_000);
    await waitFor(async () => teacher.heldOpen() === 2, 20_000);
    const stop = { answered: [...teacher.answered], asked: teacher.asked.length };

    const stopped = server.restart(1500);
    // Control, while down: the old run let go of its requests, nothing else runs the collection.
    await waitFor(async () => teacher.closedByClient() === 2, 10_000);
    const askedWhileDown = teacher.asked.length;
    await new Promise((r) => setTimeout(r, 800));
    const down = await collectionRow(db, col.id);
    expect(down?.state).toBe("running");
    expect(down?.samplesDone).toBe(ANSWER_FIRST);
    expect(teacher.asked.length).toBe(askedWhileDown);
    teacher.release();
    await stopped;

    // Generous: the new leader's next sync and the remaining answers under the full suite's load.
    await waitFor(async () => (await collectionRow(db, col.id))?.state === "done", 90_000);
    await expectStoredOnce(db, col.id, teacher, stop);
  }, 180_000);
});

describe("canceling a teacher collection", () => {
  it("is recorded at once and stops the leader's run: its requests let go, nothing more is asked or stored", async () => {
    const server = await startTestServer({ AGENTLAB_SWEEP_MS: "600000" });
    servers.push(server);
    const teacher = await gatedTeacher();
    teachers.push(teacher);
    const db = server.db.db;
    const splitId = await makeSplit(db);
    const col = await createCollection(server.app.services, splitId, teacher.url, "cancel@lab.test");
    await waitFor(async () => (await collectionRow(db, col.id))?.samplesDone === ANSWER_FIRST, 20_000);
    await waitFor(async () => teacher.heldOpen() === 2, 20_000);

    expect(await col.caller.collections.cancel({ id: col.id })).toEqual({ running: true });
    const canceled = await collectionRow(db, col.id);
    expect(canceled?.state).toBe("canceled");
    expect(canceled?.stopReason).toBe("canceled by a user");
    await waitFor(async () => teacher.closedByClient() === 2, 10_000);
    const asked = teacher.asked.length;
    teacher.release();
    await new Promise((r) => setTimeout(r, 500));
    expect(teacher.asked.length).toBe(asked);
    const after = await collectionRow(db, col.id);
    expect(after?.state).toBe("canceled");
    expect(after?.samplesDone).toBe(ANSWER_FIRST);
    // A second cancel finds nothing running.
    expect(await col.caller.collections.cancel({ id: col.id })).toEqual({ running: false });
  });
});

describe("a teacher collection across a change of leader", () => {
  let t: TestDb | undefined;
  let admin: postgres.Sql | undefined;
  const instances: Instance[] = [];
  afterAll(async () => {
    for (const i of instances) await i.close();
    await admin?.end();
    await t?.drop();
  });

  it("is run by the leader whichever instance took the request, and the next leader resumes it", async () => {
    t = await createTestDatabase();
    admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    const a = await startInstance("a", t.url);
    instances.push(a);
    const b = await startInstance("b", t.url);
    instances.push(b);
    const leader = await waitFor(async () => {
      const ls = [a, b].filter((x) => x.app.background !== null);
      return ls.length === 1 && ls[0];
    }, 10_000);
    const follower = leader === a ? b : a;
    const teacher = await gatedTeacher();
    teachers.push(teacher);
    const db = t.db;
    const splitId = await makeSplit(db);

    // Created through the follower, which runs no loops: the leader's collection loop runs it.
    const col = await createCollection(follower.app.services, splitId, teacher.url, "lead@lab.test");
    await waitFor(async () => (await collectionRow(db, col.id))?.samplesDone === ANSWER_FIRST, 20_000);
    await waitFor(async () => teacher.heldOpen() === 2, 20_000);
    expect(follower.app.background).toBeNull();
    const stop = { answered: [...teacher.answered], asked: teacher.asked.length };

    // The leader's lock session is cut from outside, as a crashed leader's would be.
    const killed = await admin<{ ok: boolean }[]>`
      select pg_terminate_backend(pid) as ok from pg_locks
      where locktype = 'advisory' and objid = ${LEADER_LOCK_KEY} and granted and database = (select oid from pg_database where datname = ${new URL(t.url).pathname.slice(1)})`;
    expect(killed.map((k) => k.ok)).toEqual([true]);
    await waitFor(async () => leader.app.background === null && follower.app.background !== null, 10_000);
    // The old leader stopped its run (its held requests closed) before anything is answered again.
    await waitFor(async () => teacher.closedByClient() === 2, 10_000);
    expect((await collectionRow(db, col.id))?.samplesDone).toBe(ANSWER_FIRST);
    teacher.release();

    // Generous: the new leader's next sync and the remaining answers under the full suite's load.
    await waitFor(async () => (await collectionRow(db, col.id))?.state === "done", 90_000);
    await expectStoredOnce(db, col.id, teacher, stop);
  }, 180_000);
});
