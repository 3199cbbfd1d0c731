import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import type { Browser } from "playwright-core";
import { createSplit, importPool, referenceOracle } from "@agentlab/db";
import { findPython, runPython } from "../../apps/agent/src/trainer/python";
import { makePool, toJsonl } from "../fixtures/tasks/generate";
import { launchBrowser, signedInAdmin, useProduct, type RunningApp } from "./helpers/app";
import { debugScreenshot, docScreenshot } from "./helpers/screenshots";

// One experiment from the browser to a shared report, on the real product (Next, tRPC, the runner,
// the local agent with its sandboxed grader and the Python trainer) over a fresh Postgres database:
// a 12-task split, the reference teacher, the tiny local model, 2 seeds × 2 epochs.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let app: RunningApp;
let browser: Browser;
let splitId = "";
let model = "";

beforeAll(async () => {
  app = await useProduct("lab");
  browser = await launchBrowser();
  const db = app.db.db;
  const imp = await importPool(db, { name: "e2e-small", lines: [new TextEncoder().encode(toJsonl(makePool(12, 1)))] });
  if (!imp.ok) throw new Error("pool import failed");
  splitId = (await createSplit(db, { poolId: imp.poolId, seed: 3, devRatio: 0.25, testRatio: 0.25 })).split.id;
  await referenceOracle(db, { create: true });
  model = join(await mkdtemp(join(tmpdir(), "agentlab-e2e-model-")), "tiny");
  const python = findPython(null, { root: join(ROOT, "apps/agent") });
  await runPython(
    "tiny-model",
    {
      output_dir: model,
      corpus: [join(ROOT, "data/builtin-pool.jsonl.gz")],
      vocab_size: 4096,
      hidden_size: 64,
      intermediate_size: 128,
      max_position_embeddings: 4096,
    },
    { python },
  );
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await app?.release();
});

describe("an experiment in the browser", () => {
  it("creates an experiment, runs it to the report, shares it without a login, and revokes the link", async () => {
    // The product is shared with other files (foundation.test.ts signs up through the one-time link).
    const signedIn = await signedInAdmin(browser, app.db.db, app.url, {
      email: "experiment@example.com",
      name: "Eve Experiment",
      viewport: { width: 1400, height: 1000 },
    });
    const page = await signedIn.newPage();

    await page.goto(`${app.url}/experiments/new`);
    const form = page.getByRole("form", { name: "new experiment" });
    await form.locator("input[name=name]").fill("e2e: tiny model");
    await form.locator("select[name=splitId]").selectOption(splitId);
    await form.locator("select[name=providerId]").selectOption({ label: "reference oracle (reference oracle)" });
    await form.locator("input[name=baseModel]").fill(model);
    await form.locator("input[name=learningRate]").fill("0.001");
    await form.locator("input[name=maxLength]").fill("3072");
    await form.locator("input[name=loraR]").fill("4");
    await form.locator("input[name=loraAlpha]").fill("8");
    await form.locator("input[name=targets]").fill("q_proj,v_proj");
    await form.locator("select[name=quantization]").selectOption("none");
    await form.locator("input[name=maxNewTokens]").fill("32");
    await form.locator("input[name=seeds]").fill("1, 2");
    await form.getByRole("button", { name: "Create and start" }).click();
    await page.waitForURL(/\/experiments\/[0-9a-f-]{36}$/);
    await page.getByText("train:s1").waitFor();

    const reportLink = page.getByTestId("report-link");
    const failed = page.locator("p[role=alert]"); // the experiment's error (Next has its own role=alert route announcer)
    await reportLink
      .or(failed)
      .first()
      // Training two seeds, evaluating and grading on the local agent: 160 s alone on the 2-core
      // box, more than 240 s beside the integration tests on a slower one.
      .waitFor({ timeout: 540_000 })
      .catch(async (err: unknown) => {
        await page.screenshot({ path: debugScreenshot("experiment-timeout.png"), fullPage: true });
        throw new Error(`no report: ${String(err)}\n${app.output().slice(-4000)}`);
      });
    if (await failed.isVisible())
      throw new Error(`experiment failed: ${await failed.textContent()}\n${app.output().slice(-4000)}`);
    await page.screenshot({ path: docScreenshot("experiment.png"), fullPage: true });
    await reportLink.click();
    await page.waitForURL(/\/reports\/[0-9a-f-]{36}$/);

    const table = page.getByTestId("summary-table");
    await table.waitFor();
    expect(await table.locator("tbody tr").count()).toBe(2);
    await expect(table.locator("tbody tr").nth(1).locator("td").first().textContent()).resolves.toBe("test");
    const chart = page.getByRole("img", { name: "dev pass@1 by epoch" });
    await chart.waitFor();
    expect(await chart.locator("path").count()).toBeGreaterThan(0);
    // docs/screenshots/report.png comes from tests/e2e/report.test.ts (the current layout, known answers).
    await page.screenshot({ path: debugScreenshot("report-tiny-model.png"), fullPage: true });

    await page.getByRole("button", { name: "Create share link" }).click();
    const shareUrl = (await page.getByTestId("share-url").textContent()) ?? "";
    expect(shareUrl).toMatch(/\/share\/\S+$/);

    // A fresh context: no session cookie. The link shows that report and nothing else.
    const stranger = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const shared = await stranger.newPage();
    await shared.goto(shareUrl);
    await shared.getByTestId("summary-table").waitFor();
    await shared.getByRole("heading", { name: "e2e: tiny model" }).waitFor();
    await shared.screenshot({ path: docScreenshot("share.png"), fullPage: true });
    const other = await stranger.request.get(`${app.url}/api/trpc/experiments.list`);
    expect(other.status()).toBe(401);

    // Revoking asks first; accept the confirmation.
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "Revoke" }).click();
    await page.getByText("revoked", { exact: true }).waitFor();
    await shared.reload();
    // One plain page that says what happened, without the workspace's navigation.
    await shared.getByRole("heading", { name: "This link was revoked" }).waitFor();
    expect(await shared.getByRole("navigation", { name: "Main" }).count()).toBe(0);
    await stranger.close();
  }, 720_000);
});
