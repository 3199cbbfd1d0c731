import { describe, expect, it } from "vitest";
import { metricSeries, progressFraction } from "./progress";
import { appendChunks } from "./logTail";
import { jobSummary, requirementSummary } from "../_lib/jobs";

const chunk = (seq: number, data = `line ${seq}\n`) => ({
  attemptId: "a",
  seq,
  stream: "stdout",
  data,
  createdAt: "2026-01-01T00:00:00Z",
});

describe("job progress", () => {
  it("derives a fraction from the fields jobs report", () => {
    expect(progressFraction({ fraction: 0.4 })).toBe(0.4);
    expect(progressFraction({ step: 50, total_steps: 200 })).toBe(0.25);
    expect(progressFraction({ done: 3, total: 4 })).toBe(0.75);
    expect(progressFraction({ epoch: 1, epochs: 3 })).toBeCloseTo(1 / 3);
    expect(progressFraction({ step: 10, total: 0 })).toBeNull();
    expect(progressFraction({ progress: 7 })).toBeNull();
    expect(progressFraction(null)).toBeNull();
  });

  it("extracts metric curves keyed by step", () => {
    const { xKey, series } = metricSeries([
      { seq: 0, data: { step: 10, loss: 2.1, lr: 1e-4 } },
      { seq: 1, data: { step: 20, loss: 1.7, dev_pass_at_1: 0.3 } },
      { seq: 2, data: { note: "saving" } },
    ]);
    expect(xKey).toBe("step");
    expect(series).toEqual([
      {
        name: "loss",
        points: [
          { x: 10, y: 2.1 },
          { x: 20, y: 1.7 },
        ],
      },
      { name: "dev_pass_at_1", points: [{ x: 20, y: 0.3 }] },
    ]);
    expect(metricSeries([{ seq: 4, data: { loss: 1 } }]).xKey).toBe("seq");
  });
});

describe("log tail", () => {
  it("appends only unseen chunks in order", () => {
    let s = { lines: [chunk(0), chunk(1)], dropped: 0 };
    s = appendChunks(s, [chunk(1), chunk(2), chunk(3)]);
    expect(s.lines.map((l) => l.seq)).toEqual([0, 1, 2, 3]);
    const same = appendChunks(s, [chunk(3)]);
    expect(same).toBe(s);
  });

  it("keeps the newest lines and counts what it dropped", () => {
    const s = appendChunks({ lines: [chunk(0), chunk(1)], dropped: 5 }, [chunk(2), chunk(3)], 3);
    expect(s.lines.map((l) => l.seq)).toEqual([1, 2, 3]);
    expect(s.dropped).toBe(6);
  });
});

describe("job summary", () => {
  it("shows a shell job's argv", () => {
    expect(jobSummary({ type: "shell", payload: { argv: ["python", "-c", "print(1)"] } })).toBe("python -c print(1)");
    expect(jobSummary({ type: "train", payload: { argv: ["x"] } })).toBe("");
  });
});

describe("requirement summary", () => {
  it("says what a queued job waits for", () => {
    expect(requirementSummary({ requiredLabels: ["a100"], minGpus: 2, minGpuMemoryMb: 40_960, sandbox: "bwrap" })).toBe(
      "labels a100 · 2 GPUs ≥ 40 GiB · sandbox bwrap",
    );
    expect(requirementSummary({ requiredLabels: [], minGpus: 0, minGpuMemoryMb: 0, sandbox: null })).toBe("");
  });
});
