import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { and, eq } from "drizzle-orm";
import { createSplit, importPool, insertProvider, schema } from "@agentlab/db";
import { createExperiment } from "../../apps/web/server/experiments/service";
import { makePool, toJsonl } from "../fixtures/tasks/generate";
import { createFirstAdmin, launchBrowser, startProduct, type RunningApp } from "./helpers/app";
import { debugScreenshot, docScreenshot } from "./helpers/screenshots";

// Issue 20 "why is it stuck", in the browser, on the real product whose machine lacks bubblewrap:
// the local agent is online, green and idle, its sandbox self-test failed; an experiment's grade
// jobs queue up. The experiment page, the overview and the job page say why and how to fix it,
// "Requires" states the real requirement, and the Agents page shows the detail and re-runs the test.

/** A PATH like this machine's, without bwrap: what a fresh box without bubblewrap looks like. */
function pathWithoutBwrap(): string {
  const dir = mkdtempSync(join(tmpdir(), "agentlab-nobwrap-"));
  const seen = new Set<string>();
  for (const d of (process.env.PATH ?? "").split(":")) {
    const entries = (() => {
      try {
        return readdirSync(d);
      } catch {
        return [];
      }
    })();
    for (const e of entries) {
      if (e === "bwrap" || seen.has(e)) continue;
      seen.add(e);
      symlinkSync(join(d, e), join(dir, e));
    }
  }
  return dir;
}

let app: RunningApp;
let browser: Browser;
let experimentId = "";
beforeAll(async () => {
  app = await startProduct({ PATH: pathWithoutBwrap() });
  browser = await launchBrowser();
  const db = app.db.db;
  const imp = await importPool(db, { name: "e2e-stuck", lines: [new TextEncoder().encode(toJsonl(makePool(12, 1)))] });
  if (!imp.ok) throw new Error("pool import failed");
  const splitId = (await createSplit(db, { poolId: imp.poolId, seed: 3, devRatio: 0.25, testRatio: 0.25 })).split.id;
  const providerId = (await insertProvider(db, { name: "reference oracle", kind: "reference", baseUrl: null, model: "reference", apiKeySealed: null, extraParams: {} })).id;
  const exp = await createExperiment(
    db,
    { name: "stuck without bubblewrap", splitId, teacher: { providerId, n: 1 }, baseModel: { source: "path", ref: "/models/none" }, training: { epochs: 1 }, evaluation: { graderVersion: "e2e", device: "cuda" }, seeds: [1], bootstrap: { iterations: 100, seed: 1 } },
    null,
  );
  experimentId = exp.id;
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
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
      const sandbox = page.getByTestId("sandbox-local");
      await sandbox.getByText("self-test failed").waitFor({ timeout: 30_000 });
      await expect(sandbox.textContent()).resolves.toMatch(/bwrap/);

      // The experiment's collection produces grade jobs nobody can claim.
      await page.goto(`${app.url}/experiments/${experimentId}`);
      const banner = page.getByTestId("stuck-banner");
      await banner.getByText(/no online agent has a passing sandbox self-test/).first().waitFor({ timeout: 120_000 });
      const text = (await banner.textContent()) ?? "";
      expect(text).toMatch(/queued grade job/);
      expect(text).toMatch(/local: .*bwrap/);
      expect(text).toMatch(/apt-get install -y bubblewrap/);
      await page.screenshot({ path: docScreenshot("stuck-experiment.png") });

      await page.goto(`${app.url}/`);
      await page.getByTestId("stuck-banner").getByText(/no online agent has a passing sandbox self-test/).first().waitFor({ timeout: 30_000 });

      const [job] = await app.db.db.select({ id: schema.jobs.id }).from(schema.jobs).where(and(eq(schema.jobs.type, "grade"), eq(schema.jobs.state, "queued"))).limit(1);
      if (!job) throw new Error("no queued grade job");
      await page.goto(`${app.url}/jobs/${job.id}`);
      await page.getByTestId("stuck-banner").getByText(/no online agent has a passing sandbox self-test/).first().waitFor({ timeout: 30_000 });
      await page.getByText("an online agent with a passing sandbox self-test").first().waitFor();
      await expect(page.getByText("any agent", { exact: true }).count()).resolves.toBe(0);

      // Re-run from the Agents page: the agent tests again without a restart (still failing here).
      await page.goto(`${app.url}/agents`);
      await page.getByRole("button", { name: "Re-run self-test" }).click();
      await page.waitForTimeout(3000);
      await expect(page.getByText("Could not re-run the self-test").count()).resolves.toBe(0);
      await page.getByTestId("sandbox-local").getByText("self-test failed").waitFor();
      await expect(page.getByText("online", { exact: true }).first().isVisible()).resolves.toBe(true);
    } catch (err) {
      await page.screenshot({ path: debugScreenshot("stuck-failure.png") }).catch(() => {});
      throw err;
    }
  }, 420_000);
});
