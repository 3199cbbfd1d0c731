import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { createFirstAdmin, launchBrowser, useProduct, type RunningApp } from "./helpers/app";
import { docScreenshot } from "./helpers/screenshots";

let app: RunningApp;
let browser: Browser;
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
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
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
});
