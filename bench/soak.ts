// Soak: real agent processes on loopback against the real server and Postgres; 2,000 shell jobs;
// the server is restarted twice (once down for 60 s) and agents are SIGKILLed at random and
// started again from the same home (so their spool comes back). Counts what was lost (never
// succeeded), duplicated (more than one succeeded attempt) and re-run (attempts beyond the first),
// and attributes each re-run to an agent kill or, when its agent was not killed meanwhile, to the
// server restart. Every loop has a deadline.
//   npm run bench -- soak [JOBS=2000] [AGENTS=4] [DOWN_S=60]
// The `import-outage` variant has no restarts and no kills: a 100k-task upload runs while the jobs
// do, and once the import is inside its transaction the server's database goes away (connections
// cut, new ones refused) for OUTAGE_S, shorter than the lease; nothing may be lost, duplicated or
// re-run, and the import answers (500 when its transaction was cut).
//   npm run bench -- soak import-outage [JOBS=2000] [AGENTS=4] [OUTAGE_S=8] [IMPORT_TASKS=100000]
// Both report max_loop_delay_ms, the server process's worst event-loop delay over the run.
import { request } from "node:http";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { gzipSync } from "node:zlib";
import { sql } from "drizzle-orm";
import { createApiToken, queryRows, schema } from "@agentlab/db";
import { agentHome, spawnAgent, type AgentProcess } from "../tests/integration/helpers/agent-process";
import { startTestServer, waitFor } from "../tests/integration/helpers/server";
import { databaseOutage, importTransactionOpen } from "../tests/integration/security-outage-helpers";
import { makePool, toJsonl } from "../tests/fixtures/tasks/generate";

const VARIANT = process.argv[3] === "import-outage" ? "import-outage" : "restarts";
const args = VARIANT === "restarts" ? process.argv.slice(3) : process.argv.slice(4);
const JOBS = Number(args[0] ?? 2000);
const AGENTS = Number(args[1] ?? 4);
const DOWN_MS = Number(args[2] ?? (VARIANT === "restarts" ? 60 : 8)) * 1000;
const IMPORT_TASKS = Number(args[3] ?? 100_000);
const KILLS = VARIANT === "restarts" ? 6 : 0;
const LONG_JOBS = 24; // long enough to be running across a restart, so results land while the server is down
// The variant's lease outlasts its outage by half again.
const TTL_MS = VARIANT === "restarts" ? 5000 : Math.round(DOWN_MS * 1.5);
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
const t0 = Date.now();
const log = (msg: string) => console.error(`[soak +${Math.round((Date.now() - t0) / 1000)}s] ${msg}`);

// Made before anything runs: building 100k tasks blocks this process (the server's) for a while.
const file = VARIANT === "import-outage" ? gzipSync(toJsonl(makePool(IMPORT_TASKS, 1))) : new Uint8Array(0);
loopDelay.enable();
const server = await startTestServer({ AGENTLAB_LEASE_TTL_MS: String(TTL_MS), AGENTLAB_HEARTBEAT_MS: "1000" });
const db = server.db.db;
const count = async (where: ReturnType<typeof sql>) =>
  (await queryRows<{ n: number }>(db, sql`select count(*)::int as n from jobs where ${where}`))[0]?.n ?? 0;

type Agent = { agentId: string; home: string; proc: AgentProcess };
const env = {
  AGENTLAB_SANDBOX: "process",
  AGENTLAB_ALLOW_SHELL_JOBS: "1",
  LOG_LEVEL: "error",
  AGENTLAB_CANCEL_GRACE_MS: "1000",
};
let unexpectedExits = 0;
let stopping = false;
const start = (a: Omit<Agent, "proc">): Agent => {
  const agent: Agent = { ...a, proc: spawnAgent(a.home, ["run", "--allow-shell-jobs"], env) };
  // An exit nobody asked for is a finding: say so, with the agent's last words.
  void agent.proc.exited.then(({ code }) => {
    if (agent.proc.child.signalCode !== null || stopping) return;
    unexpectedExits++;
    log(`agent ${a.agentId} exited by itself (code ${String(code)}): ${agent.proc.output().slice(-2000)}`);
  });
  return agent;
};
const agents: Agent[] = [];
for (let i = 0; i < AGENTS; i++) agents.push(start(await agentHome(server, `soak${i}`)));
const online = async () =>
  (
    await queryRows<{ n: number }>(db, sql`select count(*)::int as n from agents where online and revoked_at is null`)
  )[0]?.n ?? 0;
await waitFor(async () => (await online()) === AGENTS, 300_000, 200).catch((err: unknown) => {
  for (const a of agents) log(`agent ${a.agentId} never came online: ${a.proc.output().slice(-2000)}`);
  throw err;
});
log(`${AGENTS} agents online`);

// Mostly short jobs, some long ones spread through the queue.
const inputs = Array.from({ length: JOBS }, (_, i) => {
  const long = i % Math.floor(JOBS / LONG_JOBS) === 0;
  return {
    type: "shell" as const,
    payload: { argv: ["sh", "-c", long ? "sleep 20; echo long" : "sleep 0.05; echo ok"] },
    maxAttempts: 10,
    priority: long ? 1 : 0,
  };
});
await server.app.services.queue.enqueueMany(inputs);
log(`${JOBS} jobs enqueued`);

const kills: { agentId: string; at: number }[] = [];
let restarts = 0;
const restartTimes: { down: number; up: number; reconnectedAt: number | null }[] = [];
const done = () => count(sql`state = 'succeeded'`);

// Agent kills at random moments, each agent back after 2 s from the same home.
const killer = (async () => {
  for (let k = 0; k < KILLS; k++) {
    await new Promise((r) => setTimeout(r, 8000 + Math.random() * 12_000));
    if ((await done()) >= JOBS) return;
    const i = Math.floor(Math.random() * agents.length);
    const victim = agents[i];
    if (!victim) continue;
    victim.proc.child.kill("SIGKILL");
    await victim.proc.exited;
    kills.push({ agentId: victim.agentId, at: Date.now() });
    log(`killed agent ${i}`);
    await new Promise((r) => setTimeout(r, 2000));
    agents[i] = start(victim);
  }
})();

// Server restarts: once down DOWN_MS while long jobs run, once briefly.
async function restart(downMs: number) {
  // Wait until long jobs are running, so some finish while the server is away.
  await waitFor(
    async () => (await count(sql`state = 'running' and payload::text like '%sleep 20%'`)) > 0,
    120_000,
    200,
  ).catch(() => null);
  const down = Date.now();
  log(`server down for ${downMs / 1000}s`);
  await server.restart(downMs);
  const up = Date.now();
  restarts++;
  const entry = { down, up, reconnectedAt: null as number | null };
  restartTimes.push(entry);
  await waitFor(async () => (await online()) >= agents.length - 1, 60_000, 100).catch(() => null);
  entry.reconnectedAt = Date.now();
  log(`server back; agents online after ${((entry.reconnectedAt - up) / 1000).toFixed(1)}s`);
}
// The variant's member upload: a 100k-task file through the HTTP import, as a member would send it.
let memberToken: string | null = null;
async function importTasks(): Promise<{ ok: boolean; status: number; s: number }> {
  if (!memberToken) {
    const [u] = await db
      .insert(schema.users)
      .values({ email: "soak-member@example.test", name: "soak member", passwordHash: "x", role: "member" })
      .returning();
    if (!u) throw new Error("no user");
    memberToken = (await createApiToken(db, { userId: u.id, name: "soak" })).token;
  }
  const token = memberToken;
  log(`importing ${IMPORT_TASKS} tasks (${file.length} gzip bytes)`);
  const t = Date.now();
  // node:http, not fetch: fetch gives up on an answer after 300 s, and a loaded machine takes longer.
  const res = await new Promise<{ status: number; body: { ok?: boolean; imported?: number } }>((resolve, reject) => {
    const req = request(
      `${server.url}/api/tasks/import?pool=soak`,
      { method: "POST", headers: { authorization: `Bearer ${token}`, "content-length": file.length } },
      (r) => {
        const parts: Buffer[] = [];
        r.on("data", (c: Buffer) => parts.push(c));
        r.on("end", () => resolve({ status: r.statusCode ?? 0, body: JSON.parse(Buffer.concat(parts).toString()) }));
        r.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(file);
  });
  const body = res.body;
  log(`import answered ${res.status} after ${((Date.now() - t) / 1000).toFixed(1)}s (${String(body.imported)} tasks)`);
  return { ok: res.status === 200 && body.imported === IMPORT_TASKS, status: res.status, s: (Date.now() - t) / 1000 };
}
let imported: { ok: boolean; status: number; s: number } | null = null;
let outages = 0;
if (VARIANT === "restarts") {
  await new Promise((r) => setTimeout(r, 5000));
  await restart(DOWN_MS);
  await new Promise((r) => setTimeout(r, 10_000));
  await restart(3000);
} else {
  const importing = importTasks();
  // The outage once the import is inside its transaction (the moment a cut connection once took the
  // server down), while jobs run; if the import never gets there, once long jobs run.
  await waitFor(() => importTransactionOpen(server.db.url), 30 * 60_000, 50).catch(() => null);
  log(`import ${(await importTransactionOpen(server.db.url)) ? "inside its transaction" : "not writing"}`);
  log(`database away for ${DOWN_MS / 1000}s (lease ${TTL_MS / 1000}s)`);
  const { terminated } = await databaseOutage(server.db.url, DOWN_MS);
  outages++;
  log(`database back (${terminated} connections had been cut)`);
  const first = await importing;
  // A member whose upload the outage cut sends it again; the second one has the database throughout.
  imported = first.status === 500 ? { ...(await importTasks()), status: first.status } : first;
}

await waitFor(async () => (await done()) >= JOBS, 30 * 60_000, 500);
await killer;
const wallS = (Date.now() - t0) / 1000;
log("all jobs succeeded; counting");

const lost = await count(sql`state <> 'succeeded'`);
const [dup] = await queryRows<{ n: number }>(
  db,
  sql`select count(*)::int as n from (select job_id from job_attempts where reason = 'succeeded' group by job_id having count(*) > 1) d`,
);
const failedAttempts = await queryRows<{
  agent_id: string | null;
  started_at: Date | string;
  finished_at: Date | string | null;
  reason: string | null;
  error: string | null;
}>(
  db,
  sql`select agent_id, started_at, finished_at, reason, error from job_attempts where reason is distinct from 'succeeded'`,
);
// A re-run is explained by a kill when that agent was killed while the attempt was open.
const byKill = failedAttempts.filter((a) => {
  const s = new Date(a.started_at).getTime();
  const f = a.finished_at ? new Date(a.finished_at).getTime() : Date.now();
  return kills.some((k) => k.agentId === a.agent_id && k.at >= s - 1000 && k.at <= f + 1000);
}).length;
for (const a of failedAttempts)
  log(
    `re-run: ${a.reason ?? "open"} (${a.error ?? ""}) agent ${a.agent_id ?? "?"} ${new Date(a.started_at).toISOString()} → ${a.finished_at ? new Date(a.finished_at).toISOString() : "open"}`,
  );
log(
  `kills: ${kills.map((k) => `${k.agentId} ${new Date(k.at).toISOString()}`).join("; ")}; restarts: ${restartTimes.map((r) => `${new Date(r.down).toISOString()} → ${new Date(r.up).toISOString()}`).join("; ")}`,
);
const reconnect = restartTimes.map((r) => (r.reconnectedAt ? (r.reconnectedAt - r.up) / 1000 : -1));

stopping = true;
for (const a of agents) a.proc.child.kill("SIGTERM");
await Promise.all(agents.map((a) => Promise.race([a.proc.exited, new Promise((r) => setTimeout(r, 15_000))])));
await server.close();

console.log(
  JSON.stringify({
    bench: "soak",
    variant: VARIANT,
    jobs: JOBS,
    agents: AGENTS,
    server_restarts: restarts,
    agent_kills: kills.length,
    lost,
    duplicated: dup?.n ?? -1,
    rerun: failedAttempts.length,
    rerun_by_kill: byKill,
    unexpected_agent_exits: unexpectedExits,
    rerun_by_restart: failedAttempts.length - byKill,
    longest_down_s: Math.round(Math.max(0, ...restartTimes.map((r) => r.up - r.down)) / 1000),
    db_outages: outages,
    db_outage_s: outages > 0 ? DOWN_MS / 1000 : 0,
    lease_s: TTL_MS / 1000,
    import_tasks: imported ? IMPORT_TASKS : 0,
    import_ok: imported?.ok ?? null,
    // The first upload's status: 500 when the outage cut its transaction (all or nothing: nothing
    // was written); import_ok and import_s are then the second upload's.
    import_status: imported?.status ?? null,
    import_s: imported ? Math.round(imported.s) : null,
    max_loop_delay_ms: Math.round(loopDelay.max / 1e6),
    reconnect_s: reconnect.map((s) => Math.round(s * 10) / 10),
    wall_s: Math.round(wallS),
  }),
);
process.exit(0);
