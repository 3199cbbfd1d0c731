// A vitest reporter beside the default one: each test file's wall time, per project, into
// test-results/timings/vitest-<project>.json (ignored), so scripts/test-summary.mjs can name the
// slowest files. It prints nothing; vitest's own summary lines stay as they are.
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";

export default class TimingReporter {
  onInit(vitest) {
    this.root = vitest.config.root;
  }

  onTestRunEnd(testModules) {
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
      };
      const name = m.project.name || "default";
      byProject.set(name, [...(byProject.get(name) ?? []), row]);
    }
    const dir = join(this.root, "test-results", "timings");
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
