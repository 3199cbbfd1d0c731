import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, inArray } from "drizzle-orm";
import { EpisodeJobResult } from "@agentlab/core";
import { createSplit, getEpisode, importPool, listEpisodes, schema } from "@agentlab/db";
import { Grader } from "../../apps/agent/src/grading/grader";
import { ReferenceIds } from "../../apps/agent/src/grading/reference-ids";
import { makeEpisodeHandler } from "../../apps/agent/src/episodes/job";
import { enqueueEpisode } from "../../apps/web/server/episodes/enqueue";
import { syncEpisodes } from "../../apps/web/server/episodes/store";
import { makeTask } from "../fixtures/tasks/generate";
import { sandboxCfg } from "./helpers/judge";
import { startInProcessAgent, startTestServer, waitFor, type TestServer } from "./helpers/server";

// An episode job end to end: enqueued by the server (controlReference filled for the scripted
// control only), claimed by an in-process agent over socket.io, run by its episode handler on the
// bwrap sandbox and the judge, its result checked against the contract on both ends, then stored
// by the server's sweep.

let srv: TestServer;
let grader: Grader;
let agent: Awaited<ReturnType<typeof startInProcessAgent>>;
const taskRows: string[] = [];

beforeAll(async () => {
  srv = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
  const cfg = sandboxCfg();
  grader = new Grader(cfg, { workers: 1, limits: { wallTimeoutS: 20, testTimeoutS: 5 } });
  agent = await startInProcessAgent(srv, "episodes", {
    pollMs: 200,
    handlers: { episode: makeEpisodeHandler({ grader, sandbox: cfg, refs: new ReferenceIds(grader) }) },
  });
  const db = srv.app.services.db;
  const tasks = [makeTask(1, 0), makeTask(2, 1)];
  const imp = await importPool(db, {
    name: "episodes",
    lines: [new TextEncoder().encode(tasks.map((t) => JSON.stringify(t)).join("\n"))],
  });
  if (!imp.ok) throw new Error("import failed");
  await createSplit(db, { poolId: imp.poolId, seed: 1, devRatio: 0, testRatio: 0 });
  const rows = await db.select({ id: schema.tasks.id }).from(schema.tasks).where(eq(schema.tasks.poolId, imp.poolId));
  taskRows.push(...rows.map((r) => r.id));
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  grader?.close();
  await srv?.close();
});

describe("episode jobs through the queue", () => {
  it("the solver's and the wrong policy's episodes come back with the judge's verdicts and are stored", async () => {
    const [a, b] = taskRows;
    if (!a || !b) throw new Error("no tasks");
    const { services } = srv.app;
    const solver = await enqueueEpisode(services, {
      taskRowId: a,
      policy: { kind: "scripted", name: "solver" },
      seed: 1,
      branching: { k: 1 },
    });
    const wrong = await enqueueEpisode(services, {
      taskRowId: b,
      policy: { kind: "scripted", name: "wrong" },
      seed: 2,
    });
    // Only the control that applies the reference was handed it.
    expect(JSON.stringify(solver.payload)).toContain("controlReference");
    expect(JSON.stringify(wrong.payload)).not.toContain("controlReference");
    const ids = [solver.id, wrong.id];
    const rows = await waitFor(
      async () => {
        const r = await services.db.select().from(schema.jobs).where(inArray(schema.jobs.id, ids));
        return r.every((j) => ["succeeded", "failed", "canceled"].includes(j.state)) && r;
      },
      240_000,
      250,
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(solver.id)?.state, byId.get(solver.id)?.error ?? "").toBe("succeeded");
    expect(EpisodeJobResult.parse(byId.get(solver.id)?.result).episode.verdict).toBe("pass");
    expect(EpisodeJobResult.parse(byId.get(wrong.id)?.result).episode.verdict).toMatch(/^fail_/);
    // The server's episodes loop stores them when their jobs end; a sweep now stores whatever it
    // has not yet (0, 1 or 2), and each exactly once.
    await syncEpisodes(services);
    expect(await syncEpisodes(services)).toBe(0);
    const stored = await listEpisodes(services.db, { mainOnly: true });
    expect(stored.filter((e) => e.jobId === solver.id || e.jobId === wrong.id)).toHaveLength(2);
    const solved = stored.find((e) => e.jobId === solver.id);
    expect(solved).toMatchObject({ verdict: "pass", policyName: "scripted:solver" });
    const full = solved ? await getEpisode(services.db, solved.id) : null;
    expect(full?.branches.map((x) => x.kind).sort()).toEqual(["after_failed_tests", "start"]);
    expect(full?.continuations).toHaveLength(2);
  });
});
