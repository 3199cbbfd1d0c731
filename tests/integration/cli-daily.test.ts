import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import {
  appendLogs,
  claimJob,
  createApiToken,
  createSplit,
  enqueueJob,
  finishAttempt,
  importPool,
  schema,
} from "@agentlab/db";
import { main as cli } from "../../apps/web/cli/main";
import { startTestServer, type TestServer } from "./helpers/server";
import { storeReport } from "./helpers/reports";
import { makeAgent } from "./experiments-harness";
import { makePool, toJsonl } from "../fixtures/tasks/generate";

// The daily-work CLI against the real server over HTTP: experiments, reports, jobs, agents,
// providers and audits, names accepted where ids are, --json, and the two connection errors.

let s: TestServer;
let admin: string;
const dir = mkdtempSync(join(tmpdir(), "agentlab-cli-"));

function capture() {
  const chunks: string[] = [];
  return {
    w: new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(c.toString()), cb()) }),
    text: () => chunks.join(""),
  };
}
async function run(args: string[], env: Record<string, string> = {}) {
  const out = capture();
  const err = capture();
  const code = await cli(
    args,
    { out: out.w, err: err.w, cwd: dir },
    { AGENTLAB_URL: s.url, AGENTLAB_TOKEN: admin, ...env },
  );
  return { code, out: out.text(), err: err.text() };
}

beforeAll(async () => {
  // No local agent and no runner ticks matter here: the CLI reads and writes through the API.
  s = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
  const [u] = await s.db.db
    .insert(schema.users)
    .values({ email: "cli@example.test", name: "cli", passwordHash: "x", role: "admin" })
    .returning();
  if (!u) throw new Error("no user");
  admin = (await createApiToken(s.db.db, { userId: u.id, name: "cli" })).token;
  const res = await importPool(s.db.db, {
    name: "cli-pool",
    lines: [new TextEncoder().encode(toJsonl(makePool(40, 2)))],
  });
  if (!res.ok) throw new Error("pool import failed");
  await createSplit(s.db.db, { poolId: res.poolId, seed: 1, devRatio: 0.25, testRatio: 0.25, name: "main" });
});
afterAll(async () => s?.close());

describe("agentlab CLI for daily work", () => {
  it("adds and lists providers, refusing an empty key variable", async () => {
    expect(await run(["providers", "add", "oracle", "--kind", "reference"])).toMatchObject({
      code: 0,
      out: expect.stringMatching(/^added provider oracle \(/),
    });
    expect(JSON.parse((await run(["providers", "list", "--json"])).out)).toEqual([
      expect.objectContaining({ name: "oracle", kind: "reference", hasApiKey: false }),
    ]);
    expect(
      await run([
        "providers",
        "add",
        "x",
        "--kind",
        "openai",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--api-key-env",
        "AGENTLAB_SURELY_UNSET_VAR",
      ]),
    ).toMatchObject({ code: 2 });
  });

  it("creates an experiment from a YAML recipe with names for split and provider; a bad field is named with its path", async () => {
    const bad = join(dir, "bad.yaml");
    writeFileSync(
      bad,
      "name: bad\nsplitId: cli-pool/main\nteacher:\n  providerId: oracle\nbaseModel: { source: path, ref: /models/tiny }\ntraining: { epochs: 0 }\nevaluation: { graderVersion: g1 }\nseeds: [1]\n",
    );
    const refused = await run(["experiments", "create", "bad.yaml"]);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/^bad\.yaml: training\.epochs: /m);
    expect(JSON.parse((await run(["experiments", "list", "--json"])).out).total).toBe(0);

    writeFileSync(
      join(dir, "good.yaml"),
      readFileSync(bad, "utf8").replace("name: bad", "name: nightly").replace("epochs: 0", "epochs: 1"),
    );
    const made = await run(["experiments", "create", "good.yaml"]);
    expect(made).toMatchObject({ code: 0, out: expect.stringMatching(/^created experiment [0-9a-f-]{36}\n$/) });
    const listed = await run(["experiments", "list"]);
    expect(listed.out.split("\n")[1]).toMatch(/^nightly\trunning\t/);
    const shown = await run(["experiments", "show", "nightly"]);
    expect(shown.out).toMatch(/^nightly \([0-9a-f-]{36}\): running/);
    expect(shown.out).toContain("train:s1");
    expect(JSON.parse((await run(["experiments", "show", "nightly", "--json"])).out)).toMatchObject({
      name: "nightly",
      reportId: null,
    });
    expect(await run(["experiments", "show", "nope"])).toMatchObject({
      code: 2,
      err: expect.stringContaining('no experiment named "nope"'),
    });
  });

  it("cancels by name, and wait ends with exit 1 for a canceled run after drawing its bar", async () => {
    expect(await run(["experiments", "cancel", "nightly"])).toMatchObject({
      code: 0,
      out: expect.stringMatching(/ canceled\n$/),
    });
    const waited = await run(["experiments", "wait", "nightly", "--interval", "0.1"]);
    expect(waited.code).toBe(1);
    expect(waited.err).toMatch(/^\[[#-]{30}\] +\d+% canceled$/m);
    expect(waited.out).toBe("nightly: canceled — canceled by a user\n");
  });

  it("shows and exports a report by experiment name", async () => {
    const id = JSON.parse((await run(["experiments", "list", "--json"])).out).rows[0].id as string;
    await storeReport(s.db.db, id, { base: [1, 0, 0, 0], sft: [1, 1, 1, 0] });
    const shown = await run(["reports", "show", "nightly"]);
    expect(shown.code).toBe(0);
    expect(shown.out).toContain("| split | Base | SFT | Δ |");
    expect(await run(["reports", "export", "nightly", "--format", "csv", "--out", "r.csv"])).toMatchObject({ code: 0 });
    expect(readFileSync(join(dir, "r.csv"), "utf8").split("\n")[0]).toMatch(
      /^split,task_id,source_group,base_verdict,sft_verdict,category/,
    );
    expect(await run(["reports", "export", "nightly", "--format", "pdf"])).toMatchObject({ code: 2 });
  });

  it("lists jobs and prints (and follows to the end) a job's log", async () => {
    const fit = await makeAgent(s.db.db, { shellJobs: true });
    // A label only this job needs, and an agent that claims only shell jobs' kind of work: the
    // runner's own queued jobs (of the canceled run) never get in the way.
    const job = await enqueueJob(s.db.db, {
      type: "shell",
      payload: { argv: ["true"] },
      requirements: { labels: ["cli-logs"] },
    });
    let claimed = await claimJob(s.db.db, { ...fit, labels: ["cli-logs"], shellJobs: true });
    for (let i = 0; claimed && claimed.jobId !== job.id && i < 20; i++)
      claimed = await claimJob(s.db.db, { ...fit, labels: ["cli-logs"], shellJobs: true });
    if (!claimed || claimed.jobId !== job.id) throw new Error("not claimed");
    await appendLogs(s.db.db, fit.agentId, job.id, claimed.attemptId, [
      { seq: 0, stream: "stdout", data: "hello\n" },
      { seq: 1, stream: "stdout", data: "world\n" },
    ]);
    expect(
      JSON.parse((await run(["jobs", "list", "--state", "running", "--json"])).out).map((j: { id: string }) => j.id),
    ).toContain(job.id);
    expect(await run(["jobs", "list", "--state", "nope"])).toMatchObject({ code: 2 });
    expect((await run(["jobs", "logs", job.id])).out).toBe("hello\nworld\n");
    const follow = run(["jobs", "logs", job.id, "--follow", "--interval", "0.1"]);
    await new Promise((r) => setTimeout(r, 300));
    await appendLogs(s.db.db, fit.agentId, job.id, claimed.attemptId, [{ seq: 2, stream: "stdout", data: "done\n" }]);
    await finishAttempt(
      s.db.db,
      {
        jobId: job.id,
        attemptId: claimed.attemptId,
        reason: "succeeded",
        exitCode: 0,
        signal: null,
        result: {},
        error: null,
      },
      fit.agentId,
    );
    const followed = await follow;
    expect(followed.out).toBe("hello\nworld\ndone\n");
    expect(followed.err).toContain("job succeeded");
  });

  it("lists agents, creates an enrollment token, and reports audit status by pool name", async () => {
    const tok = await run(["agents", "token", "gpu-box", "--labels", "gpu,big"]);
    expect(tok.code).toBe(0);
    expect(tok.out.trim().length).toBeGreaterThan(20);
    expect((await run(["agents", "list"])).out.split("\n")[0]).toBe("NAME\tSTATUS\tSANDBOX\tGPUS\tLABELS\tID");
    expect(await run(["audits", "status", "cli-pool"])).toMatchObject({
      code: 0,
      out: "40 tasks: none 40; 0 running\ncross-file: 0 tasks in 0 groups (40 tasks not known yet)\n",
    });
  });

  it("says 'token rejected' for a bad token and 'cannot reach' for a dead server", async () => {
    // Positive control: the same command with the good token succeeds.
    expect((await run(["providers", "list"])).code).toBe(0);
    expect(await run(["providers", "list"], { AGENTLAB_TOKEN: "not-a-token" })).toMatchObject({
      code: 1,
      err: expect.stringContaining(`token rejected by ${s.url}`),
    });
    expect(await run(["providers", "list"], { AGENTLAB_URL: "http://127.0.0.1:9" })).toMatchObject({
      code: 1,
      err: expect.stringContaining("cannot reach http://127.0.0.1:9"),
    });
  });
});
