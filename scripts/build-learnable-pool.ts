// Builds data/learnable-pool.jsonl.gz, the synthetic "learnable" family (see
// apps/agent/src/synth/learnable.ts) with the bug synthesizer restricted to one mutation
// (`<=` → `<`); every task is audited on the way like the built-in pool's (reference passes 3×,
// the buggy file fails a hidden test) and carries that audit in its metadata.
// Usage: npx tsx scripts/build-learnable-pool.ts [--groups 210] [--backend bwrap|process] [--workers 2]
import { mkdirSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Grader } from "../apps/agent/src/grading/grader";
import { mutantsDirect } from "../apps/agent/src/grading/mutants";
import { LEARNABLE_BUG, learnablePrograms } from "../apps/agent/src/synth/learnable";
import { synthesize } from "../apps/agent/src/synth/synthesize";
import type { TaskSpec } from "@agentlab/core";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const arg = (name: string, dflt: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? dflt) : dflt;
};
const backend = arg("backend", "bwrap") === "process" ? "process" : "bwrap";
const workers = Number(arg("workers", "2"));
const graderDir = join(root, "apps/agent/grader");
const grader = new Grader(
  { backend, graderDir, uid: 65534, gid: 65534, scratchDir: join(root, ".agentlab/scratch") },
  { workers },
);
const programs = learnablePrograms(Number(arg("groups", "210")));
const tasks: TaskSpec[] = [];
const dropped: Record<string, number> = {};
let next = 0;
const t0 = Date.now();
async function worker() {
  for (;;) {
    const p = programs[next++];
    if (!p) return;
    // Only the one bug type of the family: a strict comparison where the program has `<=`.
    const mutate = async (s: string, max: number) => {
      const set = await mutantsDirect(graderDir, s, max);
      return {
        normalized: set.normalized,
        mutants: set.mutants.filter((m) => m.operator === "comparison" && m.description === LEARNABLE_BUG),
      };
    };
    const r = await synthesize(grader, p, { variants: 1, maxTries: 1, mutate });
    for (const t of r.tasks) t.metadata = { ...t.metadata, family: "learnable", synthetic: true };
    tasks.push(...r.tasks);
    if (r.dropped) dropped[r.dropped] = (dropped[r.dropped] ?? 0) + 1;
  }
}
try {
  await Promise.all(Array.from({ length: workers * 2 }, worker));
} finally {
  grader.close();
}
tasks.sort((a, b) => (a.id < b.id ? -1 : 1));
mkdirSync(join(root, "data"), { recursive: true });
const body = tasks.map((t) => JSON.stringify(t)).join("\n") + "\n";
// mtime 0 in the gzip header keeps the committed file byte-identical across rebuilds.
writeFileSync(join(root, "data/learnable-pool.jsonl.gz"), gzipSync(body, { level: 9 }));
console.log(
  JSON.stringify({
    tasks: tasks.length,
    groups: new Set(tasks.map((t) => t.source_group)).size,
    programs: programs.length,
    dropped,
    seconds: Math.round((Date.now() - t0) / 1000),
  }),
);
