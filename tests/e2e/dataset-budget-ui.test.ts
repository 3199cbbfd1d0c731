import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { and, eq } from "drizzle-orm";
import type { Browser } from "playwright-core";
import { schema } from "@agentlab/db";
import { createArtifactStore } from "../../apps/web/server/artifacts/store";
import { createDataset } from "../../apps/web/server/teacher/datasets";
import { recordTokenCounts } from "../../apps/web/server/teacher/token-counts";
import { makeServices, makeSplit } from "../integration/experiments-harness";
import { referenceCollection } from "../integration/helpers/reference-collection";
import { simTokenize } from "../integration/helpers/sim-tokenize";
import { launchBrowser, signedInAdmin, useProduct, type RunningApp } from "./helpers/app";
import { debugScreenshot } from "./helpers/screenshots";

// Token matching from the dataset page (no agent runs here: the snapshot's per-sample counts are
// recorded as a tokenize job's result would be): the budget form appears once the counts exist,
// an unreachable B is refused on the page, and a reachable one opens the child snapshot, which
// names its parent; the shuffled-answers control opens its child, marked as the control. Scoped to
// this file's own split and snapshot.

let app: RunningApp;
let browser: Browser;
let datasetId = "";
let supervised = 0;

beforeAll(async () => {
  app = await useProduct("api");
  browser = await launchBrowser();
  const db = app.db.db;
  const s = { ...(await makeServices(db)), artifacts: createArtifactStore(join(app.dataDir, "artifacts")) };
  const { splitId, tasks } = await makeSplit(db);
  const train = (
    await db
      .select({ taskId: schema.splitAssignments.taskId })
      .from(schema.splitAssignments)
      .where(and(eq(schema.splitAssignments.splitId, splitId), eq(schema.splitAssignments.part, "train")))
  ).map((r) => r.taskId);
  const col = await referenceCollection(db, { splitId, tasks, taskIds: train });
  datasetId = (await createDataset(s, { name: `budget-ui ${Date.now()}`, splitId, collectionIds: [col] })).id;
  const measured = await simTokenize(db, { datasetId });
  await recordTokenCounts(s, datasetId, "/models/tiny", measured.tokenize);
  supervised = measured.tokenize.supervised_tokens;
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await app?.release();
});

describe("a budget snapshot from the dataset page", () => {
  it("refuses an unreachable B on the page, then opens the child snapshot of a reachable one", async () => {
    const ctx = await signedInAdmin(browser, app.db.db, app.url, {
      email: "budget-ui@example.com",
      name: "Bud Get",
      viewport: { width: 1300, height: 900 },
    });
    const page = await ctx.newPage();
    try {
      await page.goto(`${app.url}/datasets/${datasetId}`);
      const form = page.getByRole("form", { name: "token budget" });
      await form.waitFor({ timeout: 60_000 });
      await form.locator("input[name=tokens]").fill(String(supervised * 2));
      await form.getByRole("button", { name: "Make a budget snapshot" }).click();
      await expect.poll(() => form.textContent(), { timeout: 60_000 }).toContain("unreachable");
      expect(page.url()).toBe(`${app.url}/datasets/${datasetId}`);

      // Every measured token: always reachable with whole tasks.
      await form.locator("input[name=tokens]").fill(String(supervised));
      await form.getByRole("button", { name: "Make a budget snapshot" }).click();
      await page.waitForURL((u) => !u.pathname.endsWith(datasetId), { timeout: 60_000 });
      const child = page.url().split("/").at(-1) ?? "";
      const [row] = await app.db.db.select().from(schema.sftDatasets).where(eq(schema.sftDatasets.id, child));
      expect(row?.parentId).toBe(datasetId);
      await expect
        .poll(() => page.getByRole("link", { name: datasetId.slice(0, 8) }).count(), { timeout: 60_000 })
        .toBe(1);

      // The negative control of a data study: the parent's answers rotated across its prompts.
      await page.goto(`${app.url}/datasets/${datasetId}`);
      await page.getByRole("button", { name: "Make a shuffled control" }).click();
      await page.waitForURL((u) => !u.pathname.endsWith(datasetId), { timeout: 60_000 });
      const control = page.url().split("/").at(-1) ?? "";
      const [shuffled] = await app.db.db.select().from(schema.sftDatasets).where(eq(schema.sftDatasets.id, control));
      expect(shuffled).toMatchObject({ parentId: datasetId, quality: "shuffled_control" });
      await page.getByText("answers shuffled across tasks (control)").first().waitFor({ timeout: 60_000 });
    } catch (err) {
      await page.screenshot({ path: debugScreenshot("dataset-budget-failure.png"), fullPage: true });
      throw err;
    } finally {
      await ctx.close();
    }
  }, 300_000);
});
