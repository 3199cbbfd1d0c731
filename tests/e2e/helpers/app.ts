import { randomBytes } from "node:crypto";
import { hashToken, openDatabase, sessions, users, type Database, type Db } from "@agentlab/db";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { inject } from "vitest";
import { ensureNextBuild, startProductProcess, type ProductInfo, type ProductProcess } from "./product-process";
import { PRODUCTS, readProductLog, type ProductName } from "./products";

export type RunningApp = ProductInfo & {
  /** This file's connection to the product's database. */
  db: Database;
  /** What the product printed so far (for failure messages). */
  output: () => string;
  /** This file is done with it: closes the connection; a product of this file alone stops. */
  release(): Promise<void>;
};

/**
 * The product `name` (helpers/products.ts), started by the run's global setup and shared by the
 * files that ask for the same name. A file run under another config, without that setup, starts
 * its own here.
 */
export async function useProduct(name: ProductName): Promise<RunningApp> {
  const endpoint = inject("e2eProducts");
  let own: ProductProcess | null = null;
  let info: ProductInfo;
  if (endpoint) {
    const res = await fetch(`${endpoint}/acquire/${name}`, { method: "POST" });
    if (!res.ok) throw new Error(`product "${name}": ${await res.text()}`);
    info = (await res.json()) as ProductInfo;
  } else {
    ensureNextBuild();
    own = await startProductProcess(name, PRODUCTS[name].env, undefined);
    info = own.info;
  }
  const db = await openDatabase({ url: info.databaseUrl, maxConnections: 10 });
  return {
    ...info,
    db,
    output: () => readProductLog(info),
    async release() {
      await db.close();
      if (own) await own.stop();
      else await fetch(`${endpoint}/release/${name}`, { method: "POST" });
    },
  };
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
