import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Browser } from "playwright-core";
import { and, eq } from "drizzle-orm";
import { createEnrollmentToken, createSplit, enrollAgent, importPool, referenceOracle, schema } from "@agentlab/db";
import { createExperiment } from "../../apps/web/server/experiments/service";
import { makePool, toJsonl } from "../fixtures/tasks/generate";
import { createFirstAdmin, launchBrowser, useProduct, type RunningApp } from "./helpers/app";
import { debugScreenshot, docScreenshot } from "./helpers/screenshots";

// "Why is it stuck", in the browser, on the real product: the only agent is online, green
// and idle, but its sandbox self-test failed (its grader directory is missing: the sandbox finds
// bwrap by a fixed PATH, so a box without bubblewrap cannot be faked here without uninstalling it);
// an experiment's grade jobs queue up. The experiment page, the overview and the job page say why
// and what to do, "Requires" states the real requirement, and the Agents page shows the self-test
// detail and re-runs the test.
const AGENT_BIN = fileURLToPath(new URL("../../apps/agent/bin/agentlab-agent.mjs", import.meta.url));
let agent: ChildProcess | null = null;

let app: RunningApp;
let browser: Browser;
let experimentId = "";
beforeAll(async () => {
  app = await useProduct("stuck");
  browser = await launchBrowser();
  const db = app.db.db;
  const { token } = await createEnrollmentToken(db, { name: "box", ttlS: 60 });
  const { agentId, credential } = await enrollAgent(db, token, "box");
  const home = await mkdtemp(join(tmpdir(), "agentlab-e2e-box-"));
  await writeFile(join(home, "agent.json"), JSON.stringify({ server: app.url, agentId, credential }), { mode: 0o600 });
  agent = spawn(process.execPath, [AGENT_BIN, "run"], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      AGENTLAB_AGENT_HOME: home,
      AGENTLAB_GRADER_DIR: "/nonexistent/grader",
      LOG_LEVEL: "error",
    },
    stdio: "inherit",
  });
  const imp = await importPool(db, { name: "e2e-stuck", lines: [new TextEncoder().encode(toJsonl(makePool(12, 1)))] });
  if (!imp.ok) throw new Error("pool import failed");
  const splitId = (await createSplit(db, { poolId: imp.poolId, seed: 3, devRatio: 0.25, testRatio: 0.25 })).split.id;
  const providerId = (await referenceOracle(db, { create: true }))?.id ?? "";
  const exp = await createExperiment(
    db,
    {
      name: "stuck without bubblewrap",
      splitId,
      teacher: { providerId, n: 1 },
      baseModel: { source: "path", ref: "/models/none" },
      training: { epochs: 1 },
      evaluation: { graderVersion: "e2e", device: "cuda" },
      seeds: [1],
      bootstrap: { iterations: 100, seed: 1 },
    },
    null,
  );
  experimentId = exp.id;
}, 300_000);

afterAll(async () => {
  agent?.kill("SIGTERM");
  await browser?.close();
  await app?.release();
});

describe("why is it stuck", () => {
  it("says so on the experiment, the overview and the job page, with the reason and the fix", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    try {
      await createFirstAdmin(page, app.setupUrl ?? "");
      await page.waitForURL(`${app.url}/`);

      // The agent is online but its self-test failed, and the page says why (not only a tooltip).
      await page.goto(`${app.url}/agents`);
      await page.getByText("online", { exact: true }).first().waitFor({ timeout: 120_000 });
      const sandbox = page.getByTestId("sandbox-box");
      await sandbox.getByText("self-test failed").waitFor({ timeout: 30_000 });
      await expect(sandbox.textContent()).resolves.toMatch(
        /Can't find source path \/nonexistent\/grader.*agentlab-agent doctor/s,
      );

      // The experiment's collection produces grade jobs nobody can claim.
      await page.goto(`${app.url}/experiments/${experimentId}`);
      const banner = page.getByTestId("stuck-banner");
      await banner
        .getByText(/no online agent has a passing sandbox self-test/)
        .first()
        .waitFor({ timeout: 120_000 });
      const text = (await banner.textContent()) ?? "";
      expect(text).toMatch(/queued grade-batch jobs? /); // a collection grades its candidates in batches
      expect(text).toMatch(/box: /);
      expect(text).toMatch(/agentlab-agent doctor.*re-run the self-test from the Agents page/);
      await page.screenshot({ path: docScreenshot("stuck-experiment.png") });

      await page.goto(`${app.url}/`);
      await page
        .getByTestId("stuck-banner")
        .getByText(/no online agent has a passing sandbox self-test/)
        .first()
        .waitFor({ timeout: 30_000 });

      const [job] = await app.db.db
        .select({ id: schema.jobs.id })
        .from(schema.jobs)
        .where(and(eq(schema.jobs.type, "grade-batch"), eq(schema.jobs.state, "queued")))
        .limit(1);
      if (!job) throw new Error("no queued grade-batch job");
      await page.goto(`${app.url}/jobs/${job.id}`);
      await page
        .getByTestId("stuck-banner")
        .getByText(/no online agent has a passing sandbox self-test/)
        .first()
        .waitFor({ timeout: 30_000 });
      await page.getByText("an online agent with a passing sandbox self-test").first().waitFor();
      await expect(page.getByText("any agent", { exact: true }).count()).resolves.toBe(0);

      // Re-run from the Agents page: the agent tests again without a restart (still failing here).
      await page.goto(`${app.url}/agents`);
      await page.getByRole("button", { name: "Re-run self-test" }).click();
      await page.waitForTimeout(3000);
      await expect(page.getByText("Could not re-run the self-test").count()).resolves.toBe(0);
      await page.getByTestId("sandbox-box").getByText("self-test failed").waitFor();
      await expect(page.getByText("online", { exact: true }).first().isVisible()).resolves.toBe(true);
    } catch (err) {
      await page.screenshot({ path: debugScreenshot("stuck-failure.png") }).catch(() => {});
      throw err;
    }
  }, 420_000);
});
