import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { coin, scriptedPolicy, WRONG_EDIT_MARK } from "../../apps/agent/src/episodes/policies";
import { runEpisode, runEpisodeWithBranches } from "../../apps/agent/src/episodes/runner";
import { ContentStore } from "../../apps/agent/src/episodes/store";
import { DEFAULT_EPISODE_BUDGET, EpisodeJobResult } from "@agentlab/core";
import { episodeRig, incrementTask, playPolicy, type EpisodeRig } from "./episodes-rig";

// The episode environment on the real sandbox and judge: the scripted controls (solver passes,
// recoverer passes after a failed test run and yields recovery states, wrong fails), the budget
// the environment enforces, the tools' refusals, and states that rebuild and branch.

const task = incrementTask("episodes/env");
const reference = task.reference;
let rig: EpisodeRig;
beforeAll(() => {
  rig = episodeRig();
});
afterAll(() => rig.close());

const tools = (steps: { call: { tool: string } }[]) => steps.map((s) => s.call.tool);

describe("scripted controls", () => {
  it("the solver reads, runs the tests, applies the reference and passes", async () => {
    const { run, env } = await runEpisode(
      rig.deps(),
      task,
      DEFAULT_EPISODE_BUDGET,
      scriptedPolicy("solver", reference),
      {
        seed: 1,
      },
    );
    expect(run.verdict, run.grade.reasons.join("; ")).toBe("pass");
    expect(env.reward).toBe(1);
    expect(tools(run.steps)).toEqual([
      "list_files",
      "read_file",
      "run_public_tests",
      "edit_file",
      "run_public_tests",
      "submit",
    ]);
    expect(run.steps[2]?.result.output).toMatch(/^public tests: failed/);
    expect(run.steps[4]?.result.output).toMatch(/^public tests: passed/);
    expect(run.submittedBy).toBe("policy");
    expect(run.counters).toMatchObject({ turns: 6, testRuns: 2 });
    // The edit changed the tree; reads and test runs did not.
    expect(run.steps[3]?.snapshotBefore).not.toBe(run.steps[3]?.snapshotAfter);
    expect(run.steps[2]?.snapshotBefore).toBe(run.steps[2]?.snapshotAfter);
    expect(run.branchPoints.map((b) => b.kind)).toEqual(["start", "after_failed_tests"]);
  });

  it("the recoverer passes after a failed test run, and its recovery state's continuations pass", async () => {
    const r = await runEpisodeWithBranches(rig.deps(), rig.scratch, {
      task,
      budget: DEFAULT_EPISODE_BUDGET,
      policy: scriptedPolicy("recoverer", reference),
      seed: 7,
      branching: { k: 2, seedBase: 100 },
    });
    expect(EpisodeJobResult.safeParse(r).success).toBe(true);
    const run = r.episode;
    expect(run.verdict).toBe("pass");
    expect(tools(run.steps)).toEqual([
      "list_files",
      "read_file",
      "edit_file",
      "run_public_tests",
      "edit_file",
      "run_public_tests",
      "submit",
    ]);
    expect(run.steps[3]?.result.output).toMatch(/^public tests: failed/);
    const recovery = r.values.find((v) => v.kind === "after_failed_tests");
    expect(recovery).toMatchObject({ continuations: 2, passes: 2, passRate: 1 });
    // The recovery state is the one right after the failed run: t = 4, the wrong edit in its tree.
    const state = r.states.find((s) => s.hash === recovery?.state);
    expect(state?.t).toBe(4);
    expect(state?.treeHash).toBe(run.steps[3]?.snapshotAfter);
    // Each continuation starts there with its own seed and only records its own steps.
    const fromRecovery = r.branches.filter((b) => b.run.fromState === recovery?.state);
    expect(fromRecovery.map((b) => b.run.seed)).toEqual([100, 101]);
    expect(fromRecovery[0]?.run.steps[0]?.index).toBe(4);
    expect(fromRecovery[0]?.run.counters.turns).toBe(7);
  });

  it("the wrong policy fails", async () => {
    const { run, env } = await runEpisode(rig.deps(), task, DEFAULT_EPISODE_BUDGET, scriptedPolicy("wrong"), {
      seed: 2,
    });
    expect(["fail_public", "fail_hidden"]).toContain(run.verdict);
    expect(env.reward).toBe(0);
    expect(tools(run.steps)).toContain("edit_file");
  });

  it("a state's value is the pass rate of its continuations (the seeded coin)", async () => {
    const k = 6;
    const r = await runEpisodeWithBranches(rig.deps(), rig.scratch, {
      task,
      budget: DEFAULT_EPISODE_BUDGET,
      policy: scriptedPolicy("coin", reference),
      seed: 3,
      branching: { k, seedBase: 40 },
    });
    const start = r.values.find((v) => v.kind === "start");
    const expected = Array.from({ length: k }, (_, i) => coin(40 + i)).filter(Boolean).length;
    expect(start).toMatchObject({ continuations: k, passes: expected, passRate: expected / k });
    const fromStart = r.branches.filter((b) => b.run.fromState === start?.state);
    expect(fromStart.map((b) => b.run.verdict === "pass")).toEqual(Array.from({ length: k }, (_, i) => coin(40 + i)));
  });
});

describe("states", () => {
  it("a stored state rebuilds its workspace and resumes to the same verdict", async () => {
    const store = new ContentStore();
    const deps = rig.deps({ store });
    const { run, env } = await runEpisode(deps, task, DEFAULT_EPISODE_BUDGET, scriptedPolicy("recoverer", reference), {
      seed: 5,
    });
    const recovery = run.branchPoints.find((b) => b.kind === "after_failed_tests");
    const state = recovery && store.states.get(recovery.state);
    if (!state) throw new Error("no recovery state stored");
    // Rebuilt from the content store alone: the wrong edit is in it, the reference is not.
    const files = store.treeFiles(state.treeHash);
    expect(files.find((f) => f.path === "solution.py")?.content).toBe(`def f(x):\n    return x\n${WRONG_EDIT_MARK}`);
    expect(files.map((f) => f.path)).toEqual(["helpers.py", "solution.py", "test_public.py"]);
    const transcript = env.transcript().slice(0, state.t);
    const again = await runEpisode(deps, task, DEFAULT_EPISODE_BUDGET, scriptedPolicy("recoverer", reference), {
      seed: 9,
      from: { state, transcript },
    });
    expect(again.run.verdict).toBe("pass");
    expect(again.run.fromState).toBe(state.hash);
    // A transcript that does not hash to the state's is refused.
    await expect(
      runEpisode(deps, task, DEFAULT_EPISODE_BUDGET, scriptedPolicy("recoverer", reference), {
        seed: 9,
        from: { state, transcript: transcript.slice(1) },
      }),
    ).rejects.toThrow(/does not match state/);
  });
});

describe("the budget is the environment's", () => {
  it("spent turns submit the workspace as it is", async () => {
    const { run } = await runEpisode(
      rig.deps(),
      task,
      { ...DEFAULT_EPISODE_BUDGET, maxTurns: 3 },
      scriptedPolicy("solver", reference),
      {
        seed: 1,
      },
    );
    expect(run.submittedBy).toBe("budget");
    expect(run.exhausted).toBe("turns");
    expect(run.verdict).toBe("fail_public");
    expect(run.steps.at(-1)?.role).toBe("environment");
    expect(run.counters.turns).toBe(3);
  });

  it("test runs past the cap are refused and cost a turn; a long observation is cut", async () => {
    const env = rig.env(task, { maxTestRuns: 1, maxObservationChars: 200 });
    await env.reset({ seed: 1 });
    expect((await env.call({ tool: "run_public_tests", args: {} })).status).toBe("ok");
    const second = await env.call({ tool: "run_public_tests", args: {} });
    expect(second).toMatchObject({ status: "refused", refusal: "test_budget" });
    await env.edit_file("helpers.py", "ONE = 1", `ONE = 1\n${"X = 1\n".repeat(200)}`);
    const read = await env.call({ tool: "read_file", args: { path: "helpers.py" } });
    expect(read.truncated).toBe(true);
    expect(read.output.length).toBeLessThanOrEqual(200);
    expect(read.output).toContain("characters elided");
    await env.submit();
    expect(env.run().counters).toMatchObject({ turns: 5, testRuns: 1 });
  });

  it("a spent wall clock submits before the next call runs", async () => {
    let clock = 0;
    const env = rig.env(task, { wallTimeS: 1 }, { now: () => clock });
    await env.reset({ seed: 1 });
    await env.list_files();
    clock = 5_000;
    const r = await env.call({
      tool: "edit_file",
      args: { path: "solution.py", old: "return x", new: "return x + 1" },
    });
    expect(r.output).toContain("budget exhausted (wall_time)");
    expect(env.run()).toMatchObject({ submittedBy: "budget", exhausted: "wall_time", verdict: "fail_public" });
  });

  it("a transcript past the context cap submits", async () => {
    const env = rig.env(task, { maxContextChars: 1000 });
    await env.reset({ seed: 1 });
    for (let i = 0; i < 20 && !env.done; i++) await env.read_file("test_public.py");
    expect(env.run()).toMatchObject({ submittedBy: "budget", exhausted: "context" });
  });
});

describe("edits", () => {
  it("an edit that would not parse is refused, costs a turn and changes nothing", async () => {
    const env = rig.env(task);
    await env.reset({ seed: 1 });
    const r = await env.call({ tool: "edit_file", args: { path: "solution.py", old: "return x", new: "return x +" } });
    expect(r).toMatchObject({ status: "refused", refusal: "syntax_error" });
    expect(r.output).toContain("SyntaxError");
    expect(await env.read_file("solution.py")).toContain("return x\n".trimEnd());
    // Positive control: the same edit made valid goes through.
    const ok = await env.call({
      tool: "edit_file",
      args: { path: "solution.py", old: "return x", new: "return x + 1" },
    });
    expect(ok.status).toBe("ok");
    const steps = env.transcript();
    expect(steps[0]?.snapshotBefore).toBe(steps[0]?.snapshotAfter);
    expect(steps[1]?.call.tool).toBe("read_file");
    expect(steps[2]?.snapshotBefore).not.toBe(steps[2]?.snapshotAfter);
  });

  it("`old` must occur exactly once; malformed calls are refused turns", async () => {
    const env = rig.env(task);
    await env.reset({ seed: 1 });
    await env.edit_file("helpers.py", "", "A = 1\nA = 1\n").then((o) => expect(o).toContain("exists"));
    expect((await env.call({ tool: "edit_file", args: { path: "solution.py", old: "nope", new: "" } })).refusal).toBe(
      "no_match",
    );
    await env.edit_file("notes.py", "", "A = 1\nA = 1\n");
    expect((await env.call({ tool: "edit_file", args: { path: "notes.py", old: "A = 1", new: "B" } })).refusal).toBe(
      "ambiguous_match",
    );
    expect((await env.call({ tool: "bash", args: { cmd: "cat test_hidden.py" } })).refusal).toBe("bad_call");
    expect((await env.call("submit please")).refusal).toBe("bad_call");
    expect(env.transcript()).toHaveLength(6);
  });
});

describe("a policy's calls as played", () => {
  it("records every call, refused ones included", async () => {
    const policy = playPolicy([
      { tool: "list_files", args: {} },
      { tool: "read_file", args: { path: "missing.py" } },
    ]);
    const { run } = await runEpisode(rig.deps(), task, DEFAULT_EPISODE_BUDGET, policy, { seed: 1 });
    expect(run.steps.map((s) => s.result.status)).toEqual(["ok", "refused", "ok"]);
    expect(run.steps[1]?.result.refusal).toBe("not_found");
  });
});
