import { describe, expect, it } from "vitest";
import type { TestOutcome } from "../grading/schemas";
import { MarginFilter, applyMarginFilter, buildPairs, failingLayer, type PreferencePair, pairsJsonl } from "./pairs";
import { pairStats } from "./stats";

const prompt = [{ role: "user" as const, content: "fix it" }];
const prompts = new Map([
  ["t1", prompt],
  ["t2", prompt],
]);
const failed = (id: string): TestOutcome => ({ id, layer: "hidden", outcome: "failed", message: "" });
const passed = (id: string): TestOutcome => ({ id, layer: "public", outcome: "passed", message: "" });
const rejected = (taskId: string, sample: number, text: string, verdict = "fail_hidden" as const) => ({
  taskId,
  source: "on_policy" as const,
  modelKey: "sft:s1:e2",
  sample,
  text,
  verdict,
  tests: [passed("test_a"), failed("test_b")],
});

describe("buildPairs", () => {
  it("pairs a graded-failing on-policy answer with the passing answer of the same task", () => {
    const { pairs, skipped } = buildPairs({
      prompts,
      chosen: [
        { taskId: "t1", source: "reference", text: "good ref", verdict: "pass" },
        { taskId: "t1", source: "teacher", text: "good teacher", verdict: "pass" },
      ],
      rejected: [rejected("t1", 0, "bad")],
    });
    expect(skipped).toEqual([]);
    expect(pairs).toEqual([
      expect.objectContaining({
        pairKey: "t1:sft:s1:e2:0",
        chosenText: "good teacher",
        chosenSource: "teacher",
        rejectedText: "bad",
        failingLayer: "hidden",
        failingTests: ["test_b"],
        weight: 1,
      }),
    ]);
  });

  it("refuses answers whose label does not hold, and names why (a valid pair as positive control)", () => {
    const { pairs, skipped } = buildPairs({
      prompts,
      chosen: [
        { taskId: "t1", source: "teacher", text: "good", verdict: "pass" },
        { taskId: "t2", source: "teacher", text: "looks good", verdict: "fail_public" },
      ],
      rejected: [
        rejected("t1", 0, "bad"),
        { ...rejected("t1", 1, "passing"), verdict: "pass" },
        { ...rejected("t1", 2, "lost"), verdict: "infra_error" },
        rejected("t1", 3, "bad"),
        rejected("t1", 4, "good"),
        rejected("t2", 0, "bad too"),
      ],
    });
    expect(pairs.map((p) => p.pairKey)).toEqual(["t1:sft:s1:e2:0"]);
    expect(skipped.map((s) => s.reason)).toEqual([
      "chosen_not_passing",
      "rejected_not_failing",
      "rejected_not_failing",
      "duplicate",
      "same_text",
      "no_chosen",
    ]);
    expect(skipped[2]?.detail).toContain("infra_error");
  });

  it("names the failing layer of every model failure and none for pass or infra_error", () => {
    expect(failingLayer("fail_syntax")).toBe("syntax");
    expect(failingLayer("timeout")).toBe("limits");
    expect(failingLayer("tampered")).toBe("tampered");
    expect(failingLayer("pass")).toBeNull();
    expect(failingLayer("infra_error")).toBeNull();
  });
});

const pair = (key: string, layer: PreferencePair["failingLayer"] = "hidden"): PreferencePair => ({
  pairKey: key,
  taskId: key.split(":")[0] ?? key,
  pairSource: "cross_state",
  prompt,
  chosenSource: "teacher",
  chosenText: "good",
  rejectedSource: "on_policy",
  rejectedModelKey: "base",
  rejectedSample: 0,
  rejectedText: `bad ${key}`,
  rejectedVerdict: "fail_hidden",
  failingLayer: layer,
  failingTests: [],
  weight: 1,
});
const score = (id: string, margin: number) => ({
  pair_id: id,
  ref_chosen_logp: margin - 10,
  ref_rejected_logp: -10,
  margin,
  chosen_tokens: 3,
  rejected_tokens: 3,
  weight: 1,
});

describe("applyMarginFilter", () => {
  const pairs = [pair("a:1"), pair("b:1", "syntax"), pair("c:1"), pair("d:1")];
  const scores = [score("a:1", -2), score("b:1", 0.5), score("c:1", 3), score("d:1", 0)];

  it("drops exactly the pairs the policy already prefers by more than the threshold, and counts them", () => {
    const r = applyMarginFilter(pairs, scores, { threshold: 0, mode: "drop", factor: 0.25 });
    expect(r.kept.map((p) => p.pairKey)).toEqual(["a:1", "d:1"]); // margin 0 is not "already preferred"
    expect(r.dropped.map((p) => p.pairKey)).toEqual(["b:1", "c:1"]);
    expect(r.counts).toEqual({ kept: 2, dropped: 2, downweighted: 0 });
    expect(r.kept.map((p) => p.marginBefore)).toEqual([-2, 0]);
    // a higher threshold keeps more: the filter reads the threshold, not a constant
    expect(applyMarginFilter(pairs, scores, { threshold: 1, mode: "drop", factor: 0.25 }).counts.dropped).toBe(1);
  });

  it("by default keeps every pair with its start margin recorded (the margin does not change the step-1 loss)", () => {
    const r = applyMarginFilter(pairs, scores, MarginFilter.parse({}));
    expect(r.counts).toEqual({ kept: 4, dropped: 0, downweighted: 0 });
    expect(r.kept.map((p) => [p.marginBefore, p.weight])).toEqual([
      [-2, 1],
      [0.5, 1],
      [3, 1],
      [0, 1],
    ]);
    // a recipe stored with the old default keeps its meaning (explicit opt-in)
    expect(MarginFilter.parse({ threshold: 0, mode: "drop", factor: 0.25 }).mode).toBe("drop");
  });

  it("down-weights instead of dropping when asked", () => {
    const r = applyMarginFilter(pairs, scores, { threshold: 0, mode: "downweight", factor: 0.25 });
    expect(r.counts).toEqual({ kept: 4, dropped: 0, downweighted: 2 });
    expect(r.kept.map((p) => p.weight)).toEqual([1, 0.25, 0.25, 1]);
    expect(pairsJsonl(r.kept).split("\n")[1]).toBe(
      JSON.stringify({ pair_id: "b:1", prompt, chosen: "good", rejected: "bad b:1", weight: 0.25 }),
    );
  });

  it("refuses a pair without a score and a score without a pair", () => {
    const f = { threshold: 0, mode: "drop" as const, factor: 0.25 };
    expect(() => applyMarginFilter(pairs, scores.slice(1), f)).toThrow("pair a:1 has no margin score");
    expect(() => applyMarginFilter(pairs, [...scores, score("z:9", 1)], f)).toThrow("unknown pairs: z:9");
  });

  it("counts the kept pairs by failing layer and source, and summarizes both margins", () => {
    const r = applyMarginFilter(pairs, scores, { threshold: 0, mode: "drop", factor: 0.25 });
    const s = pairStats(r.kept, r.dropped, r.counts.downweighted);
    expect(s).toMatchObject({ kept: 2, dropped: 2, tasks: 2, byFailingLayer: { hidden: 2 } });
    expect(s.byChosenSource).toEqual({ teacher: 2 });
    expect(s.marginKept).toEqual({ n: 2, min: -2, median: -1, mean: -1, max: 0 });
    expect(s.marginDropped).toEqual({ n: 2, min: 0.5, median: 1.75, mean: 1.75, max: 3 });
  });
});
