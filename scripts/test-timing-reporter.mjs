// A vitest reporter beside the default one: each test file's wall time, per project, into
// $AGENTLAB_TIMINGS_DIR/vitest-<project>.json, so scripts/test-summary.mjs can name the slowest
// files. scripts/test-steps.mjs (npm test) sets the folder (test-results/timings, ignored); a
// plain `npx vitest` writes nothing, so runs beside it cannot overwrite its files. It prints
// nothing; vitest's own summary lines stay as they are.
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

export default class TimingReporter {
  onInit(vitest) {
    this.root = vitest.config.root;
  }

  onTestRunEnd(testModules) {
    const dir = process.env.AGENTLAB_TIMINGS_DIR;
    if (!dir) return;
    const byProject = new Map();
    for (const m of testModules) {
      const d = m.diagnostic();
      const tests = [...m.children.allTests()];
      const row = {
        file: relative(this.root, m.moduleId),
        // import + setup + every test and hook: what the file costs a worker
        seconds: round((d.collectDuration + d.setupDuration + d.prepareDuration + d.duration) / 1000),
        tests: tests.length,
        failed: tests.filter((t) => t.result().state === "failed").length,
        state: m.state(),
        // Named in the summary's last lines, so a CI log's tail says what failed and why.
        failures: failures(m, tests),
      };
      const name = m.project.name || "default";
      byProject.set(name, [...(byProject.get(name) ?? []), row]);
    }
    mkdirSync(dir, { recursive: true });
    for (const [project, files] of byProject) {
      files.sort((a, b) => b.seconds - a.seconds);
      writeFileSync(
        join(dir, `vitest-${project}.json`),
        JSON.stringify({ project, finishedAt: new Date().toISOString(), files }, null, 1) + "\n",
      );
    }
  }
}

const round = (s) => Math.round(s * 10) / 10;

/** A failed file's failing tests (or its own error: a file that failed to load has no tests), each with its first error line. */
function failures(module, tests) {
  const firstLine = (errors) =>
    String(errors?.[0]?.message ?? "")
      .split("\n")[0]
      .slice(0, 300);
  const rows = tests
    .filter((t) => t.result().state === "failed")
    .map((t) => ({ test: t.fullName, error: firstLine(t.result().errors) }));
  const own = module.errors?.() ?? [];
  if (own.length) rows.push({ test: "(the file itself)", error: firstLine(own) });
  return rows;
}
