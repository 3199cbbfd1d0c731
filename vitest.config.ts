import { defineConfig } from "vitest/config";

// Three projects: fast unit tests beside the code, integration tests against the real Postgres,
// and browser e2e tests. Each prints vitest's own summary line.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: [
            "packages/**/*.test.ts",
            "apps/**/src/**/*.test.ts",
            "apps/web/server/**/*.test.ts",
            "apps/web/cli/**/*.test.ts",
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
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: true,
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: "e2e",
          include: ["tests/e2e/**/*.test.ts"],
          testTimeout: 600_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
