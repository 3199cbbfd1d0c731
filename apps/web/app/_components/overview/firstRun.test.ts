import { describe, expect, it } from "vitest";
import { firstRunSteps, nextStep } from "./firstRun";

const none = { agentsOnline: 0, sandboxOk: 0, pools: 0, frozenSplits: 0, providers: 0, experiments: 0 };

describe("first-run checklist", () => {
  it("orders agent → pool → split → provider → experiment and names the next step", () => {
    expect(firstRunSteps(none).map((s) => s.key)).toEqual(["agent", "pool", "split", "provider", "experiment"]);
    expect(nextStep(firstRunSteps(none))?.action).toBe("Enroll an agent");
    // An agent online whose sandbox failed is not done: grading would never run.
    const noSandbox = firstRunSteps({ ...none, agentsOnline: 1, pools: 1 });
    expect(nextStep(noSandbox)?.action).toBe("Fix the sandbox");
    expect(nextStep(firstRunSteps({ ...none, agentsOnline: 1, sandboxOk: 1, pools: 1 }))?.key).toBe("split");
    expect(
      nextStep(
        firstRunSteps({ agentsOnline: 1, sandboxOk: 1, pools: 1, frozenSplits: 1, providers: 1, experiments: 2 }),
      ),
    ).toBeNull();
  });
});
