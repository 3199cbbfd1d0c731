import { describe, expect, it } from "vitest";
import { cpuDemoShortcut, firstRunSteps, nextStep } from "./firstRun";

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

  it("gives the no-agent advice that is true for this server's local agent", () => {
    const detail = (localAgent: Parameters<typeof firstRunSteps>[0]["localAgent"]) =>
      firstRunSteps({ ...none, localAgent })[0]?.detail;
    expect(detail({ state: "restarting", retryInS: 4 })).toMatch(/restarts it in 4 s/);
    expect(detail({ state: "running", restarts: 0 })).toMatch(/is starting/);
    expect(detail({ state: "running", restarts: 2 })).toMatch(/restarted \(2×\)/);
    expect(detail({ state: "off" })).toMatch(/runs no local agent; enroll one/);
    // Never "`npm start` runs a local one" while it is running one.
    for (const d of [detail({ state: "restarting", retryInS: 1 }), detail({ state: "running", restarts: 0 })])
      expect(d).not.toMatch(/npm start/);
  });
});

describe("the CPU demo shortcut", () => {
  it("is offered once an agent's sandbox works, until the lab has an experiment", () => {
    // Control: no working agent yet, so nothing could build its base or grade.
    expect(cpuDemoShortcut({ ...none, agentsOnline: 1 })).toBeNull();
    // No split or provider needed: the preset makes both.
    expect(cpuDemoShortcut({ ...none, agentsOnline: 1, sandboxOk: 1 })?.href).toBe("/experiments/new?preset=cpu-demo");
    expect(cpuDemoShortcut({ ...none, agentsOnline: 1, sandboxOk: 1, experiments: 1 })).toBeNull();
  });
});
