import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import type { Browser, BrowserContext } from "playwright-core";
import { schema } from "@agentlab/db";
import { createArtifactStore } from "../../apps/web/server/artifacts/store";
import { makeServices, makeSplit } from "../integration/experiments-harness";
import { seedPreferencePairs, type SeededPairs } from "../integration/helpers/preference-seed";
import { launchBrowser, signedInAdmin, useProduct, type RunningApp } from "./helpers/app";
import { runDpoExperiment } from "./helpers/sim-runs";
import { debugScreenshot, docScreenshot } from "./helpers/screenshots";

// The DPO pages in the browser, on the real product (Next, tRPC, its runner) without its local
// agent: the pair browser over seeded pairs of known layers, sources and margins; the experiment
// page's DPO panel, the report's three-way section and its share page after an sft+dpo experiment
// run to its report by the integration harness's simulated agent; the recipe form's DPO fields
// with the server's refusal under the field.

let app: RunningApp;
let browser: Browser;
let signedIn: BrowserContext;
let seeded: SeededPairs;
let run: { experimentId: string; reportId: string };
let formSplit = "";

beforeAll(async () => {
  app = await useProduct("api");
  browser = await launchBrowser();
  const db = app.db.db;
  seeded = await seedPreferencePairs(db, "e2e pairs");
  // One artifact store for the product and this test's runner (the pairs stage publishes blobs the DPO jobs read).
  const s = { ...(await makeServices(db)), artifacts: createArtifactStore(join(app.dataDir, "artifacts")) };
  const split = await makeSplit(db);
  formSplit = split.splitId;
  run = await runDpoExperiment(s, split.splitId, split.tasks, "e2e sft+dpo");
  signedIn = await signedInAdmin(browser, db, app.url, {
    email: "dpo@example.com",
    name: "Dana DPO",
    viewport: { width: 1400, height: 1000 },
  });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await app?.release();
});

const all = () => [...seeded.pairs].flatMap(([round, ps]) => ps.map((p) => ({ ...p, round })));

describe("the pair browser", () => {
  it("lists the pairs with their figures, filters them through the URL and opens one", async () => {
    const page = await signedIn.newPage();
    await page.goto(`${app.url}/experiments/${seeded.experimentId}`);
    await page.getByTestId("pairs-link").click();
    await page.waitForURL(`${app.url}/experiments/${seeded.experimentId}/pairs`);
    const shown = page.getByTestId("pairs-shown");
    await expect.poll(async () => shown.textContent()).toMatch(new RegExp(`^${all().length} pairs`));
    const bars = page.getByTestId("histogram-bar");
    await bars.first().waitFor();
    expect(await bars.count()).toBeGreaterThan(1);
    const above = all().filter((p) => p.marginBefore > 0).length;
    await expect(page.getByTestId("margin-note").textContent()).resolves.toContain(
      `${above} of ${all().length} already prefer`,
    );

    // The export button downloads the stored pairs as the CLI's JSONL: one line per pair, every round.
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export all rounds (JSONL)" }).click(),
    ]);
    const lines = (await readFile((await download.path()) ?? "", "utf8")).trim().split("\n");
    expect(lines.map((l) => (JSON.parse(l) as { pairKey: string }).pairKey).sort()).toEqual(
      all()
        .map((p) => p.pairKey)
        .sort(),
    );

    // Round 1, then its hidden-test failures: the buttons' counts and the list agree with the seeded pairs.
    await page
      .getByRole("group", { name: "round" })
      .getByRole("button", { name: /^round 1 / })
      .click();
    await page.waitForURL(/round=1/);
    const hidden = all().filter((p) => p.round === 1 && p.failingLayer === "hidden");
    const layerButton = page
      .getByRole("group", { name: "failing layer" })
      .getByRole("button", { name: /^hidden tests / });
    await expect(layerButton.textContent()).resolves.toContain(String(hidden.length));
    await layerButton.click();
    await page.waitForURL(/layer=hidden/);
    const rows = page.getByTestId("pair-table").locator("tbody > tr");
    await expect
      .poll(async () => shown.textContent())
      .toMatch(new RegExp(`^${hidden.length} pairs of ${new Set(hidden.map((p) => p.taskId)).size} tasks`));
    expect(await rows.count()).toBe(hidden.length);
    // The view survives a reload (it lives in the URL).
    await page.reload();
    await expect
      .poll(async () => page.getByTestId("pair-table").locator("tbody > tr").count(), { timeout: 30_000 })
      .toBe(hidden.length);
    await page.screenshot({ path: docScreenshot("pair-browser.png"), fullPage: true });

    // Killed mutants among them; then a filter nothing matches says so.
    await page
      .getByRole("group", { name: "rejected source" })
      .getByRole("button", { name: /^killed mutant / })
      .click();
    const mutants = hidden.filter((p) => p.rejectedSource === "mutant");
    expect(mutants.length).toBeGreaterThan(0);
    await expect.poll(async () => rows.count()).toBe(mutants.length);
    await page
      .getByRole("group", { name: "failing layer" })
      .getByRole("button", { name: /^tampered / })
      .click();
    await page.getByText("No pair matches these filters.").waitFor();

    // Open a pair: prompt, chosen and rejected answers, the failing test, the diff.
    await page.goto(`${app.url}/experiments/${seeded.experimentId}/pairs?round=1&layer=hidden`);
    const row = page.getByTestId("pair-table").locator("tbody > tr").first();
    const margin = Number(await row.getByTestId("pair-margin").textContent());
    const pair = hidden.find((p) => p.marginBefore.toFixed(3) === margin.toFixed(3));
    if (!pair) throw new Error(`no seeded hidden pair with margin ${margin}`);
    await row.click();
    const detail = page.getByTestId("pair-detail");
    await detail.waitFor();
    await expect(detail.getByTestId("pair-prompt").textContent()).resolves.toContain(`Fix the bug in ${pair.taskId}.`);
    await expect(detail.getByTestId("pair-chosen").textContent()).resolves.toContain(
      pair.chosenText.split("\n")[1] ?? "none",
    );
    await expect(detail.getByTestId("pair-rejected").textContent()).resolves.toContain(
      pair.rejectedText.split("\n")[1] ?? "none",
    );
    await expect(detail.getByTestId("pair-failing-tests").textContent()).resolves.toContain(
      pair.failingTests[0] ?? "none",
    );
    await detail.getByRole("tab", { name: "rejected → chosen diff" }).click();
    await expect(detail.getByTestId("diff").locator('[data-kind="add"]').first().textContent()).resolves.toContain(
      "return x + 1",
    );
    await page.getByTestId("pair-detail").screenshot({ path: docScreenshot("pair-detail.png") });
    await page.close();
  });
});

describe("an sft+dpo experiment in the browser", () => {
  it("the experiment page shows the DPO panel with its round's pairs and curves", async () => {
    // The simulated agent reports no steps; give the DPO job's attempt the events a trainer streams.
    const db = app.db.db;
    const stages = await db
      .select()
      .from(schema.experimentStages)
      .where(eq(schema.experimentStages.experimentId, run.experimentId));
    const dpoJob = stages.find((s) => s.key === "dpo:s1:r1")?.jobIds.at(-1) ?? "";
    const [job] = await db.select().from(schema.jobs).where(eq(schema.jobs.id, dpoJob));
    if (!job?.currentAttemptId) throw new Error("no dpo attempt");
    await db.insert(schema.jobProgress).values(
      [1, 2, 3, 4].map((step) => ({
        attemptId: job.currentAttemptId ?? "",
        seq: step,
        data: {
          event: "progress",
          step,
          total_steps: 4,
          epoch: step <= 2 ? 1 : 2,
          epoch_progress: step % 2 ? 0.5 : 1,
          loss: 0.69 - 0.05 * step,
          lr: 5e-5,
          tokens_per_s: 200,
          eta_s: 0,
          memory_mb: 1,
          dpo_loss: 0.69 - 0.05 * step,
          sft_loss: 0,
          reward_margin: 0.1 * step,
          preference_accuracy: step / 4,
          chosen_reward: 0.05 * step,
          rejected_reward: -0.05 * step,
        },
      })),
    );
    const page = await signedIn.newPage();
    await page.goto(`${app.url}/experiments/${run.experimentId}`);
    const panel = page.getByTestId("dpo-panel");
    await panel.waitFor();
    await expect(panel.getByTestId("dpo-round-1-pairs").textContent()).resolves.toMatch(/\d+ kept/);
    await expect(panel.getByTestId("dpo-margin-chart").locator("path").count()).resolves.toBeGreaterThan(0);
    await expect(panel.getByTestId("dpo-accuracy-chart").locator("path").count()).resolves.toBeGreaterThan(0);
    await expect(panel.textContent()).resolves.toContain("100.0%"); // the last step's preference accuracy
    await panel.screenshot({ path: docScreenshot("dpo-panel.png") });
    await panel.getByRole("link", { name: "browse the pairs" }).click();
    await page.waitForURL(/\/pairs\?round=1$/);
    await expect(page.getByTestId("round-notes").textContent()).resolves.toMatch(/Round 1.*built.*dropped/);
    await page.close();
  });

  it("the report and its share page compare base, SFT and DPO pairwise", async () => {
    const page = await signedIn.newPage();
    await page.goto(`${app.url}/reports/${run.reportId}`);
    const table = page.getByTestId("dpo-comparisons");
    await table.waitFor();
    const rows = table.locator("tbody tr");
    expect(await rows.count()).toBe(3);
    await expect(rows.nth(0).textContent()).resolves.toMatch(/^base vs SFTbase/);
    await expect(rows.nth(1).textContent()).resolves.toContain("DPO r1 · seed 1 · epoch");
    await expect(rows.nth(2).textContent()).resolves.toMatch(/^SFT vs DPOseed 1 · epoch/);
    expect(await page.getByTestId("dpo-comparison-missing").count()).toBe(0);
    expect(await page.getByTestId("dpo-rounds").locator("a").count()).toBe(1); // round 1 → the pair browser
    await expect(page.getByTestId("dpo-dev-curve").locator("path").count()).resolves.toBeGreaterThan(0);
    await page.getByTestId("dpo-report").screenshot({ path: docScreenshot("report-dpo.png") });

    await page.getByRole("button", { name: "Create share link" }).click();
    const shareUrl = (await page.getByTestId("share-url").textContent()) ?? "";
    const stranger = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const shared = await stranger.newPage();
    await shared.goto(shareUrl);
    await shared
      .getByTestId("dpo-comparisons")
      .waitFor()
      .catch(async (err: unknown) => {
        await shared.screenshot({ path: debugScreenshot("share-dpo.png"), fullPage: true });
        throw err;
      });
    expect(await shared.getByTestId("dpo-comparisons").locator("tbody tr").count()).toBe(3);
    expect(await shared.getByTestId("dpo-rounds").locator("a").count()).toBe(0);
    await stranger.close();
    await page.close();
  });
});

describe("the recipe form", () => {
  it("shows the DPO block for sft+dpo and puts the server's refusal under the field", async () => {
    const page = await signedIn.newPage();
    await page.goto(`${app.url}/experiments/new`);
    const form = page.getByRole("form", { name: "new experiment" });
    expect(await form.locator("input[name=dpoBeta]").count()).toBe(0);
    await form.locator("select[name=method]").selectOption("sft+dpo");
    await form.locator("input[name=dpoBeta]").waitFor();
    await form.locator("input[name=name]").fill("e2e: dpo form");
    await form.locator("select[name=splitId]").selectOption(formSplit);
    await form.locator("select[name=providerId]").selectOption({ index: 1 });
    await form.locator("input[name=baseModel]").fill("/models/none");
    // β = 0 passes the input's own bounds (min 0) but not the recipe schema (β > 0): the server judges.
    await form.locator("input[name=dpoBeta]").fill("0");
    await form.getByRole("button", { name: "Create and start" }).click();
    const err = form.locator('[data-field-error="dpo.beta"]');
    await err.waitFor();
    await expect(err.textContent()).resolves.toMatch(/0/);
    // positive control: the other DPO fields carry no error
    expect(await form.locator('[data-field-error^="dpo."]').count()).toBe(1);
    expect(page.url()).toBe(`${app.url}/experiments/new`);
    await page.close();
  });

  it("shows the GRPO block for sft+grpo (TRL's defaults, the reward control) and puts the server's refusal under the field", async () => {
    const page = await signedIn.newPage();
    await page.goto(`${app.url}/experiments/new`);
    const form = page.getByRole("form", { name: "new experiment" });
    await form.locator("select[name=method]").waitFor();
    expect(await form.locator("input[name=grpoSteps]").count()).toBe(0);
    await form.locator("select[name=method]").selectOption("sft+grpo");
    await form.locator("input[name=grpoSteps]").waitFor();
    // The DPO block is not shown for GRPO; the GRPO one starts at the recipe's defaults.
    expect(await form.locator("input[name=dpoBeta]").count()).toBe(0);
    expect(await form.locator("input[name=grpoNumGenerations]").inputValue()).toBe("8");
    expect(await form.locator("select[name=grpoRewardControl]").inputValue()).toBe("none");
    await form.locator("select[name=grpoRewardControl]").selectOption("shuffle_within_group");
    await form.locator("input[name=name]").fill("e2e: grpo form");
    await form.locator("select[name=splitId]").selectOption(formSplit);
    await form.locator("select[name=providerId]").selectOption({ index: 1 });
    await form.locator("input[name=baseModel]").fill("/models/none");
    // 2.5 completions per prompt pass the input's own bounds, not the recipe (a whole number): the server judges.
    await form.locator("input[name=grpoNumGenerations]").fill("2.5");
    await form.getByRole("button", { name: "Create and start" }).click();
    const err = form.locator('[data-field-error="grpo.numGenerations"]');
    await err.waitFor();
    await expect(err.textContent()).resolves.toMatch(/int/i);
    // positive control: the other GRPO fields carry no error
    expect(await form.locator('[data-field-error^="grpo."]').count()).toBe(1);
    expect(page.url()).toBe(`${app.url}/experiments/new`);
    await page.close();
  });
});
