import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inArray } from "drizzle-orm";
import { EpisodeJobResult, GradeVerdict, MALFORMED_TOOL_CALL, type EpisodePolicyRequest } from "@agentlab/core";
import { createSplit, getEpisode, importPool, listEpisodes, schema } from "@agentlab/db";
import { Grader } from "../../apps/agent/src/grading/grader";
import { ReferenceIds } from "../../apps/agent/src/grading/reference-ids";
import { makeEpisodeHandler } from "../../apps/agent/src/episodes/job";
import { findPython } from "../../apps/agent/src/trainer/python";
import { syncEpisodes } from "../../apps/web/server/episodes/store";
import { incrementTask } from "./episodes-rig";
import { callerAs, type Caller } from "./helpers/callers";
import { sandboxCfg } from "./helpers/judge";
import { startInProcessAgent, startTestServer, waitFor, type TestServer } from "./helpers/server";
import { buildTinyModel } from "./helpers/tiny-model";

// The local-model policy through the real agent job path: the server enqueues episodes of a tiny
// random model, the agent's episode handler starts the trainer's `episode-policy` (the model kept
// loaded for the job), each turn is rendered with a minimal Qwen-style tool template (the tiny
// model's own ChatML template ignores `tools`), generated with a per-turn seed, parsed, and handed
// to the environment; the judge decides. Its pass rate is whatever it is. The control replaces the
// model's completions (the trainer's test hook) with well-formed calls and one malformed call: the
// parsed calls reach the environment and pass in the judge, the malformed one is a refused turn.

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const python = findPython(null, { root: join(ROOT, "apps/agent") });
const HOOK = "AGENTLAB_TEST_POLICY_COMPLETIONS";

let srv: TestServer;
let grader: Grader;
let agent: Awaited<ReturnType<typeof startInProcessAgent>>;
let member: Caller;
let splitId = "";
let model = "";

beforeAll(async () => {
  process.env.OMP_NUM_THREADS ??= "1"; // the trainer inherits it: one thread on a shared box
  srv = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
  const { services } = srv.app;
  const cfg = sandboxCfg();
  grader = new Grader(cfg, { workers: 1, limits: { wallTimeoutS: 20, testTimeoutS: 5 } });
  // A context long enough for a few turns: the tiny byte-level vocabulary spends ~1 token per 2 characters.
  model = await buildTinyModel(python, { max_position_embeddings: 8192 });
  agent = await startInProcessAgent(srv, "episodes-local", {
    pollMs: 200,
    python,
    handlers: { episode: makeEpisodeHandler({ grader, sandbox: cfg, refs: new ReferenceIds(grader) }) },
  });
  const imp = await importPool(services.db, {
    name: "ep-local",
    lines: [new TextEncoder().encode(JSON.stringify(incrementTask("local-ep-1")))],
  });
  if (!imp.ok) throw new Error("import failed");
  ({
    split: { id: splitId },
  } = await createSplit(services.db, { poolId: imp.poolId, seed: 1, devRatio: 0, testRatio: 0 }));
  member = await callerAs(services, "member");
}, 180_000);

afterAll(async () => {
  await agent?.stop();
  grader?.close();
  await srv?.close();
});

const localPolicy = (): EpisodePolicyRequest => ({
  kind: "local",
  baseModel: model,
  chatTemplate: "minimal_qwen",
  decoding: { doSample: true, temperature: 1, topP: 1, maxNewTokens: 24 },
  device: "cpu",
  localFilesOnly: true,
});

async function runJobs(seeds: number, maxTurns: number) {
  const { jobIds } = await member.episodes.runSplit({ splitId, policy: localPolicy(), seeds, budget: { maxTurns } });
  const rows = await waitFor(
    async () => {
      const r = await srv.app.services.db.select().from(schema.jobs).where(inArray(schema.jobs.id, jobIds));
      return r.every((j) => ["succeeded", "failed", "canceled"].includes(j.state)) && r;
    },
    240_000,
    250,
  );
  for (const r of rows) expect(r.state, r.error ?? "").toBe("succeeded");
  return rows.map((r) => ({ id: r.id, result: EpisodeJobResult.parse(r.result) }));
}

describe("local-model episodes", () => {
  let modelHash = "";

  it("a tiny local model runs episodes end to end: every turn handed to the environment, the judge's verdict, steps stored", async () => {
    const jobs = await runJobs(2, 3);
    expect(jobs).toHaveLength(2);
    for (const { result } of jobs) {
      expect(result.policy.name).toBe(`local:${model.split("/").slice(-2).join("/")}`);
      expect(GradeVerdict.options).toContain(result.episode.verdict);
      // A random model rarely makes a valid call: each turn still reached the environment and cost one.
      expect(result.episode.counters.turns).toBe(result.episode.steps.filter((s) => s.role === "assistant").length);
      expect(result.episode.steps.length).toBeGreaterThan(0);
    }
    // One policy: the same weights, template and decoding, whatever the seed.
    const hashes = new Set(jobs.map((j) => j.result.policy.hash));
    expect(hashes.size).toBe(1);
    modelHash = [...hashes][0] ?? "";
    // Seeds 0 and 1 sample differently (a per-turn seed from the episode's): their first turns differ.
    const firsts = jobs.map((j) => JSON.stringify(j.result.episode.steps[0]?.call));
    expect(firsts[0]).not.toBe(firsts[1]);

    await syncEpisodes(srv.app.services);
    const stored = (await listEpisodes(srv.app.services.db, { mainOnly: true })).filter((e) =>
      jobs.some((j) => j.id === e.jobId),
    );
    expect(stored).toHaveLength(2);
    for (const e of stored) {
      const full = await getEpisode(srv.app.services.db, e.id);
      const job = jobs.find((j) => j.id === e.jobId);
      expect(full?.steps.map((s) => s.tool)).toEqual(job?.result.episode.steps.map((s) => s.call.tool));
      expect(e.verdict).toBe(job?.result.episode.verdict);
    }
  }, 300_000);

  it("control: parsed calls reach the environment and pass in the judge; a malformed call is a refused turn", async () => {
    const dir = await mkdtemp(join(tmpdir(), "local-policy-"));
    const file = join(dir, "completions.json");
    const call = (name: string, args: object) =>
      `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;
    await writeFile(
      file,
      JSON.stringify([
        call("read_file", { path: "solution.py" }),
        '<tool_call>{"name": "edit_file", "arguments": {"path": </tool_call>',
        // Llama-3 style: the whole completion is the JSON object
        JSON.stringify({
          name: "edit_file",
          parameters: { path: "solution.py", old: "    return x\n", new: "    return x + 1\n" },
        }),
        call("run_public_tests", {}),
        call("submit", {}),
      ]),
    );
    process.env[HOOK] = file;
    try {
      const [job] = await runJobs(1, 10);
      const run = job?.result.episode;
      expect(run?.steps.map((s) => s.call.tool)).toEqual([
        "read_file",
        MALFORMED_TOOL_CALL,
        "edit_file",
        "run_public_tests",
        "submit",
      ]);
      expect(run?.steps.map((s) => s.result.refusal)).toEqual([null, "bad_call", null, null, null]);
      expect(run?.steps[3]?.result.output).toMatch(/^public tests: passed/);
      expect(run).toMatchObject({ verdict: "pass", submittedBy: "policy" });
      // Scripted completions are another policy than the model's in every record.
      expect(job?.result.policy.hash).not.toBe(modelHash);
    } finally {
      delete process.env[HOOK];
    }
  }, 300_000);
});
