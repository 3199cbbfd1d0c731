#!/usr/bin/env node
// `npm run lint:py`: ruff (lint), ruff format --check and mypy for the trainer (apps/agent/python)
// the grader scripts (apps/agent/grader) and the schema validator both use (apps/agent/python-schema),
// each with the settings in its own pyproject.toml.
// Tools come from the trainer's venv (pinned by scripts/setup-python.sh). mypy resolves the
// grader's imports in the grader's own venv when scripts/setup-grader.sh has made it.
// Every check runs; the exit code is non-zero when any failed. `--fix` lets ruff fix what it can.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { ensureVenv, python, root, trainerDir } from "./python-venv.mjs";

ensureVenv("lint:py");
const fix = process.argv.includes("--fix");
const graderDir = join(root, "apps", "agent", "grader");
const graderPython = join(graderDir, ".venv", "bin", "python");
const packages = [
  { name: "trainer", dir: trainerDir, mypy: [] },
  { name: "grader", dir: graderDir, mypy: existsSync(graderPython) ? ["--python-executable", graderPython] : [] },
  { name: "schema", dir: join(root, "apps", "agent", "python-schema"), mypy: [] },
];

const failed = [];
for (const pkg of packages) {
  const checks = [
    ["ruff check", ["-m", "ruff", "check", ...(fix ? ["--fix"] : []), "."]],
    ["ruff format --check", ["-m", "ruff", "format", "--check", "."]],
    ["mypy", ["-m", "mypy", ...pkg.mypy]],
  ];
  for (const [label, args] of checks) {
    console.log(`lint:py: ${pkg.name}: ${label}`);
    // Caches outside the package folders (the grader folder is bound into every sandbox). mypy's
    // goes to the machine's cache (AGENTLAB_CACHE_DIR, default ~/.cache/agentlab), so a fresh clone
    // does not re-analyse torch and transformers (≈ 50 s cold, ≈ 16 s warm): mypy checks each
    // entry by its source's hash, so another clone's entries are reused only where they still hold.
    const cache = join(root, "node_modules", ".cache", "lint-py", pkg.name);
    const machineCache = process.env.AGENTLAB_CACHE_DIR || join(homedir(), ".cache", "agentlab");
    const env = {
      ...process.env,
      RUFF_CACHE_DIR: join(cache, "ruff"),
      MYPY_CACHE_DIR: join(machineCache, "mypy", pkg.name),
    };
    const run = spawnSync(python, args, { cwd: pkg.dir, stdio: "inherit", env });
    if (run.status !== 0) failed.push(`${pkg.name}: ${label}`);
  }
}
console.log(failed.length === 0 ? "lint:py: all checks passed" : `lint:py: failed: ${failed.join("; ")}`);
process.exit(failed.length === 0 ? 0 : 1);
