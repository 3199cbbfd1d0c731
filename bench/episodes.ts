// `npm run bench -- episodes`: scripted episodes (solver, recoverer, wrong in turn) on the built-in
// pool's tasks, on the bwrap sandbox and the isolated judge, one lane per core, and one JSON line:
// episodes per minute, tool-call latency per tool (p50/p95 ms, submit = the judge's grade), the
// verdicts per policy (the controls' expected outcomes: solver and recoverer pass, wrong fails).
// BENCH_EPISODES (default 24) episodes; BENCH_EPISODE_LANES (default: the cores) at once.
import { mkdirSync, readFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { DEFAULT_EPISODE_BUDGET, type ScriptedPolicyName, type TaskSpec } from "@agentlab/core";
import { Grader } from "../apps/agent/src/grading/grader";
import { ReferenceIds } from "../apps/agent/src/grading/reference-ids";
import { scriptedPolicy } from "../apps/agent/src/episodes/policies";
import { runEpisode } from "../apps/agent/src/episodes/runner";
import { ContentStore } from "../apps/agent/src/episodes/store";
import type { SandboxConfig } from "../apps/agent/src/sandbox/types";

const root = process.cwd();
const pool = gunzipSync(readFileSync(join(root, "data/builtin-pool.jsonl.gz")))
  .toString("utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l) as TaskSpec)
  .filter((t) => t.public_tests.length > 0);
const n = Number(process.env.BENCH_EPISODES ?? 24);
const lanes = Number(process.env.BENCH_EPISODE_LANES ?? availableParallelism());
const scratch = join(root, ".agentlab/scratch/episodes-bench");
mkdirSync(scratch, { recursive: true });
const cfg: SandboxConfig = {
  backend: "bwrap",
  graderDir: join(root, "apps/agent/grader"),
  uid: 65534,
  gid: 65534,
  scratchDir: join(root, ".agentlab/scratch"),
};
const grader = new Grader(cfg, { workers: lanes });
const refs = new ReferenceIds(grader);
const POLICIES: ScriptedPolicyName[] = ["solver", "recoverer", "wrong"];
const latency: Record<string, number[]> = {};
const verdicts: Record<string, Record<string, number>> = {};
const load0 = loadavg()[0] ?? 0;

let next = 0;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: lanes }, async () => {
    for (let i = next++; i < n; i = next++) {
      const task = pool[i % pool.length];
      const name = POLICIES[i % POLICIES.length];
      if (!task || !name) break;
      const policy = scriptedPolicy(name, name === "wrong" ? [] : task.reference);
      const deps = {
        sandbox: cfg,
        grader,
        refs,
        scratch,
        store: new ContentStore(),
        isolation: "judge" as const,
        limits: {},
      };
      const { run } = await runEpisode(deps, task, DEFAULT_EPISODE_BUDGET, policy, { seed: i });
      for (const s of run.steps) (latency[s.call.tool] ??= []).push(s.wallMs);
      const v = (verdicts[name] ??= {});
      v[run.verdict] = (v[run.verdict] ?? 0) + 1;
    }
  }),
);
const minutes = (performance.now() - t0) / 60_000;
grader.close();

const pct = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? 0;
const tools = Object.fromEntries(
  Object.entries(latency).map(([tool, xs]) => [
    tool,
    { calls: xs.length, p50Ms: Math.round(pct(xs, 0.5)), p95Ms: Math.round(pct(xs, 0.95)) },
  ]),
);
const all = Object.values(latency).flat();
console.log(
  JSON.stringify({
    bench: "episodes",
    episodes: n,
    lanes,
    episodesPerMinute: Number((n / minutes).toFixed(1)),
    toolCallP50Ms: Math.round(pct(all, 0.5)),
    toolCallP95Ms: Math.round(pct(all, 0.95)),
    tools,
    verdicts,
    loadAvg: [Number(load0.toFixed(1)), Number((loadavg()[0] ?? 0).toFixed(1))],
  }),
);
