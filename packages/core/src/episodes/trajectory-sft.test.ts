import { describe, expect, it } from "vitest";
import { SftSample } from "../trainer/schemas";
import { PUBLIC_TESTS_PASSED, trajectoryKind, trajectorySftSample, type TrajectoryTurn } from "./trajectory-sft";

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
