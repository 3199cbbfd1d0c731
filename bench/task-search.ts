// `npm run bench -- task-search`: instruction search (tasks.search) on a synthetic 10,000-task pool
// on the real Postgres: median latency of a rare word, a common word (thousands of matches to rank),
// a phrase, and a deep page; ends with one JSON line.
import { importPool, searchTasks } from "@agentlab/db";
import { createTestDatabase } from "../tests/integration/helpers/db";
import { makePool, toJsonl } from "../tests/fixtures/tasks/generate";

const N = Number(process.env.BENCH_TASKS ?? 10_000);
const SUBJECTS = [
  "CSV parser",
  "binary search",
  "date formatter",
  "LRU cache",
  "tokenizer",
  "matrix product",
  "retry loop",
];
const FAULTS = [
  "drops the last element",
  "is off by one",
  "ignores quoted fields",
  "never evicts",
  "overflows on large input",
];
// Deterministic, varied instructions: a subject, a fault and the task's own number.
const instruction = (i: number) =>
  `The ${SUBJECTS[i % SUBJECTS.length]} ${FAULTS[(i * 7) % FAULTS.length]} (case ${i}). Fix it so the tests pass.`;

const db = await createTestDatabase();
try {
  const tasks = makePool(N, 4).map((t, i) => ({ ...t, instruction: instruction(i) }));
  const imported = await importPool(db.db, { name: "bench", lines: [new TextEncoder().encode(toJsonl(tasks))] });
  if (!imported.ok) throw new Error(`import rejected: ${JSON.stringify(imported.problems.slice(0, 3))}`);
  const poolId = imported.poolId;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const time = async (text: string, offset = 0, runs = 15) => {
    const ms: number[] = [];
    let total = 0;
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      total = (await searchTasks(db.db, { poolId, text, offset, limit: 50 })).total;
      ms.push(performance.now() - t);
    }
    return { ms: Math.round(median(ms) * 10) / 10, total };
  };
  const rare = await time(`case ${Math.floor(N / 2)}`);
  const common = await time("tests");
  const phrase = await time('"binary search" -overflows');
  const deep = await time("tests", 5000);
  console.error(`rare ${rare.total} hits, common ${common.total}, phrase ${phrase.total}`);
  console.log(
    JSON.stringify({
      bench: "task-search",
      tasks: N,
      rare_ms_median: rare.ms,
      rare_hits: rare.total,
      common_ms_median: common.ms,
      common_hits: common.total,
      phrase_ms_median: phrase.ms,
      phrase_hits: phrase.total,
      deep_page_ms_median: deep.ms,
    }),
  );
} finally {
  await db.drop();
}
