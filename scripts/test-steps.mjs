#!/usr/bin/env node
// `npm test` and `npm run test:fast`: the checks in order, the first failing stage stopping the
// chain (as `a && b` did), each step's seconds timed, then a short summary: per-step seconds and
// the slowest test files (from test-results/timings/, written by scripts/test-timing-reporter.mjs
// and pytest's junit files). The tools print their own summary lines as before.
//   node scripts/test-steps.mjs          the full suite (what .ci/run calls)
//   node scripts/test-steps.mjs --fast   the iteration subset (see FAST below)
//
// A stage is one step, or several that run side by side, as many at once as the machine has cores
// (AGENTLAB_TEST_JOBS overrides): the static checks and pytest are each one process on one core,
// so on 2 cores they take about half their summed time. Their output is held and printed whole
// when each finishes, so the lines of two tools never interleave. The suites that use every core
// themselves (vitest's workers, the browser) run alone.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { root } from "./python-venv.mjs";
import { printSummary } from "./test-summary.mjs";

const FULL = [
  ["format:check"],
  ["lint", "typecheck:root", "typecheck:web", "knip", "lint:py", "test:py"],
  ["test:unit"],
  ["test:integration"],
  ["test:e2e"],
];
// For iteration (≤ 5 min on the 2-core box): formatting, ESLint with its cache, the incremental
// typecheck, the unit tests and a quick integration subset. Not a substitute for `npm test`
// before landing.
const FAST = [
  ["format:check"],
  ["lint:eslint", "typecheck:root", "typecheck:web"],
  ["test:unit"],
  ["test:integration:fast"],
];

const fast = process.argv.includes("--fast");
const stages = fast ? FAST : FULL;
const jobs = Number(process.env.AGENTLAB_TEST_JOBS) || availableParallelism();
const dir = join(root, "test-results", "timings");
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
// Where the vitest reporter and pytest write each file's time (for the summary below).
process.env.AGENTLAB_TIMINGS_DIR = dir;

/** Runs `npm run <step>`; alone it inherits the terminal, beside others its output is held. */
function runStep(step, alone) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    if (alone) console.log(`\n── ${step} ──`);
    else console.log(`── ${step}: started`);
    const child = spawn("npm", ["run", step], { cwd: root, stdio: alone ? "inherit" : ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout?.on("data", (b) => (out += b));
    child.stderr?.on("data", (b) => (out += b));
    child.on("close", (code) => {
      const seconds = Math.round((Date.now() - t0) / 100) / 10;
      if (!alone) process.stdout.write(`\n── ${step} (${seconds} s) ──\n${out}`);
      resolve({ step, seconds, ok: code === 0 });
    });
  });
}

async function runStage(steps) {
  const queue = [...steps];
  const done = [];
  const lane = async () => {
    for (let step = queue.shift(); step; step = queue.shift()) done.push(await runStep(step, steps.length === 1));
  };
  await Promise.all(Array.from({ length: Math.min(jobs, steps.length) }, lane));
  // In the stage's order, whatever order they finished in.
  return steps.map((s) => done.find((d) => d.step === s));
}

// test:py and lint:py each make sure the trainer's venv is there; made once here, first, so two
// steps side by side never install into it at once.
if (stages.flat().some((s) => s.endsWith(":py"))) {
  const setup = spawnSync("bash", [join(root, "scripts", "setup-python.sh")], { stdio: "inherit" });
  if (setup.status !== 0) process.exit(setup.status ?? 1);
}

const results = [];
const started = Date.now();
let failed = [];
for (const stage of stages) {
  results.push(...(await runStage(stage)));
  writeFileSync(join(dir, "steps.json"), JSON.stringify({ fast, jobs, steps: results }, null, 1) + "\n");
  failed = results.filter((r) => !r.ok).map((r) => r.step);
  if (failed.length) break;
}
printSummary(dir, { steps: results, totalSeconds: Math.round((Date.now() - started) / 1000) });
if (failed.length) {
  console.error(`${fast ? "test:fast" : "npm test"}: failed: ${failed.join(", ")}`);
  process.exit(1);
}
