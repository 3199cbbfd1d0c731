import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { queryRows } from "@agentlab/db";
import { startInProcessAgent, startTestServer, waitFor, type TestServer } from "./helpers/server";
import { databaseOutage } from "./security-outage-helpers";

// A database outage shorter than the lease: the jobs running through it finish once, on the agent
// that held them, and nothing is run twice. The positive control is the same count on an agent
// that goes away: its lease runs out and the job is re-run, so the probe does see re-runs.
const TTL_MS = 12_000;
const OUTAGE_MS = 6_000;

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({
    AGENTLAB_LOCAL_AGENT: "0",
    AGENTLAB_LEASE_TTL_MS: String(TTL_MS),
    AGENTLAB_HEARTBEAT_MS: "500",
  });
});
afterAll(async () => s?.close());

const attemptsOf = async (ids: string[]) =>
  queryRows<{ job_id: string; n: number; ok: number }>(
    s.db.db,
    sql`select job_id, count(*)::int as n, count(*) filter (where reason = 'succeeded')::int as ok
        from job_attempts where job_id in (${sql.join(
          ids.map((id) => sql`${id}::uuid`),
          sql`, `,
        )}) group by job_id`,
  );
const states = async (ids: string[]) =>
  queryRows<{ state: string }>(
    s.db.db,
    sql`select state from jobs where id in (${sql.join(
      ids.map((id) => sql`${id}::uuid`),
      sql`, `,
    )})`,
  );
const shellJobs = (seconds: number[]) =>
  s.app.services.queue.enqueueMany(
    seconds.map((n) => ({
      type: "shell" as const,
      payload: { argv: ["sh", "-c", `sleep ${n}; echo done`] },
      maxAttempts: 5,
    })),
  );

describe("a database outage shorter than the lease", () => {
  it("re-runs no job that was running through it, whether it finished during the outage or after", async () => {
    const agent = await startInProcessAgent(s, "through-outage", { concurrency: 2, pollMs: 200 });
    try {
      // The 2 s job's result arrives while the database is away; the 9 s one's after it is back.
      const jobs = await shellJobs([2, 9]);
      const ids = jobs.map((j) => j.id);
      await waitFor(async () => (await states(ids)).every((r) => r.state === "running"), 30_000, 100);
      const { terminated } = await databaseOutage(s.db.url, OUTAGE_MS);
      expect(terminated).toBeGreaterThan(0);
      await waitFor(async () => (await states(ids)).every((r) => r.state === "succeeded"), 60_000, 200);
      const attempts = await attemptsOf(ids);
      expect(attempts.map((a) => ({ n: a.n, ok: a.ok }))).toEqual([
        { n: 1, ok: 1 },
        { n: 1, ok: 1 },
      ]);
    } finally {
      await agent.stop();
    }
  }, 120_000);

  it("positive control: an agent that goes away mid-job loses its lease and the job is re-run", async () => {
    const first = await startInProcessAgent(s, "goes-away", { pollMs: 200 });
    const [job] = await shellJobs([3]);
    if (!job) throw new Error("no job");
    await waitFor(async () => (await states([job.id]))[0]?.state === "running", 30_000, 100);
    await first.supervisor.stop(0);
    const second = await startInProcessAgent(s, "takes-over", { pollMs: 200 });
    try {
      await waitFor(async () => (await states([job.id]))[0]?.state === "succeeded", 90_000, 200);
      const [a] = await attemptsOf([job.id]);
      expect(a?.n).toBeGreaterThan(1);
    } finally {
      await second.stop();
    }
  }, 120_000);
});
