import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { createSplit, importPool } from "@agentlab/db";
import { makePool, toJsonl } from "../fixtures/tasks/generate";
import { launchBrowser, signedInAdmin, useProduct, type RunningApp } from "./helpers/app";
import { debugScreenshot } from "./helpers/screenshots";

// The experiment form's base-model picker on the real product: the local agent
// builds the tiny demo model from the split's train tasks, checks it (inspect-model job) and the
// form shows its facts with the memory estimate; a folder that does not exist is named.
let app: RunningApp;
let browser: Browser;
let splitId = "";

beforeAll(async () => {
  app = await useProduct("lab");
  browser = await launchBrowser();
  const imp = await importPool(app.db.db, {
    name: "e2e-picker",
    lines: [new TextEncoder().encode(toJsonl(makePool(12, 1)))],
  });
  if (!imp.ok) throw new Error("pool import failed");
  splitId = (await createSplit(app.db.db, { poolId: imp.poolId, seed: 3, devRatio: 0.25, testRatio: 0.25 })).split.id;
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await app?.release();
});

describe("base-model picker", () => {
  it("builds the tiny demo model on the local agent, checks it and shows its facts; a missing folder is named", async () => {
    const ctx = await signedInAdmin(browser, app.db.db, app.url, {
      email: "picker@example.com",
      name: "Pia Picker",
      viewport: { width: 1400, height: 1000 },
    });
    const page = await ctx.newPage();
    try {
      await page.goto(`${app.url}/experiments/new`);
      const form = page.getByRole("form", { name: "new experiment" });
      // the bad input first: a folder nobody has
      await form.locator("input[name=baseModel]").fill("/nonexistent/model");
      await form.getByRole("button", { name: "Check on an agent" }).click();
      await expect
        .poll(() => form.getByRole("alert").allTextContents(), { timeout: 120_000 })
        .toContainEqual(expect.stringContaining("model folder not found: /nonexistent/model"));

      // This file's split (the product is shared: other files' splits are in the list too).
      await form.locator("select[name=splitId]").selectOption(splitId);
      await form.getByRole("button", { name: "Build the tiny demo model" }).click();
      const facts = form.getByLabel("model facts");
      await facts.waitFor({ timeout: 240_000 });
      const path = await form.locator("input[name=baseModel]").inputValue();
      expect(path).toMatch(/\/models\/tiny-[0-9a-f]{16}/);
      await expect.poll(() => facts.textContent()).toContain("LlamaForCausalLM");
      expect(await facts.textContent()).toMatch(/Checked on\s*\S+ in \d+\.\d s/);
      expect(await form.getByLabel("memory estimate").textContent()).toMatch(/Training peak on a GPU.*≈ \d+\.\d GiB/);
    } catch (err) {
      await page.screenshot({ path: debugScreenshot("model-picker-failure.png"), fullPage: true });
      throw err;
    } finally {
      await ctx.close();
    }
  }, 600_000);
});
