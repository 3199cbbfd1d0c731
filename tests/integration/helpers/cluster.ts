import { openDatabase } from "@agentlab/db";
import { createTestDatabase, type TestDb } from "./db";
import { startTestServer, waitFor, type TestServer } from "./server";

export type InstancePair = { t: TestDb; a: TestServer; b: TestServer; close(): Promise<void> };

/**
 * Two web instances over one fresh Postgres database, each with its own connection pool and
 * socket.io server, as two processes behind a load balancer would have. `withAdapter` sets
 * DATABASE_URL, which turns socket.io's Postgres adapter on; the pair is returned once both
 * adapters have heard each other (both are LISTENing).
 */
export async function startInstancePair(
  withAdapter: boolean,
  overrides: Record<string, string> = {},
  poolSize = 20,
): Promise<InstancePair> {
  const t = await createTestDatabase();
  const env = { ...overrides, ...(withAdapter ? { DATABASE_URL: t.url } : {}) };
  // A is given the test database; B its own pool on it. Neither drops it: close() does.
  const a = await startTestServer(env, t);
  const second = await openDatabase({ url: t.url, maxConnections: poolSize });
  const b = await startTestServer(env, { ...second, url: t.url, drop: second.close });
  if (withAdapter)
    await waitFor(async () => {
      const counts = await Promise.all([a, b].map((s) => s.app.gateway.io.of("/").adapter.serverCount()));
      return counts.every((n) => n === 2);
    }, 10_000);
  return {
    t,
    a,
    b,
    async close() {
      await b.close();
      await second.close();
      await a.close();
      await t.drop();
    },
  };
}
