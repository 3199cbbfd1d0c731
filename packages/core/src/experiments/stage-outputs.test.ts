import { describe, expect, it } from "vitest";
import { devCandidates } from "./dev-candidates";
import { parseStageOutput } from "./stage-outputs";

const DS = "00000000-0000-4000-8000-00000000000b";
const dataset = { datasetId: DS, datasetHash: "a".repeat(64), samples: 3, tasks: 2 };

describe("stage outputs", () => {
  it("parses a recorded output by its stage kind and reads nothing recorded as undefined", () => {
    expect(parseStageOutput("dataset", "dataset", dataset)).toEqual(dataset);
    expect(parseStageOutput("dataset", "dataset", {})).toBeUndefined();
    expect(parseStageOutput("train", "train:s1", undefined)).toBeUndefined();
    expect(parseStageOutput("collect", "collect", { reusedDatasetId: DS })).toEqual({ reusedDatasetId: DS });
  });

  it("refuses a record that does not fit, naming the stage and the field (the same record fits once fixed)", () => {
    expect(() => parseStageOutput("dataset", "dataset", { ...dataset, datasetHash: "nope" })).toThrow(
      /dataset stage's recorded output .* at datasetHash/,
    );
    expect(() => parseStageOutput("train", "train:s7", { snapshots: [{ epoch: 0, path: "/a", sha256: "x" }] })).toThrow(
      /train:s7 stage's recorded output .* at snapshots\.0\.epoch/,
    );
    expect(parseStageOutput("train", "train:s7", { snapshots: [{ epoch: 1, path: "/a", sha256: "x" }] })).toEqual({
      snapshots: [{ epoch: 1, path: "/a", sha256: "x" }],
    });
  });

  it("fills an evaluation book's defaults and keeps keys it does not know (the evaluation writes back what it read)", () => {
    const out = parseStageOutput("test_eval", "test_eval", { models: [{ model: "base" }], extra: { a: 1 } });
    expect(out).toEqual({ generate: {}, done: {}, models: [{ model: "base" }], extra: { a: 1 } });
    expect(() => parseStageOutput("test_eval", "test_eval", { models: [{ model: "other" }] })).toThrow(/models\.0/);
  });
});

describe("dev candidates", () => {
  const config = { seeds: [5, 3], training: { epochs: 2 } };
  const row = (modelKey: string, taskId: string, pass: boolean) => ({
    modelKey,
    taskId,
    verdict: pass ? "pass" : "fail_hidden",
  });

  it("counts passes per model over the tasks with a verdict for every model, base first, seeds in config order", () => {
    const rows = [
      row("s3e1", "t1", true),
      row("base", "t1", false),
      row("base", "t2", true),
      row("s5e2", "t1", true),
      row("s5e2", "t2", true),
      row("s3e1", "t2", false),
      row("s5e2", "t3", true),
      row("base", "t3", false),
    ];
    // t3 lost its verdict for some model: left out for every candidate.
    expect(devCandidates(rows, new Set(["t3"]), config)).toEqual([
      { ref: { model: "base" }, n: 2, passed: 1 },
      { ref: { model: "adapter", seed: 5, seedIndex: 0, epoch: 2 }, n: 2, passed: 2 },
      { ref: { model: "adapter", seed: 3, seedIndex: 1, epoch: 1 }, n: 2, passed: 1 },
    ]);
    // Control: without the exclusion t3 counts.
    expect(devCandidates(rows, new Set(), config)[0]).toEqual({ ref: { model: "base" }, n: 3, passed: 1 });
  });

  it("ignores model keys outside the recipe (an epoch past config.training.epochs)", () => {
    expect(devCandidates([row("s5e3", "t1", true), row("base", "t1", true)], new Set(), config)).toEqual([
      { ref: { model: "base" }, n: 1, passed: 1 },
    ]);
  });
});
