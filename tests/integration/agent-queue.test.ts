import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFile, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { getJob, listAttempts, queryRows, readLogs } from "@agentlab/db";
import { startInProcessAgent, startTestServer, waitFor, type TestServer } from "./helpers/server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

describe("agents and the job queue over socket.io", () => {
  it("runs 500 jobs on 4 agents, each exactly once, with logs before the terminal state", async () => {
    const agents = await Promise.all([1, 2, 3, 4].map((i) => startInProcessAgent(server, `a${i}`)));
    const dir = await mkdtemp(join(tmpdir(), "agentlab-once-"));
    const ledger = join(dir, "ledger");
    const jobs = await server.app.services.queue.enqueueMany(
      Array.from({ length: 500 }, (_, i) => ({
        type: "shell" as const,
        payload: { argv: ["sh", "-c", `echo ${i} >> ${ledger}; echo out-${i}`] },
      })),
    );
    await waitFor(
      async () => {
        const [row] = await queryRows<{ n: number }>(
          server.db.db,
          sql`select count(*)::int as n from jobs where state = 'succeeded'`,
        );
        return (row?.n ?? 0) === 500;
      },
      120_000,
      200,
    );
    const lines = (await readFile(ledger, "utf8")).trim().split("\n").sort();
    expect(lines).toHaveLength(500);
    expect(new Set(lines).size).toBe(500);
    const sample = jobs[123];
    if (!sample) throw new Error("missing job");
    const [attempt] = await listAttempts(server.db.db, sample.id);
    expect(attempt?.reason).toBe("succeeded");
    const logs = await readLogs(server.db.db, attempt?.id ?? "");
    expect(logs.map((l) => l.data).join("")).toBe("out-123\n");
    const [{ n } = { n: -1 }] = await queryRows<{ n: number }>(
      server.db.db,
      sql`select count(*)::int as n from job_attempts`,
    );
    expect(n).toBe(500);
    await Promise.all(agents.map((a) => a.stop()));
  });

  it("cancel kills the job's whole process tree", async () => {
    const agent = await startInProcessAgent(server, "canceler");
    const dir = await mkdtemp(join(tmpdir(), "agentlab-tree-"));
    const pids = join(dir, "pids");
    const job = await server.app.services.queue.enqueue({
      type: "shell",
      payload: {
        argv: ["sh", "-c", `sleep 300 & echo $! >> ${pids}; sleep 300 & echo $! >> ${pids}; echo $$ >> ${pids}; wait`],
      },
    });
    await waitFor(async () => (await readFile(pids, "utf8").catch(() => "")).trim().split("\n").length === 3);
    await server.app.services.queue.cancel(job.id);
    const done = await waitFor(async () => {
      const j = await getJob(server.db.db, job.id);
      return j?.state === "canceled" ? j : null;
    });
    expect(done.terminalReason).toBe("canceled");
    // A killed process may linger as a zombie until its new parent reaps it: that counts as dead.
    const isAlive = async (pid: number) => {
      const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
      return stat !== null && !/^\d+ \(.*\) Z/.test(stat);
    };
    const tree = (await readFile(pids, "utf8")).trim().split("\n").map(Number);
    await waitFor(async () => (await Promise.all(tree.map(isAlive))).every((a) => !a), 5000).catch(() => null);
    expect(await Promise.all(tree.map(isAlive))).toEqual([false, false, false]);
    await agent.stop();
  });

  it("delivers a result after a server restart mid-job", async () => {
    const agent = await startInProcessAgent(server, "survivor");
    const job = await server.app.services.queue.enqueue({
      type: "shell",
      payload: { argv: ["sh", "-c", "sleep 1.5; echo finished"] },
    });
    await waitFor(async () => (await getJob(server.db.db, job.id))?.state === "running");
    await server.restart();
    const done = await waitFor(async () => {
      const j = await getJob(server.db.db, job.id);
      return j?.state === "succeeded" ? j : null;
    }, 30_000);
    expect(done.attempts).toBe(1);
    await agent.stop();
  });
});
