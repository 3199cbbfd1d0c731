import { describe, expect, it } from "vitest";
import { admitsAnswer, type GradedAnswer } from "./quality";

const tests = (pub: string, hidden: string): GradedAnswer["tests"] => [
  { layer: "public", outcome: pub === "ok" ? "passed" : "failed" },
  { layer: "hidden", outcome: hidden === "ok" ? "passed" : hidden === "err" ? "error" : "failed" },
];

describe("admitsAnswer", () => {
  const pass: GradedAnswer = { parsed: true, verdict: "pass", tests: tests("ok", "ok") };
  const nearMiss: GradedAnswer = { parsed: true, verdict: "fail_hidden", tests: tests("ok", "bad") };
  const publicFail: GradedAnswer = { parsed: true, verdict: "fail_public", tests: tests("bad", "bad") };
  const ungraded: GradedAnswer = { parsed: true, verdict: null, tests: [] };
  const prose: GradedAnswer = { parsed: false, verdict: null, tests: [] };

  it("verified takes passes only", () => {
    expect([pass, nearMiss, publicFail, ungraded, prose].map((a) => admitsAnswer("verified", a))).toEqual([
      true,
      false,
      false,
      false,
      false,
    ]);
  });

  it("unverified takes every parseable answer, graded or not", () => {
    expect([pass, nearMiss, publicFail, ungraded, prose].map((a) => admitsAnswer("unverified", a))).toEqual([
      true,
      true,
      true,
      true,
      false,
    ]);
  });

  it("public pass / hidden fail takes answers whose public tests all pass and a hidden one fails or errs", () => {
    const erred: GradedAnswer = { parsed: true, verdict: "fail_hidden", tests: tests("ok", "err") };
    const noPublic: GradedAnswer = { parsed: true, verdict: "fail_hidden", tests: tests("ok", "bad").slice(1) };
    expect(
      [pass, nearMiss, erred, publicFail, noPublic, ungraded].map((a) => admitsAnswer("public_pass_hidden_fail", a)),
    ).toEqual([false, true, true, false, false, false]);
  });
});
