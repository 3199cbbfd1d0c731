import { spawn, spawnSync } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { users } from "@agentlab/db";
import { eq } from "drizzle-orm";
import { createTestDatabase } from "../../integration/helpers/db";

// One product process as `npm start` runs it (Next, tRPC, socket.io, the runner and, unless its
// env says otherwise, the local agent) on its own Postgres database cloned from the run's template.
// Started by the e2e global setup (helpers/products.ts) and shared by the files that ask for it;
// what a file needs to reach it is the serializable ProductInfo.

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
/** Each product's stdout and stderr, readable by the files (for their failure messages); ignored by git. */
export const PRODUCT_LOG_DIR = join(ROOT, "test-results", "e2e-products");

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** Builds the dashboard when no build exists or its sources are newer (CI starts from a clean clone). */
export function ensureNextBuild() {
  const buildId = join(ROOT, "apps/web/.next/BUILD_ID");
  if (existsSync(buildId) && statSync(buildId).mtimeMs >= newestMtime(join(ROOT, "apps/web/app"))) return;
  const res = spawnSync("npx", ["next", "build", "apps/web"], { cwd: ROOT, stdio: "inherit" });
  if (res.status !== 0) throw new Error("next build failed");
}

/** What a test file needs to reach a running product (crosses from the global setup to the workers). */
export type ProductInfo = {
  name: string;
  url: string;
  /** The one-time first-admin link the product printed, when it started without an admin. */
  setupUrl: string | null;
  databaseUrl: string;
  /** The product's AGENTLAB_DATA_DIR (artifacts, models). */
  dataDir: string;
  /** The file its stdout and stderr go to. */
  log: string;
};

export type ProductProcess = { info: ProductInfo; stop(): Promise<void> };

/**
 * A port the OS says is free now. A random pick from a range once landed on a port another service
 * of the machine listens on (NATS on 4222) and the server could not start.
 */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const addr = probe.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      probe.close(() => (port ? resolve(port) : reject(new Error("no free port"))));
    });
  });
}

/** Polls `ready` every 100 ms; throws `message()` when `failed()` says so or after `timeoutMs`. */
async function until(ready: () => boolean, timeoutMs: number, failed: () => boolean, message: () => string) {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (failed() || Date.now() > deadline) throw new Error(message());
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Starts the product named `name` with `env` over a clone of `template` (or of the schema's
 * template) and resolves once it says it is running and, without an admin, has printed its link.
 */
export async function startProductProcess(
  name: string,
  env: Record<string, string>,
  template: string | undefined,
): Promise<ProductProcess> {
  const db = await createTestDatabase({ template });
  const dataDir = await mkdtemp(join(tmpdir(), `agentlab-e2e-${name}-`));
  const port = await freePort();
  mkdirSync(PRODUCT_LOG_DIR, { recursive: true });
  const log = join(PRODUCT_LOG_DIR, `${name}.log`);
  const logFile = createWriteStream(log);
  let out = "";
  const proc = spawn(
    process.execPath,
    [join(ROOT, "node_modules/tsx/dist/cli.mjs"), join(ROOT, "apps/web/server/main.ts")],
    {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: "production",
        PORT: String(port),
        HOST: "127.0.0.1",
        DATABASE_URL: db.url,
        AGENTLAB_DATA_DIR: dataDir,
        LOG_LEVEL: "warn",
        // The trainer processes its local agent starts: one torch thread each (see vitest.config.ts).
        OMP_NUM_THREADS: process.env.OMP_NUM_THREADS ?? "1",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const collect = (b: Buffer) => {
    out += b.toString();
    logFile.write(b);
  };
  proc.stdout.on("data", collect);
  proc.stderr.on("data", collect);
  const exited = new Promise((r) => (proc.exitCode !== null ? r(null) : proc.once("exit", r)));
  const stop = async () => {
    proc.kill("SIGTERM");
    await exited;
    await new Promise((r) => logFile.end(r));
    await db.drop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const url = `http://127.0.0.1:${port}`;
    const hasExited = () => proc.exitCode !== null;
    const notStarted = () => `product "${name}" did not start:\n${out}`;
    // Generous: on the 2-core box at load 30 a start beside two others and a running file took
    // over 180 s (at load ≤ 4 it takes 10–30 s).
    await until(() => /agentlab is running/.test(out), 420_000, hasExited, notStarted);
    // Without an admin it issued the one-time link before that line and prints it in the next
    // write, which may arrive in a later chunk: wait for the link's whole line.
    const admins = await db.db.select({ id: users.id }).from(users).where(eq(users.role, "admin")).limit(1);
    if (admins.length === 0) await until(() => /\/setup\?token=\S+\s/.test(out), 10_000, hasExited, notStarted);
    const setup = /(\/setup\?token=\S+)/.exec(out)?.[1];
    return {
      info: { name, url, setupUrl: setup ? `${url}${setup}` : null, databaseUrl: db.url, dataDir, log },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
