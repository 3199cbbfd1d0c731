import { describe, expect, it } from "vitest";
import { estimateWork, evaluationWork } from "./estimate";

describe("evaluation work and its estimate", () => {
  const work = evaluationWork({ devTasks: 10, testTasks: 20, seeds: 2, epochs: 3, samples: 4 });
  it("counts tasks × samples × models: dev the base and every epoch, test the base and each seed", () => {
    expect(work.dev).toEqual({ tasks: 10, models: 7, answers: 280 });
    expect(work.test).toEqual({ tasks: 20, models: 3, answers: 240 });
    expect(work.answers).toBe(520);
    expect(evaluationWork({ devTasks: 10, testTasks: 20, seeds: 2, epochs: 3, samples: 1 }).answers).toBe(130);
  });
  it("divides measured agent-seconds per item over the online agents", () => {
    const e = estimateWork(work, {
      generate: { secondsPerItem: 0.5, items: 100, jobs: 2 },
      grade: { secondsPerItem: 0.1, items: 640, jobs: 10 },
      agents: 2,
    });
    expect(e).toMatchObject({ kind: "estimate", generateS: 130, gradeS: 26, totalS: 156, agents: 2 });
  });
  it("says why there is no estimate instead of inventing one", () => {
    const g = { secondsPerItem: 1, items: 1, jobs: 1 };
    expect(estimateWork(work, { generate: null, grade: g, agents: 1 })).toEqual({
      kind: "unknown",
      reason: "no measurement yet: no finished generate job",
    });
    expect(estimateWork(work, { generate: null, grade: null, agents: 1 })).toMatchObject({
      reason: "no measurement yet: no finished generate or grade job",
    });
    expect(estimateWork(work, { generate: g, grade: g, agents: 0 })).toEqual({
      kind: "unknown",
      reason: "no agent is online",
    });
  });
});
