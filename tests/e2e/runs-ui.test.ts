import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import {
  claimJob,
  createSplit,
  enqueueJob,
  finishAttempt,
  importPool,
  listSplits,
  recordProgress,
  setExperimentState,
  updateStage,
} from "@agentlab/db";
import { makePool, toJsonl } from "../fixtures/tasks/generate";
import { baseConfig, makeAgent, makeServices, startExperiment } from "../integration/experiments-harness";
import { storeReport } from "../integration/helpers/reports";
import { createFirstAdmin, launchBrowser, useProduct, type RunningApp } from "./helpers/app";
import { debugScreenshot, docScreenshot } from "./helpers/screenshots";

// The daily-work pages on the real product (Next, tRPC, the runner) over a fresh database without
// a local agent: the first-run checklist, field errors on the experiment form, the runs table with
// sort, tags and compare, and the experiment page's training panel. Reports are real ones (core
// buildReport) stored for experiments created through the server's own service.

let app: RunningApp;
let browser: Browser;
let page: Page;
const ids = { gain: "", small: "", training: "" };

beforeAll(async () => {
  app = await useProduct("empty");
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.on("dialog", (d) => void d.accept());
  await createFirstAdmin(page, app.setupUrl ?? "");
  await page.waitForURL(`${app.url}/`);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await app?.release();
});

const shot = async (name: string) => page.screenshot({ path: debugScreenshot(name), fullPage: true });

describe("daily workflow pages", () => {
  it("guides a first run: the checklist names the next step, and the oracle provider is one click", async () => {
    const list = page.getByRole("list", { name: "first-run checklist" });
    await list.waitFor();
    // No agent on this install: that is the first step, and it links to the agents page.
    expect(await list.locator("li[data-step=agent]").getAttribute("data-done")).toBe("false");
    expect(await list.locator("li[data-step=provider]").getAttribute("data-done")).toBe("false");
    await list.getByRole("button", { name: "Add the reference oracle provider" }).click();
    await list.locator("li[data-step=provider][data-done=true]").waitFor();
    await expect(list.getByRole("link", { name: "Enroll an agent" }).getAttribute("href")).resolves.toBe("/agents");
  });

  it("shows a server-side validation error under its field, never as raw JSON", async () => {
    const db = app.db.db;
    const imp = await importPool(db, { name: "e2e-runs", lines: [new TextEncoder().encode(toJsonl(makePool(24, 2)))] });
    if (!imp.ok) throw new Error("pool import failed");
    const { split } = await createSplit(db, {
      poolId: imp.poolId,
      seed: 2,
      devRatio: 0.25,
      testRatio: 0.25,
      name: "main",
    });
    await page.goto(`${app.url}/experiments/new`);
    const form = page.getByRole("form", { name: "new experiment" });
    await form.locator("input[name=name]").fill("bad lr");
    await form.locator("select[name=splitId]").selectOption(split.id);
    await form.locator("select[name=providerId]").selectOption({ index: 1 });
    await form.locator("input[name=baseModel]").fill("/models/tiny");
    await form.locator("input[name=learningRate]").fill("-1");
    await form.getByRole("button", { name: "Create and start" }).click();
    const fieldError = page.locator("[data-field-error='training.learningRate']");
    await fieldError.waitFor();
    expect(await fieldError.textContent()).toMatch(/>|greater|positive/i);
    const alert = await page.getByRole("alert").first().textContent();
    expect(alert).not.toContain('"code"');
    expect(alert).not.toContain("[");
    // Said in the form's words: the field's label, no schema path, no HTTP/tRPC code; the field has focus.
    expect(alert).toContain("Learning rate:");
    expect(alert).not.toContain("training.learningRate");
    expect(alert).not.toContain("BAD_REQUEST");
    await expect(form.locator("input[name=learningRate]").evaluate((el) => el.matches(":focus"))).resolves.toBe(true);
  });

  it("lists runs with their test figures, sorts, tags, and compares two runs", async () => {
    const db = app.db.db;
    const s = await makeServices(db);
    const [split] = await listSplits(db, {});
    if (!split) throw new Error("no split");
    ids.gain = await startExperiment(
      s,
      baseConfig(split.id, { name: "gain", baseModel: { source: "hub", ref: "org/model-a" } }),
    );
    ids.small = await startExperiment(s, baseConfig(split.id, { name: "small gain" }));
    await storeReport(db, ids.gain, { base: [1, 0, 0, 0, 1, 0, 0, 0], sft: [1, 1, 1, 0, 1, 1, 1, 0] });
    await storeReport(db, ids.small, { base: [1, 0, 0, 0, 1, 0, 0, 0], sft: [1, 1, 0, 0, 1, 0, 0, 0] });

    await page.goto(`${app.url}/experiments`);
    const row = page.getByRole("row").filter({ hasText: "org/model-a" });
    await row.waitFor();
    expect(await row.textContent()).toMatch(/25\.0%.*75\.0%.*\+50\.0 pp/);
    await page.getByRole("button", { name: "sort by Δ [interval]" }).click();
    await page.waitForURL(/sort=delta/);
    await page.locator("tbody tr").first().filter({ hasText: "org/model-a" }).waitFor();
    expect(await page.getByTestId("runs-total").textContent()).toBe("1–2 of 2");
    await page.getByLabel("compare gain", { exact: true }).check();
    await page.getByLabel("compare small gain").check();
    await page.screenshot({ path: docScreenshot("runs-table.png"), fullPage: true });
    await page.getByRole("button", { name: /^Compare/ }).click();
    await page.waitForURL(/\/experiments\/compare\?ids=/);
    const matrix = page.getByRole("table", { name: "per-task outcomes" });
    await matrix.waitFor();
    expect(await matrix.locator("tbody tr").count()).toBe(8);
    await page.getByLabel("only tasks where the runs differ").check();
    // t2, t5 and t6: passed by one adapter and failed by the other.
    expect(await matrix.locator("tbody tr").count()).toBe(3);
    // The recipes side by side, differences only by default: the two base models.
    const recipe = page.getByTestId("recipe-diff");
    await expect(recipe.locator("tbody tr").first().textContent()).resolves.toContain("org/model-a");
    expect(await recipe.locator('tr[data-differs="false"]').count()).toBe(0);
    expect(await page.getByTestId("protocols-differ").count()).toBe(0);
    await page.getByTestId("compare-curves").waitFor();
    await shot("compare.png");
  });

  it("tags a run on its page and filters the runs table by that tag", async () => {
    await page.goto(`${app.url}/experiments/${ids.gain}`);
    const notes = page.getByRole("form", { name: "tags and notes" });
    await notes.locator("input[name=tags]").fill("baseline, lr:2e-4");
    await notes.locator("textarea[name=notes]").fill("first try");
    await notes.getByRole("button", { name: "Save" }).click();
    await notes.getByText("saved").waitFor();
    await page.goto(`${app.url}/experiments?tag=baseline`);
    await page.getByRole("row").filter({ hasText: "org/model-a" }).waitFor();
    expect(await page.getByTestId("runs-total").textContent()).toBe("1–1 of 1");
  });

  it("draws per-seed training curves with epoch marks, a resumed attempt's mark and an ETA on the experiment page", async () => {
    const db = app.db.db;
    const s = await makeServices(db);
    const [split] = await listSplits(db, {});
    if (!split) throw new Error("no split");
    ids.training = await startExperiment(s, baseConfig(split.id, { name: "training now", seeds: [1] }));
    // Held still for the page (the runner ignores a canceled run); the train job is a stand-in
    // claimed by a test agent that writes the trainer's progress events through the fenced path.
    await setExperimentState(db, ids.training, "canceled", null);
    const fit = await makeAgent(db, { shellJobs: true });
    const job = await enqueueJob(db, {
      type: "shell",
      payload: { argv: ["true"] },
      requirements: { labels: ["e2e-train"] },
    });
    await updateStage(db, ids.training, "train:s1", { state: "running", jobIds: [job.id] });
    // The runner's own queued jobs (of the other runs) may come first: claim until ours.
    let claimed = await claimJob(db, { ...fit, labels: ["e2e-train"], shellJobs: true });
    for (let i = 0; claimed && claimed.jobId !== job.id && i < 50; i++)
      claimed = await claimJob(db, { ...fit, labels: ["e2e-train"], shellJobs: true });
    if (!claimed || claimed.jobId !== job.id) throw new Error("not claimed");
    for (let step = 1; step <= 30; step++) {
      const epoch = step <= 15 ? 1 : 2;
      await recordProgress(db, fit.agentId, job.id, claimed.attemptId, step, {
        event: "progress",
        step,
        total_steps: 40,
        epoch,
        epoch_progress: ((step - 1) % 15) / 15,
        loss: 2 * Math.exp(-step / 12) + 0.1 * Math.sin(step),
        lr: 2e-4 * (1 - step / 40),
        tokens_per_s: 900 + step,
        eta_s: (40 - step) * 3,
        memory_mb: 600,
      });
    }
    // The box is lost after step 30; the retried attempt resumes after epoch 1 (step 16 on).
    await finishAttempt(
      db,
      {
        jobId: job.id,
        attemptId: claimed.attemptId,
        reason: "infra_error",
        exitCode: null,
        signal: null,
        result: {},
        error: "agent lost",
      },
      fit.agentId,
    );
    let again = await claimJob(db, { ...fit, labels: ["e2e-train"], shellJobs: true });
    for (let i = 0; again && again.jobId !== job.id && i < 50; i++)
      again = await claimJob(db, { ...fit, labels: ["e2e-train"], shellJobs: true });
    if (!again || again.jobId !== job.id) throw new Error("not claimed again");
    for (let step = 16; step <= 30; step++)
      await recordProgress(db, fit.agentId, job.id, again.attemptId, step, {
        event: "progress",
        step,
        total_steps: 40,
        epoch: 2,
        epoch_progress: (step - 16) / 15,
        loss: 2 * Math.exp(-step / 12) + 0.1 * Math.sin(step),
        lr: 2e-4 * (1 - step / 40),
        tokens_per_s: 900 + step,
        eta_s: (40 - step) * 3,
        memory_mb: 600,
      });
    await page.goto(`${app.url}/experiments/${ids.training}`);
    await page.getByRole("img", { name: "loss by step" }).waitFor();
    expect(await page.getByText("seed 1 attempt 2: resumed at step 16").count()).toBeGreaterThan(0);
    expect(await page.getByTestId("seed-progress").textContent()).toContain("step 30/40 · epoch 2");
    expect(await page.getByTestId("eta-1").textContent()).toBe("30.0s");
    expect(await page.getByText("epoch 2", { exact: true }).count()).toBeGreaterThan(0);
    expect(await page.getByTestId("total-time").textContent()).toMatch(/\d/);
    await page.screenshot({ path: docScreenshot("experiment-page.png"), fullPage: true });
  });
});
