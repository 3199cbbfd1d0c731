#!/usr/bin/env node
// `npm run test:py`: make sure the trainer's venv exists (scripts/setup-python.sh, a no-op when its
// stamp matches), then run pytest in apps/agent/python and exit with pytest's code.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = join(root, "apps", "agent", "python");

const setup = spawnSync("bash", [join(root, "scripts", "setup-python.sh")], { stdio: "inherit" });
if (setup.status !== 0) {
  console.error(`test:py: setup-python.sh failed (exit ${setup.status ?? setup.signal})`);
  process.exit(setup.status ?? 1);
}
const python = join(pkg, ".venv", "bin", "python");
const args = ["-m", "pytest", "-q", "-p", "no:warnings", ...process.argv.slice(2)];
const run = spawnSync(python, args, { cwd: pkg, stdio: "inherit" });
if (run.error) {
  console.error(`test:py: cannot run ${python}: ${run.error.message}`);
  process.exit(1);
}
process.exit(run.status ?? 1);
