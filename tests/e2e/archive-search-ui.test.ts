import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, Dialog, Page } from "playwright-core";
import { createSplit, importPool, reportByExperiment } from "@agentlab/db";
import { makePool, makeTask, toJsonl } from "../fixtures/tasks/generate";
import { baseConfig, makeServices, startExperiment } from "../integration/experiments-harness";
import { storeReport } from "../integration/helpers/reports";
import { launchBrowser, signedInAdmin, useProduct, type RunningApp } from "./helpers/app";
import { debugScreenshot } from "./helpers/screenshots";

// The archive and search workflow in a real browser on the real product: instruction search on the pool
// page, archive / restore / delete of a split with their confirmations (a dismissed dialog changes
// nothing), the refusal to delete a pool a split pins, and the confirmation before revoking a share link.

let app: RunningApp;
let browser: Browser;
let page: Page;
// Each dialog is recorded, then accepted or dismissed as the test set `answer`.
const dialogs: string[] = [];
let answer: "accept" | "dismiss" = "accept";
const ids = { pool: "", used: "", unused: "", experiment: "" };

beforeAll(async () => {
  app = await useProduct("api");
  browser = await launchBrowser();
  const db = app.db.db;
  // The product is shared with other files: this file's admin, pool and splits are its own.
  const signedIn = await signedInAdmin(browser, db, app.url, {
    email: "archive@example.com",
    name: "Arlo Archive",
    viewport: { width: 1400, height: 1000 },
  });
  page = await signedIn.newPage();
  page.on("dialog", (d: Dialog) => {
    dialogs.push(d.message());
    void (answer === "accept" ? d.accept() : d.dismiss());
  });
  const tasks = makePool(24, 2).map((t, i) =>
    i % 4 === 0 ? { ...t, instruction: `Parsing quoted CSV fields drops commas (case ${i}).` } : t,
  );
  const imp = await importPool(db, {
    name: "e2e-archive",
    lines: [new TextEncoder().encode(toJsonl([...tasks, makeTask(90, 0, { instruction: "Parse the CSV header." })]))],
  });
  if (!imp.ok) throw new Error("pool import failed");
  ids.pool = imp.poolId;
  const opts = { poolId: imp.poolId, devRatio: 0.25, testRatio: 0.25 };
  ids.used = (await createSplit(db, { ...opts, seed: 1, name: "used-split" })).split.id;
  ids.unused = (await createSplit(db, { ...opts, seed: 2, name: "spare-split" })).split.id;
  ids.experiment = await startExperiment(await makeServices(db), baseConfig(ids.used, { name: "shared run" }));
  await storeReport(db, ids.experiment, { base: [1, 0, 0, 1], sft: [1, 1, 0, 1] });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await app?.release();
});

const shot = async (name: string) => page.screenshot({ path: debugScreenshot(name), fullPage: true });
const lastDialog = () => dialogs.at(-1) ?? "";

describe("search, archive and confirmations", () => {
  it("searches instruction text on the pool page with the total and highlighted matches", async () => {
    await page.goto(`${app.url}/pools/${ids.pool}`);
    await page.getByLabel("Search instructions").fill("parsing");
    const total = page.getByTestId("search-total");
    // 6 "Parsing …" tasks plus the "Parse" one: stemming finds both.
    await total.filter({ hasText: "of 7 tasks" }).waitFor();
    expect(await total.textContent()).toBe('1–7 of 7 tasks matching "parsing"');
    expect(await page.locator("mark", { hasText: /^Pars/ }).count()).toBe(7);
    await page.getByLabel("Search instructions").fill('"csv header"');
    await total.filter({ hasText: "of 1 tasks" }).waitFor();
    await page.getByLabel("Search instructions").fill("nosuchword");
    await total.filter({ hasText: "No instruction matches" }).waitFor();
    await shot("instruction-search.png");
  });

  it("archives a split only after confirming, hides it from the list, restores and deletes it", async () => {
    await page.goto(`${app.url}/splits/${ids.unused}`);
    const archive = page.getByRole("button", { name: "Archive", exact: true });
    // Dismissed: nothing changes (the control for the accepted case below).
    answer = "dismiss";
    await archive.click();
    expect(lastDialog()).toMatch(/^Archive split "spare-split"\? It is hidden from lists and pickers/);
    await page.waitForTimeout(500);
    expect(await page.getByText("archived", { exact: true }).count()).toBe(0);
    answer = "accept";
    await archive.click();
    await page.getByText("archived", { exact: true }).waitFor();

    await page.goto(`${app.url}/splits`);
    await page.getByRole("row").filter({ hasText: "used-split" }).waitFor();
    expect(await page.getByRole("row").filter({ hasText: "spare-split" }).count()).toBe(0);
    await page.getByLabel("show archived").check();
    await page.getByRole("row").filter({ hasText: "spare-split" }).filter({ hasText: "archived" }).waitFor();

    await page.goto(`${app.url}/splits/${ids.unused}`);
    await page.getByRole("button", { name: "Restore" }).click();
    expect(lastDialog()).toMatch(/^Restore split "spare-split"\?/);
    await page.getByRole("button", { name: "Archive", exact: true }).waitFor();
    await page.getByRole("button", { name: "Delete" }).click();
    expect(lastDialog()).toMatch(/^Delete split "spare-split" for good\? This cannot be undone\./);
    await page.waitForURL(`${app.url}/splits`);
    await page.getByRole("row").filter({ hasText: "used-split" }).waitFor();
    expect(await page.getByRole("row").filter({ hasText: "spare-split" }).count()).toBe(0);
  });

  it("refuses to delete a split an experiment uses, and a pool a split pins, saying why", async () => {
    await page.goto(`${app.url}/splits/${ids.used}`);
    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("alert").filter({ hasText: "is used by 1 experiment" }).waitFor();
    expect(await page.getByRole("alert").first().textContent()).toContain("archive it to hide it instead");
    await page.goto(`${app.url}/pools/${ids.pool}`);
    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("alert").filter({ hasText: 'pool "e2e-archive" is used by 1 split' }).waitFor();
    await shot("pool-delete-refused.png");
  });

  it("asks before revoking a share link; dismissing keeps it active", async () => {
    const report = await reportByExperiment(app.db.db, ids.experiment);
    if (!report) throw new Error("no report");
    await page.goto(`${app.url}/reports/${report.id}`);
    const links = page.getByLabel("share links");
    await links.getByRole("button", { name: "Create share link" }).click();
    const revoke = links.getByRole("button", { name: "Revoke" });
    await revoke.waitFor();
    answer = "dismiss";
    await revoke.click();
    expect(lastDialog()).toMatch(
      /^Revoke share link [0-9a-f]{8}\? Whoever has it loses access; this cannot be undone\./,
    );
    await page.waitForTimeout(500);
    expect(await links.getByText("revoked").count()).toBe(0);
    answer = "accept";
    await revoke.click();
    await links.getByText("revoked").waitFor();
    expect(await links.getByRole("button", { name: "Revoke" }).count()).toBe(0);
  });
});
