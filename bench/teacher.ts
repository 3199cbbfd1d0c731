// Teacher collection throughput on the real server code and Postgres, against a local
// OpenAI-compatible server with a fixed latency: first pass (every sample asked), second pass
// (every sample reused from the cache), and dataset snapshot + export.
// npm run bench -- teacher [TASKS=200] [CONCURRENCY=8] [LATENCY_MS=50]
import { createServer } from "node:http";
import { createSplit, importPool, insertProvider, insertCollection, getCollection, setPrice } from "@agentlab/db";
import { PROMPT_TEMPLATE_HASH, formatAnswer, paramsHash, type TaskSpec } from "@agentlab/core";
import { startTestServer } from "../tests/integration/helpers/server";
import { startCollection } from "../apps/web/server/teacher/collection-runs";
import { createDataset, exportDataset } from "../apps/web/server/teacher/datasets";

const TASKS = Number(process.argv[3] ?? 200);
const CONCURRENCY = Number(process.argv[4] ?? 8);
const LATENCY = Number(process.argv[5] ?? 50);

const task = (i: number): TaskSpec => ({
  id: `b${i}`,
  source_group: `g${i}`,
  language: "python",
  instruction: `Fix task b${i}.`,
  files: [{ path: "solution.py", role: "main", content: `def f():\n    return ${i} - 1\n` }],
  public_tests: [
    { path: "test_public.py", content: "from solution import f\n\ndef test_t():\n    assert isinstance(f(), int)\n" },
  ],
  hidden_tests: [
    { path: "test_hidden.py", content: `from solution import f\n\ndef test_v():\n    assert f() == ${i}\n` },
  ],
  reference: [{ path: "solution.py", content: `def f():\n    return ${i}\n` }],
  metadata: {},
});

const fake = createServer((req, res) => {
  let body = "";
  req.on("data", (c: Buffer) => (body += c.toString()));
  req.on("end", () =>
    setTimeout(() => {
      const i = /Fix task b(\d+)\./.exec(body)?.[1] ?? "0";
      const content = formatAnswer([{ path: "solution.py", content: `def f():\n    return ${i}\n` }]);
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id: "x",
          object: "chat.completion",
          created: 1,
          model: "m",
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
          usage: { prompt_tokens: 300, completion_tokens: 40 },
        }),
      );
    }, LATENCY),
  );
});
await new Promise<void>((r) => fake.listen(0, "127.0.0.1", () => r()));
const baseUrl = `http://127.0.0.1:${(fake.address() as { port: number }).port}/v1`;

const server = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
const { db } = server.app.services;
const imp = await importPool(db, {
  name: "bench",
  lines: [new TextEncoder().encode(Array.from({ length: TASKS }, (_, i) => JSON.stringify(task(i))).join("\n"))],
});
if (!imp.ok) throw new Error("import failed");
const { split } = await createSplit(db, { poolId: imp.poolId, seed: 1, devRatio: 0, testRatio: 0 });
await setPrice(db, { model: "m", inputPerMTok: 1, outputPerMTok: 2 });
const provider = await insertProvider(db, {
  name: "fake",
  kind: "openai",
  baseUrl,
  model: "m",
  apiKeySealed: server.app.services.secrets.seal("k"),
  extraParams: {},
});
const params = { temperature: 0.8, top_p: 1, max_tokens: 256 };

async function pass() {
  const col = await insertCollection(db, {
    name: "bench",
    splitId: split.id,
    providerId: provider.id,
    providerKind: "openai",
    model: "m",
    parts: ["train"],
    nSamples: 1,
    params,
    paramsHash: paramsHash(params, { kind: "openai", extra: {} }),
    promptHash: PROMPT_TEMPLATE_HASH,
    concurrency: CONCURRENCY,
    maxRetries: 0,
    timeoutMs: 30_000,
    grade: false,
  });
  const t0 = performance.now();
  await startCollection(server.app.services, col.id);
  const ms = performance.now() - t0;
  return { ms, col: await getCollection(db, col.id) };
}

const first = await pass();
const second = await pass();
// Mark every candidate passing so that a snapshot can be built (grading is measured in bench/grade.ts).
await db.execute(`update teacher_candidates set verdict = 'pass'` as never);
const t0 = performance.now();
const ds = await createDataset(server.app.services, {
  name: "bench",
  splitId: split.id,
  collectionIds: [first.col?.id ?? ""],
});
const snapshotMs = performance.now() - t0;
const t1 = performance.now();
await exportDataset(server.app.services, ds.id);
const exportMs = performance.now() - t1;

await server.close();
fake.close();
console.log(
  JSON.stringify({
    bench: "teacher",
    tasks: TASKS,
    concurrency: CONCURRENCY,
    providerLatencyMs: LATENCY,
    firstPassMs: Math.round(first.ms),
    firstPassSamplesPerS: Math.round((TASKS / first.ms) * 1000 * 10) / 10,
    idealSamplesPerS: Math.round((CONCURRENCY / LATENCY) * 1000),
    reusePassMs: Math.round(second.ms),
    reusePassSamplesPerS: Math.round((TASKS / second.ms) * 1000),
    reused: second.col?.reused,
    costSavedUsd: second.col?.costSavedUsd,
    snapshotMs: Math.round(snapshotMs),
    exportMs: Math.round(exportMs),
    samples: ds.sampleCount,
  }),
);
