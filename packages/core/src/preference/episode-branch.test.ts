import { describe, expect, it } from "vitest";
import { DpoPairLine } from "../trainer/dpo";
import { EPISODE_SYSTEM_PROMPT, callText, type TrajectoryTurn } from "../episodes/trajectory-sft";
import { type BranchContinuation, type BranchState, episodeBranchPairs } from "./episode-branch";
import { pairsJsonl } from "./pairs";

const turn = (tool: string, args: unknown = {}, output = "ok"): TrajectoryTurn => ({
  role: "assistant",
  tool,
  args,
  status: "ok",
  output,
  changed: tool === "edit_file",
});
const fix = turn("edit_file", { path: "a.py", old: "x", new: "x + 1" });
const wrong = (n: number) => turn("edit_file", { path: "a.py", old: "x", new: `x # ${n}` });
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

const cont = (n: number, pass: boolean, over: Partial<BranchContinuation> = {}): BranchContinuation => ({
  episodeId: uuid(n),
  policyName: "scripted:coin",
  seed: 100 + n,
  verdict: pass ? "pass" : "fail_public",
  failingTests: pass ? [] : ["test_public.py::test_one"],
  submittedBy: "policy",
  trusted: true,
  turns: pass ? [fix, turn("run_public_tests"), turn("submit")] : [wrong(n), turn("submit")],
  ...over,
});
const prefix = [turn("list_files", {}, "a.py"), turn("run_public_tests", {}, "public tests: failed\nE assert")];
const state = (continuations: BranchContinuation[], over: Partial<BranchState> = {}): BranchState => ({
  taskId: "t1",
  stateHash: "s".repeat(64),
  first: "Fix f.",
  prefix,
  continuations,
  ...over,
});

describe("same-state pairs from episode branches", () => {
  it("pairs each failing continuation with a passing one from the same state, prompt = the transcript to it", () => {
    const { pairs } = episodeBranchPairs({ states: [state([cont(1, true), cont(2, false), cont(3, false)])] });
    expect(pairs).toHaveLength(2);
    const [p] = pairs;
    expect(p).toMatchObject({
      pairSource: "episode_branch",
      chosenSource: "episode",
      rejectedSource: "episode",
      stateHash: "s".repeat(64),
      chosenEpisodeId: uuid(1),
      rejectedEpisodeId: uuid(2),
      rejectedVerdict: "fail_public",
      failingLayer: "public",
      failingTests: ["test_public.py::test_one"],
      rejectedSample: 102,
    });
    // The prompt ends at the state: its last lines are the last prefix turn's result; no continuation turn in it.
    expect(p?.prompt.map((m) => m.role)).toEqual(["system", "user"]);
    expect(p?.prompt[0]?.content).toBe(EPISODE_SYSTEM_PROMPT);
    const user = p?.prompt[1]?.content ?? "";
    expect(user.startsWith("Fix f.")).toBe(true);
    expect(user).toContain(`[call 1] ${callText(prefix[0] ?? fix)}`);
    expect(user.endsWith("[result 2]\npublic tests: failed\nE assert")).toBe(true);
    expect(user).not.toContain(callText(fix));
    // The answers are the continuations' calls, one a line, without their results.
    expect(p?.chosenText).toBe([fix, turn("run_public_tests"), turn("submit")].map(callText).join("\n"));
    expect(p?.rejectedText.split("\n")).toHaveLength(2);
    // A trainer line: system/user prompt, two answers.
    for (const line of pairsJsonl(pairs).trim().split("\n"))
      expect(DpoPairLine.safeParse(JSON.parse(line)).success).toBe(true);
  });

  it("a start state's prompt is the episode's own opening", () => {
    const { pairs } = episodeBranchPairs({ states: [state([cont(1, true), cont(2, false)], { prefix: [] })] });
    expect(pairs[0]?.prompt).toEqual([
      { role: "system", content: EPISODE_SYSTEM_PROMPT },
      { role: "user", content: "Fix f." },
    ]);
  });

  it("is deterministic whatever the input order, and caps a state at 4 pairs", () => {
    // Two distinct passing answers (a pass repeating another's calls would be the same answer).
    const cs = [
      cont(1, true),
      cont(7, true, { turns: [turn("read_file", { path: "a.py" }), fix, turn("submit")] }),
      ...[2, 3, 4, 5, 6, 8].map((n) => cont(n, false)),
    ];
    const a = episodeBranchPairs({ states: [state(cs)] });
    const b = episodeBranchPairs({ states: [state([...cs].reverse())] });
    expect(a.pairs).toEqual(b.pairs);
    expect(a.pairs).toHaveLength(4);
    expect(a.skipped.filter((s) => s.reason === "task_cap")).toHaveLength(2);
    // Rejected by seed; chosen in turn.
    expect(a.pairs.map((p) => [p.chosenEpisodeId, p.rejectedEpisodeId])).toEqual([
      [uuid(1), uuid(2)],
      [uuid(7), uuid(3)],
      [uuid(1), uuid(4)],
      [uuid(7), uuid(5)],
    ]);
    // Control: a larger cap keeps them all.
    expect(episodeBranchPairs({ states: [state(cs)], maxPerState: 10 }).pairs).toHaveLength(6);
  });

  it("a state needs both a pass and a failure (controls: the same state with both pairs)", () => {
    expect(episodeBranchPairs({ states: [state([cont(1, true), cont(3, true)])] }).pairs).toEqual([]);
    expect(episodeBranchPairs({ states: [state([cont(2, false), cont(4, false)])] }).pairs).toEqual([]);
    expect(episodeBranchPairs({ states: [state([cont(1, true), cont(2, false)])] }).pairs).toHaveLength(1);
  });

  it("labels come from trusted verdicts; a budget's pass is never chosen, a budget's failure is rejected", () => {
    const untrusted = episodeBranchPairs({ states: [state([cont(1, true, { trusted: false }), cont(2, false)])] });
    expect(untrusted.pairs).toEqual([]);
    const budgetPass = episodeBranchPairs({
      states: [state([cont(1, true, { submittedBy: "budget" }), cont(2, false)])],
    });
    expect(budgetPass.pairs).toEqual([]);
    const budgetFail = episodeBranchPairs({
      states: [
        state([
          cont(1, true),
          cont(2, false, { submittedBy: "budget", turns: [wrong(2), { ...turn("submit"), role: "environment" }] }),
        ]),
      ],
    });
    // The environment's submit is no policy call: the rejected answer is the policy's calls only.
    expect(budgetFail.pairs.map((p) => p.rejectedText)).toEqual([callText(wrong(2))]);
  });

  it("a failure with the calls of a pass is no pair; an infra error is neither side", () => {
    const same = episodeBranchPairs({
      states: [state([cont(1, true), cont(2, false, { turns: cont(1, true).turns })])],
    });
    expect(same.pairs).toEqual([]);
    expect(same.skipped.map((s) => s.reason)).toEqual(["same_text"]);
    const infra = episodeBranchPairs({ states: [state([cont(1, true), cont(2, false, { verdict: "infra_error" })])] });
    expect(infra.pairs).toEqual([]);
  });

  it("one state reached by two episodes pools its continuations; another state is its own prompt", () => {
    const other = "o".repeat(64);
    const { pairs } = episodeBranchPairs({
      states: [
        state([cont(1, true)]),
        state([cont(2, false)]),
        state([cont(3, true), cont(4, false)], { stateHash: other, prefix: [] }),
      ],
    });
    expect(pairs.map((p) => [p.stateHash, p.chosenEpisodeId, p.rejectedEpisodeId])).toEqual([
      [other, uuid(3), uuid(4)],
      ["s".repeat(64), uuid(1), uuid(2)],
    ]);
    expect(new Set(pairs.map((p) => p.pairKey)).size).toBe(2);
  });
});
