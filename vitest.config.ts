import { homedir } from "node:os";
import { join } from "node:path";
import { defineConfig } from "vitest/config";

// Three projects: fast unit tests beside the code, integration tests against the real Postgres,
// and browser e2e tests. Each prints vitest's own summary line.

// The trainer processes that integration and e2e tests start (learning proof warm-up, agents'
// train/generate jobs) inherit this: one torch thread each. Several of them run beside the
// grader's sandboxes on a 2-core box, where torch's default of one thread per core makes OpenMP
// spin-waits collapse (the learning proof's warm-up shape: 4.2–4.9 s a step with 1 thread, 13.6–14.8 s
// with 2, at load 11–12). An explicit OMP_NUM_THREADS is kept.
const trainerThreads = { OMP_NUM_THREADS: process.env.OMP_NUM_THREADS ?? "1" };

// Vitest keeps each file's last duration (results.json, keyed by project and relative path) in
// Vite's cache dir and starts the longest files first; in the machine's cache outside the clone
// (AGENTLAB_CACHE_DIR) a fresh clone (CI) gets that order too, so the learning proof does not start
// last on one of the two workers. Without an entry vitest orders by file size.
const cacheDir = join(process.env.AGENTLAB_CACHE_DIR || join(homedir(), ".cache", "agentlab"), "vite");

export default defineConfig({
  cacheDir,
  test: {
    // The default reporter (its summary lines are what CI reads) and per-file wall times for
    // scripts/test-summary.mjs, written to the ignored test-results/timings/.
    reporters: ["default", "./scripts/test-timing-reporter.mjs"],
    projects: [
      {
        test: {
          name: "unit",
          include: [
            "packages/**/*.test.ts",
            "apps/**/src/**/*.test.ts",
            "apps/web/server/**/*.test.ts",
            "apps/web/cli/**/*.test.ts",
            "apps/web/client/**/*.test.ts",
            "apps/web/app/**/*.test.ts",
            "tests/tooling/**/*.test.ts",
          ],
          exclude: ["**/node_modules/**"],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "integration",
          include: ["tests/integration/**/*.test.ts"],
          env: trainerThreads,
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: true,
          // Two: a third was tried on the 2-core box (2026-12-07) and gained little (integration
          // 743 s vs 773 s) while every file slowed (the learning proof 502 s vs 386 s, the browser
          // tests beside them 626 s vs 377 s), load 7–10. AGENTLAB_INTEGRATION_WORKERS overrides.
          maxWorkers: Number(process.env.AGENTLAB_INTEGRATION_WORKERS) || 2,
        },
      },
      {
        test: {
          name: "e2e",
          include: ["tests/e2e/**/*.test.ts"],
          // The dashboard build and the run's database template (built-in pools loaded), once.
          globalSetup: ["tests/e2e/helpers/global-setup.ts"],
          env: trainerThreads,
          testTimeout: 600_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
