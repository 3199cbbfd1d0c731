// `npm run bench -- first-experiment`: a new user's first experiment, clicked through in Chromium
// and timed: a fresh product (its own database, its local agent, as `npm start` runs it), the first
// admin from the one-time link, the checklist's "Start the CPU demo", the preset's warmed base built
// and checked, "Create and start", then the report. Prints one JSON line: seconds from the first
// click to each milestone, the report's outcome, Δ, p and significance, and the load.
import { loadavg } from "node:os";
import { reportByExperiment, openDatabase } from "@agentlab/db";
import { createFirstAdmin, launchBrowser } from "../tests/e2e/helpers/app";
import { ensureNextBuild, startProductProcess } from "../tests/e2e/helpers/product-process";

const REPORT_TIMEOUT_MS = 45 * 60_000;

ensureNextBuild();
const started = Date.now();
const product = await startProductProcess("bench-first-experiment", {}, undefined);
const productS = (Date.now() - started) / 1000;
const db = await openDatabase({ url: product.info.databaseUrl, maxConnections: 2 });
const browser = await launchBrowser();
const loads: number[] = [];
const sampler = setInterval(() => loads.push(loadavg()[0] ?? 0), 10_000);
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await createFirstAdmin(page, product.info.setupUrl ?? "");
  await page.waitForURL(`${product.info.url}/`);
  const link = page.getByRole("link", { name: "Start the CPU demo" });
  await link.waitFor({ timeout: 180_000 }); // the local agent online with its sandbox checked
  const t0 = Date.now();
  const at = () => Math.round((Date.now() - t0) / 100) / 10;
  await link.click();
  await page.getByRole("region", { name: "CPU demo preset" }).getByRole("status").waitFor({ timeout: 1_800_000 });
  const presetReady = at();
  await page.getByRole("form", { name: "new experiment" }).getByRole("button", { name: "Create and start" }).click();
  await page.waitForURL(/\/experiments\/[0-9a-f-]{36}$/, { timeout: 120_000 });
  const experimentId = page.url().split("/").at(-1) ?? "";
  const created = at();
  let report = await reportByExperiment(db.db, experimentId);
  while (!report) {
    if (Date.now() - t0 > REPORT_TIMEOUT_MS) throw new Error("no report within 45 minutes");
    await new Promise((r) => setTimeout(r, 2000));
    report = await reportByExperiment(db.db, experimentId);
  }
  const reportAt = at();
  const o = report.body.outcome;
  const test = report.body.summary[1];
  console.log(`first experiment: ${o.headline}`);
  console.log(
    JSON.stringify({
      bench: "first-experiment",
      productStartS: productS,
      secondsFromFirstClick: { presetReady, created, report: reportAt },
      outcome: o.kind,
      headline: o.headline,
      significant: test.significant,
      delta: test.stats?.delta ?? null,
      p: test.stats?.p ?? null,
      load: { max: Math.max(...loads, 0), mean: loads.reduce((a, b) => a + b, 0) / Math.max(1, loads.length) },
    }),
  );
} finally {
  clearInterval(sampler);
  await browser.close();
  await db.close();
  await product.stop();
}
