#!/usr/bin/env node
// `npm run test:py`: make sure the trainer's venv exists (scripts/setup-python.sh, a no-op when its
// stamp matches), then run pytest in apps/agent/python and exit with pytest's code.
import { spawnSync } from "node:child_process";
import { ensureVenv, python, trainerDir } from "./python-venv.mjs";

ensureVenv("test:py");
const args = ["-m", "pytest", "-q", "-p", "no:warnings", ...process.argv.slice(2)];
const run = spawnSync(python, args, { cwd: trainerDir, stdio: "inherit" });
if (run.error) {
  console.error(`test:py: cannot run ${python}: ${run.error.message}`);
  process.exit(1);
}
process.exit(run.status ?? 1);
