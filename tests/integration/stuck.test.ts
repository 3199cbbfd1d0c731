import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import type { Capabilities } from "@agentlab/core";
import { getJob, schema } from "@agentlab/db";
import { Supervisor } from "../../apps/agent/src/supervisor";
import { startTestApp, viewerOf, type TestApp } from "./auth-helpers";
import { createTestDatabase, type TestDb } from "./helpers/db";
import { enrollTestAgent, testCapabilities, waitFor } from "./helpers/server";
import { gradePayload, gradeResult } from "./helpers/payloads";

// Why a job is stuck, server side: queued jobs no online agent can claim are explained (reason and
// fix), and the Agents page's re-run makes the agent re-test its sandbox without a restart; once
// it passes, the same agent claims the job that was stuck.

let t: TestDb;
let app: TestApp;
let admin: ReturnType<typeof viewerOf>;
beforeAll(async () => {
  t = await createTestDatabase();
  app = await startTestApp(t, { LOG_LEVEL: "silent" });
  const [u] = await t.db
    .insert(schema.users)
    .values({ email: "stuck@lab.test", name: "a", passwordHash: "x", role: "admin" })
    .returning();
  if (!u) throw new Error("no user");
  admin = viewerOf({ id: u.id, email: u.email, name: u.name, role: "admin" });
}, 60_000);
afterAll(async () => (await app?.close(), await t?.drop()));

describe("why is it stuck", () => {
  it("says no online agent passes the sandbox self-test, then a re-test without restart unsticks the job", async () => {
    const caller = app.caller(admin);
    const job = await app.app.services.queue.enqueue({ type: "grade", payload: gradePayload() });
    // Nobody online yet.
    expect((await caller.agents.whyStuck({ jobId: job.id }))[0]?.stuck.reason).toBe("no agent is online");

    const { agentId, credential } = await enrollTestAgent(t, "local");
    const failing: Capabilities = {
      ...testCapabilities(),
      sandbox: { backend: "bwrap", selfTestPassed: false, detail: "bwrap not found" },
    };
    let installed = false; // flipped by the test: "bubblewrap got installed"
    const supervisor = new Supervisor({
      serverUrl: app.url,
      credential,
      stateDir: await mkdtemp(join(tmpdir(), "agentlab-stuck-")),
      capabilities: failing,
      handlers: { grade: async () => ({ reason: "succeeded", result: gradeResult() }) },
      runtime: { python: null, sandboxBackend: "bwrap", sandboxOk: false },
      log: pino({ level: "silent" }),
      pollMs: 200,
      retestSandbox: async () => ({
        ...failing,
        sandbox: installed
          ? { backend: "bwrap", selfTestPassed: true, detail: "all probes contained" }
          : failing.sandbox,
      }),
    });
    await supervisor.start();
    try {
      await waitFor(
        async () => (await t.db.query.agents.findFirst({ where: (a, { eq }) => eq(a.id, agentId) }))?.online,
      );
      const [group] = await caller.agents.whyStuck({ jobId: job.id });
      expect(group?.stuck.reason).toBe("no online agent has a passing sandbox self-test (local: bwrap not found)");
      expect(group?.stuck.fix).toMatch(/sudo apt-get install -y bubblewrap/);
      expect(group?.requires).toBe("an online agent with a passing sandbox self-test");
      expect((await caller.agents.whyStuck({})).map((g) => g.count)).toEqual([1]);
      // Scoped to an experiment, only its jobs (and its collections' grade jobs) count: none here.
      expect(await caller.agents.whyStuck({ experimentId: "00000000-0000-4000-8000-000000000001" })).toEqual([]);
      // The agent is online and idle, and the job really is not claimed (this is what "stuck" means).
      await new Promise((r) => setTimeout(r, 1000));
      expect((await getJob(t.db, job.id))?.state).toBe("queued");

      installed = true;
      await caller.agents.retestSandbox({ id: agentId });
      await waitFor(async () => (await getJob(t.db, job.id))?.state === "succeeded", 15_000);
      expect(await caller.agents.whyStuck({})).toEqual([]);
      const listed = (await caller.agents.list()).find((a) => a.id === agentId);
      expect((listed?.capabilities as Capabilities | null)?.sandbox.selfTestPassed).toBe(true);
    } finally {
      await supervisor.stop(0);
    }
  }, 60_000);

  it("refuses a re-test for an agent that is not connected", async () => {
    const { agentId } = await enrollTestAgent(t, "offline");
    await expect(app.caller(admin).agents.retestSandbox({ id: agentId })).rejects.toMatchObject({
      code: "PRECONDITION_FAILED",
    });
  });
});
