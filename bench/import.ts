// `npm run bench -- import`: imports a synthetic 10,000-task pool into a fresh database on the real
// Postgres and splits it; ends with one JSON line of tasks/s for both and the peak RSS.
import { gzipSync } from "node:zlib";
import { createSplit, importPool, listTasks, poolClusterProposals } from "@agentlab/db";
import { createTestDatabase } from "../tests/integration/helpers/db";
import { makePool, toJsonl } from "../tests/fixtures/tasks/generate";

const N = Number(process.env.BENCH_TASKS ?? 10_000);
const db = await createTestDatabase();
try {
  const file = gzipSync(toJsonl(makePool(N, 4)));
  // Feed the file in 64 KiB chunks, as an upload arrives.
  const chunks = Array.from({ length: Math.ceil(file.length / 65536) }, (_, i) =>
    file.subarray(i * 65536, (i + 1) * 65536),
  );
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
  const round = (x: number) => Math.round(x * 10) / 10;
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
} finally {
  await db.drop();
}
