import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { createApiToken, insertPreferencePairs, schema } from "@agentlab/db";
import { ExperimentConfig, type ScoredPair } from "@agentlab/core";
import { main as cli } from "../../apps/web/cli/main";
import { startTestServer, type TestServer } from "./helpers/server";
import { baseConfig, makeSplit } from "./experiments-harness";

// `agentlab pairs export` writes an experiment's stored preference pairs as JSONL, all
// rounds or one, through the real HTTP server.
let s: TestServer;
let token: string;
let experimentId: string;
let trainTasks: string[];
const dir = mkdtempSync(join(tmpdir(), "agentlab-cli-pairs-"));

beforeAll(async () => {
  s = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
  const [u] = await s.db.db
    .insert(schema.users)
    .values({ email: "m@example.test", name: "m", passwordHash: "x", role: "member" })
    .returning();
  if (!u) throw new Error("no user");
  token = (await createApiToken(s.db.db, { userId: u.id, name: "cli" })).token;
  const { splitId } = await makeSplit(s.db.db);
  const rows = await s.db.db.select().from(schema.splitAssignments);
  trainTasks = rows
    .filter((r) => r.splitId === splitId && r.part === "train")
    .map((r) => r.taskId)
    .sort();
  const [exp] = await s.db.db
    .insert(schema.experiments)
    .values({ name: "dpo", splitId, config: ExperimentConfig.parse(baseConfig(splitId)) })
    .returning({ id: schema.experiments.id });
  if (!exp) throw new Error("no experiment");
  experimentId = exp.id;
});
afterAll(async () => s?.close());

function capture() {
  const chunks: string[] = [];
  const w = new Writable({ write: (c: Buffer, _e, cb) => (chunks.push(c.toString()), cb()) });
  return { w, text: () => chunks.join("") };
}
async function run(args: string[]) {
  const out = capture();
  const err = capture();
  const code = await cli(args, { out: out.w, err: err.w, cwd: dir }, { AGENTLAB_URL: s.url, AGENTLAB_TOKEN: token });
  return { code, out: out.text(), err: err.text() };
}

const pair = (taskId: string, sample: number): ScoredPair => ({
  pairKey: `${taskId}:base:${sample}`,
  taskId,
  pairSource: "cross_state",
  prompt: [{ role: "user", content: `fix ${taskId}` }],
  chosenSource: "teacher",
  chosenText: "good",
  rejectedSource: "on_policy",
  rejectedModelKey: "base",
  rejectedSample: sample,
  rejectedText: `bad ${sample}`,
  rejectedVerdict: "fail_public",
  failingLayer: "public",
  failingTests: ["test_p.py::test_x"],
  marginBefore: -0.5 * sample,
  weight: 1,
});

describe("cli: pairs export", () => {
  it("exports every round, or one, with the stored fields", async () => {
    const [a, b] = trainTasks;
    await insertPreferencePairs(s.db.db, { experimentId, round: 0, pairs: [pair(a ?? "", 0), pair(b ?? "", 1)] });
    await insertPreferencePairs(s.db.db, { experimentId, round: 1, pairs: [pair(a ?? "", 2)] });
    const all = await run(["pairs", "export", experimentId, "--out", "all.jsonl"]);
    expect(all).toMatchObject({ code: 0, out: expect.stringContaining("wrote 3 pairs") });
    const lines = readFileSync(join(dir, "all.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.round, l.pairKey])).toEqual([
      [0, `${a}:base:0`],
      [0, `${b}:base:1`],
      [1, `${a}:base:2`],
    ]);
    expect(lines[1]).toMatchObject({
      taskKey: b,
      failingLayer: "public",
      failingTests: ["test_p.py::test_x"],
      marginBefore: -0.5,
    });
    const one = await run(["pairs", "export", experimentId, "--round", "1", "--out", "r1.jsonl"]);
    expect(one.out).toContain("wrote 1 pairs");
    expect(readFileSync(join(dir, "r1.jsonl"), "utf8").trim().split("\n")).toHaveLength(1);
    // One pair source: every stored pair here is cross-state, none near-miss.
    expect((await run(["pairs", "export", experimentId, "--source", "cross_state", "--out", "c.jsonl"])).out).toContain(
      "wrote 3 pairs",
    );
    expect((await run(["pairs", "export", experimentId, "--source", "near_miss", "--out", "n.jsonl"])).out).toContain(
      "wrote 0 pairs",
    );
  });

  it("refuses an unknown experiment and a bad round (the export above as positive control)", async () => {
    const missing = await run(["pairs", "export", "00000000-0000-4000-8000-000000000099", "--out", "x.jsonl"]);
    expect(missing.code).not.toBe(0);
    expect(missing.err).toContain("not found");
    const bad = await run(["pairs", "export", experimentId, "--round=1.5", "--out", "x.jsonl"]);
    expect(bad).toMatchObject({ code: 2, err: expect.stringContaining("--round must be an integer >= 0") });
    const source = await run(["pairs", "export", experimentId, "--source", "mutants", "--out", "x.jsonl"]);
    expect(source).toMatchObject({ code: 2, err: expect.stringContaining("--source must be one of cross_state") });
  });
});
