import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq, inArray } from "drizzle-orm";
import type { Browser, BrowserContext } from "playwright-core";
import { reportByExperiment, schema } from "@agentlab/db";
import { agenticSection, formatPct, type ExperimentReport, type TaskSpec } from "@agentlab/core";
import { createExperimentRunner } from "../../apps/web/server/experiments/runner";
import { splitTasks } from "../../apps/web/server/experiments/tasks";
import {
  baseConfig,
  drive,
  makeAgent,
  makeServices,
  makeSplit,
  startExperiment,
  type Behaviour,
} from "../integration/experiments-harness";
import { launchBrowser, signedInAdmin, useProduct, type RunningApp } from "./helpers/app";
import { debugScreenshot, docScreenshot } from "./helpers/screenshots";

// The report pages in the browser: the header, the per-task view with its filters,
// search and diffs, and the share page. The product runs for real (Next, tRPC, its experiment
// runner) without its local agent; the jobs are answered by the simulated agent of the integration
// harness (its "model" fixes a task by answering the reference, its grader compares with it), so
// the answers are known and the diffs can be checked line by line. experiment.test.ts covers the
// same pages after a real run of the tiny model.

let app: RunningApp;
let browser: Browser;
let signedIn: BrowserContext;
let splitId = "";
let tasks: Map<string, TaskSpec>;
let selected: { id: string; reportId: string; report: ExperimentReport };
let kept: { id: string; reportId: string; report: ExperimentReport };
let inProcessTask = "";

beforeAll(async () => {
  app = await useProduct("api");
  browser = await launchBrowser();
  const db = app.db.db;
  const s = await makeServices(db);
  ({ splitId, tasks } = await makeSplit(db));
  // One test task graded in-process (as its audit would have decided).
  inProcessTask = (await splitTasks(db, splitId, "test"))[0]?.id ?? "";
  const [split] = await db
    .select({ poolId: schema.splits.poolId })
    .from(schema.splits)
    .where(eq(schema.splits.id, splitId));
  await db
    .update(schema.tasks)
    .set({ gradingIsolation: "in_process" })
    .where(and(eq(schema.tasks.poolId, split?.poolId ?? ""), inArray(schema.tasks.taskId, [inProcessTask])));
  const fit = await makeAgent(db);
  const run = async (name: string, behaviour: Behaviour, seeds: number[]) => {
    const id = await startExperiment(s, baseConfig(splitId, { name, seeds }));
    const end = await drive(db, createExperimentRunner(s, { autoStart: false }), id, fit, tasks, behaviour);
    if (end.state !== "succeeded") throw new Error(`${name}: ${end.error}`);
    const row = await reportByExperiment(db, id);
    if (!row) throw new Error(`${name}: no report`);
    return { id, reportId: row.id, report: row.body };
  };
  // Seed 1 fixes the source groups not divisible by 3 from epoch 1 on; seed 2 fixes nothing.
  selected = await run(
    "e2e report: adapter",
    { fixes: (m, t) => m.startsWith("s1e") && Number(t.source_group.replace(/\D/g, "")) % 3 !== 0 },
    [1, 2],
  );
  kept = await run("e2e report: base kept", { fixes: () => false }, [7]);

  signedIn = await signedInAdmin(browser, db, app.url, {
    email: "report@example.com",
    name: "Rita Report",
    viewport: { width: 1400, height: 1000 },
  });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await app?.release();
});

describe("the report in the browser", () => {
  it("shows what was compared, with links, the selection table and the in-process count", async () => {
    const page = await signedIn.newPage();
    await page.goto(`${app.url}/reports/${selected.reportId}`);
    const header = page.getByTestId("report-header");
    await header.waitFor();
    await expect(header.getByRole("link", { name: "e2e report: adapter" }).getAttribute("href")).resolves.toBe(
      `/experiments/${selected.id}`,
    );
    await expect(header.locator(`a[href="/splits/${splitId}"]`).count()).resolves.toBe(1);
    const adapters = page.getByTestId("header-adapters").locator("tbody tr");
    expect(await adapters.count()).toBe(4);
    await expect(adapters.filter({ hasText: "seed 1 · epoch 1" }).getByText("selected").count()).resolves.toBe(1);
    const trainJob = selected.report.header?.trainJobs[0]?.jobId ?? "none";
    await expect(header.locator(`a[href="/jobs/${trainJob}"]`).count()).resolves.toBeGreaterThan(0);
    await expect(header.textContent()).resolves.toContain("/models/tiny");
    await expect(header.textContent()).resolves.toMatch(/ran generate, grade-batch, train/);
    expect(await page.getByTestId("selection-table").locator("tbody tr").count()).toBe(5);
    await expect(page.getByTestId("isolation").textContent()).resolves.toMatch(/verdicts from in-process grading/);
    // The format check: each split and model says how many of its answers parsed.
    await expect(page.getByTestId("answer-parsing").textContent()).resolves.toMatch(
      /test · base: all \d+ answers parsed/,
    );
    await page.screenshot({ path: docScreenshot("report.png"), fullPage: true });
    await page.close();
  });

  it("filters, searches and opens a task with its answers, diffs and failing tests", async () => {
    const page = await signedIn.newPage();
    await page.goto(`${app.url}/reports/${selected.reportId}`);
    const table = page.getByTestId("task-table");
    await table.waitFor();
    const view = selected.report.taskViews?.find((v) => v.split === "test");
    const rows = table.locator("tbody tr");
    expect(await rows.count()).toBe(view?.rows.length);
    const improved = view?.rows.filter((r) => r.category === "improved") ?? [];
    expect(improved.length).toBeGreaterThan(0);
    await page.getByRole("button", { name: /^improved \d+$/ }).click();
    expect(await rows.count()).toBe(improved.length);
    expect(await rows.filter({ hasText: "both pass" }).count()).toBe(0);
    await page.getByRole("button", { name: /^excluded \d+$/ }).click();
    await table.getByText("No task matches this filter").waitFor();
    await page.getByRole("button", { name: /^all \d+$/ }).click();
    const target = improved[0]?.taskId ?? "";
    await page.getByLabel("search tasks").fill(target);
    expect(await rows.count()).toBe(1);
    await expect(rows.first().locator("td").first().textContent()).resolves.toBe(target);
    await page.getByLabel("search tasks").fill(inProcessTask);
    await expect(rows.first().textContent()).resolves.toContain("in-process"); // the task graded in-process carries its badge
    await page.getByLabel("search tasks").fill(target);

    await rows.first().click();
    const detail = page.getByTestId("task-detail");
    await detail.waitFor();
    // The base answered the buggy file and failed the hidden test; the adapter answered the reference.
    await expect(detail.getByTestId("grade-base").getByTestId("failing-tests").textContent()).resolves.toContain(
      "tests/test_hidden.py::test_fixed",
    );
    await expect(detail.getByTestId("grade-s1e1").getByTestId("failing-tests").count()).resolves.toBe(0);
    const diff = detail.getByTestId("diff").first();
    const task = tasks.get(target);
    const buggy = (task?.files.find((f) => f.role === "main")?.content ?? "").split("\n");
    const fixedLine =
      (task?.reference[0]?.content ?? "").split("\n").find((l) => l.trim() && !buggy.includes(l)) ?? "none";
    await expect(
      diff.locator('[data-kind="add"]').filter({ hasText: fixedLine.trim() }).count(),
    ).resolves.toBeGreaterThan(0);
    await page.getByTestId("task-view").screenshot({ path: docScreenshot("report-task-diff.png") });
    await detail.getByRole("tab", { name: "base vs buggy", exact: true }).click();
    await expect(detail.getByTestId("diff").first().textContent()).resolves.toContain("identical");
    await detail.getByRole("tab", { name: "base vs seed 1 · epoch 1", exact: true }).click();
    await expect(detail.getByTestId("diff").first().locator('[data-kind="del"]').count()).resolves.toBeGreaterThan(0);
    await page.close();
  });

  it("base kept: the per-task view is not empty and says what it shows", async () => {
    const page = await signedIn.newPage();
    await page.goto(`${app.url}/reports/${kept.reportId}`);
    await page.getByTestId("task-table").waitFor();
    await expect(page.getByTestId("task-view-shown").textContent()).resolves.toMatch(/no gain is claimed/);
    expect(await page.getByTestId("task-table").locator("tbody tr").count()).toBe(
      (await splitTasks(app.db.db, splitId, "test")).length,
    );
    await page.getByRole("tab", { name: "dev", exact: true }).click();
    await expect(page.getByTestId("task-view-shown").textContent()).resolves.toMatch(/did not beat the base/);
    await page.close();
  });

  it("the share page shows the same facts without internal links or task answers", async () => {
    const page = await signedIn.newPage();
    await page.goto(`${app.url}/reports/${selected.reportId}`);
    await page.getByRole("button", { name: "Create share link" }).click();
    const shareUrl = (await page.getByTestId("share-url").textContent()) ?? "";
    const stranger = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const shared = await stranger.newPage();
    await shared.goto(shareUrl);
    const header = shared.getByTestId("report-header");
    await header.waitFor().catch(async (err: unknown) => {
      await shared.screenshot({ path: debugScreenshot("share-report.png"), fullPage: true });
      throw err;
    });
    await expect(header.textContent()).resolves.toContain("e2e report: adapter");
    await expect(header.textContent()).resolves.toContain(
      selected.report.header?.split?.manifestHash.slice(0, 12) ?? "none",
    );
    expect(await header.locator("a").count()).toBe(0);
    // Minimal chrome: no workspace navigation; the link's expiry (a week by default) is stated.
    expect(await shared.getByRole("navigation", { name: "Main" }).count()).toBe(0);
    await expect(shared.getByTestId("share-expiry").textContent()).resolves.toMatch(/^link expires /);
    expect(await shared.getByTestId("selection-table").locator("tbody tr").count()).toBe(5);
    const rows = shared.getByTestId("task-table").locator("tbody tr");
    await shared.getByRole("button", { name: /^improved \d+$/ }).click();
    await rows.first().click();
    expect(await shared.getByTestId("task-detail").count()).toBe(0);
    // The test-read ledger is on the share page too, without links into the workspace.
    const reads = shared.getByTestId("test-reads");
    await expect(reads.textContent()).resolves.toContain("This test set has been read 2 times (1 after this report");
    expect(await reads.locator("a").count()).toBe(0);
    await stranger.close();
    await page.close();
  });

  it("shows a report's agentic rows (dev, per policy) on the report and its share page", async () => {
    // A stored report with its agentic section, as the report stage writes it from the dev tasks'
    // episodes (computed and tested on real episodes in tests/integration/episodes-report).
    const dev = await splitTasks(app.db.db, splitId, "dev");
    const episodes = dev.flatMap((t, i) =>
      [1, 2].map((seed) => ({
        taskId: t.id,
        group: t.source_group,
        policy: "scripted:solver",
        pass: i % 4 !== 0 || seed === 1,
        turns: 6,
        testRuns: 1,
        byBudget: false,
      })),
    );
    const agentic = agenticSection(episodes, { iterations: 500, seed: 0 });
    if (!agentic) throw new Error("no agentic section");
    await app.db.db
      .update(schema.reports)
      .set({ body: { ...kept.report, agentic } })
      .where(eq(schema.reports.id, kept.reportId));
    const row = agentic.rows[0];
    const expected = [
      "scripted:solver",
      String(dev.length),
      String(2 * dev.length),
      formatPct(row?.passAt1.value ?? -1),
    ];
    const page = await signedIn.newPage();
    await page.goto(`${app.url}/reports/${kept.reportId}`);
    const table = page.getByTestId("agentic");
    await table.waitFor();
    for (const text of expected) await expect(table.textContent()).resolves.toContain(text);
    await page.getByRole("button", { name: "Create share link" }).click();
    const shareUrl = (await page.getByTestId("share-url").textContent()) ?? "";
    const stranger = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const shared = await stranger.newPage();
    await shared.goto(shareUrl);
    await shared.getByTestId("agentic").waitFor();
    await expect(shared.getByTestId("agentic").textContent()).resolves.toContain(expected[3] ?? "none");
    await stranger.close();
    // control: a report without the section shows no such table
    await page.goto(`${app.url}/reports/${selected.reportId}`);
    await page.getByTestId("report-header").waitFor();
    expect(await page.getByTestId("agentic").count()).toBe(0);
    await page.close();
  });

  it("the split page lists every test read; an admin marks the split final", async () => {
    const page = await signedIn.newPage();
    await page.goto(`${app.url}/reports/${selected.reportId}`);
    await expect(page.getByTestId("unit-note").first().textContent()).resolves.toMatch(/^unit: \d+ source groups/);
    await page.goto(`${app.url}/splits/${splitId}`);
    const reads = page.getByTestId("test-reads");
    await reads.waitFor();
    await expect(reads.getByRole("link", { name: "e2e report: adapter" }).getAttribute("href")).resolves.toBe(
      `/experiments/${selected.id}`,
    );
    expect(await reads.locator("li").count()).toBe(2);
    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "Mark final" }).click();
    await reads.getByText("the split is marked final", { exact: false }).waitFor();
    await page.getByRole("button", { name: "Allow this test read" }).waitFor();
    // The primary action at the top: a new experiment with this split already chosen.
    await page.getByRole("link", { name: "Start an experiment on this split" }).click();
    await page.waitForURL(`**/experiments/new?split=${splitId}`);
    // The splits load after the form: the choice shows once its option exists.
    await page.locator(`select[name="splitId"] option[value="${splitId}"]`).waitFor({ state: "attached" });
    await expect(page.locator('select[name="splitId"]').inputValue()).resolves.toBe(splitId);
    await page.close();
  });
});
