import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import type { TaskSpec } from "@agentlab/core";
import { createSplit, importPool, queryRows } from "@agentlab/db";
import { sql } from "drizzle-orm";
import { Grader } from "../../apps/agent/src/grading/grader";
import { gradeJobHandlers } from "../../apps/agent/src/jobs/grade-batch";
import { awaitCollection } from "../../apps/web/server/teacher/collection-runs";
import { callerAs, type Caller } from "./helpers/callers";
import { startInProcessAgent, startTestServer, waitFor, type TestServer } from "./helpers/server";

// The whole loop with the real grader: a collection's candidates are graded by an in-process agent
// running the bwrap sandbox over socket.io; the oracle's answers pass, a teacher that returns the
// buggy file fails, and a replay of the verified dataset keeps every sample. A candidate the grader
// never judged (infra_error) is graded again when a later collection takes it from the cache.

const task = (i: number): TaskSpec => ({
  id: `g${i}`,
  source_group: `grp${i}`,
  language: "python",
  instruction: `Fix task g${i}.`,
  metadata: {},
  files: [{ path: "solution.py", role: "main", content: `def f(x):\n    return x + ${i - 1}\n` }],
  public_tests: [
    {
      path: "test_public.py",
      content: "from solution import f\n\ndef test_type():\n    assert isinstance(f(1), int)\n",
    },
  ],
  hidden_tests: [
    { path: "test_hidden.py", content: `from solution import f\n\ndef test_value():\n    assert f(1) == ${1 + i}\n` },
  ],
  reference: [{ path: "solution.py", content: `def f(x):\n    return x + ${i}\n` }],
});
const TASKS = Array.from({ length: 6 }, (_, i) => task(i + 1));

let srv: TestServer;
let grader: Grader;
let agent: Awaited<ReturnType<typeof startInProcessAgent>>;
let fake: Server;
let caller: Caller;
let splitId = "";

beforeAll(async () => {
  srv = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
  grader = new Grader(
    {
      backend: "bwrap",
      graderDir: join(process.cwd(), "apps/agent/grader"),
      uid: 65534,
      gid: 65534,
      scratchDir: "/tmp/agentlab-test-scratch",
    },
    { workers: 2, limits: { wallTimeoutS: 10, memoryMb: 256, pids: 48 } },
  );
  agent = await startInProcessAgent(srv, "grader", { pollMs: 200, handlers: gradeJobHandlers(grader) });
  const db = srv.app.services.db;
  caller = await callerAs(srv.app.services, "admin", "g@lab.test");
  const imp = await importPool(db, {
    name: "grade",
    lines: [new TextEncoder().encode(TASKS.map((x) => JSON.stringify(x)).join("\n"))],
  });
  if (!imp.ok) throw new Error("import failed");
  splitId = (await createSplit(db, { poolId: imp.poolId, seed: 1, devRatio: 0, testRatio: 0.2 })).split.id;
  // A "teacher" that answers with the buggy file unchanged: well-formed, and wrong.
  fake = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      const i = Number(/Fix task g(\d+)\./.exec(body)?.[1] ?? 0);
      const content = `solution.py\n\`\`\`python\ndef f(x):\n    return x + ${i - 1}\n\`\`\`\n`;
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id: "x",
          object: "chat.completion",
          created: 1,
          model: "m",
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
          usage: { prompt_tokens: 1, completion_tokens: 1 },
        }),
      );
    });
  });
  await new Promise<void>((r) => fake.listen(0, "127.0.0.1", () => r()));
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  grader?.close();
  await new Promise((r) => fake?.close(r));
  await srv?.close();
});

const settled = (id: string) =>
  waitFor(
    async () => {
      const c = await caller.collections.byId({ id });
      return c.state === "done" && c;
    },
    90_000,
    200,
  );

describe("teacher candidates graded by a real agent", () => {
  it("passes the oracle, fails the buggy teacher, and a replay keeps every verified sample", async () => {
    const oracle = await caller.providers.create({
      name: "oracle",
      kind: "reference",
      model: "reference",
      extraParams: {},
    });
    const bad = await caller.providers.create({
      name: "buggy",
      kind: "openai",
      baseUrl: `http://127.0.0.1:${(fake.address() as { port: number }).port}/v1`,
      model: "m",
      apiKey: "k",
      extraParams: {},
    });
    const a = await caller.collections.create({ splitId, providerId: oracle.id, parts: ["train"] });
    const b = await caller.collections.create({ splitId, providerId: bad.id, parts: ["train"], maxRetries: 0 });
    await Promise.all([awaitCollection(srv.app.services, a.id), awaitCollection(srv.app.services, b.id)]);
    const [ca, cb] = await Promise.all([settled(a.id), settled(b.id)]);
    expect(ca.verdicts).toEqual({ pass: ca.samplesTotal });
    expect(cb.verdicts).toEqual({ fail_hidden: cb.samplesTotal });
    const rows = await caller.collections.tasks({ id: b.id });
    const cands = await caller.collections.candidates({ id: b.id, taskRowId: rows[0]?.taskRowId ?? "" });
    expect(cands[0]?.candidate.gradeResult?.tests.some((t) => t.layer === "hidden" && t.outcome === "failed")).toBe(
      true,
    );

    const d = await caller.datasets.create({ name: "verified", splitId, collectionIds: [a.id, b.id] });
    expect(d).toMatchObject({ sampleCount: ca.samplesTotal, oracleSamples: ca.samplesTotal });
    const r = await caller.datasets.replay({ id: d.id });
    const done = await waitFor(
      async () => {
        const x = await caller.datasets.replayStatus({ id: r.id });
        return x.state === "done" && x;
      },
      90_000,
      200,
    );
    expect(done).toMatchObject({ kept: d.sampleCount, dropped: [], resultDatasetId: d.id });
  });

  it("grades again an infra_error answer that a later collection takes from the cache", async () => {
    const oracle = await caller.providers.create({
      name: "oracle 2",
      kind: "reference",
      model: "reference",
      extraParams: {},
    });
    const first = await caller.collections.create({ splitId, providerId: oracle.id, parts: ["train"] });
    await awaitCollection(srv.app.services, first.id);
    await settled(first.id);
    // What a refused or lost grade leaves behind (a version mismatch, a broken agent).
    const db = srv.app.services.db;
    const ids = await queryRows<{ id: string }>(
      db,
      sql`update teacher_candidates set verdict = 'infra_error', verdict_reasons = array['refused at receipt']
          where id in (select candidate_id from teacher_collection_items where collection_id = ${first.id}) returning id`,
    );
    expect(ids.length).toBeGreaterThan(0);
    // positive control: as left, no answer of it is verified
    await expect(caller.datasets.create({ name: "none", splitId, collectionIds: [first.id] })).rejects.toThrow(
      /no passing candidates/,
    );
    const again = await caller.collections.create({ splitId, providerId: oracle.id, parts: ["train"] });
    await awaitCollection(srv.app.services, again.id);
    const c = await settled(again.id);
    expect(c.verdicts).toEqual({ pass: c.samplesTotal });
    // the same answers, from the cache, now judged
    const reused = await queryRows<{ id: string }>(
      db,
      sql`select candidate_id as id from teacher_collection_items where collection_id = ${again.id}`,
    );
    expect(new Set(reused.map((r) => r.id))).toEqual(new Set(ids.map((r) => r.id)));
  });
});
