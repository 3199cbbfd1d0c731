import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import { and, eq } from "drizzle-orm";
import { schema } from "@agentlab/db";
import { LEADER_LOCK_KEY } from "../../apps/web/server/events/leadership";
import { baseConfig, makeSplit, startExperiment } from "./experiments-harness";
import { ADMIN_URL, createTestDatabase, type TestDb } from "./helpers/db";
import { startInstance, type Instance } from "./helpers/instance";
import { waitFor } from "./helpers/server";

// Two web instances over one Postgres, each with its own connection pool (as two processes would
// have): exactly one runs the background loops, and when its lock session dies the other takes
// them over within a few leader retries (AGENTLAB_LEADER_RETRY_MS, 300 ms here).

const leaders = (xs: Instance[]) => xs.filter((x) => x.app.background !== null);

async function oneLeader(xs: Instance[]): Promise<Instance> {
  const l = await waitFor(async () => {
    const ls = leaders(xs);
    return ls.length === 1 && ls[0];
  }, 10_000);
  // and it stays the only one
  await new Promise((r) => setTimeout(r, 700));
  expect(leaders(xs).map((x) => x.name)).toEqual([l.name]);
  return l;
}

describe("background loops on exactly one instance", () => {
  let t: TestDb;
  let admin: postgres.Sql;
  let a: Instance;
  let b: Instance;
  let splitId = "";
  beforeAll(async () => {
    t = await createTestDatabase();
    admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    ({ splitId } = await makeSplit(t.db));
    a = await startInstance("a", t.url);
    b = await startInstance("b", t.url);
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await admin?.end();
    await t?.drop();
  });

  it("one leads; when its lock session dies the other takes over, and the experiment moves on once", async () => {
    const first = await oneLeader([a, b]);
    const second = first === a ? b : a;

    // The lock's session is cut from outside, as a crashed leader's would be.
    const t0 = Date.now();
    const killed = await admin<{ ok: boolean }[]>`
      select pg_terminate_backend(pid) as ok from pg_locks
      where locktype = 'advisory' and objid = ${LEADER_LOCK_KEY} and granted and database = (select oid from pg_database where datname = ${new URL(t.url).pathname.slice(1)})`;
    expect(killed.map((k) => k.ok)).toEqual([true]);
    // The old leader notices at its next lock check and stops; the follower's next try takes over.
    await waitFor(async () => {
      const ls = leaders([a, b]);
      return ls.length === 1 && ls[0] === second;
    }, 10_000);
    console.log(`[leadership] lock session killed -> ${second.name} alone leads after ${Date.now() - t0} ms`);
    expect((await oneLeader([a, b])).name).toBe(second.name);

    // The follower enqueues nothing itself; its wake reaches the leader's runner by NOTIFY.
    const id = await startExperiment(first.app.services, baseConfig(splitId, { name: "led" }));
    await first.app.services.queue.wakeExperiment(id);
    const train = await waitFor(async () => {
      const rows = await t.db
        .select({ id: schema.jobs.id })
        .from(schema.jobs)
        .where(and(eq(schema.jobs.experimentId, id), eq(schema.jobs.type, "train")));
      return rows.length === 2 && rows;
    }, 10_000);
    expect(train).toHaveLength(2);
    // The runner writes each train stage right after enqueuing its job: wait for the second write.
    const running = await waitFor(async () => {
      const stages = await t.db
        .select()
        .from(schema.experimentStages)
        .where(eq(schema.experimentStages.experimentId, id));
      const r = stages.filter((s) => s.kind === "train" && s.state === "running");
      return r.length === 2 && r;
    }, 10_000);
    expect(running).toHaveLength(2);
  });

  it("closing the leader hands the loops to the other instance", async () => {
    const leader = await oneLeader([a, b]);
    const other = leader === a ? b : a;
    await leader.close();
    const t0 = Date.now();
    await waitFor(async () => other.app.background !== null, 10_000);
    console.log(`[leadership] leader closed -> ${other.name} leads after ${Date.now() - t0} ms`);
    // the closed one is restarted as a follower
    const again = await startInstance(leader.name, t.url);
    if (leader === a) a = again;
    else b = again;
    expect((await oneLeader([a, b])).name).toBe(other.name);
  });
});
