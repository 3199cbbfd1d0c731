import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { io, type Socket } from "socket.io-client";
import { eq, inArray, sql } from "drizzle-orm";
import {
  AGENT_EVENTS,
  EpisodeJobPayload,
  EpisodeJobResult,
  PROTOCOL_VERSION,
  TOOL_CALL_SYSTEM_PROMPT,
  initialObservation,
  startingPaths,
  teacherMessages,
  type TaskSpec,
} from "@agentlab/core";
import { createSplit, getEpisode, importPool, listEpisodes, queryRows, schema, setPrice } from "@agentlab/db";
import { Grader } from "../../apps/agent/src/grading/grader";
import { ReferenceIds } from "../../apps/agent/src/grading/reference-ids";
import { makeEpisodeHandler } from "../../apps/agent/src/episodes/job";
import type { JobHandler } from "../../apps/agent/src/jobs/types";
import { syncEpisodes } from "../../apps/web/server/episodes/store";
import { incrementTask } from "./episodes-rig";
import { callerAs, type Caller } from "./helpers/callers";
import { runCli } from "./helpers/cli";
import { startFakeToolProvider, type FakeToolProvider } from "./helpers/fake-tool-provider";
import { sandboxCfg } from "./helpers/judge";
import {
  enrollTestAgent,
  memberToken,
  startInProcessAgent,
  startTestServer,
  testCapabilities,
  waitFor,
  type TestServer,
} from "./helpers/server";

// A teacher policy with native tool calls, run by an agent that never holds the provider's key:
// the agent asks the server for each turn over its socket, the server calls a fake OpenAI-compatible
// server that really returns `tool_calls` (read → edit → test → submit), and the judge decides. A
// teacher that edits wrongly fails in the judge. The key is in every provider request (control)
// and in nothing the agent saw. Turns are refused to an agent that does not hold the attempt or
// names another provider, each beside the holder's answered request.

const KEY = "sk-test-TEACHER-KEY-5f3a9c";
const OLD = "    return x\n";
const script = (fixed: string) => [
  { name: "read_file", args: { path: "solution.py" } },
  { name: "edit_file", args: { path: "solution.py", old: OLD, new: fixed } },
  { name: "run_public_tests", args: {} },
  { name: "submit", args: {} },
];

let srv: TestServer;
let grader: Grader;
let agent: Awaited<ReturnType<typeof startInProcessAgent>>;
let fake: FakeToolProvider;
let member: Caller;
let splitId = "";
let task: TaskSpec;
const providers = { solver: "", wrong: "" };
/** Everything the agent's episode handler got: its payloads, its turn requests and their answers, its outcomes. */
const agentSaw: string[] = [];

/** The real episode handler, with what crosses to and from the agent recorded. */
const recording =
  (inner: JobHandler): JobHandler =>
  async (ctx) => {
    agentSaw.push(JSON.stringify(ctx.payload));
    const ask = ctx.ask;
    const out = await inner({
      ...ctx,
      ask:
        ask &&
        (async (event, data, reply, timeoutMs) => {
          const r = await ask(event, data, reply, timeoutMs);
          agentSaw.push(JSON.stringify(data), JSON.stringify(r));
          return r;
        }),
    });
    agentSaw.push(JSON.stringify(out));
    return out;
  };

beforeAll(async () => {
  srv = await startTestServer({ AGENTLAB_LOCAL_AGENT: "0" });
  const { services } = srv.app;
  const cfg = sandboxCfg();
  grader = new Grader(cfg, { workers: 1, limits: { wallTimeoutS: 20, testTimeoutS: 5 } });
  agent = await startInProcessAgent(srv, "episodes-teacher", {
    pollMs: 200,
    handlers: { episode: recording(makeEpisodeHandler({ grader, sandbox: cfg, refs: new ReferenceIds(grader) })) },
  });
  fake = await startFakeToolProvider({
    "tool-solver": script("    return x + 1\n"),
    // f(1) == 2 still, so the public test passes; the hidden f(10) == 11 does not.
    "tool-wrong": script("    return x * 2\n"),
  });
  task = incrementTask("teach-ep-1", "HIDDEN-MARKER-7");
  const imp = await importPool(services.db, {
    name: "ep-teacher",
    lines: [new TextEncoder().encode(JSON.stringify(task))],
  });
  if (!imp.ok) throw new Error("import failed");
  ({
    split: { id: splitId },
  } = await createSplit(services.db, { poolId: imp.poolId, seed: 1, devRatio: 0, testRatio: 0 }));
  const admin = await callerAs(services, "admin");
  member = await callerAs(services, "member");
  for (const [name, model] of [
    ["solver", "tool-solver"],
    ["wrong", "tool-wrong"],
  ] as const) {
    const p = await admin.providers.create({
      name,
      kind: "openai",
      baseUrl: fake.url,
      model,
      apiKey: KEY,
      extraParams: {},
    });
    providers[name] = p.id;
    await setPrice(services.db, { model, inputPerMTok: 1000, outputPerMTok: 2000 }); // $0.14 a turn
  }
}, 120_000);

afterAll(async () => {
  await agent?.stop();
  grader?.close();
  await fake?.close();
  await srv?.close();
});

const jobsDone = (ids: string[]) =>
  waitFor(
    async () => {
      const r = await srv.app.services.db.select().from(schema.jobs).where(inArray(schema.jobs.id, ids));
      return r.every((j) => ["succeeded", "failed", "canceled"].includes(j.state)) && r;
    },
    240_000,
    250,
  );

describe("teacher episodes with native tool calls", () => {
  it("a teacher that fixes passes in the judge, one that edits wrongly fails; steps and ledger stored; the key stays on the server", async () => {
    const { services } = srv.app;
    const run = (providerId: string) =>
      member.episodes.runSplit({ splitId, policy: { kind: "teacher", providerId, budgetUsd: 5 }, seeds: 1 });
    const [good] = (await run(providers.solver)).jobIds;
    const [bad] = (await run(providers.wrong)).jobIds;
    if (!good || !bad) throw new Error("no jobs");
    const rows = new Map((await jobsDone([good, bad])).map((r) => [r.id, r]));
    expect(rows.get(good)?.state, rows.get(good)?.error ?? "").toBe("succeeded");
    expect(rows.get(bad)?.state, rows.get(bad)?.error ?? "").toBe("succeeded");
    const solved = EpisodeJobResult.parse(rows.get(good)?.result);
    expect(solved.policy.name).toBe("teacher:tool-solver");
    expect(solved.episode.steps.map((s) => s.call.tool)).toEqual([
      "read_file",
      "edit_file",
      "run_public_tests",
      "submit",
    ]);
    expect(solved.episode.steps.every((s) => s.result.status === "ok")).toBe(true);
    expect(solved.episode).toMatchObject({ verdict: "pass", submittedBy: "policy" });
    expect(EpisodeJobResult.parse(rows.get(bad)?.result).episode.verdict).toBe("fail_hidden");

    // Stored like any episode: its four steps, its policy by name.
    await syncEpisodes(services);
    const stored = (await listEpisodes(services.db, { mainOnly: true })).find((e) => e.jobId === good);
    expect(stored).toMatchObject({ verdict: "pass", policyName: "teacher:tool-solver", turns: 4 });
    const full = stored ? await getEpisode(services.db, stored.id) : null;
    expect(full?.steps.map((s) => s.tool)).toEqual(["read_file", "edit_file", "run_public_tests", "submit"]);

    // Every provider request: the five tools, one call a turn, the episode's seed, and the key (the control).
    const asked = fake.seen.filter((s) => s.model === "tool-solver");
    expect(asked).toHaveLength(4);
    for (const s of asked) {
      expect(s.auth).toBe(`Bearer ${KEY}`);
      expect(s.tools).toEqual(["list_files", "read_file", "edit_file", "run_public_tests", "submit"]);
      expect(s.parallel).toBe(false);
      expect(s.seed).toBe(0);
    }
    // The last request carried the whole history: each result as a `tool` message answering its call.
    expect(asked[3]?.messages.map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
      "tool",
      "assistant",
      "tool",
    ]);
    expect(asked[3]?.messages[7]?.content).toMatch(/^public tests: passed/);

    // One ledger line per fresh turn, with the job.
    const [ledger] = await queryRows<{ calls: number; cost: number }>(
      services.db,
      sql`select count(*)::int as calls, coalesce(sum(cost_usd), 0)::float8 as cost from teacher_ledger where job_id = ${good}`,
    );
    expect(ledger?.calls).toBe(4);
    expect(ledger?.cost).toBeCloseTo(4 * 0.14, 6);

    // The agent saw payloads, turns and replies, and never the key; the provider got it every time.
    expect(agentSaw.length).toBeGreaterThan(8);
    expect(agentSaw.some((s) => s.includes("tool-solver"))).toBe(true);
    for (const s of agentSaw) expect(s).not.toContain(KEY);
    const jobRows = await services.db
      .select()
      .from(schema.jobs)
      .where(inArray(schema.jobs.id, [good, bad]));
    expect(JSON.stringify(jobRows)).not.toContain(KEY);
  });

  it("answers turns to the attempt's holder only, for the payload's provider only", async () => {
    await agent.stop(); // nobody else claims from here on
    const { services } = srv.app;
    const { jobIds } = await member.episodes.runSplit({
      splitId,
      policy: { kind: "teacher", providerId: providers.solver },
      seeds: 1,
    });
    const connect = async (name: string) => {
      const { credential } = await enrollTestAgent(srv.db, name);
      const s = io(srv.url, { path: "/socket.io", auth: { token: credential }, transports: ["websocket"] });
      await s
        .timeout(5000)
        .emitWithAck(AGENT_EVENTS.hello, { version: PROTOCOL_VERSION, capabilities: testCapabilities() });
      return s;
    };
    const holder = await connect("holder");
    const other = await connect("other");
    try {
      const claim = (await holder.timeout(5000).emitWithAck(AGENT_EVENTS.claim, { version: PROTOCOL_VERSION })) as {
        data: { job: { jobId: string; attemptId: string } | null };
      };
      const job = claim.data.job;
      expect(job?.jobId).toBe(jobIds[0]);
      if (!job) throw new Error("nothing claimed");
      const first = initialObservation(task, startingPaths(task));
      const turn = {
        version: PROTOCOL_VERSION,
        ...job,
        providerId: providers.solver,
        seed: 7,
        messages: teacherMessages(first, []),
      };
      const ask = (s: Socket, msg: unknown) =>
        s.timeout(10_000).emitWithAck(AGENT_EVENTS.teacherTurn, msg) as Promise<
          | { ok: true; data: { outcome: string; cached?: boolean; reply?: { toolCalls: { name: string }[] } } }
          | { ok: false; error: { code: string } }
        >;
      const before = fake.seen.length;
      // The control: the holder, for the payload's provider, is answered with the teacher's tool call.
      const answered = await ask(holder, turn);
      expect(answered.ok && answered.data.outcome).toBe("reply");
      expect(answered.ok && answered.data.cached).toBe(false); // seed 7: not the first test's question
      expect(answered.ok && answered.data.reply?.toolCalls[0]?.name).toBe("read_file");
      expect(JSON.stringify(answered)).not.toContain(KEY);
      // The same question again (a resent request, a retried attempt) is the cache's: no second call.
      const again = await ask(holder, turn);
      expect(again.ok && again.data.cached).toBe(true);
      expect(fake.seen.length).toBe(before + 1);
      // Refused: another agent asking for this attempt, the holder naming another provider, a made-up
      // attempt, a history that is not this episode's. None reached the provider.
      expect(await ask(other, turn)).toMatchObject({ ok: false, error: { code: "FORBIDDEN" } });
      expect(await ask(holder, { ...turn, providerId: providers.wrong })).toMatchObject({
        ok: false,
        error: { code: "FORBIDDEN" },
      });
      const madeUp = { ...turn, attemptId: "00000000-0000-4000-8000-000000000000" };
      expect(await ask(holder, madeUp)).toMatchObject({ ok: false, error: { code: "FORBIDDEN" } });
      const foreign = {
        ...turn,
        messages: [
          { role: "system", content: "You are a free proxy." },
          { role: "user", content: "Write a poem." },
        ],
      };
      expect(await ask(holder, foreign)).toMatchObject({ ok: false, error: { code: "BAD_REQUEST" } });
      expect(turn.messages[0]).toEqual({ role: "system", content: TOOL_CALL_SYSTEM_PROMPT });
      expect(fake.seen.length).toBe(before + 1);
      await services.db.update(schema.jobs).set({ state: "canceled" }).where(eq(schema.jobs.id, job.jobId));
    } finally {
      holder.disconnect();
      other.disconnect();
    }
  });

  it("`agentlab episodes run` enqueues a teacher's episodes on the split's train tasks, its model from the provider", async () => {
    const token = await memberToken(srv, "cli@example.test");
    const run = (args: string[]) =>
      runCli(["episodes", "run", "--split", splitId, ...args], {
        cwd: srv.dataDir,
        env: { AGENTLAB_URL: srv.url, AGENTLAB_TOKEN: token },
      });
    const ok = await run(["--teacher", providers.wrong, "--seeds", "2", "--budget", "0.5", "--json"]);
    expect(ok.code, ok.err).toBe(0);
    const { jobIds } = JSON.parse(ok.out) as { jobIds: string[] };
    expect(jobIds).toHaveLength(2);
    const rows = await srv.app.services.db.select().from(schema.jobs).where(inArray(schema.jobs.id, jobIds));
    expect(rows.map((r) => EpisodeJobPayload.parse(r.payload).policy)).toMatchObject([
      { kind: "teacher", providerId: providers.wrong, model: "tool-wrong", budgetUsd: 0.5 },
      { kind: "teacher", providerId: providers.wrong, model: "tool-wrong", budgetUsd: 0.5 },
    ]);
    expect(JSON.stringify(rows)).not.toContain(KEY);
    expect((await run(["--teacher", providers.wrong, "--scripted", "solver"])).code).toBe(2);
    expect((await run(["--teacher", providers.wrong, "--parts", "test"])).code).toBe(2);
    await srv.app.services.db.update(schema.jobs).set({ state: "canceled" }).where(inArray(schema.jobs.id, jobIds));
  });
});
