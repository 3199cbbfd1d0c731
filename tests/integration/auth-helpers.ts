import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createApp, type App } from "../../apps/web/server/app";
import { loadEnv } from "../../apps/web/server/env";
import { createLogger } from "../../apps/web/server/logger";
import { appRouter } from "../../apps/web/server/routers";
import { createCallerFactory } from "../../apps/web/server/trpc/init";
import type { Context } from "../../apps/web/server/trpc/context";
import type { Viewer } from "../../apps/web/server/auth/viewer";
import type { TestDb } from "./helpers/db";

// A real app (tRPC over HTTP, socket.io gateway) on a loopback port, with its pino output captured
// line by line so tests can grep it for secrets.
const createCaller = createCallerFactory(appRouter);
export type Caller = ReturnType<typeof createCaller>;

export type TestApp = {
  app: App;
  url: string;
  port: number;
  logs: string[];
  caller(viewer: Viewer | null, extra?: Partial<Pick<Context, "csrfHeader" | "ip" | "sessionToken">>): Caller;
  cookiesSet: string[];
  close(): Promise<void>;
};

export const SECRET = "test-server-secret-0123456789abcdef-0123456789";

export async function startTestApp(t: TestDb, env: Record<string, string> = {}): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), "agentlab-auth-"));
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs.push(...chunk.toString("utf8").split("\n").filter(Boolean));
      cb();
    },
  });
  const appEnv = loadEnv({
    NODE_ENV: "test",
    AGENTLAB_DATA_DIR: dataDir,
    LOG_LEVEL: "debug",
    AGENTLAB_LOCAL_AGENT: "0",
    ...env,
  });
  // Listening like the real server: job ends written straight to the database still reach the app.
  const app = await createApp({
    env: appEnv,
    db: t.db,
    log: createLogger("debug", sink),
    secret: SECRET,
    listen: t.listen,
  });
  const port = await app.listen(0);
  const cookiesSet: string[] = [];
  return {
    app,
    port,
    url: `http://127.0.0.1:${port}`,
    logs,
    cookiesSet,
    caller: (viewer, extra = {}) =>
      createCaller({
        ...app.services,
        viewer,
        csrfHeader: "csrfHeader" in extra ? (extra.csrfHeader ?? null) : (viewer?.csrfToken ?? null),
        ip: extra.ip ?? "127.0.0.1",
        sessionToken: extra.sessionToken ?? null,
        setCookie: (name, value) => void cookiesSet.push(`${name}=${value}`),
      }),
    async close() {
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const viewerOf = (
  user: { id: string; email: string; name: string; role: Viewer["role"] },
  via: Viewer["via"] = "token",
): Viewer => ({
  userId: user.id,
  email: user.email,
  name: user.name,
  role: user.role,
  via,
  csrfToken: via === "session" ? "csrf-test" : null,
});

export function procedureType(path: string): string | undefined {
  const procs = appRouter._def.procedures as unknown as Record<string, { _def: { type: string } } | undefined>;
  return procs[path]?._def.type;
}

export type TrpcReply = { status: number; body: unknown; setCookies: string[] };

/** Calls a tRPC procedure over real HTTP, as the browser and the CLI do. */
export async function trpcHttp(
  base: string,
  path: string,
  opts: { input?: unknown; method?: "GET" | "POST"; headers?: Record<string, string>; rawBody?: string } = {},
): Promise<TrpcReply> {
  const method = opts.method ?? (procedureType(path) === "query" ? "GET" : "POST");
  const url =
    method === "GET" && opts.input !== undefined
      ? `${base}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify(opts.input))}`
      : `${base}/api/trpc/${path}`;
  const res = await fetch(url, {
    method,
    headers: { "content-type": "application/json", ...opts.headers },
    body: method === "POST" ? (opts.rawBody ?? JSON.stringify(opts.input ?? null)) : undefined,
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // keep the raw text: some failures are not JSON
  }
  return { status: res.status, body, setCookies: res.headers.getSetCookie() };
}

export const cookieValue = (setCookies: string[], name: string): string | null => {
  const hit = setCookies.find((c) => c.startsWith(`${name}=`));
  return hit ? (hit.split(";")[0]?.slice(name.length + 1) ?? null) : null;
};
