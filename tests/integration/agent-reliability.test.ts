import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TaskSpec } from "@agentlab/core";
import { getJob, listAttempts, revokeAgent } from "@agentlab/db";
import { agentHome as agentHomeFor, spawnAgent } from "./helpers/agent-process";
import { startTestServer, waitFor, type TestServer } from "./helpers/server";

// Agent reliability against real agent processes: a revoked agent exits with its own exit
// code (and a restarted one does at once), `doctor` checks the credential against the server,
// and SIGTERM or cancel interrupt a grade job promptly (requeued as infra_error, never succeeded).

const EXIT_CREDENTIAL_REFUSED = 3;
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ AGENTLAB_LEASE_TTL_MS: "3000", AGENTLAB_HEARTBEAT_MS: "500" });
});
afterAll(async () => server?.close());

const agentHome = (name: string) => agentHomeFor(server, name);

const online = (agentId: string) =>
  waitFor(
    async () => (await server.db.db.query.agents.findFirst({ where: (a, { eq }) => eq(a.id, agentId) }))?.online,
    60_000,
    100,
  );

describe("a revoked agent", () => {
  it("exits with its own exit code and a clear message; a restart exits at once", async () => {
    const { agentId, home } = await agentHome("revoked-proc");
    const proc = spawnAgent(home, ["run"], { AGENTLAB_SANDBOX: "process" });
    await online(agentId); // positive control: the same process is happily connected before the revoke
    await revokeAgent(server.db.db, agentId);
    server.app.services.agentHub.disconnect(agentId);
    const { code } = await Promise.race([
      proc.exited,
      new Promise<never>((_, rej) => setTimeout(() => rej(new Error(`no exit; output: ${proc.output()}`)), 20_000)),
    ]);
    expect(code).toBe(EXIT_CREDENTIAL_REFUSED);
    expect(proc.output()).toMatch(/revoked by an admin/);
    // Started again with the revoked credential: refused at the handshake, exits instead of retrying.
    const again = spawnAgent(home, ["run"], { AGENTLAB_SANDBOX: "process" });
    const second = await Promise.race([
      again.exited,
      new Promise<never>((_, rej) => setTimeout(() => rej(new Error(`no exit; output: ${again.output()}`)), 20_000)),
    ]);
    expect(second.code).toBe(EXIT_CREDENTIAL_REFUSED);
    expect(again.output()).toMatch(/refused this agent's credential/);
  }, 90_000);

  it("doctor checks the credential against the server: ok, then revoked, then unreachable", async () => {
    const { agentId, home } = await agentHome("doctor");
    const doctor = async (h: string) => {
      const p = spawnAgent(h, ["doctor", "--json"], { AGENTLAB_SANDBOX: "process" });
      await p.exited;
      return JSON.parse(p.output().slice(p.output().indexOf("{"))) as { server: string; problems: string[] };
    };
    const before = await doctor(home);
    expect(before.server).toMatch(/credential ok/);
    expect(before.problems.join("\n")).not.toMatch(/credential|unreachable/i);
    await revokeAgent(server.db.db, agentId);
    const after = await doctor(home);
    expect(after.problems.join("\n")).toMatch(/REVOKED/);
    const gone = await mkdtemp(join(tmpdir(), "agentlab-rel-gone-"));
    await writeFile(
      join(gone, "agent.json"),
      JSON.stringify({ server: "http://127.0.0.1:9", agentId, credential: "agt_nothing_here" }),
    );
    expect((await doctor(gone)).problems.join("\n")).toMatch(/unreachable/);
  }, 90_000);
});

// A task whose candidate sleeps far longer than the test: only an interruption ends the grade early.
const sleepyTask: TaskSpec = {
  id: "sleepy",
  source_group: "sleepy",
  language: "python",
  instruction: "Return x.",
  metadata: {},
  files: [{ path: "solution.py", role: "main", content: "def f(x):\n    return 0\n" }],
  public_tests: [
    { path: "test_public.py", content: "from solution import f\n\ndef test_p():\n    assert f(1) == 1\n" },
  ],
  hidden_tests: [
    { path: "test_hidden.py", content: "from solution import f\n\ndef test_h():\n    assert f(2) == 2\n" },
  ],
  reference: [{ path: "solution.py", content: "def f(x):\n    return x\n" }],
};
const sleepyCandidate = [{ path: "solution.py", content: "import time\ntime.sleep(300)\n\ndef f(x):\n    return x\n" }];

async function startGradeJob(name: string) {
  const { agentId, home } = await agentHome(name);
  const proc = spawnAgent(home, ["run"], {
    AGENTLAB_SANDBOX: "bwrap",
    AGENTLAB_CANCEL_GRACE_MS: "2000",
    AGENTLAB_LABELS: name,
  });
  await online(agentId);
  const job = await server.app.services.queue.enqueue({
    type: "grade",
    payload: { task: sleepyTask, candidate: sleepyCandidate, limits: { wallTimeoutS: 300, cpuSeconds: 300 } },
    requirements: { labels: [name], gpus: 0, gpuMemoryMb: 0 },
    maxAttempts: 3,
  });
  return { agentId, home, proc, job };
}

describe("interrupting a grade job", () => {
  it("SIGTERM ends the agent within seconds and requeues the grade as infra_error", async () => {
    const { proc, job } = await startGradeJob("sigterm");
    await waitFor(async () => (await getJob(server.db.db, job.id))?.state === "running", 60_000, 100);
    // Positive control: left alone, the grade is still running seconds later (the candidate sleeps 300 s).
    await new Promise((r) => setTimeout(r, 3000));
    const mid = await getJob(server.db.db, job.id);
    expect(mid?.state, JSON.stringify({ error: mid?.error, result: mid?.result })).toBe("running");
    const sentAt = Date.now();
    proc.child.kill("SIGTERM");
    const { code, at } = await proc.exited;
    expect(code).toBe(0);
    expect(at - sentAt).toBeLessThan(12_000);
    const j = await getJob(server.db.db, job.id);
    expect(j?.state).toBe("queued");
    const attempts = await listAttempts(server.db.db, job.id);
    expect(attempts.map((a) => a.reason)).toEqual(["infra_error"]);
    expect(attempts[0]?.error ?? "").toMatch(/shut down|interrupted/);
    await server.app.services.queue.cancel(job.id);
  }, 120_000);

  it("cancel stops a running grade promptly and the agent takes the next job", async () => {
    const { proc, job } = await startGradeJob("cancel");
    await waitFor(async () => (await getJob(server.db.db, job.id))?.state === "running", 60_000, 100);
    const at = Date.now();
    await server.app.services.queue.cancel(job.id);
    const done = await waitFor(
      async () => {
        const j = await getJob(server.db.db, job.id);
        return j?.state === "canceled" ? j : null;
      },
      20_000,
      100,
    );
    expect(Date.now() - at).toBeLessThan(12_000);
    expect(done.terminalReason).toBe("canceled");
    proc.child.kill("SIGTERM");
    await proc.exited;
  }, 120_000);
});
