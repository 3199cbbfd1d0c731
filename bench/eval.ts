// `npm run bench -- eval [CANDIDATES]`: grading throughput end to end through the real queue
// (server, Postgres, socket.io, an in-process agent with the real grader in bwrap) with batched
// `grade-batch` jobs (≤ 64 candidates) against one `grade` job per candidate. The agent
// runs as many jobs at once as its grader has warm sandboxes (one per core), as `agentlab-agent
// run` does. Candidates: the built-in pool's reference and buggy file per task (passes and fails).
// The tasks' reference ids are computed first (paid once per agent in both modes, not timed).
// Two rounds per mode (each grades every candidate once); per-second figures are over both.
// Prints one JSON line.
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { inArray, sql } from "drizzle-orm";
import { queryRows, schema } from "@agentlab/db";
import {
  GradeBatchJobResult,
  JOB_CONTRACTS,
  gradeBatchMaxDurationS,
  gradeBatchPayloads,
  type EnqueueJob,
  type GradeBatchInput,
  type TaskSpec,
} from "@agentlab/core";
import { Grader } from "../apps/agent/src/grading/grader";
import { ReferenceIds } from "../apps/agent/src/grading/reference-ids";
import { makeGradeHandler } from "../apps/agent/src/jobs/grade";
import { makeGradeBatchHandler } from "../apps/agent/src/jobs/grade-batch";
import { startInProcessAgent, startTestServer, waitFor } from "../tests/integration/helpers/server";

const root = process.cwd();
const CANDIDATES = Number(process.argv[3] ?? process.env.BENCH_EVAL_CANDIDATES ?? 128);
const workers = availableParallelism();
const pool = gunzipSync(readFileSync(join(root, "data/builtin-pool.jsonl.gz")))
  .toString("utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l) as TaskSpec)
  .slice(0, Math.ceil(CANDIDATES / 2));
const inputs: GradeBatchInput[] = pool
  .flatMap((t) => [
    { key: `${t.id}:reference`, task: t, candidate: t.reference, isolation: "judge" as const },
    {
      key: `${t.id}:buggy`,
      task: t,
      candidate: t.files.filter((f) => f.role === "main").map(({ path, content }) => ({ path, content })),
      isolation: "judge" as const,
    },
  ])
  .slice(0, CANDIDATES);

const server = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0", AGENTLAB_LEASE_TTL_MS: "30000" });
const grader = new Grader(
  {
    backend: "bwrap",
    graderDir: join(root, "apps/agent/grader"),
    uid: 65534,
    gid: 65534,
    scratchDir: join(root, ".agentlab/scratch"),
  },
  { workers },
);
const refs = new ReferenceIds(grader);
const agent = await startInProcessAgent(server, "eval-bench", {
  pollMs: 1000,
  concurrency: workers,
  handlers: { grade: makeGradeHandler(grader, refs), "grade-batch": makeGradeBatchHandler(grader, refs) },
});

/** Enqueues the jobs at once and waits until every one has ended; returns seconds and the verdict per key. */
async function timed(jobs: EnqueueJob[], keysOf: (i: number) => string[]) {
  const t0 = performance.now();
  const created = await server.app.services.queue.enqueueMany(jobs);
  const ids = created.map((j) => j.id);
  await waitFor(
    async () => {
      const [r] = await queryRows<{ n: number }>(
        server.db.db,
        sql`select count(*)::int as n from jobs where id = any(${`{${ids.join(",")}}`}::uuid[]) and state in ('succeeded', 'failed', 'canceled')`,
      );
      return (r?.n ?? 0) === ids.length;
    },
    3_600_000,
    20,
  );
  const seconds = (performance.now() - t0) / 1000;
  const rows = new Map(
    (await server.db.db.select().from(schema.jobs).where(inArray(schema.jobs.id, ids))).map((r) => [r.id, r]),
  );
  const verdicts = new Map<string, string>();
  for (const [i, id] of ids.entries()) {
    const row = rows.get(id);
    const batch = GradeBatchJobResult.safeParse(row?.result);
    if (batch.success)
      for (const it of batch.data.items) verdicts.set(it.key, it.status === "graded" ? it.grade.verdict : "error");
    else {
      const one = JOB_CONTRACTS.grade.result.safeParse(row?.result);
      for (const k of keysOf(i)) verdicts.set(k, one.success ? one.data.verdict : `job ${row?.state}`);
    }
  }
  return { seconds, verdicts, jobs: ids.length };
}

const batchJobs = (items: GradeBatchInput[]): EnqueueJob[] =>
  gradeBatchPayloads(items).map((payload) => ({
    type: "grade-batch",
    payload,
    maxAttempts: 1,
    maxDurationS: gradeBatchMaxDurationS(payload),
  }));

// Warm-up: every task's reference ids (and every sandbox started), through the same handlers.
const warm = await timed(
  batchJobs(pool.map((t) => ({ key: t.id, task: t, candidate: t.reference, isolation: "judge" }))),
  () => [],
);
// Rounds in the order batched, single, single, batched: load from other work on the box drifts
// over minutes, and this order gives both modes the same share of it.
const singleJobs = (): EnqueueJob[] =>
  inputs.map((i) => ({ type: "grade", payload: { task: i.task, candidate: i.candidate }, maxDurationS: 900 }));
const rounds: { mode: "batched" | "single"; r: Awaited<ReturnType<typeof timed>> }[] = [];
for (const mode of ["batched", "single", "single", "batched"] as const)
  rounds.push({
    mode,
    r: await (mode === "batched"
      ? timed(batchJobs(inputs), () => [])
      : timed(singleJobs(), (n) => [inputs[n]?.key ?? ""])),
  });
const total = (mode: "batched" | "single") => {
  const own = rounds.filter((x) => x.mode === mode).map((x) => x.r);
  return {
    seconds: own.reduce((a, x) => a + x.seconds, 0),
    jobs: own[0]?.jobs ?? 0,
    verdicts: own[0]?.verdicts ?? new Map(),
  };
};
const batched = total("batched");
const single = total("single");
const graded = 2 * inputs.length;
const mismatches = inputs.filter((i) => new Set(rounds.map((x) => x.r.verdicts.get(i.key))).size !== 1).length;
const counts: Record<string, number> = {};
for (const v of batched.verdicts.values()) counts[v] = (counts[v] ?? 0) + 1;
await agent.stop();
grader.close();
await server.close();

console.error(
  `eval bench: warm-up ${warm.seconds.toFixed(1)} s (${pool.length} references); rounds ${rounds.map((x) => `${x.mode} ${x.r.jobs} jobs ${x.r.seconds.toFixed(1)} s`).join(", ")}; verdicts ${JSON.stringify(counts)}, ${mismatches} candidates whose verdict differs between rounds`,
);
console.log(
  JSON.stringify({
    bench: "eval",
    candidates: inputs.length,
    batched_per_s: Math.round((graded / batched.seconds) * 10) / 10,
    single_per_s: Math.round((graded / single.seconds) * 10) / 10,
    jobs_batched: batched.jobs,
    jobs_single: single.jobs,
    speedup: Math.round((single.seconds / batched.seconds) * 100) / 100,
    workers,
    mismatches,
  }),
);
process.exit(0);
