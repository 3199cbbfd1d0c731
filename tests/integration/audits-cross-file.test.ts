import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { TaskSpec } from "@agentlab/core";
import { createApiToken, importPool, schema } from "@agentlab/db";
import { crossFileSandboxed } from "../../apps/agent/src/grading/cross-file";
import { main as cli } from "../../apps/web/cli/main";
import { appRouter } from "../../apps/web/server/routers";
import { createCallerFactory } from "../../apps/web/server/trpc/init";
import { sandboxCfg } from "./helpers/judge";
import { startAuditAgent } from "./helpers/audit-agent";
import { startTestServer, waitFor, type TestServer } from "./helpers/server";

// Cross-file uses recorded by the admission audit end to end: the real audit handler runs
// cross_file.py beside the grader, the sync loop stores the result, and the pool summary (tRPC and
// `agentlab audits status`) counts cross-file tasks and their source groups. The control task
// imports the dependency's name and never reads it: a mere import is no use.

const limits = { path: "limits.py", role: "dependency" as const, content: "LIMIT = 3\n" };
const capTask = (id: string, group: string, reference: string, buggy: string): TaskSpec => ({
  id,
  source_group: group,
  language: "python",
  instruction: `The function capped in solution.py fails some tests (${id}). Fix it.`,
  metadata: {},
  files: [{ path: "solution.py", role: "main", content: buggy }, limits],
  public_tests: [
    {
      path: "test_public.py",
      content: "from solution import capped\n\ndef test_small():\n    assert capped(1) == 1\n",
    },
  ],
  hidden_tests: [
    {
      path: "test_hidden.py",
      content: "from solution import capped\n\ndef test_cap():\n    assert capped(5) == 3\n    assert capped(2) == 2\n",
    },
  ],
  reference: [{ path: "solution.py", content: reference }],
});
const reads = capTask(
  "cross/reads",
  "cross/g1",
  "from limits import LIMIT\n\ndef capped(x):\n    return min(x, LIMIT)\n",
  "from limits import LIMIT\n\ndef capped(x):\n    return x\n",
);
const importsOnly = capTask(
  "cross/imports-only",
  "cross/g2",
  "from limits import LIMIT  # noqa: F401\n\ndef capped(x):\n    return min(x, 3)\n",
  "from limits import LIMIT  # noqa: F401\n\ndef capped(x):\n    return x\n",
);
// Same source group as `reads`, reading the name through the module: the summary counts the group once.
const readsViaModule = capTask(
  "cross/reads-via-module",
  "cross/g1",
  "import limits\n\ndef capped(x):\n    return min(x, limits.LIMIT)\n",
  "import limits\n\ndef capped(x):\n    return x\n",
);
const encode = (ts: TaskSpec[]) => [new TextEncoder().encode(ts.map((t) => JSON.stringify(t)).join("\n"))];

const createCaller = createCallerFactory(appRouter);
let srv: TestServer;
let auditor: Awaited<ReturnType<typeof startAuditAgent>>;
let member: ReturnType<typeof createCaller>;
let token = "";

beforeAll(async () => {
  srv = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
  auditor = await startAuditAgent(srv, "agentlab-cross-file-");
  const [u] = await srv.app.services.db
    .insert(schema.users)
    .values({ email: "member@lab.test", name: "member", passwordHash: "x", role: "member" })
    .returning();
  if (!u) throw new Error("no user");
  token = (await createApiToken(srv.app.services.db, { userId: u.id, name: "cli" })).token;
  member = createCaller({
    ...srv.app.services,
    viewer: { userId: u.id, email: u.email, name: u.name, role: "member", via: "token", csrfToken: null },
    csrfHeader: null,
    ip: "127.0.0.1",
    sessionToken: null,
    setCookie: () => {},
  });
}, 120_000);

afterAll(async () => {
  await auditor?.stop();
  await srv?.close();
});

async function importTasks(name: string, tasks: TaskSpec[]) {
  const imp = await importPool(srv.app.services.db, { name, lines: encode(tasks) });
  if (!imp.ok) throw new Error("import failed");
  const page = await member.tasks.list({ poolId: imp.poolId, limit: 10 });
  return { poolId: imp.poolId, rowId: Object.fromEntries(page.items.map((t) => [t.taskId, t.id])) };
}

const settled = (poolId: string) =>
  waitFor(
    async () => {
      const s = await member.audits.summary({ poolId });
      return s.byState.pending === 0 && s.byState.none === 0 && s;
    },
    110_000,
    200,
  );

async function status(poolId: string) {
  const chunks: string[] = [];
  const out = new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(c.toString()), cb()) });
  const err = new Writable({ write: (_c, _e, cb) => cb() });
  const code = await cli(
    ["audits", "status", poolId],
    { out, err, cwd: auditor.stateDir },
    { AGENTLAB_URL: srv.url, AGENTLAB_TOKEN: token },
  );
  return { code, out: chunks.join("") };
}

describe("cross-file uses in admission audits", () => {
  it("records the dependency name the reference reads, [] for a mere import, and counts tasks and groups", async () => {
    const { poolId, rowId } = await importTasks("cross-file", [reads, importsOnly]);
    // Before any audit nothing is known: not counted as cross-file, counted as unknown.
    expect((await member.audits.summary({ poolId })).crossFile).toEqual({ tasks: 0, groups: 0, unknown: 2 });

    await member.audits.create({ poolId, sandbox: "process", maxMutants: 0 });
    const s = await settled(poolId);
    expect(s.byState).toMatchObject({ passed: 2, failed: 0, error: 0 });
    const [readsAudit] = await member.audits.list({ taskId: rowId[reads.id] ?? "" });
    const [importAudit] = await member.audits.list({ taskId: rowId[importsOnly.id] ?? "" });
    expect(readsAudit?.result?.crossFile).toEqual(["limits.LIMIT"]);
    expect(importAudit?.result?.crossFile).toEqual([]);
    expect(s.crossFile).toEqual({ tasks: 1, groups: 1, unknown: 0 });
    expect(await status(poolId)).toEqual({ code: 0, out: expect.stringContaining("cross-file: 1 task in 1 group\n") });
  }, 120_000);

  it("counts a source group once however many of its tasks are cross-file", async () => {
    // `reads` reuses its finished audit (same content); only the new task is audited.
    const { poolId, rowId } = await importTasks("cross-file-groups", [reads, readsViaModule]);
    await member.audits.create({ poolId, sandbox: "process", maxMutants: 0 });
    const s = await settled(poolId);
    const [viaModule] = await member.audits.list({ taskId: rowId[readsViaModule.id] ?? "" });
    expect(viaModule?.result?.crossFile).toEqual(["limits.LIMIT"]);
    expect(s.crossFile).toEqual({ tasks: 2, groups: 1, unknown: 0 });
  }, 120_000);

  it("computes the same uses inside the bubblewrap sandbox", async () => {
    const cfg = sandboxCfg({ scratchDir: join(auditor.stateDir, "bwrap-scratch") });
    expect(await crossFileSandboxed(cfg, reads)).toEqual(["limits.LIMIT"]);
    expect(await crossFileSandboxed(cfg, importsOnly)).toEqual([]);
  });
});
