import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { and, eq } from "drizzle-orm";
import type { Browser } from "playwright-core";
import { SELECTION_RULE, modelLabel, type ModelRef, type SelectionDecision } from "@agentlab/core";
import { createSplit, importPool, insertProvider, saveSelection, schema } from "@agentlab/db";
import { makePool, toJsonl } from "../fixtures/tasks/generate";
import { launchBrowser, signedInAdmin, useProduct, type RunningApp } from "./helpers/app";
import { debugScreenshot, docScreenshot } from "./helpers/screenshots";

// A study from the browser on the real product (no local agent: nothing needs to run): the
// creation form refuses a bad arm by its field label before any request, plans power and cost,
// creates the study; the study page shares it, the share page shows it without the workspace's
// navigation, and the revoked link says so. The product is shared, so every assertion is scoped
// to this file's own split, provider and study names.

let app: RunningApp;
let browser: Browser;
let splitId = "";
let providerId = "";
const STUDY = `e2e study form ${Date.now()}`;
const row = (ref: ModelRef, passed: number, selected = false) => ({
  ref,
  label: modelLabel(ref),
  n: 4,
  passed,
  pass1: passed / 4,
  selected,
});
const devSelection: SelectionDecision = {
  selected: { model: "adapter", seed: 1, seedIndex: 0, epoch: 2 },
  outcome: "adapter_selected",
  reason: "epoch 2 passes more dev tasks",
  rule: SELECTION_RULE,
  table: [
    row({ model: "base" }, 1),
    row({ model: "adapter", seed: 1, seedIndex: 0, epoch: 1 }, 2),
    row({ model: "adapter", seed: 1, seedIndex: 0, epoch: 2 }, 3, true),
  ],
};

beforeAll(async () => {
  app = await useProduct("api");
  browser = await launchBrowser();
  const db = app.db.db;
  const imp = await importPool(db, {
    name: `e2e-studies-${Date.now()}`,
    lines: [new TextEncoder().encode(toJsonl(makePool(16, 1)))],
  });
  if (!imp.ok) throw new Error("pool import failed");
  splitId = (await createSplit(db, { poolId: imp.poolId, seed: 3, devRatio: 0.25, testRatio: 0.25 })).split.id;
  providerId = (
    await insertProvider(db, {
      name: `studies oracle ${Date.now()}`,
      kind: "reference",
      baseUrl: null,
      model: "reference",
      apiKeySealed: null,
      extraParams: {},
    })
  ).id;
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await app?.release();
});

describe("a study in the browser", () => {
  it("refuses a bad arm by its label, plans, creates, shares without the navigation, and the revoked link is dead", async () => {
    const ctx = await signedInAdmin(browser, app.db.db, app.url, {
      email: "studies-ui@example.com",
      name: "Stu Dies",
      viewport: { width: 1400, height: 1000 },
    });
    const page = await ctx.newPage();
    try {
      await page.goto(`${app.url}/studies/new`);
      const form = page.getByRole("form", { name: "new study" });
      await form.locator("input[name=name]").fill(STUDY);
      await form.locator("select[name=splitId]").selectOption(splitId);
      await form.locator("input[name=baseModel]").fill("/models/tiny");
      await form.locator("select[name=providerId]").selectOption(providerId);
      await form.locator("input[name=arm-0-name]").fill("high-lr");
      await form.locator("input[name=arm-0-factor]").fill("training.learningRate");
      // The bad input first: a learning rate that is not a number.
      await form.locator("input[name=arm-0-value]").fill("fast");
      await form.getByRole("button", { name: "Create and start" }).click();
      const summary = page.getByRole("alert").filter({ hasText: "Check the highlighted fields" });
      await expect
        .poll(() => summary.textContent(), { timeout: 60_000 })
        .toContain("Arm 1 value (training.learningRate)");
      expect(await summary.textContent()).not.toContain("arms.0.recipe");
      const under = form.locator('[data-field-error="arms.0.recipe"]');
      expect(await under.textContent()).toContain("training.learningRate");
      const named = await app.db.db.select().from(schema.studies).where(eq(schema.studies.name, STUDY));
      expect(named).toEqual([]);

      // Fixed: the plan shows each primary contrast's MDE before anything runs, then it is created.
      await form.locator("input[name=arm-0-value]").fill("1e-3");
      await form.getByRole("button", { name: "Plan power and cost" }).click();
      await expect
        .poll(() => page.getByTestId("study-plan-units").textContent(), { timeout: 60_000 })
        .toMatch(/\d+ test tasks in \d+/);
      expect(await page.getByRole("cell", { name: "high-lr vs reference" }).count()).toBe(1);
      await form.getByRole("button", { name: "Create and start" }).click();
      await page.waitForURL(/\/studies\/[0-9a-f-]{36}$/, { timeout: 60_000 });
      await expect.poll(() => page.getByRole("heading", { name: STUDY }).count(), { timeout: 60_000 }).toBe(1);
      const [study] = await app.db.db.select().from(schema.studies).where(eq(schema.studies.name, STUDY));
      expect(study?.splitId).toBe(splitId);
      expect(page.url()).toContain(`/studies/${study?.id}`);

      // Per-arm curves: none before a dev selection; the reference's once its selection is stored
      // (written here: no agent runs in this product), drawn from its selection table.
      await expect
        .poll(() => page.getByText("No arm has a dev curve yet", { exact: false }).count(), { timeout: 60_000 })
        .toBe(1);
      const [refArm] = await app.db.db
        .select()
        .from(schema.studyArms)
        .where(and(eq(schema.studyArms.studyId, study?.id ?? ""), eq(schema.studyArms.name, "reference")));
      if (!refArm) throw new Error("no reference arm");
      await saveSelection(app.db.db, refArm.experimentId, devSelection);
      const curves = page.getByTestId("study-arm-curves");
      await expect.poll(() => curves.count(), { timeout: 60_000 }).toBe(1);
      expect(await curves.locator("path").count()).toBe(2); // the seed's epochs and the dashed base
      expect(await curves.getByText("reference · base").count()).toBe(1);
      await page.screenshot({ path: docScreenshot("study.png"), fullPage: true });

      // Shared: the link opens the study outside the workspace, without its navigation.
      await page.getByRole("button", { name: "Create share link" }).click();
      const url = (await page.getByTestId("share-url").textContent()) ?? "";
      expect(url).toMatch(/\/share\/study\/als_/);
      const outside = await browser.newContext({ viewport: { width: 1200, height: 900 } });
      try {
        const reader = await outside.newPage();
        await reader.goto(url);
        await expect.poll(() => reader.getByRole("heading", { name: STUDY }).count(), { timeout: 60_000 }).toBe(1);
        expect(await reader.getByRole("cell", { name: "high-lr", exact: true }).count()).toBe(1);
        expect(await reader.locator("nav").count()).toBe(0);
        expect(await reader.getByText("/models/tiny").count()).toBe(0);
        expect(await reader.getByTestId("study-arm-curves").getByText("reference · base").count()).toBe(1);

        page.once("dialog", (d) => void d.accept());
        await page.getByRole("button", { name: "Revoke" }).click();
        await expect.poll(() => page.getByText("revoked", { exact: true }).count(), { timeout: 60_000 }).toBe(1);
        await reader.reload();
        const dead = reader.getByRole("alert", { name: "dead share link" });
        await expect.poll(() => dead.textContent(), { timeout: 60_000 }).toContain("This link was revoked");
      } finally {
        await outside.close();
      }
    } catch (err) {
      await page.screenshot({ path: debugScreenshot("studies-ui-failure.png"), fullPage: true });
      throw err;
    } finally {
      await ctx.close();
    }
  }, 600_000);
});
