import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { eq } from "drizzle-orm";
import { countOnlineAgents, createEnrollmentToken, enrollAgent, enqueueJob, getJob, schema } from "@agentlab/db";
import { launchBrowser, signedInAdmin, useProduct, type RunningApp } from "./helpers/app";

// The Agents and Jobs pages against the real product: Next pages, tRPC over HTTP, the local agent,
// and a second agent that opted in to shell jobs running real ones. The admin's session is written straight to the database so this file
// does not depend on the login pages.

let app: RunningApp;
let browser: Browser;
let signedIn: BrowserContext;
let shellAgent: ChildProcess | undefined;
const AGENT_BIN = fileURLToPath(new URL("../../apps/agent/bin/agentlab-agent.mjs", import.meta.url));

async function until<T>(fn: () => Promise<T | null | undefined | false>, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  app = await useProduct("lab");
  browser = await launchBrowser();
  const db = app.db.db;
  signedIn = await signedInAdmin(browser, db, app.url, {
    email: "ui@example.com",
    name: "Grace UI",
    viewport: { width: 1280, height: 900 },
  });
  signedIn.on("dialog", (d) => void d.accept());
  await until(async () => (await countOnlineAgents(db)) >= 1, "the local agent to come online");
  // The local agent never runs shell jobs (it shares the control plane's host); a second agent,
  // started with both opt-ins as a team would on a box meant for them, runs this file's jobs.
  const enr = await createEnrollmentToken(db, { name: "shell-box", ttlS: 60, shellJobs: true });
  const { agentId, credential } = await enrollAgent(db, enr.token, "shell-box");
  const home = await mkdtemp(join(tmpdir(), "agentlab-e2e-shell-"));
  await writeFile(join(home, "agent.json"), JSON.stringify({ server: app.url, agentId, credential }), { mode: 0o600 });
  shellAgent = spawn(process.execPath, [AGENT_BIN, "run", "--allow-shell-jobs"], {
    env: {
      PATH: process.env.PATH,
      AGENTLAB_AGENT_HOME: home,
      AGENTLAB_SANDBOX: "process",
      AGENTLAB_ALLOW_SHELL_JOBS: "1",
      LOG_LEVEL: "warn",
    },
    stdio: "inherit",
  });
  // Its own row (the product is shared: other files' agents may come and go meanwhile).
  await until(
    async () =>
      (await db.select({ online: schema.agents.online }).from(schema.agents).where(eq(schema.agents.id, agentId)))[0]
        ?.online,
    "the shell agent to come online",
  );
});

afterAll(async () => {
  shellAgent?.kill("SIGKILL");
  await browser?.close();
  await app?.release();
});

const open = async (path: string): Promise<Page> => {
  const page = await signedIn.newPage();
  await page.goto(`${app.url}${path}`);
  return page;
};

describe("web UI: shell, agents and jobs", () => {
  it("sends a signed-out visitor to the login page, remembering where they were", async () => {
    const page = await browser.newPage();
    await page.goto(`${app.url}/jobs?state=failed`);
    await page.waitForURL(/\/login\?next=%2Fjobs%3Fstate%3Dfailed$/, { timeout: 60_000 });
    await page.close();
  });

  it("overview shows server health, the online agent and the signed-in user", async () => {
    const page = await open("/");
    await page.getByText("Agents online").waitFor();
    await page.getByText("database ok").waitFor({ timeout: 30_000 });
    await page.getByText("Grace UI").waitFor();
    await page.getByRole("link", { name: "Jobs", exact: true }).waitFor();
    await page.close();
  });

  it("agents page lists the local agent with its capabilities, and an admin's enrollment token really enrolls", async () => {
    const page = await open("/agents");
    const row = page.locator("tr", { hasText: "local" }).first();
    await row.getByText("online").waitFor({ timeout: 30_000 });
    await row.getByText("CPUs").waitFor();
    // This server supervises its local agent: an admin can restart it from here (not clicked: shared product).
    await page.getByTestId("local-agent").getByRole("button", { name: "Restart local agent" }).waitFor();
    await page.getByRole("button", { name: "Enroll an agent" }).click();
    await page.getByLabel("Agent name").fill("gpu-box-7");
    await page.getByLabel(/Labels/).fill("a100, fast-disk");
    await page.getByRole("button", { name: "Create token" }).click();
    const cmd = (await page.getByTestId("enroll-command").textContent()) ?? "";
    // Three lines: install, enroll, run; the test server listens on loopback, so the page warns.
    expect(cmd.split("\n")).toHaveLength(3);
    const m = /^npx agentlab-agent enroll --server (\S+) --token (enr_[A-Za-z0-9_-]+)$/m.exec(cmd);
    expect(m?.[1]).toBe(app.url);
    await page.getByTestId("enroll-localhost-warning").waitFor();
    const enrolled = await enrollAgent(app.db.db, m?.[2] ?? "");
    expect(enrolled.credential).toMatch(/^agt_/);
    // The new agent appears (offline: it never connected) and can be revoked from the page.
    await page.getByRole("button", { name: "Done" }).click();
    const newRow = page.locator("tr", { hasText: "gpu-box-7" });
    await newRow.getByText("offline").waitFor({ timeout: 15_000 });
    await newRow.getByRole("button", { name: "Revoke" }).click();
    await newRow.waitFor({ state: "detached", timeout: 15_000 });
    await page.close();
  });

  it("job detail tails the live log of a running shell job and cancels it", async () => {
    const job = await enqueueJob(app.db.db, {
      type: "shell",
      payload: { argv: ["bash", "-c", "for i in $(seq 1 300); do echo ui-tick-$i; sleep 0.2; done"] },
    });
    const page = await open(`/jobs/${job.id}`);
    const tail = page.getByTestId("log-tail");
    await tail.getByText("ui-tick-3", { exact: false }).first().waitFor({ timeout: 60_000 });
    // New lines keep arriving while the page sits open.
    await tail.getByText("ui-tick-12", { exact: false }).first().waitFor({ timeout: 30_000 });
    await page.getByRole("button", { name: "Cancel job" }).click();
    await until(async () => (await getJob(app.db.db, job.id))?.state === "canceled", "the job to be canceled", 60_000);
    await page.getByText("canceled").first().waitFor({ timeout: 15_000 });
    await page.getByText("complete").waitFor({ timeout: 15_000 });
    await page.close();
  });

  it("jobs list filters by state through the URL", async () => {
    const ok = await enqueueJob(app.db.db, { type: "shell", payload: { argv: ["echo", "ui-filter-ok"] } });
    await until(async () => (await getJob(app.db.db, ok.id))?.state === "succeeded", "the echo job to succeed");
    const page = await open("/jobs?state=succeeded");
    await page.getByText(ok.id.slice(0, 8)).waitFor({ timeout: 30_000 });
    await page.getByRole("button", { name: /^canceled/ }).click();
    await page.waitForURL(/state=canceled/);
    await page.getByText(ok.id.slice(0, 8)).waitFor({ state: "detached", timeout: 15_000 });
    await page.close();
  });
});
