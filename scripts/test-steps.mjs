#!/usr/bin/env node
// `npm test` and `npm run test:fast`: the checks in order, the first failing stage stopping the
// chain (as `a && b` did), each step's seconds (and its process tree's CPU seconds) timed, then a
// short summary: per-step seconds and the slowest test files (from test-results/timings/, written
// by scripts/test-timing-reporter.mjs and pytest's junit files). The tools print their own summary
// lines as before.
//   node scripts/test-steps.mjs          the full suite (what .ci/run calls)
//   node scripts/test-steps.mjs --fast   the iteration subset (see FAST below)
//
// A stage is one step, or several that run side by side:
// - `lanes`: the one-core steps (static checks, pytest: each one process on one core) run as many
//   at once as the machine has cores (AGENTLAB_TEST_JOBS overrides), longest first, so on 2 cores
//   the stage takes about its longest step or half the summed time, whichever is more.
// - `together`: the integration tests and the browser tests start at once. Both spend most of
//   their time waiting (on Postgres, agents, leases, the browser, jobs): the browser files ran 27
//   tests in 640 s of wall time on 161 s of CPU (load ≈ 20), so beside the integration workers they
//   use the cores the integration tests leave idle instead of running after them.
// A step alone, and the integration tests beside the browser tests, stream to the terminal; the
// others' output is held and printed whole when each finishes (after the streaming step, when
// there is one), so the lines of two tools never interleave.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { root } from "./python-venv.mjs";
import { printSummary } from "./test-summary.mjs";

const jobs = Number(process.env.AGENTLAB_TEST_JOBS) || availableParallelism();
// `stream`: the step whose output goes straight to the terminal (the others' is held).
const lanes = (...steps) => ({ steps, at: jobs, stream: null });
const alone = (step) => ({ steps: [step], at: 1, stream: step });
const together = (...steps) => ({ steps, at: steps.length, stream: steps[0] });

const FULL = [
  alone("format:check"),
  // Longest first (pytest ≈ 150 s; the typecheck ≈ 120 CPU-s cold, a few warm; ESLint, mypy and
  // knip ≈ 15–60 s each; the unit tests ≈ 50 s on one core). One typecheck step: `tsc -b` builds
  // each referenced project once, and two builds at once would race on their outputs. The unit
  // tests share the lanes: on 2 cores they end beside pytest instead of 50 s after it.
  lanes("test:py", "typecheck", "lint", "lint:py", "knip", "test:unit"),
  together("test:integration", "test:e2e"),
];
// For iteration (≤ 5 min on the 2-core box): formatting, ESLint with its cache, the incremental
// typecheck, the unit tests and a quick integration subset. Not a substitute for `npm test`
// before landing.
const FAST = [
  alone("format:check"),
  lanes("typecheck", "lint:eslint"),
  alone("test:unit"),
  alone("test:integration:fast"),
];

const fast = process.argv.includes("--fast");
const stages = fast ? FAST : FULL;
const dir = join(root, "test-results", "timings");
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
// Where the vitest reporter and pytest write each file's time (for the summary below).
process.env.AGENTLAB_TIMINGS_DIR = dir;

const load = () => Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);

/**
 * Runs `npm run <step>`, streaming its output or holding it (returned as `held`). Besides its
 * seconds it records the CPU seconds of its whole process tree (bash's `times` after npm exits:
 * every descendant that was waited for) and the 1-minute load at its start and end, so a step
 * that leaves a core idle shows as cpu/wall < the cores it was given.
 */
function runStep(step, stream) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const loadStart = load();
    console.log(stream ? `\n── ${step} ──` : `── ${step}: started`);
    const cpuFile = join(dir, `cpu-${step.replace(/[^\w.-]/g, "_")}.txt`);
    const child = spawn("bash", ["-c", 'npm run "$1"; rc=$?; times >"$2"; exit $rc', "_", step, cpuFile], {
      cwd: root,
      stdio: stream ? "inherit" : ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout?.on("data", (b) => (out += b));
    child.stderr?.on("data", (b) => (out += b));
    child.on("close", (code) => {
      const seconds = Math.round((Date.now() - t0) / 100) / 10;
      const held = stream ? null : `\n── ${step} (${seconds} s) ──\n${out}`;
      resolve({ step, seconds, cpuSeconds: childCpuSeconds(cpuFile), load: [loadStart, load()], ok: code === 0, held });
    });
  });
}

/** The children's user + system seconds from bash's `times` (its second line: "0m12.5s 0m1.2s"). */
function childCpuSeconds(file) {
  try {
    const line = readFileSync(file, "utf8").split("\n")[1] ?? "";
    const secs = [...line.matchAll(/(\d+)m([\d.]+)s/g)].reduce((n, m) => n + Number(m[1]) * 60 + Number(m[2]), 0);
    return Math.round(secs * 10) / 10;
  } catch {
    return null;
  }
}

async function runStage({ steps, at, stream }) {
  const queue = [...steps];
  const done = [];
  const streaming = stream ? runStep(stream, true) : null;
  if (stream) queue.splice(queue.indexOf(stream), 1);
  const print = async (r) => {
    await streaming;
    if (r.held) process.stdout.write(r.held);
  };
  const lane = async () => {
    for (let step = queue.shift(); step; step = queue.shift()) {
      const r = await runStep(step, false);
      done.push(r);
      await print(r);
    }
  };
  const lanesLeft = Math.min(at, steps.length) - (stream ? 1 : 0);
  await Promise.all([streaming?.then((r) => done.push(r)), ...Array.from({ length: Math.max(lanesLeft, 0) }, lane)]);
  // In the stage's order, whatever order they finished in.
  return steps.map((s) => done.find((d) => d.step === s)).map(({ held: _, ...r }) => r);
}

// test:py and lint:py each make sure the trainer's venv is there; made once here, first, so two
// steps side by side never install into it at once.
if (stages.some((stage) => stage.steps.some((s) => s.endsWith(":py")))) {
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
