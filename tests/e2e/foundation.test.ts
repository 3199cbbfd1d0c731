import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import { createFirstAdmin, launchBrowser, useProduct, type RunningApp } from "./helpers/app";
import { debugScreenshot, docScreenshot } from "./helpers/screenshots";

// A new lab: the first admin from the one-time link, the local agent online, then the checklist's
// shortest path to a first report (the CPU demo preset: split, oracle and a warmed base built on the
// local agent, the recipe filled in and the experiment started).
let app: RunningApp;
let browser: Browser;
let page: Page;
beforeAll(async () => {
  app = await useProduct("first-run");
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await app?.release();
});

describe("a new lab in the browser", () => {
  it("creates the first admin from the one-time link and sees the local agent online", async () => {
    expect(app.setupUrl).toBeTruthy();
    const health = await (await fetch(`${app.url}/api/health`)).json();
    expect(health).toMatchObject({ status: "ok", database: "ok" });
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await createFirstAdmin(page, app.setupUrl ?? "");
    await page.waitForURL(`${app.url}/`);
    await page.goto(`${app.url}/agents`);
    await page.getByText("local", { exact: true }).first().waitFor({ timeout: 30_000 });
    // The status badge (not the "0 online" counter): the agent connects after its sandbox self-test.
    await page.getByText("online", { exact: true }).first().waitFor({ timeout: 90_000 });
    await page.screenshot({ path: docScreenshot("agents.png") });
    // The one-time link is spent.
    const again = await browser.newPage();
    await again.goto(app.setupUrl ?? "");
    await again.getByText("This link does not work").waitFor();
  });

  it("starts the CPU demo from the checklist: the preset, its warmed base built and checked, the run started", async () => {
    try {
      await page.goto(`${app.url}/`);
      const start = page.getByRole("link", { name: "Start the CPU demo" });
      await start.waitFor({ timeout: 90_000 });
      await start.click();
      await page.waitForURL(/\/experiments\/new\?preset=cpu-demo/);
      const preset = page.getByRole("region", { name: "CPU demo preset" });
      const form = page.getByRole("form", { name: "new experiment" });
      // The warm-up's steps are shown while the local agent builds the base.
      await page.getByText(/warming the base up on .*: step \d+ of 250/).waitFor({ timeout: 240_000 });
      await preset.getByRole("status").waitFor({ timeout: 900_000 });
      expect(await form.locator("input[name=baseModel]").inputValue()).toMatch(
        /\/models\/tiny-[0-9a-f]{16}-w[0-9a-f]{12}/,
      );
      await form.getByLabel("model facts").waitFor();
      // The preset's recipe (core cpuDemoRecipe), the split and the oracle chosen.
      const value = (name: string) => form.locator(`[name=${name}]`).inputValue();
      expect(await value("epochs")).toBe("10");
      expect(await value("maxNewTokens")).toBe("80");
      expect(await value("loraDropout")).toBe("0");
      expect(await value("seeds")).toBe("1");
      expect(await form.locator("select[name=splitId] option:checked").textContent()).toContain("builtin-learnable");
      expect(await form.locator("select[name=providerId] option:checked").textContent()).toContain("reference oracle");
      await page.screenshot({ path: docScreenshot("cpu-demo-preset.png"), fullPage: true });
      await form.getByRole("button", { name: "Create and start" }).click();
      await page.waitForURL(/\/experiments\/[0-9a-f-]{36}$/, { timeout: 120_000 });
      await page.getByRole("heading", { name: /CPU demo/ }).waitFor();
    } catch (err) {
      await page.screenshot({ path: debugScreenshot("cpu-demo-failure.png"), fullPage: true });
      throw err;
    }
  }, 1_200_000);
});
