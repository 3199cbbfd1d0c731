#!/usr/bin/env node
// `npm run test:py`: make sure the trainer's venv exists (scripts/setup-python.sh, a no-op when its
// stamp matches), then run pytest in apps/agent/python and the grader's unit tests in apps/agent/grader;
// exits non-zero when either fails.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureVenv, python, root, trainerDir } from "./python-venv.mjs";

ensureVenv("test:py");
// Per-test times for scripts/test-summary.mjs (junit, xunit1 names each test's file) and the
// slowest tests in pytest's own output; both outside the package folders.
const timings = process.env.AGENTLAB_TIMINGS_DIR || join(root, "test-results", "timings");
const junit = (name) => [`--junitxml=${join(timings, `pytest-${name}.xml`)}`, "-o", "junit_family=xunit1"];
const args = [
  "-m",
  "pytest",
  "-q",
  "-p",
  "no:warnings",
  "--durations=5",
  ...junit("trainer"),
  ...process.argv.slice(2),
];
const run = spawnSync(python, args, { cwd: trainerDir, stdio: "inherit" });
if (run.error) {
  console.error(`test:py: cannot run ${python}: ${run.error.message}`);
  process.exit(1);
}
// The grader's own unit tests, with the grader's interpreter; nothing is written into its folder
// (it is bound read-only into every sandbox): no cache, no bytecode.
const graderDir = join(dirname(fileURLToPath(import.meta.url)), "../apps/agent/grader");
const grader = spawnSync(
  join(graderDir, ".venv/bin/python"),
  ["-m", "pytest", "-q", "-p", "no:cacheprovider", ...junit("grader"), "tests"],
  {
    cwd: graderDir,
    stdio: "inherit",
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
  },
);
if (grader.error) {
  console.error(`test:py: cannot run the grader's python: ${grader.error.message} (run scripts/setup-grader.sh)`);
  process.exit(1);
}
process.exit(run.status || grader.status || 0);
