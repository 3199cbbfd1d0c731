import { describe, expect, it } from "vitest";
import { evaluationWork } from "./estimate";
import { remainingTime } from "./remaining";

const work = evaluationWork({ devTasks: 10, testTasks: 10, seeds: 2, epochs: 1, samples: 1 }); // 30 + 30 answers
const t = {
  generate: { secondsPerItem: 2, items: 100, jobs: 5 },
  grade: { secondsPerItem: 1, items: 100, jobs: 5 },
  agents: 1,
};

describe("a running experiment's time left", () => {
  it("adds the evaluation still to do and the training still to run", () => {
    const r = remainingTime({
      work,
      generated: 20,
      graded: 10,
      throughput: t,
      seeds: [
        { state: "succeeded", etaS: null, elapsedS: 100 },
        { state: "running", etaS: 30, elapsedS: 70 },
      ],
    });
    // 40 answers × 2 s + 50 grades × 1 s = 130 s; training: the running seed's 30 s.
    expect(r).toMatchObject({ kind: "estimate", evaluationS: 130, trainingS: 30, totalS: 160 });
  });

  it("prices a seed not started at what the others took, shared over the agents", () => {
    const r = remainingTime({
      work,
      generated: 60,
      graded: 60,
      throughput: { ...t, agents: 2 },
      seeds: [
        { state: "succeeded", etaS: null, elapsedS: 100 },
        { state: "pending", etaS: null, elapsedS: null },
      ],
    });
    expect(r).toMatchObject({ kind: "estimate", evaluationS: 0, trainingS: 50 });
  });

  it("says what it cannot know instead of guessing", () => {
    const seeds = [{ state: "pending" as const, etaS: null, elapsedS: null }];
    expect(remainingTime({ work, generated: 0, graded: 0, throughput: t, seeds })).toMatchObject({
      kind: "unknown",
      reason: expect.stringContaining("no training seed has run yet"),
    });
    expect(
      remainingTime({ work, generated: 0, graded: 0, throughput: { ...t, grade: null }, seeds: [] }),
    ).toMatchObject({ kind: "unknown" });
    expect(remainingTime({ work, generated: 0, graded: 0, throughput: { ...t, agents: 0 }, seeds: [] })).toMatchObject({
      kind: "unknown",
      reason: "no agent is online",
    });
  });
});
