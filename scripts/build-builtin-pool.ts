// Builds data/builtin-pool.jsonl.gz from ../shared/datasets (HumanEval, MBPP) with the bug
// synthesizer; every task is audited on the way (reference passes 3×, buggy fails hidden).
// Usage: npx tsx scripts/build-builtin-pool.ts [--datasets DIR] [--backend bwrap|process] [--mbpp N]
import { mkdirSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { availableParallelism } from "node:os";
import { Grader } from "../apps/agent/src/grading/grader";
import { mutantsDirect } from "../apps/agent/src/grading/mutants";
import { humanEval, mbpp } from "../apps/agent/src/synth/sources";
import { synthesize } from "../apps/agent/src/synth/synthesize";
import type { TaskSpec } from "@agentlab/core";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? dflt) : dflt;
};
const datasets = resolve(arg("datasets", join(root, "..", "shared", "datasets")));
const backend = arg("backend", "bwrap") === "process" ? "process" : "bwrap";
const graderDir = join(root, "apps/agent/grader");
const grader = new Grader(
  { backend, graderDir, uid: 65534, gid: 65534, scratchDir: join(root, ".agentlab/scratch") },
  { workers: availableParallelism() },
);
const programs = [...humanEval(datasets), ...mbpp(datasets, Number(arg("mbpp", "260")))];
const tasks: TaskSpec[] = [];
const dropped: Record<string, number> = {};
let next = 0;
let done = 0;
const t0 = Date.now();
async function worker() {
  for (;;) {
    const p = programs[next++];
    if (!p) return;
    const r = await synthesize(grader, p, {
      variants: 2,
      maxTries: 8,
      mutate: (s, max) => mutantsDirect(graderDir, s, max),
    });
    tasks.push(...r.tasks);
    if (r.dropped) dropped[r.dropped.split(" (")[0] ?? r.dropped] = (dropped[r.dropped.split(" (")[0] ?? ""] ?? 0) + 1;
    if (++done % 25 === 0)
      console.error(
        `build-builtin-pool: ${done}/${programs.length} programs, ${tasks.length} tasks, ${Math.round((Date.now() - t0) / 1000)} s`,
      );
  }
}
try {
  await Promise.all(Array.from({ length: availableParallelism() * 2 }, worker));
} finally {
  grader.close();
}
tasks.sort((a, b) => (a.id < b.id ? -1 : 1));
const groups = new Set(tasks.map((t) => t.source_group));
mkdirSync(join(root, "data"), { recursive: true });
const body = tasks.map((t) => JSON.stringify(t)).join("\n") + "\n";
// mtime 0 in the gzip header keeps the committed file byte-identical across rebuilds.
writeFileSync(join(root, "data/builtin-pool.jsonl.gz"), gzipSync(body, { level: 9 }));
console.log(
  JSON.stringify({
    tasks: tasks.length,
    groups: groups.size,
    programs: programs.length,
    dropped,
    seconds: Math.round((Date.now() - t0) / 1000),
  }),
);
