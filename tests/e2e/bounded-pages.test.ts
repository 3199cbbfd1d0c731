import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Page } from "playwright-core";
import type { TaskSpec } from "@agentlab/core";
import { createSplit, importPool } from "@agentlab/db";
import { groupProgram, makePool, makeTask, toJsonl } from "../fixtures/tasks/generate";
import { launchBrowser, signedInAdmin, useProduct, type RunningApp } from "./helpers/app";
import { debugScreenshot } from "./helpers/screenshots";

// Lists that grow stay pages: a pool's group merge proposals (50 a page, bulk merge and reject of
// a selection) and a split's leakage rows (50 a page), and the split page's primary action is the
// experiment on it. A pool with 100 near-copies filed under their own source groups gives both.

let app: RunningApp;
let browser: Browser;
let page: Page;
const ids = { pool: "", split: "" };
const COPIES = 100;

// A near-copy of group g under its own source group: same program, one comment changed.
const nearCopy = (g: number): TaskSpec => ({
  ...makeTask(g, 0),
  id: `copy/${g}`,
  source_group: `copies/${g}`,
  files: [
    { path: "solution.py", role: "main", content: groupProgram(g).replace("# accumulate", "# accumulate values") },
  ],
  reference: [],
});

beforeAll(async () => {
  app = await useProduct("api");
  browser = await launchBrowser();
  const signedIn = await signedInAdmin(browser, app.db.db, app.url, {
    email: "pages@example.com",
    name: "Paige Pager",
    viewport: { width: 1400, height: 1000 },
  });
  page = await signedIn.newPage();
  const tasks = [...makePool(240, 2, 800), ...Array.from({ length: COPIES }, (_, i) => nearCopy(800 + i))];
  const imp = await importPool(app.db.db, { name: "e2e-bounded", lines: [new TextEncoder().encode(toJsonl(tasks))] });
  if (!imp.ok) throw new Error("pool import failed");
  expect(imp.mergeProposals).toBe(COPIES);
  ids.pool = imp.poolId;
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await app?.release();
});

describe("bounded pages", () => {
  it("pages the pool's merge proposals and merges or rejects a selection at once", async () => {
    await page.goto(`${app.url}/pools/${ids.pool}`);
    const shown = page.getByTestId("merge-proposals-shown");
    await shown.getByText("1–50 of 100").waitFor();
    await shown.getByRole("button", { name: "Next" }).click();
    await page.getByTestId("merge-proposals-shown").getByText("51–100 of 100").waitFor();
    // Three proposals of the second page, picked one by one (each row's box names its two groups).
    const rowBoxes = page.getByRole("checkbox", { name: /^Select copies\// });
    expect(await rowBoxes.count()).toBe(50);
    for (const i of [0, 1, 2]) await rowBoxes.nth(i).check();
    await page.getByRole("button", { name: "Merge 3 selected" }).click();
    await page.getByTestId("merge-proposals-shown").getByText("51–97 of 97").waitFor();
    // Rejecting the whole last page steps back to the page that now ends the list.
    await page.getByLabel("Select all pending on this page").check();
    await page.getByRole("button", { name: "Reject 47 selected" }).click();
    await page.getByTestId("merge-proposals-shown").getByText("1–50 of 50").waitFor();
    await page.getByLabel("Proposal status").selectOption("accepted");
    await page.getByTestId("merge-proposals-shown").getByText("1–3 of 3").waitFor();
    await page.getByLabel("Proposal status").selectOption("rejected");
    await page.getByTestId("merge-proposals-shown").getByText("1–47 of 47").waitFor();
    await page.screenshot({ path: debugScreenshot("bounded-merges.png"), fullPage: true });
  });

  it("pages the split's leakage rows, with the experiment on the split as its first action", async () => {
    const { split } = await createSplit(app.db.db, { poolId: ids.pool, seed: 5, devRatio: 0.2, testRatio: 0.3 });
    const pairs = split.leakage.pairs.length;
    expect(pairs, "the fixture must leak more than one page").toBeGreaterThan(50);
    await page.goto(`${app.url}/splits/${split.id}`);
    const start = page.getByRole("link", { name: "Start an experiment on this split" });
    expect(await start.getAttribute("href")).toBe(`/experiments/new?split=${split.id}`);
    const leak = page.getByTestId("leakage-shown");
    await leak.getByText(`1–50 of ${pairs}`).waitFor();
    await leak.getByRole("button", { name: "Next" }).click();
    await page
      .getByTestId("leakage-shown")
      .getByText(`51–${Math.min(100, pairs)} of ${pairs}`)
      .waitFor();
    await start.click();
    await page.waitForURL(/\/experiments\/new\?split=/);
    await page.locator(`select[name=splitId] option[value="${split.id}"]`).waitFor({ state: "attached" });
    await expect(page.locator("select[name=splitId]").inputValue()).resolves.toBe(split.id);
  });
});
