import { describe, expect, it } from "vitest";
import { SftSample } from "../trainer/schemas";
import { sftLine } from "../teacher/sft";
import {
  PUBLIC_TESTS_PASSED,
  failedAttemptTurns,
  trajectoryKind,
  trajectorySftSample,
  type TrajectoryTurn,
} from "./trajectory-sft";

const turn = (tool: string, over: Partial<TrajectoryTurn> = {}): TrajectoryTurn => ({
  role: "assistant",
  tool,
  args: {},
  status: "ok",
  output: `${tool} done`,
  changed: false,
  ...over,
});
const failedRun = turn("run_public_tests", { output: "public tests: failed (pytest exit code 1)\n1 failed" });
const passedRun = turn("run_public_tests", { output: `${PUBLIC_TESTS_PASSED}\n1 passed` });
const edit = turn("edit_file", { args: { path: "a.py", old: "x", new: "y" }, changed: true });

describe("trajectoryKind", () => {
  it("a failing run on the untouched task reproduces the bug: success", () => {
    expect(trajectoryKind([failedRun, edit, passedRun, turn("submit")])).toBe("success");
  });
  it("a failing run after an edit is a failed attempt: recovery", () => {
    expect(trajectoryKind([edit, failedRun, edit, passedRun, turn("submit")])).toBe("recovery");
  });
  it("a refused edit changes nothing, and a refused run ran nothing", () => {
    const refusedEdit = turn("edit_file", { status: "refused", output: "no match" });
    const refusedRun = turn("run_public_tests", { status: "refused", output: "no test runs left" });
    expect(trajectoryKind([refusedEdit, failedRun, edit, refusedRun, turn("submit")])).toBe("success");
  });
});

describe("trajectorySftSample", () => {
  it("renders the prompt, each call as an assistant turn and each observation as the user turn after it", () => {
    const s = trajectorySftSample("fix f", [edit, passedRun, turn("submit")]);
    expect(SftSample.parse(s)).toEqual(s);
    expect(s.messages.map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(JSON.parse(s.messages[2]?.content ?? "")).toEqual({
      tool: "edit_file",
      args: { path: "a.py", old: "x", new: "y" },
    });
    expect(s.messages[5]?.content).toBe(passedRun.output);
    expect(JSON.parse(s.messages[6]?.content ?? "")).toEqual({ tool: "submit", args: {} });
  });
  it("refuses a trajectory the budget ended (control: the policy's own submit above)", () => {
    expect(() => trajectorySftSample("fix f", [edit, turn("submit", { role: "environment" })])).toThrow(/own submit/);
    expect(() => trajectorySftSample("fix f", [edit])).toThrow(/own submit/);
  });
});

describe("the failed-attempt mask", () => {
  const read = turn("read_file");
  const second = turn("edit_file", { args: { path: "a.py", old: "y", new: "z" }, changed: true });
  const recovery = [read, edit, failedRun, second, passedRun, turn("submit")];
  it("masks the edits before the last failed run on an edited workspace, nothing of a success", () => {
    expect([...failedAttemptTurns(recovery)]).toEqual([1]);
    expect([...failedAttemptTurns([edit, failedRun, second, failedRun, edit, turn("submit")])]).toEqual([0, 2]);
    expect(failedAttemptTurns([failedRun, edit, passedRun, turn("submit")]).size).toBe(0);
  });
  it("leaves the masked turn in the context as train: false, only when asked (control: the default)", () => {
    const masked = trajectorySftSample("fix f", recovery, { maskFailedAttempts: true });
    const plain = trajectorySftSample("fix f", recovery);
    expect(SftSample.parse(masked)).toEqual(masked);
    expect(masked.messages.map((m) => m.content)).toEqual(plain.messages.map((m) => m.content));
    expect(masked.messages.flatMap((m, i) => (m.train === false ? [i] : []))).toEqual([4]);
    expect(plain.messages.some((m) => "train" in m)).toBe(false);
    // the dataset line the trainer reads carries the flag; a plain line is role and content only
    expect(sftLine(masked)).toContain('"train":false');
    expect(sftLine(plain)).not.toContain("train");
    expect(SftSample.safeParse({ messages: [{ role: "user", content: "x", train: false }] }).success).toBe(false);
  });
});
