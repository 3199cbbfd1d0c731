#!/usr/bin/env node
// `npm test` and `npm run test:fast`: the checks one after the other (the first failure stops the
// chain, as `a && b` did), each step's seconds timed, then a short summary: per-step seconds and
// the slowest test files (from test-results/timings/, written by scripts/test-timing-reporter.mjs
// and pytest's junit files). The tools print their own summary lines as before.
//   node scripts/test-steps.mjs          the full suite (what .ci/run calls)
//   node scripts/test-steps.mjs --fast   the iteration subset (see FAST below)
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { root } from "./python-venv.mjs";
import { printSummary } from "./test-summary.mjs";

const FULL = [
  "format:check",
  "lint",
  "knip",
  "lint:py",
  "typecheck",
  "test:unit",
  "test:py",
  "test:integration",
  "test:e2e",
];
// For iteration (≤ 5 min on the 2-core box): formatting, ESLint with its cache, the incremental
// typecheck and the unit tests. Not a substitute
// for `npm test` before landing.
const FAST = ["format:check", "lint:eslint", "typecheck", "test:unit"];

const fast = process.argv.includes("--fast");
const steps = fast ? FAST : FULL;
const dir = join(root, "test-results", "timings");
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });

const results = [];
const started = Date.now();
let failed = null;
for (const step of steps) {
  const t0 = Date.now();
  console.log(`\n── ${step} ──`);
  const run = spawnSync("npm", ["run", step], { cwd: root, stdio: "inherit" });
  const seconds = Math.round((Date.now() - t0) / 100) / 10;
  const ok = run.status === 0;
  results.push({ step, seconds, ok });
  writeFileSync(join(dir, "steps.json"), JSON.stringify({ fast, steps: results }, null, 1) + "\n");
  if (!ok) {
    failed = step;
    break;
  }
}
printSummary(dir, { steps: results, totalSeconds: Math.round((Date.now() - started) / 1000) });
if (failed) {
  console.error(`${fast ? "test:fast" : "npm test"}: ${failed} failed`);
  process.exit(1);
}
