import { writeFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { and, eq, inArray } from "drizzle-orm";
import postgres from "postgres";
import {
  claimJob,
  createApiToken,
  createEnrollmentToken,
  enrollAgent,
  enqueueJob,
  finishAttempt,
  listStages,
  notifyExperimentWake,
  openDatabase,
  schema,
  users,
  type Database,
} from "@agentlab/db";
import { hashPassword } from "../../apps/web/server/auth/password";
import { CSRF_COOKIE } from "../../apps/web/server/auth/session";
import { SESSION_COOKIE } from "../../apps/web/server/auth/viewer";
import { ADMIN_URL } from "./helpers/db";
import { spawnAgent, type AgentProcess } from "./helpers/agent-process";
import { spawnInstance, startBalancer, type Balancer } from "./helpers/instance-process";
import { cookieValue, trpcHttp } from "./auth-helpers";
import { waitFor } from "./helpers/server";
import {
  agentStep,
  baseConfig,
  makeAgent,
  makeServices,
  makeSplit,
  simRunRecord,
  startExperiment,
  type Behaviour,
} from "./experiments-harness";

// "two server processes on the real Postgres": two `main.ts` processes on one fresh
// database (which they migrate themselves, at the same time), a real agent process behind a TCP
// balancer, an experiment run by the leader's runner. Kill -9 the leader: the follower takes the
// loops over within a lease, the experiment finishes, and no stage or job ran twice.

const LEASE_MS = 10_000;
const ENV = {
  AGENTLAB_SECRET: "multi-instance-secret-0123456789abcdef",
  AGENTLAB_LEASE_TTL_MS: String(LEASE_MS),
  AGENTLAB_HEARTBEAT_MS: "2000",
  AGENTLAB_LEADER_RETRY_MS: "1000",
  AGENTLAB_SWEEP_MS: "3000",
};
const learns: Behaviour = { fixes: (m) => m.startsWith("s1e") };

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
});

async function freshDatabase(): Promise<{ url: string; db: Database }> {
  const name = `agentlab_t_mi_${Math.random().toString(16).slice(2, 10)}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  cleanups.push(async () => {
    await admin.unsafe(`drop database if exists ${name} with (force)`);
    await admin.end();
  });
  return { url: url.toString(), db: await openDatabase({ url: url.toString(), maxConnections: 5 }) };
}

const data = <T>(r: { body: unknown }) => (r.body as { result?: { data?: T } }).result?.data;
const code = (r: { body: unknown }) => (r.body as { error?: { data?: { code?: string } } }).error?.data?.code ?? "OK";

describe("two server processes", () => {
  it("share agents, sessions and rate limits, and hand the loops over when the leader is killed", async () => {
    const { url, db: database } = await freshDatabase();
    const db = database.db;
    cleanups.push(() => database.close());
    // Started together on an empty database: they take turns at migrating and loading the pools.
    const [one, two] = await Promise.all(["one", "two"].map((n) => spawnInstance(n, { ...ENV, DATABASE_URL: url })));
    if (!one || !two) throw new Error("no instances");
    cleanups.push(
      () => one.stop(),
      () => two.stop(),
    );
    await waitFor(async () => one.ledAt() !== null || two.ledAt() !== null, 20_000);
    const [leader, follower] = one.ledAt() !== null ? [one, two] : [two, one];
    expect(follower.ledAt()).toBeNull();

    // Sessions, CSRF and the login limit across the processes.
    const pw = "a long admin password";
    const [admin] = await db
      .insert(users)
      .values({ email: "root@lab.test", name: "Root", passwordHash: await hashPassword(pw), role: "admin" })
      .returning();
    if (!admin) throw new Error("no admin");
    const signIn = await trpcHttp(leader.url, "auth.login", { input: { email: admin.email, password: pw } });
    const csrf = cookieValue(signIn.setCookies, CSRF_COOKIE) ?? "";
    const cookie = `${SESSION_COOKIE}=${cookieValue(signIn.setCookies, SESSION_COOKIE)}; ${CSRF_COOKIE}=${csrf}`;
    expect(data<{ email: string }>(await trpcHttp(follower.url, "auth.me", { headers: { cookie } }))?.email).toBe(
      admin.email,
    );
    expect((await trpcHttp(follower.url, "auth.logout", { method: "POST", headers: { cookie } })).status).toBe(403);
    const guesses: string[] = [];
    for (let i = 0; i < 6; i++) {
      const via = i % 2 ? follower : leader;
      guesses.push(code(await trpcHttp(via.url, "auth.login", { input: { email: "x@lab.test", password: "guess" } })));
    }
    expect(guesses).toEqual([...Array(5).fill("UNAUTHORIZED"), "TOO_MANY_REQUESTS"]);

    // A real agent process reaches the leader through the balancer; a job enqueued through the follower runs on it.
    const balancer: Balancer = await startBalancer(leader.port);
    cleanups.push(() => balancer.close());
    const agent = await realAgent(db, balancer.url);
    cleanups.push(async () => {
      agent.proc.child.kill("SIGKILL");
      await rm(agent.home, { recursive: true, force: true });
    });
    const { token } = await createApiToken(db, { userId: admin.id, name: "test" });
    const created = await trpcHttp(follower.url, "jobs.create", {
      input: { type: "shell", payload: { argv: ["true"] } },
      headers: { authorization: `Bearer ${token}` },
    });
    const shellJob = data<{ id: string }>(created)?.id ?? "";
    expect(shellJob).not.toBe("");
    const ran = await waitFor(async () => {
      const [j] = await db.select().from(schema.jobs).where(eq(schema.jobs.id, shellJob));
      return j?.state === "succeeded" ? j : null;
    }, 30_000);
    expect(ran.agentId).toBe(agent.agentId);
    expect(balancer.connections.get(follower.port) ?? 0).toBe(0);
    agent.proc.child.kill("SIGTERM");
    await agent.proc.exited;

    // An experiment, run by the leader's runner; the test plays the agent (experiments-harness).
    const services = await makeServices(db);
    const { splitId, tasks } = await makeSplit(db);
    const fit = await makeAgent(db);
    const expId = await startExperiment(services, baseConfig(splitId));
    await notifyExperimentWake(db, expId);
    const trainJobs = () =>
      db
        .select({ id: schema.jobs.id })
        .from(schema.jobs)
        .where(and(eq(schema.jobs.experimentId, expId), eq(schema.jobs.type, "train")));
    await waitFor(async () => (await trainJobs()).length === 2, 30_000);
    let midTrain = null;
    while (!midTrain) {
      const step = await agentStep(db, fit, tasks, learns, { leaveTrainRunning: true });
      if (step.claimed?.type === "train") midTrain = step.claimed;
      else if (!step.claimed) await new Promise((r) => setTimeout(r, 100));
    }
    // A job whose agent is gone (its lease runs out): only a living leader's reaper requeues it.
    const probe = await enqueueJob(db, {
      type: "shell",
      payload: { argv: ["true"] },
      priority: 100,
      requirements: { labels: ["probe"] },
    });
    const lost = await makeAgent(db, { shellJobs: true });
    const probeClaim = await claimJob(db, { ...lost, labels: ["probe"], shellJobs: true, leaseTtlMs: 1000 });
    expect(probeClaim?.jobId).toBe(probe.id);

    const killedAt = Date.now();
    leader.proc.kill("SIGKILL");
    await leader.exited;
    await waitFor(async () => follower.ledAt(), LEASE_MS);
    const takeoverMs = (follower.ledAt() ?? Number.POSITIVE_INFINITY) - killedAt;
    expect(takeoverMs).toBeLessThan(LEASE_MS);

    // The train job carried on meanwhile; its result reaches the new leader's runner.
    const seed = Number((midTrain.payload as { spec?: { seed?: number } }).spec?.seed);
    const fin = await finishAttempt(db, {
      jobId: midTrain.jobId,
      attemptId: midTrain.attemptId,
      reason: "succeeded",
      exitCode: 0,
      signal: null,
      result: simRunRecord(seed, "lora-fp32"),
      error: null,
    });
    expect(fin.accepted).toBe(true);
    const state = await waitFor(
      async () => {
        while ((await agentStep(db, fit, tasks, learns)).claimed);
        const [e] = await db
          .select({ state: schema.experiments.state, error: schema.experiments.error })
          .from(schema.experiments)
          .where(eq(schema.experiments.id, expId));
        return e && e.state !== "running" ? e : null;
      },
      120_000,
      200,
    );
    expect(state).toEqual({ state: "succeeded", error: null });

    // No stage ran twice: every stage succeeded, lists each of its jobs once (evaluation stages may
    // share a job), the experiment has no job outside its stages, and every job ran exactly once.
    const stages = await listStages(db, expId);
    expect(stages.every((s) => s.state === "succeeded")).toBe(true);
    for (const s of stages) expect(new Set(s.jobIds).size).toBe(s.jobIds.length);
    const staged = [...new Set(stages.flatMap((s) => s.jobIds))];
    const expJobs = await db
      .select({ id: schema.jobs.id })
      .from(schema.jobs)
      .where(eq(schema.jobs.experimentId, expId));
    expect(new Set(expJobs.map((j) => j.id))).toEqual(new Set(staged));
    expect((await trainJobs()).length).toBe(2);
    const attempts = await db
      .select({ jobId: schema.jobAttempts.jobId })
      .from(schema.jobAttempts)
      .where(inArray(schema.jobAttempts.jobId, staged));
    expect(attempts.length).toBe(staged.length);

    // The new leader's reaper (it waits out one lease after taking over) requeued the lost probe.
    const reaped = await waitFor(async () => {
      const [a] = await db
        .select({ reason: schema.jobAttempts.reason })
        .from(schema.jobAttempts)
        .where(eq(schema.jobAttempts.id, probeClaim?.attemptId ?? ""));
      return a?.reason ? a : null;
    }, 3 * LEASE_MS);
    expect(reaped.reason).toBe("agent_lost");
    const [p] = await db.select({ state: schema.jobs.state }).from(schema.jobs).where(eq(schema.jobs.id, probe.id));
    expect(p?.state).toBe("queued");
    console.log(JSON.stringify({ takeover_ms: takeoverMs, jobs: staged.length, stages: stages.length }));
  }, 300_000);
});

async function realAgent(db: Database["db"], serverUrl: string) {
  const { token } = await createEnrollmentToken(db, { name: "proc", ttlS: 60, shellJobs: true });
  const { agentId, credential } = await enrollAgent(db, token, "proc");
  const home = await mkdtemp(join(tmpdir(), "agentlab-mi-agent-"));
  await writeFile(join(home, "agent.json"), JSON.stringify({ server: serverUrl, agentId, credential }), {
    mode: 0o600,
  });
  const proc: AgentProcess = spawnAgent(home, ["run", "--allow-shell-jobs"], {
    AGENTLAB_SANDBOX: "process",
    AGENTLAB_ALLOW_SHELL_JOBS: "1",
  });
  return { agentId, home, proc };
}
