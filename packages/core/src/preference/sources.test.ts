import { describe, expect, it } from "vitest";
import type { TestOutcome } from "../grading/schemas";
import type { TaskSpec } from "../tasks";
import { parseAnswer } from "../teacher/answer";
import { NEAR_MISS_PAIRS_PER_TASK, nearMissRejected } from "./near-miss";
import { ON_POLICY_PAIRS_PER_TASK, onPolicyPairs, type SampledAnswer } from "./on-policy";
import { buildPairs } from "./pairs";

const prompt = [{ role: "user" as const, content: "fix it" }];
const prompts = new Map([
  ["t1", prompt],
  ["t2", prompt],
]);
const failed = (id: string): TestOutcome => ({ id, layer: "hidden", outcome: "failed", message: "" });
const sample = (taskId: string, i: number, text: string, verdict: SampledAnswer["verdict"]): SampledAnswer => ({
  taskId,
  modelKey: "sft:s0:e2",
  sample: i,
  text,
  verdict,
  tests: verdict === "pass" ? [] : [failed("test_h")],
});

describe("onPolicyPairs", () => {
  it("pairs a passing with a failing sample of the same task, both on-policy, only where the task has both", () => {
    const { pairs } = onPolicyPairs({
      prompts,
      answers: [
        sample("t1", 0, "bad 0", "fail_hidden"),
        sample("t1", 1, "good 1", "pass"),
        sample("t1", 2, "bad 2", "fail_syntax"),
        sample("t1", 3, "good 1", "pass"), // a repeated passing text is one chosen answer
        sample("t2", 0, "good", "pass"), // t2 never fails: no pair
        sample("t2", 1, "down", "infra_error"), // not a model failure
      ],
    });
    expect(pairs.map((p) => [p.taskId, p.chosenText, p.rejectedText, p.failingLayer])).toEqual([
      ["t1", "good 1", "bad 0", "hidden"],
      ["t1", "good 1", "bad 2", "syntax"],
    ]);
    expect(pairs.every((p) => p.pairSource === "on_policy" && p.chosenSource === "on_policy")).toBe(true);
    expect(pairs.every((p) => p.rejectedSource === "on_policy")).toBe(true);
    expect(pairs[0]?.pairKey).toBe("t1:on_policy:sft:s0:e2:1-0");
    expect(pairs[0]?.failingTests).toEqual(["test_h"]);
  });

  it("gives at most 4 pairs per task, the passing answers taken in turn", () => {
    const answers = [sample("t1", 0, "good a", "pass"), sample("t1", 1, "good b", "pass")];
    for (let i = 2; i < 10; i++) answers.push(sample("t1", i, `bad ${i}`, "fail_public"));
    const { pairs, skipped } = onPolicyPairs({ prompts, answers });
    expect(pairs).toHaveLength(ON_POLICY_PAIRS_PER_TASK);
    expect(pairs.map((p) => p.chosenText)).toEqual(["good a", "good b", "good a", "good b"]);
    expect(skipped.filter((s) => s.reason === "task_cap")).toHaveLength(8 - ON_POLICY_PAIRS_PER_TASK);
  });
});

const task: Pick<TaskSpec, "id" | "files" | "reference"> = {
  id: "t1",
  files: [
    { path: "sol.py", role: "main", content: "def f(x):\n    return x - 1\n" },
    { path: "util.py", role: "dependency", content: "K = 1\n" },
  ],
  reference: [{ path: "sol.py", content: "def f(x):\n    return x + 1\n" }],
};
const mutant = (line: number, verdict: "fail_hidden" | "fail_public" | "infra_error", src: string) => ({
  operator: "binop",
  path: "sol.py",
  line,
  description: `mutant at ${line}`,
  source: src,
  verdict,
  failingTests: ["test_h"],
});

describe("near-miss pairs", () => {
  const rejected = nearMissRejected(task, {
    buggyVerdict: "fail_hidden",
    buggyFailingTests: ["test_h", "test_g"],
    isolation: "judge",
    killed: [
      mutant(2, "fail_public", "def f(x):\n    return x * 1\n"),
      mutant(2, "fail_hidden", "def f(x):\n    return x + 2\n"),
      mutant(1, "infra_error", "def g(x):\n    return x + 1\n"),
    ],
  });

  it("rejects the buggy file first, then killed mutants hidden-first, in the answer format; no infra error", () => {
    expect(rejected.map((r) => [r.source, r.verdict])).toEqual([
      ["buggy", "fail_hidden"],
      ["mutant", "fail_hidden"],
      ["mutant", "fail_public"],
    ]);
    const parsed = parseAnswer(rejected[1]?.text ?? "", ["sol.py"]);
    expect(parsed).toEqual({ ok: true, files: [{ path: "sol.py", content: "def f(x):\n    return x + 2\n" }] });
    expect(parseAnswer(rejected[0]?.text ?? "", ["sol.py"])).toMatchObject({
      ok: true,
      files: [{ content: "def f(x):\n    return x - 1\n" }],
    });
  });

  it("pairs them with the verified answer under their own source and keys, capped per task", () => {
    const chosen = [{ taskId: "t1", source: "reference" as const, text: "ref answer", verdict: "pass" as const }];
    const { pairs } = buildPairs({
      prompts,
      chosen,
      rejected,
      pairSource: "near_miss",
      maxPerTask: NEAR_MISS_PAIRS_PER_TASK,
    });
    expect(pairs.map((p) => p.pairKey)).toEqual([
      "t1:near_miss:buggy:0",
      "t1:near_miss:mutant:0",
      "t1:near_miss:mutant:1",
    ]);
    expect(pairs.every((p) => p.pairSource === "near_miss")).toBe(true);
    expect(pairs[0]).toMatchObject({
      rejectedSource: "buggy",
      failingTests: ["test_h", "test_g"],
      chosenText: "ref answer",
    });
    const capped = buildPairs({ prompts, chosen, rejected, pairSource: "near_miss", maxPerTask: 1 });
    expect(capped.pairs).toHaveLength(1);
    expect(capped.skipped.map((s) => s.reason)).toEqual(["task_cap", "task_cap"]);
    // The default source keeps the stored key format (recipes before sources existed build the same keys).
    const cross = buildPairs({ prompts, chosen, rejected });
    expect(cross.pairs[0]?.pairKey).toBe("t1:buggy:0");
    expect(cross.pairs[0]?.pairSource).toBe("cross_state");
  });
});
