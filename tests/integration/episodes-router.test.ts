import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eq, inArray } from "drizzle-orm";
import { EpisodeJobPayload } from "@agentlab/core";
import { createSplit, importPool, schema } from "@agentlab/db";
import { Grader } from "../../apps/agent/src/grading/grader";
import { ReferenceIds } from "../../apps/agent/src/grading/reference-ids";
import { makeEpisodeHandler } from "../../apps/agent/src/episodes/job";
import { syncEpisodes } from "../../apps/web/server/episodes/store";
import { makeTask } from "../fixtures/tasks/generate";
import { callerAs, userCaller, type Caller } from "./helpers/callers";
import { sandboxCfg } from "./helpers/judge";
import { startInProcessAgent, startTestServer, waitFor, type TestServer } from "./helpers/server";

// `episodes.create` end to end through the tRPC router: a member's call enqueues the job (the
// reference handed to the scripted control only, the creator recorded), an in-process agent runs
// it on the bwrap sandbox and the judge, the server stores it, and `list` (per split) and `byId`
// (the trajectory) read it back. Refusals each beside the call that succeeds: a viewer's create,
// an unknown task, a client that tries to hand a policy the reference itself, a budget past its cap.

let srv: TestServer;
let grader: Grader;
let agent: Awaited<ReturnType<typeof startInProcessAgent>>;
let member: Caller;
let memberId = "";
let viewer: Caller;
let taskRowId = "";
let splitId = "";

beforeAll(async () => {
  srv = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
  const { services } = srv.app;
  const cfg = sandboxCfg();
  grader = new Grader(cfg, { workers: 1, limits: { wallTimeoutS: 20, testTimeoutS: 5 } });
  agent = await startInProcessAgent(srv, "episodes-router", {
    pollMs: 200,
    handlers: { episode: makeEpisodeHandler({ grader, sandbox: cfg, refs: new ReferenceIds(grader) }) },
  });
  const imp = await importPool(services.db, {
    name: "episodes-router",
    lines: [new TextEncoder().encode(JSON.stringify(makeTask(5, 0)))],
  });
  if (!imp.ok) throw new Error("import failed");
  ({
    split: { id: splitId },
  } = await createSplit(services.db, { poolId: imp.poolId, seed: 1, devRatio: 0, testRatio: 0 }));
  const [row] = await services.db
    .select({ id: schema.tasks.id })
    .from(schema.tasks)
    .where(eq(schema.tasks.poolId, imp.poolId));
  if (!row) throw new Error("no task");
  taskRowId = row.id;
  ({ caller: member, userId: memberId } = await userCaller(services, "member"));
  viewer = await callerAs(services, "viewer");
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  grader?.close();
  await srv?.close();
});

const jobRows = (ids: string[]) => srv.app.services.db.select().from(schema.jobs).where(inArray(schema.jobs.id, ids));

describe("episodes.create through the router", () => {
  it("enqueues the episode job, which runs to the judge's verdict and reads back as a trajectory", async () => {
    const solver = await member.episodes.create({
      taskRowId,
      policy: { kind: "scripted", name: "recoverer" },
      seed: 3,
      branching: { k: 1 },
    });
    const wrong = await member.episodes.create({ taskRowId, policy: { kind: "scripted", name: "wrong" }, seed: 4 });
    const [queued] = await jobRows([solver.jobId]);
    expect(queued?.type).toBe("episode");
    expect(queued?.createdBy).toBe(memberId);
    const payload = EpisodeJobPayload.parse(queued?.payload);
    expect(payload.controlReference?.map((f) => f.path)).toEqual(["solution.py"]);
    const [wrongJob] = await jobRows([wrong.jobId]);
    expect(EpisodeJobPayload.parse(wrongJob?.payload).controlReference).toBeUndefined();

    const ids = [solver.jobId, wrong.jobId];
    const done = await waitFor(
      async () => {
        const r = await jobRows(ids);
        return r.every((j) => ["succeeded", "failed", "canceled"].includes(j.state)) && r;
      },
      240_000,
      250,
    );
    for (const j of done) expect(j.state, j.error ?? "").toBe("succeeded");
    await syncEpisodes(srv.app.services);

    const listed = await viewer.episodes.list({ splitId });
    const main = listed.find((e) => e.jobId === solver.jobId);
    expect(main).toMatchObject({ verdict: "pass", policyName: "scripted:recoverer", seed: 3, testRuns: 2 });
    expect(listed.find((e) => e.jobId === wrong.jobId)?.verdict).toMatch(/^fail_/);
    expect(await viewer.episodes.list({ splitId, all: true })).toHaveLength(listed.length + 2);

    const t = await viewer.episodes.byId({ id: main?.id ?? "" });
    expect(t.steps.map((s) => s.tool)).toContain("edit_file");
    // The recoverer's wrong edit and its fix are both visible as file changes of solution.py.
    const edits = t.steps.filter((s) => s.changes.length > 0);
    expect(edits.length).toBeGreaterThanOrEqual(2);
    expect(edits.every((s) => s.changes.every((c) => c.path === "solution.py"))).toBe(true);
    // A failed test run's observation is the pytest summary the policy saw.
    const firstRun = t.steps.find((s) => s.tool === "run_public_tests");
    expect(firstRun?.result?.output).toMatch(/failed/i);
    expect(t.branches.map((b) => b.kind).sort()).toEqual(["after_failed_tests", "start"]);
    for (const b of t.branches) expect(b.runs).toHaveLength(1);
    // A continuation starts from its state's counters (the recovery state: 4 turns, 1 test run).
    const recovery = t.branches.find((b) => b.kind === "after_failed_tests");
    const cont = await viewer.episodes.byId({ id: recovery?.runs[0]?.id ?? "" });
    expect(cont.startCounters).toMatchObject({ turns: 4, testRuns: 1 });
    expect(cont.episode.parentEpisodeId).toBe(main?.id);
  }, 300_000);

  it("refuses a viewer's create; the member's identical call is the control", async () => {
    const input = { taskRowId, policy: { kind: "scripted", name: "wrong" }, seed: 9 } as const;
    await expect(viewer.episodes.create(input)).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(member.episodes.create(input)).resolves.toMatchObject({ jobId: expect.any(String) });
  });

  it("refuses an unknown task, a reference handed in by the client, and a budget past its cap", async () => {
    const ok = { taskRowId, policy: { kind: "scripted", name: "wrong" }, seed: 10 } as const;
    await expect(
      member.episodes.create({ ...ok, taskRowId: "00000000-0000-4000-8000-000000000000" }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
    // The reference reaches a policy only from the server's own copy of the task.
    const forged = { ...ok, controlReference: [{ path: "solution.py", content: "def f(x): return x\n" }] };
    await expect(member.episodes.create(forged)).rejects.toMatchObject({ code: "BAD_REQUEST" });
    await expect(member.episodes.create({ ...ok, budget: { maxTurns: 10_000 } })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    await expect(member.episodes.create({ ...ok, budget: { maxTurns: 12 } })).resolves.toMatchObject({
      jobId: expect.any(String),
    });
  });

  it("lists by experiment or collection scope only one at a time, and an unknown scope is not found", async () => {
    await expect(viewer.episodes.list({ splitId, collectionId: splitId })).rejects.toMatchObject({
      code: "BAD_REQUEST",
    });
    await expect(viewer.episodes.list({ experimentId: splitId })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(viewer.episodes.list({ collectionId: splitId })).rejects.toMatchObject({ code: "NOT_FOUND" });
    // Control: the split's own scope lists its episodes; another split's lists none of them.
    expect((await viewer.episodes.list({ splitId })).length).toBeGreaterThan(0);
    expect(await viewer.episodes.list({ splitId: "00000000-0000-4000-8000-000000000000" })).toEqual([]);
  });
});
