import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { DEFAULT_EPISODE_BUDGET, EpisodeJobPayload } from "@agentlab/core";
import { createApiToken, importPool, schema } from "@agentlab/db";
import { scriptedPolicy } from "../../apps/agent/src/episodes/policies";
import { runEpisodeWithBranches } from "../../apps/agent/src/episodes/runner";
import { episodePayload } from "../../apps/web/server/episodes/enqueue";
import { storeEpisodeJob } from "../../apps/web/server/episodes/store";
import { makeTask } from "../fixtures/tasks/generate";
import { episodeRig, type EpisodeRig } from "./episodes-rig";
import { runCli } from "./helpers/cli";
import { startTestServer, type TestServer } from "./helpers/server";

// `agentlab episodes list/show` through the real HTTP server, on an episode run on the sandbox
// and judge and stored by the server's own store function.

let s: TestServer;
let rig: EpisodeRig;
let token: string;
let episodeId = "";
const dir = mkdtempSync(join(tmpdir(), "agentlab-cli-episodes-"));

beforeAll(async () => {
  s = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
  rig = episodeRig();
  const db = s.db.db;
  const [u] = await db
    .insert(schema.users)
    .values({ email: "e@example.test", name: "e", passwordHash: "x", role: "member" })
    .returning();
  if (!u) throw new Error("no user");
  token = (await createApiToken(db, { userId: u.id, name: "cli" })).token;
  const imp = await importPool(db, {
    name: "ep-cli",
    lines: [new TextEncoder().encode(JSON.stringify(makeTask(3, 0)))],
  });
  if (!imp.ok) throw new Error("import failed");
  const [row] = await db.select({ id: schema.tasks.id }).from(schema.tasks).where(eq(schema.tasks.poolId, imp.poolId));
  if (!row) throw new Error("no task");
  // As the agent receives it: parsed by the job's contract (defaults filled).
  const payload = EpisodeJobPayload.parse(
    await episodePayload(db, {
      taskRowId: row.id,
      policy: { kind: "scripted", name: "recoverer" },
      seed: 4,
    }),
  );
  const result = await runEpisodeWithBranches(rig.deps(), rig.scratch, {
    task: payload.task,
    budget: DEFAULT_EPISODE_BUDGET,
    policy: scriptedPolicy("recoverer", payload.controlReference),
    seed: 4,
    branching: { k: 1, seedBase: 10 },
  });
  const [job] = await db
    .insert(schema.jobs)
    .values({ type: "episode", payload, state: "succeeded", result, finishedAt: new Date() })
    .returning({ id: schema.jobs.id });
  if (!job) throw new Error("no job");
  episodeId = (await storeEpisodeJob(db, { id: job.id, payload, result })).id;
});
afterAll(async () => {
  rig?.close();
  await s?.close();
});

const run = (args: string[]) => runCli(args, { cwd: dir, env: { AGENTLAB_URL: s.url, AGENTLAB_TOKEN: token } });

describe("agentlab episodes", () => {
  it("list shows main episodes, --all their continuations too", async () => {
    const r = await run(["episodes", "list"]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(episodeId);
    expect(r.out).toMatch(/scripted:recoverer\s+seed 4\s+pass\s+7 turns\s+2 test runs/);
    expect(r.out.trim().split("\n")).toHaveLength(1);
    const all = await run(["episodes", "list", "--all"]);
    expect(all.out).toContain(`continuation of ${episodeId}`);
    expect(all.out.trim().split("\n")).toHaveLength(3);
  });

  it("show prints the steps, the refused and failed runs, and each branch point's pass rate", async () => {
    const r = await run(["episodes", "show", episodeId]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain("verdict pass (judge), 7 turns, 2 test runs, submitted by policy");
    expect(r.out).toMatch(/3\s+run_public_tests\s+\[ok\] public tests: failed/);
    expect(r.out).toMatch(/branch point after_failed_tests \([0-9a-f]{12}\): 1\/1 continuations pass \(100%\)/);
    const json = JSON.parse((await run(["episodes", "show", episodeId, "--json"])).out) as { steps: unknown[] };
    expect(json.steps).toHaveLength(7);
  });

  it("an unknown episode is a clear error", async () => {
    const r = await run(["episodes", "show", "00000000-0000-4000-8000-000000000000"]);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain("no such episode");
  });
});
