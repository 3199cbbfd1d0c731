// `npm run bench -- grade`: grades the built-in pool's buggy main files three ways, one worker per
// core each, and prints one JSON line:
//   sandboxed — the isolated judge in bwrap (judge and candidate processes, fresh namespaces each);
//   bare      — the same judge with the `process` backend (no namespaces, cgroup or uid drop): the
//               sandbox's overhead is sandboxed_p50 / bare_p50;
//   naive     — a fresh bwrap running `python -m pytest` per candidate (what a simple sandboxed
//               grader does): the judge's speed-up is runs_per_s / naive_runs_per_s.
//   again     — the same task graded again soon: BENCH_GRADE_AGAIN tasks (default 50), each graded
//               4× in a row (buggy, reference, buggy, reference) as single grades, with the
//               sandbox's lingering session (zygote.ts) and without (lingerMs 0):
//               again_runs_per_s / again_cold_runs_per_s is what the warm template gives them.
// BENCH_GRADE_RUNS (default 200) candidates per way. BENCH_GRADE_SUPPORT=N: only the candidate
// template's comparison on a task with a support module (bench/grade-support.ts).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { gunzipSync } from "node:zlib";
import type { TaskSpec } from "@agentlab/core";
import { Grader } from "../apps/agent/src/grading/grader";
import { GRADER_MOUNT } from "../apps/agent/src/sandbox/bwrap";
import { run } from "../apps/agent/src/sandbox/run";
import { DEFAULT_SANDBOX_LIMITS, type SandboxBackend, type SandboxConfig } from "../apps/agent/src/sandbox/types";
import { supportBench } from "./grade-support";

const root = process.cwd();
const all = gunzipSync(readFileSync(join(root, "data/builtin-pool.jsonl.gz")))
  .toString("utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l) as TaskSpec);
const runs = Math.min(all.length, Number(process.env.BENCH_GRADE_RUNS ?? 200));
const tasks = all.slice(0, runs);
const workers = availableParallelism();
const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const cfg = (backend: SandboxBackend): SandboxConfig => ({
  backend,
  graderDir: join(root, "apps/agent/grader"),
  uid: 65534,
  gid: 65534,
  scratchDir: join(root, ".agentlab/scratch"),
});
const buggy = (t: TaskSpec) => t.files.filter((f) => f.role === "main");

type Pass = { p50: number; perS: number; verdicts: Record<string, number> };

/** Runs `one` over the tasks on `workers` parallel lanes; times each call. */
async function lanes(one: (t: TaskSpec) => Promise<string>): Promise<Pass> {
  const times: number[] = [];
  const verdicts: Record<string, number> = {};
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let t = tasks[next++]; t; t = tasks[next++]) {
        const s = performance.now();
        const v = await one(t);
        times.push(performance.now() - s);
        verdicts[v] = (verdicts[v] ?? 0) + 1;
      }
    }),
  );
  return { p50: p50(times), perS: tasks.length / ((performance.now() - t0) / 1000), verdicts };
}

// BENCH_GRADE_LINGER_MS: the judged passes' lingering (default the grader's; 0 = every grade single).
const lingerMs =
  process.env.BENCH_GRADE_LINGER_MS === undefined ? undefined : Number(process.env.BENCH_GRADE_LINGER_MS);

async function judged(backend: SandboxBackend): Promise<Pass> {
  const grader = new Grader(cfg(backend), { workers, lingerMs });
  try {
    // The reference ids per task, and every zygote warm: paid once per agent, not per candidate.
    const ids = new Map<string, string[]>();
    for (const t of tasks) ids.set(t.id, (await grader.referenceIds(t)).ids);
    return await lanes(async (t) => (await grader.grade(t, buggy(t), { expectedIds: ids.get(t.id) ?? null })).verdict);
  } finally {
    grader.close();
  }
}

/** Each lane grades one task 4× in a row (single grades), the next task after that. */
async function again(lingerMs?: number): Promise<Pass> {
  const some = tasks.slice(0, Number(process.env.BENCH_GRADE_AGAIN ?? 50));
  const grader = new Grader(cfg("bwrap"), { workers, lingerMs });
  try {
    const ids = new Map<string, string[]>();
    for (const t of some) ids.set(t.id, (await grader.referenceIds(t)).ids);
    const times: number[] = [];
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: workers }, async () => {
        for (let t = some[next++]; t; t = some[next++]) {
          for (const c of [buggy(t), t.reference, buggy(t), t.reference]) {
            const s = performance.now();
            await grader.grade(t, c, { expectedIds: ids.get(t.id) ?? null });
            times.push(performance.now() - s);
          }
        }
      }),
    );
    return { p50: p50(times), perS: times.length / ((performance.now() - t0) / 1000), verdicts: {} };
  } finally {
    grader.close();
  }
}

async function naive(): Promise<Pass> {
  const c = cfg("bwrap");
  return lanes(async (t) => {
    const dir = mkdtempSync(join(root, ".agentlab/scratch/naive-"));
    try {
      for (const f of [
        ...t.files.filter((x) => x.role !== "main"),
        ...buggy(t),
        ...t.public_tests,
        ...t.hidden_tests,
      ]) {
        mkdirSync(dirname(join(dir, f.path)), { recursive: true });
        writeFileSync(join(dir, f.path), f.content);
      }
      const r = await run(
        c,
        dir,
        [`${GRADER_MOUNT}/.venv/bin/python`, "-m", "pytest", "-q", "-p", "no:cacheprovider", "."],
        { ...DEFAULT_SANDBOX_LIMITS, wallTimeoutS: 20 },
      );
      return r.exitCode === 0 ? "pass" : "fail";
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

mkdirSync(join(root, ".agentlab/scratch"), { recursive: true });
if (process.env.BENCH_GRADE_SUPPORT) {
  // Only the candidate template's comparison (bench/grade-support.ts), sessions of this many.
  await supportBench(cfg("bwrap"), Number(process.env.BENCH_GRADE_SUPPORT));
  process.exit(0);
}
const bare = await judged("process");
const sandboxed = await judged("bwrap");
const simple = await naive();
const warmAgain = await again();
const coldAgain = await again(0);
console.error(
  `grade bench: sandboxed ${JSON.stringify(sandboxed.verdicts)}, bare ${JSON.stringify(bare.verdicts)} (${bare.perS.toFixed(1)} runs/s), naive ${JSON.stringify(simple.verdicts)}`,
);
console.log(
  JSON.stringify({
    bench: "grade",
    runs: tasks.length,
    workers,
    runs_per_s: Math.round(sandboxed.perS * 10) / 10,
    sandboxed_p50_ms: Math.round(sandboxed.p50 * 10) / 10,
    bare_p50_ms: Math.round(bare.p50 * 10) / 10,
    overhead_ratio: Math.round((sandboxed.p50 / bare.p50) * 1000) / 1000,
    naive_runs_per_s: Math.round(simple.perS * 10) / 10,
    naive_p50_ms: Math.round(simple.p50 * 10) / 10,
    again_runs_per_s: Math.round(warmAgain.perS * 10) / 10,
    again_p50_ms: Math.round(warmAgain.p50 * 10) / 10,
    again_cold_runs_per_s: Math.round(coldAgain.perS * 10) / 10,
    again_cold_p50_ms: Math.round(coldAgain.p50 * 10) / 10,
    load: Math.round((loadavg()[0] ?? 0) * 10) / 10,
  }),
);
