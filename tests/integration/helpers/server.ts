import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { createApiToken, createEnrollmentToken, enrollAgent, schema } from "@agentlab/db";
import { createApp, type App } from "../../../apps/web/server/app";
import { loadEnv, type Env } from "../../../apps/web/server/env";
import { createLogger } from "../../../apps/web/server/logger";
import { Supervisor } from "../../../apps/agent/src/supervisor";
import { jobHandlers } from "../../../apps/agent/src/jobs";
import type { JobHandler } from "../../../apps/agent/src/jobs/types";
import type { Capabilities } from "@agentlab/core";
import { createTestDatabase, type TestDb } from "./db";

export type TestServer = {
  app: App;
  url: string;
  port: number;
  db: TestDb;
  env: Env;
  dataDir: string;
  restart(downMs?: number): Promise<void>;
  close(): Promise<void>;
};

/** The real server (tRPC, socket.io, reaper) on a loopback port over a fresh database, without Next. */
export async function startTestServer(overrides: Record<string, string> = {}, existing?: TestDb): Promise<TestServer> {
  const db = existing ?? (await createTestDatabase());
  const dataDir = await mkdtemp(join(tmpdir(), "agentlab-srv-"));
  const env = loadEnv({
    NODE_ENV: "test",
    AGENTLAB_DATA_DIR: dataDir,
    LOG_LEVEL: "silent",
    AGENTLAB_LEASE_TTL_MS: "3000",
    AGENTLAB_HEARTBEAT_MS: "500",
    ...overrides,
  });
  const log = createLogger(env.LOG_LEVEL);
  let app = await createApp({
    env,
    db: db.db,
    log,
    secret: "test-secret-test-secret-test-secret-0123",
    listen: db.listen,
  });
  const port = await app.listen(0);
  const server: TestServer = {
    app,
    url: `http://127.0.0.1:${port}`,
    port,
    db,
    env,
    dataDir,
    /** Stops the server, keeps it down `downMs` (port and database kept), starts a fresh process's worth of it. */
    async restart(downMs = 0) {
      await server.app.close();
      if (downMs) await new Promise((r) => setTimeout(r, downMs));
      app = await createApp({
        env,
        db: db.db,
        log,
        secret: "test-secret-test-secret-test-secret-0123",
        listen: db.listen,
      });
      await app.listen(port);
      server.app = app;
    },
    async close() {
      await server.app.close();
      if (!existing) await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  return server;
}

/** Registered for shell jobs unless told otherwise (the server's side of the opt-in; the queue tests use them). */
export async function enrollTestAgent(
  db: TestDb,
  name = "agent",
  opts: { shellJobs?: boolean } = {},
): Promise<{ agentId: string; credential: string }> {
  const { token } = await createEnrollmentToken(db.db, { name, ttlS: 60, shellJobs: opts.shellJobs ?? true });
  return enrollAgent(db.db, token, name);
}

// Test agents opt in to shell jobs (the queue tests use them) unless told otherwise.
export const testCapabilities = (labels: string[] = [], shellJobs = true): Capabilities => ({
  agentVersion: "test",
  os: "linux",
  cpuCores: 2,
  ramMb: 1024,
  gpus: [],
  python: null,
  torch: null,
  cuda: null,
  sandbox: { backend: "process", selfTestPassed: true, detail: "test" },
  labels,
  shellJobs,
});

/** An agent supervisor in this process, talking to the server over real socket.io on loopback. */
export async function startInProcessAgent(
  server: TestServer,
  name: string,
  opts: {
    pollMs?: number;
    handlers?: Record<string, JobHandler>;
    python?: string;
    shellJobs?: boolean;
    abandonAfterMs?: number;
    /** Jobs at once (the supervisor's claim loops); default 1. */
    concurrency?: number;
  } = {},
) {
  const { agentId, credential } = await enrollTestAgent(server.db, name);
  const stateDir = await mkdtemp(join(tmpdir(), `agentlab-agent-${name}-`));
  const supervisor = new Supervisor({
    serverUrl: server.url,
    credential,
    stateDir,
    capabilities: testCapabilities([], opts.shellJobs ?? true),
    handlers: opts.handlers ?? jobHandlers({ graceMs: 500, allowShellJobs: opts.shellJobs ?? true }),
    runtime: { python: opts.python ?? null, sandboxBackend: "process", sandboxOk: true },
    log: pino({ level: "silent" }),
    pollMs: opts.pollMs ?? 2000,
    abandonAfterMs: opts.abandonAfterMs,
    concurrency: opts.concurrency,
  });
  await supervisor.start();
  return {
    agentId,
    credential,
    supervisor,
    stateDir,
    stop: async () => (await supervisor.stop(0), await rm(stateDir, { recursive: true, force: true })),
  };
}

export async function waitFor<T>(
  fn: () => Promise<T | undefined | null | false>,
  timeoutMs = 30_000,
  stepMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/** A member's API token on the test server, for calling its HTTP endpoints as the CLI does. */
export async function memberToken(server: TestServer, email = "member@example.test"): Promise<string> {
  const [u] = await server.db.db
    .insert(schema.users)
    .values({ email, name: "member", passwordHash: "x", role: "member" })
    .returning();
  if (!u) throw new Error("no user");
  return (await createApiToken(server.db.db, { userId: u.id, name: "cli" })).token;
}
