import { describe, expect, it } from "vitest";
import { shownStageState } from "./stage-state";

describe("a stage's shown state", () => {
  it("is the row's own while the experiment runs or after it succeeded", () => {
    expect(shownStageState("running", "running")).toBe("running");
    expect(shownStageState("running", "pending")).toBe("pending");
    expect(shownStageState("succeeded", "succeeded")).toBe("succeeded");
  });

  it("never reads running or pending once the experiment was canceled or failed", () => {
    expect(shownStageState("canceled", "running")).toBe("canceled");
    expect(shownStageState("canceled", "pending")).toBe("not run");
    expect(shownStageState("failed", "running")).toBe("stopped");
    expect(shownStageState("failed", "failed")).toBe("failed");
    expect(shownStageState("canceled", "succeeded")).toBe("succeeded");
  });
});
