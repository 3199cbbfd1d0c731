import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type Database } from "@agentlab/db";
import { createApp, type App } from "../../../apps/web/server/app";
import { loadEnv } from "../../../apps/web/server/env";
import { createLogger } from "../../../apps/web/server/logger";

// A web instance in this process with its own connection pool (as a second process would have),
// taking turns at leading every 300 ms; sweeps are off so only events and leadership move work.

export type Instance = { name: string; app: App; database: Database; close(): Promise<void> };

export async function startInstance(name: string, url: string): Promise<Instance> {
  const database = await openDatabase({ url, maxConnections: 5 });
  const dataDir = await mkdtemp(join(tmpdir(), `agentlab-instance-${name}-`));
  const env = loadEnv({
    NODE_ENV: "test",
    AGENTLAB_DATA_DIR: dataDir,
    LOG_LEVEL: "silent",
    AGENTLAB_SWEEP_MS: "600000",
    AGENTLAB_LEADER_RETRY_MS: "300",
  });
  const app = await createApp({
    env,
    db: database.db,
    log: createLogger("silent"),
    secret: "test-secret-test-secret-test-secret-0123",
    listen: database.listen,
    tryLead: database.tryLead,
  });
  return {
    name,
    app,
    database,
    async close() {
      await app.close();
      await database.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
