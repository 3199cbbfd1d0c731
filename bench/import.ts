// `npm run bench -- import`: imports a synthetic 10,000-task pool into a fresh database on the real
// Postgres and splits it; ends with one JSON line of tasks/s for both and the peak RSS.
// `npm run bench -- import loop [TASKS=100000]`: the main thread's event-loop delay (p50, p99, max)
// while a TASKS-task file of as many groups imports, with the server's worker-thread preparer and
// with the in-process one, each timed whole and for the preparer's parse alone.
import { monitorEventLoopDelay } from "node:perf_hooks";
import { gzipSync } from "node:zlib";
import { createImportPreparer, type ImportPreparer } from "@agentlab/core";
import { createSplit, importPool, listTasks, poolClusterProposals } from "@agentlab/db";
import { workerImportPreparer } from "../apps/web/server/imports/worker-preparer";
import { createTestDatabase } from "../tests/integration/helpers/db";
import { makePool, toJsonl } from "../tests/fixtures/tasks/generate";

const LOOP = process.argv[3] === "loop";
const N = LOOP ? Number(process.argv[4] ?? 100_000) : Number(process.env.BENCH_TASKS ?? 10_000);
const round = (x: number) => Math.round(x * 10) / 10;
// Fed in 64 KiB chunks, as an upload arrives.
const chunked = (file: Uint8Array) =>
  Array.from({ length: Math.ceil(file.length / 65536) }, (_, i) => file.subarray(i * 65536, (i + 1) * 65536));

/** `run`'s wall time and this thread's event-loop delay meanwhile (10 ms sampling). */
async function loopDelayDuring(run: () => Promise<unknown>) {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const t0 = performance.now();
  await run();
  const s = (performance.now() - t0) / 1000;
  h.disable();
  const ms = (ns: number) => Math.round(ns / 1e6);
  return { s: round(s), p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max) };
}

const db = await createTestDatabase();
try {
  if (LOOP) await loopBench();
  else await throughputBench();
} finally {
  await db.drop();
}

async function loopBench() {
  const file = gzipSync(toJsonl(makePool(N, 1)));
  const chunks = chunked(file);
  const kinds: [string, () => ImportPreparer][] = [
    ["worker", workerImportPreparer],
    ["inline", createImportPreparer],
  ];
  const out: Record<string, number | string> = { bench: "import", variant: "loop", tasks: N, gzip_bytes: file.length };
  for (const [kind, preparer] of kinds) {
    const parse = await loopDelayDuring(async () => {
      const p = preparer();
      const r = await p.prepare(chunks);
      await p.close();
      if (!r.ok) throw new Error(`file rejected: ${JSON.stringify(r.problems.slice(0, 3))}`);
    });
    const whole = await loopDelayDuring(async () => {
      const r = await importPool(db.db, { name: `loop-${kind}`, lines: chunks, preparer: preparer() });
      if (!r.ok || r.imported !== N) throw new Error(`import failed: ${JSON.stringify(r).slice(0, 300)}`);
    });
    console.error(`${kind}: parse ${JSON.stringify(parse)}, import ${JSON.stringify(whole)}`);
    for (const [phase, m] of [
      ["parse", parse],
      ["import", whole],
    ] as const) {
      out[`${kind}_${phase}_s`] = m.s;
      out[`${kind}_${phase}_loop_p50_ms`] = m.p50;
      out[`${kind}_${phase}_loop_p99_ms`] = m.p99;
      out[`${kind}_${phase}_loop_max_ms`] = m.max;
    }
  }
  out.peak_rss_mb = Math.round(process.resourceUsage().maxRSS / 1024);
  console.log(JSON.stringify(out));
}

async function throughputBench() {
  const file = gzipSync(toJsonl(makePool(N, 4)));
  const chunks = chunked(file);
  let t0 = performance.now();
  const imported = await importPool(db.db, { name: "bench", lines: chunks });
  const importS = (performance.now() - t0) / 1000;
  if (!imported.ok) throw new Error(`import rejected: ${JSON.stringify(imported.problems.slice(0, 3))}`);
  // The cluster proposals the import computes over the whole pool, timed alone (part of import_s).
  t0 = performance.now();
  const clusters = await poolClusterProposals(db.db, imported.poolId);
  const clustersS = (performance.now() - t0) / 1000;
  t0 = performance.now();
  const { split } = await createSplit(db.db, { poolId: imported.poolId, seed: 1, devRatio: 0.1, testRatio: 0.2 });
  const splitS = (performance.now() - t0) / 1000;
  // Browsing at pool scale: keyset pages deep into the pool and prefix searches, median latency.
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const pageMs: number[] = [];
  let after: string | undefined;
  for (let i = 0; i < 40; i++) {
    const t = performance.now();
    const page = await listTasks(db.db, { poolId: imported.poolId, after, limit: 50 });
    pageMs.push(performance.now() - t);
    after = page.nextCursor ?? undefined;
  }
  const searchMs: number[] = [];
  for (let i = 0; i < 40; i++) {
    const t = performance.now();
    await listTasks(db.db, { poolId: imported.poolId, q: `synth/g${(i * 37) % (N / 4)}/`, limit: 50 });
    searchMs.push(performance.now() - t);
  }
  console.error(
    `import ${importS.toFixed(2)} s, split ${splitS.toFixed(2)} s, leakage pairs ${split.leakage.pairs.length}`,
  );
  console.log(
    JSON.stringify({
      bench: "import",
      tasks: N,
      gzip_bytes: file.length,
      import_tasks_per_s: round(N / importS),
      split_tasks_per_s: round(N / splitS),
      import_s: round(importS),
      split_s: round(splitS),
      cluster_proposals_s: round(clustersS),
      cluster_families: clusters.total,
      page_ms_median: round(median(pageMs)),
      search_ms_median: round(median(searchMs)),
      peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
    }),
  );
}
