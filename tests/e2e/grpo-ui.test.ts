import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import type { Browser, BrowserContext } from "playwright-core";
import { createArtifactStore } from "../../apps/web/server/artifacts/store";
import { makeServices, makeSplit } from "../integration/experiments-harness";
import { simGrpoStep } from "../integration/helpers/sim-grpo";
import { launchBrowser, signedInAdmin, useProduct, type RunningApp } from "./helpers/app";
import { debugScreenshot, docScreenshot } from "./helpers/screenshots";
import { runGrpoExperiment } from "./helpers/sim-runs";

// The GRPO pages in the browser, on the real product without its local agent: an sft+grpo
// experiment run to its report by the integration harness's simulated agent (4 GRPO steps with
// known figures, a snapshot every 2; helpers/sim-grpo.ts), then the experiment page's GRPO panel
// (the seed's steps, curves, snapshot marks, the hack audit's count) and the report's three-way
// section on the signed-in page and its share page.

let app: RunningApp;
let browser: Browser;
let signedIn: BrowserContext;
let run: { experimentId: string; reportId: string };

beforeAll(async () => {
  app = await useProduct("api");
  browser = await launchBrowser();
  const db = app.db.db;
  const s = { ...(await makeServices(db)), artifacts: createArtifactStore(join(app.dataDir, "artifacts")) };
  const split = await makeSplit(db);
  run = await runGrpoExperiment(s, split.splitId, split.tasks, "e2e sft+grpo");
  signedIn = await signedInAdmin(browser, db, app.url, {
    email: "grpo@example.com",
    name: "Gus GRPO",
    viewport: { width: 1400, height: 1000 },
  });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await app?.release();
});

describe("GRPO in the browser", () => {
  it("the experiment page's panel shows the seed's steps, curves, snapshots and the hack audit", async () => {
    const page = await signedIn.newPage();
    try {
      await page.goto(`${app.url}/experiments/${run.experimentId}`);
      const panel = page.getByTestId("grpo-panel");
      await panel.waitFor();
      await expect.poll(() => panel.textContent(), { timeout: 30_000 }).toContain("step 4/4");
      const last = simGrpoStep(4, 4);
      await expect(panel.textContent()).resolves.toContain(last.reward_mean.toFixed(3));
      // One unparseable completion a step: the audit's count over the run.
      await expect(panel.getByTestId("grpo-suspicious-1").textContent()).resolves.toBe("4");
      for (const chart of ["grpo-reward-chart", "grpo-signal-chart", "grpo-length-chart"])
        await expect(panel.getByTestId(chart).locator("path").count()).resolves.toBeGreaterThan(0);
      // β = 0 (TRL's default): no KL curve; the two snapshots are marked on the curves.
      expect(await panel.getByTestId("grpo-kl-chart").count()).toBe(0);
      await expect(panel.getByTestId("grpo-reward-chart").textContent()).resolves.toContain("snapshot 2");
      await panel.screenshot({ path: docScreenshot("grpo-panel.png") });
    } catch (err) {
      await page.screenshot({ path: debugScreenshot("grpo-panel-failure.png"), fullPage: true });
      throw err;
    } finally {
      await page.close();
    }
  });

  it("the report and its share page compare base, SFT and GRPO pairwise", async () => {
    const page = await signedIn.newPage();
    try {
      await page.goto(`${app.url}/reports/${run.reportId}`);
      const table = page.getByTestId("grpo-comparisons");
      await table.waitFor();
      const rows = table.locator("tbody tr");
      expect(await rows.count()).toBe(3);
      await expect(rows.nth(0).textContent()).resolves.toMatch(/^base vs SFT/);
      await expect(rows.nth(1).textContent()).resolves.toContain("GRPO · seed 1 · snapshot");
      await expect(rows.nth(2).textContent()).resolves.toMatch(/^SFT vs GRPO/);
      expect(await page.getByTestId("grpo-comparison-missing").count()).toBe(0);
      // Control: no DPO section on a GRPO report.
      expect(await page.getByTestId("dpo-report").count()).toBe(0);
      await expect(page.getByTestId("grpo-dev-curve").locator("path").count()).resolves.toBeGreaterThan(0);

      await page.getByRole("button", { name: "Create share link" }).click();
      const shareUrl = (await page.getByTestId("share-url").textContent()) ?? "";
      const stranger = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
      const shared = await stranger.newPage();
      await shared.goto(shareUrl);
      await shared.getByTestId("grpo-comparisons").waitFor();
      expect(await shared.getByTestId("grpo-comparisons").locator("tbody tr").count()).toBe(3);
      await stranger.close();
    } catch (err) {
      await page.screenshot({ path: debugScreenshot("grpo-report-failure.png"), fullPage: true });
      throw err;
    } finally {
      await page.close();
    }
  });
});
