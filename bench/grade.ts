// `npm run bench -- grade`: grades the built-in pool's buggy main files, sandboxed (bwrap zygotes)
// and bare (the same runner and pytest session with the `process` backend: no namespaces, no
// cgroup, no uid drop), one worker per core each, and prints one JSON line.
import { existsSync, readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import type { TaskSpec } from "@agentlab/core";
import { Grader } from "../apps/agent/src/grading/grader";
import type { SandboxBackend } from "../apps/agent/src/sandbox/types";

const root = process.cwd();
const poolPath = join(root, "data/builtin-pool.jsonl.gz");
if (!existsSync(poolPath)) throw new Error("data/builtin-pool.jsonl.gz missing: run scripts/build-builtin-pool.ts");
const all = gunzipSync(readFileSync(poolPath)).toString("utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as TaskSpec);
const runs = Math.min(all.length, Number(process.env.BENCH_GRADE_RUNS ?? 200));
const tasks = all.slice(0, runs);
const workers = availableParallelism();
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function pass(backend: SandboxBackend): Promise<{ p50: number; perS: number; verdicts: Record<string, number> }> {
  const grader = new Grader({ backend, graderDir: join(root, "apps/agent/grader"), uid: 65534, gid: 65534, scratchDir: join(root, ".agentlab/scratch") }, { workers });
  try {
    // Warm every zygote first: start-up is paid once per agent, not per candidate.
    await Promise.all(Array.from({ length: workers }, (_, i) => { const t = tasks[i % tasks.length]; return t ? grader.grade(t, t.reference, { expectedIds: null }) : null; }));
    const times: number[] = [];
    const verdicts: Record<string, number> = {};
    let next = 0;
    const t0 = performance.now();
    await Promise.all(Array.from({ length: workers }, async () => {
      for (let t = tasks[next++]; t; t = tasks[next++]) {
        const ids = (t.metadata.audit as { expected_test_ids?: string[] } | undefined)?.expected_test_ids ?? null;
        const s = performance.now();
        const r = await grader.grade(t, t.files.filter((f) => f.role === "main"), { expectedIds: ids });
        times.push(performance.now() - s);
        verdicts[r.verdict] = (verdicts[r.verdict] ?? 0) + 1;
      }
    }));
    return { p50: p50(times), perS: tasks.length / ((performance.now() - t0) / 1000), verdicts };
  } finally {
    grader.close();
  }
}

const bare = await pass("process");
const sandboxed = await pass("bwrap");
console.error(`grade bench: sandboxed verdicts ${JSON.stringify(sandboxed.verdicts)}, bare verdicts ${JSON.stringify(bare.verdicts)}, bare runs/s ${bare.perS.toFixed(1)}`);
console.log(JSON.stringify({
  bench: "grade",
  runs: tasks.length,
  workers,
  sandboxed_p50_ms: Math.round(sandboxed.p50 * 10) / 10,
  bare_p50_ms: Math.round(bare.p50 * 10) / 10,
  overhead_ratio: Math.round((sandboxed.p50 / bare.p50) * 1000) / 1000,
  runs_per_s: Math.round(sandboxed.perS * 10) / 10,
}));
