import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { hashToken, sessions, users, type Db } from "@agentlab/db";
import { eq } from "drizzle-orm";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { inject } from "vitest";
import { createTestDatabase, type TestDb } from "../../integration/helpers/db";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

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

export type RunningApp = {
  url: string;
  setupUrl: string | null;
  db: TestDb;
  proc: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
};

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

/** The real product as `npm start` runs it (Next, tRPC, socket.io, local agent), on a fresh Postgres database. */
export async function startProduct(extraEnv: Record<string, string> = {}): Promise<RunningApp> {
  // The run's global setup built the dashboard and a template with the built-in pools loaded;
  // a file run some other way (another config) gets both here.
  const template = inject("e2eTemplate");
  if (!template) ensureNextBuild();
  const db = await createTestDatabase({ template });
  const dataDir = await mkdtemp(join(tmpdir(), "agentlab-e2e-"));
  const port = await freePort();
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
        ...extraEnv,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  proc.stdout?.on("data", (b: Buffer) => (out += b.toString()));
  proc.stderr?.on("data", (b: Buffer) => (out += b.toString()));
  const url = `http://127.0.0.1:${port}`;
  const exited = () => proc.exitCode !== null;
  const notStarted = () => `server did not start:\n${out}`;
  await until(() => /agentlab is running/.test(out), 180_000, exited, notStarted);
  // Without an admin it issued the one-time link before that line and prints it in the next
  // write, which may arrive in a later chunk: wait for the link's whole line.
  const admins = await db.db.select({ id: users.id }).from(users).where(eq(users.role, "admin")).limit(1);
  if (admins.length === 0) await until(() => /\/setup\?token=\S+\s/.test(out), 10_000, exited, notStarted);
  const setup = /(\/setup\?token=\S+)/.exec(out)?.[1];
  return {
    url,
    setupUrl: setup ? `${url}${setup}` : null,
    db,
    proc,
    output: () => out,
    async stop() {
      proc.kill("SIGTERM");
      await new Promise((r) => (proc.exitCode !== null ? r(null) : proc.once("exit", r)));
      await db.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Polls `ready` every 100 ms; throws `message()` when `failed()` says so or after `timeoutMs`. */
async function until(ready: () => boolean, timeoutMs: number, failed: () => boolean, message: () => string) {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (failed() || Date.now() > deadline) throw new Error(message());
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-quic",
      "--no-first-run",
    ],
  });
}

/** Creates the first admin through the one-time setup link, as a new user would. */
export async function createFirstAdmin(
  page: Page,
  setupUrl: string,
  who = { email: "admin@example.com", name: "Ada Admin", password: "correct horse battery" },
) {
  await page.goto(setupUrl);
  await page.getByLabel("Email").fill(who.email);
  await page.getByLabel("Name", { exact: true }).fill(who.name);
  await page.getByLabel(/^Password/).fill(who.password);
  await page.getByLabel("Repeat password").fill(who.password);
  await page.getByRole("button", { name: "Create account" }).click();
}

/**
 * A browser context signed in as a new admin whose session is written straight to the database,
 * for tests that exercise pages, not the login (which foundation.test.ts covers).
 */
export async function signedInAdmin(
  browser: Browser,
  db: Db,
  url: string,
  who: { email: string; name: string; viewport: { width: number; height: number } },
): Promise<BrowserContext> {
  const [user] = await db
    .insert(users)
    .values({ email: who.email, name: who.name, passwordHash: "unused:login-not-exercised-here", role: "admin" })
    .returning();
  if (!user) throw new Error("no user");
  const token = randomBytes(32).toString("base64url");
  const csrf = randomBytes(16).toString("hex");
  await db.insert(sessions).values({
    tokenHash: hashToken(token),
    userId: user.id,
    csrfToken: csrf,
    expiresAt: new Date(Date.now() + 3_600_000),
  });
  const context = await browser.newContext({ viewport: who.viewport });
  await context.addCookies([
    { name: "agentlab_session", value: token, url },
    { name: "agentlab_csrf", value: csrf, url },
  ]);
  return context;
}
