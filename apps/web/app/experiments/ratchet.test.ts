import { describe, expect, it } from "vitest";
import { ratchetStages } from "./ratchet";

describe("ratchetStages", () => {
  it("keeps a running stage's progress from dropping as jobs are added", () => {
    const a = {
      name: "x",
      stages: [
        { key: "dev_eval:base", state: "running", progress: 1 },
        { key: "select", state: "pending", progress: 0 },
      ],
    };
    const b = {
      name: "x",
      stages: [
        { key: "dev_eval:base", state: "running", progress: 1 / 41 },
        { key: "select", state: "pending", progress: 0 },
      ],
    };
    expect(ratchetStages(a, b).stages.map((s) => s.progress)).toEqual([1, 0]);
    expect(ratchetStages(undefined, b)).toBe(b);
    const failed = { name: "x", stages: [{ key: "dev_eval:base", state: "failed", progress: 0.2 }] };
    expect(ratchetStages(a, failed).stages[0]?.progress).toBe(0.2);
  });
});
