import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq } from "drizzle-orm";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { createSplit, importPool, schema } from "@agentlab/db";
import { storeEpisodeJob } from "../../apps/web/server/episodes/store";
import { makeTask } from "../fixtures/tasks/generate";
import { episodeRig, finishedEpisodeJob, type EpisodeRig } from "../integration/episodes-rig";
import { launchBrowser, signedInAdmin, useProduct, type RunningApp } from "./helpers/app";
import { debugScreenshot } from "./helpers/screenshots";

// The trajectory viewer on the real product (Next, tRPC) without its local agent: a recoverer
// episode with one continuation per branch point, run here on the bwrap sandbox and the judge and
// stored by the server's own store function, listed under its split's scope, opened as a
// trajectory (each step's call, observation, file diff and budget used; the branch points with
// their continuations' verdicts), and a continuation opened from there. Assertions are scoped to
// this file's own pool and split.

let app: RunningApp;
let browser: Browser;
let signedIn: BrowserContext;
let page: Page;
let rig: EpisodeRig;
let splitId = "";
let episodeId = "";
let stepCount = 0;

beforeAll(async () => {
  app = await useProduct("api");
  browser = await launchBrowser();
  rig = episodeRig();
  const db = app.db.db;
  const imp = await importPool(db, {
    name: "e2e-episodes",
    lines: [new TextEncoder().encode(JSON.stringify(makeTask(11, 0)))],
  });
  if (!imp.ok) throw new Error("import failed");
  ({
    split: { id: splitId },
  } = await createSplit(db, { poolId: imp.poolId, seed: 3, devRatio: 0, testRatio: 0 }));
  const [row] = await db.select({ id: schema.tasks.id }).from(schema.tasks).where(eq(schema.tasks.poolId, imp.poolId));
  if (!row) throw new Error("no task");
  const job = await finishedEpisodeJob(db, rig, {
    taskRowId: row.id,
    policy: { kind: "scripted", name: "recoverer" },
    seed: 6,
    branching: { k: 1, seedBase: 20 },
  });
  stepCount = job.result.episode.steps.length;
  episodeId = (await storeEpisodeJob(db, { id: job.jobId, payload: job.payload, result: job.result })).id;
  signedIn = await signedInAdmin(browser, db, app.url, {
    email: "episodes@example.com",
    name: "Erin Episodes",
    viewport: { width: 1400, height: 1000 },
  });
  page = await signedIn.newPage();
}, 600_000);

afterAll(async () => {
  rig?.close();
  await browser?.close();
  await app?.release();
});

const shot = (name: string) => page.screenshot({ path: debugScreenshot(name), fullPage: true });

describe("the trajectory viewer", () => {
  it("lists the split's episodes, continuations only when asked", async () => {
    await page.goto(`${app.url}/episodes?split=${splitId}`);
    const link = page.locator(`a[data-episode="${episodeId}"]`);
    await link.waitFor();
    const rows = page.locator("tbody tr");
    // This split holds this file's one main episode and nothing else.
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toMatch(/scripted:recoverer.*6.*main.*pass.*7 \/ 30.*2 \/ 8/);
    // The box follows the URL (the page's state), so it turns checked once the navigation lands.
    await page.getByLabel("with continuations").click();
    await page.waitForURL(/all=1/);
    await page.locator("tbody tr").nth(2).waitFor();
    expect(await page.locator("tbody tr").count()).toBe(3);
    expect(await page.locator("tbody tr", { hasText: "continuation" }).count()).toBe(2);
    expect(await page.getByLabel("with continuations").isChecked()).toBe(true);
  });

  it("shows every step's call, observation, diff and budget used, and the branch points", async () => {
    await page.goto(`${app.url}/episodes/${episodeId}`);
    const steps = page.getByTestId("step");
    await steps.first().waitFor();
    try {
      expect(await steps.count()).toBe(stepCount);
      expect(await page.getByTestId("episode-verdict").textContent()).toBe("pass");
      // The failed test run: the pytest summary the policy saw, one test run used of eight.
      const failedRun = page.locator('[data-testid=step][data-tool="run_public_tests"]').first();
      expect(await failedRun.getByTestId("observation").textContent()).toMatch(/failed/i);
      expect(await failedRun.getByTestId("budget-used").textContent()).toMatch(/test runs 1\/8/);
      // Each edit shows its call's arguments and the diff of solution.py it made.
      const edits = page.locator('[data-testid=step][data-tool="edit_file"]');
      expect(await edits.count()).toBe(2);
      for (const edit of await edits.all()) {
        expect(await edit.getByTestId("call-args").textContent()).toContain('"path": "solution.py"');
        expect(await edit.getByTestId("diff").first().textContent()).toContain("solution.py");
        expect(await edit.locator("[data-kind=add]").count()).toBeGreaterThan(0);
      }
      // The last step is the policy's submit, with the whole budget used so far.
      const last = steps.last();
      expect(await last.getAttribute("data-tool")).toBe("submit");
      expect(await last.getByTestId("budget-used").textContent()).toMatch(/turns 7\/30 · test runs 2\/8/);
      // Branch points: the start and the recovery state, one passing continuation each.
      const values = page.getByTestId("branch-value");
      expect(await values.count()).toBe(2);
      for (const v of await values.all()) expect(await v.textContent()).toBe("1/1 (100%)");
      expect(await page.getByTestId("continuation").count()).toBe(2);
    } catch (e) {
      await shot("episodes-trajectory");
      throw e;
    }
  });

  it("opens a continuation, which names its parent and counts on from the recovery state", async () => {
    await page.goto(`${app.url}/episodes/${episodeId}`);
    const recovery = page.locator("tr", { has: page.locator('[data-kind="after_failed_tests"]') });
    await recovery.getByTestId("continuation").click();
    await page.getByTestId("parent-episode").waitFor();
    expect(await page.getByTestId("parent-episode").getAttribute("href")).toBe(`/episodes/${episodeId}`);
    // Its first step comes after the recovery state: four turns and one test run were already used.
    const first = page.getByTestId("step").first();
    expect(Number(await first.getAttribute("data-index"))).toBe(4);
    expect(await first.getByTestId("budget-used").textContent()).toMatch(/turns 5\/30 · test runs 1\/8/);
  });
});
