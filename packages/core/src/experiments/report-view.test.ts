import { describe, expect, it } from "vitest";
import { ExperimentConfig } from "./config";
import { selectByDev, type ModelRef } from "./selection";
import type { RecordedProtocol } from "./protocol";
import { buildReport, type ReportInput, type TaskOutcome } from "./report";
import { reportHeader } from "./report-header";
import { reportToCsv, reportToMarkdown } from "./export";
import { contaminationCheck } from "./contamination";

// The per-task view, the isolation counts and the header, and that the exports carry them.

const config = ExperimentConfig.parse({
  name: "view",
  splitId: "00000000-0000-4000-8000-000000000001",
  teacher: { providerId: "00000000-0000-4000-8000-000000000002" },
  baseModel: { source: "path", ref: "/models/tiny" },
  evaluation: { graderVersion: "g1" },
  seeds: [7],
  bootstrap: { iterations: 200, seed: 1 },
});
const recorded: RecordedProtocol = {
  promptTemplateHash: "c".repeat(64),
  chatTemplateSha256: null,
  decoding: { doSample: false, temperature: 1, topP: 1 },
  maxNewTokens: 32,
  samples: 1,
  seed: 0,
  stop: [],
  generationConfig: "recipe",
  backend: "transformers",
  backendVersion: "4.57.0",
  dtype: "float32",
  device: "cpu",
  model: { ref: "/models/tiny", revision: null, weightsSha256: "a".repeat(64) },
  adapterSha256: null,
  trainingMethod: null,
  graderVersion: "g1",
};
const a1: ModelRef = { model: "adapter", seed: 7, seedIndex: 0, epoch: 1 };
const out = (passes: readonly number[], inProcess: readonly number[] = []): TaskOutcome[] =>
  passes.map((v, i) => ({
    taskId: `t${i}`,
    group: `g${i}`,
    verdict: v ? "pass" : "fail_hidden",
    isolation: inProcess.includes(i) ? "in_process" : "judge",
  }));
const leak = contaminationCheck({ test: [], train: [], sft: [], dev: [] });

function input(
  devAdapter: number[],
  test: Record<string, TaskOutcome[]>,
  extra: Partial<ReportInput> = {},
): ReportInput {
  const dev = { base: out([1, 1, 0, 0]), s7e1: out(devAdapter) };
  const cand = (ref: ModelRef, xs: TaskOutcome[]) => ({
    ref,
    n: xs.length,
    passed: xs.filter((x) => x.verdict === "pass").length,
  });
  const selection = selectByDev([cand({ model: "base" }, dev.base), cand(a1, dev.s7e1)]);
  return {
    experimentId: "e",
    name: "view",
    generatedAt: "2026-01-01T00:00:00.000Z",
    config,
    selection,
    protocols: { base: recorded },
    dev,
    test,
    testAdapters: [a1],
    contamination: leak,
    devContamination: leak,
    ...extra,
  };
}

describe("per-task view", () => {
  it("base kept: dev shows base vs the best adapter and test base vs that adapter, saying so; never empty", () => {
    const r = buildReport(input([1, 0, 0, 0], { base: out([1, 0, 1]), s7e1: out([1, 1, 0]) }));
    expect(r.outcome.kind).toBe("base_kept");
    expect(r.tasks.filter((t) => t.split === "test")).toEqual([]); // nothing is paired for inference
    const [dev, test] = r.taskViews ?? [];
    expect(dev).toMatchObject({
      split: "dev",
      otherKey: "s7e1",
      shown: expect.stringMatching(/did not beat the base: the base was kept/),
    });
    expect(test?.rows.map((x) => x.category)).toEqual(["both_pass", "improved", "regressed"]);
    expect(test?.shown).toMatch(/no gain is claimed\. Shown for context/);
    expect(reportToMarkdown(r)).toContain("## Per-task (test): base vs seed 7 · epoch 1");
  });

  it("base kept with only the base on test: base vs base, said in words", () => {
    const r = buildReport({ ...input([0, 0, 0, 0], { base: out([1, 0]) }), testAdapters: [] });
    const test = r.taskViews?.find((v) => v.split === "test");
    expect(test).toMatchObject({
      otherKey: "base",
      shown: expect.stringMatching(/only the base was evaluated on test: base vs base/),
    });
    expect(test?.rows.map((x) => [x.base, x.other, x.category])).toEqual([
      ["pass", "pass", "both_pass"],
      ["fail_hidden", "fail_hidden", "both_fail"],
    ]);
  });

  it("lists excluded pairs in the view, the CSV and the Markdown, and counts in-process verdicts", () => {
    const test = { base: out([1, 0, 0], [2]), s7e1: out([1, 1]) };
    const r = buildReport(input([1, 1, 1, 0], test, { noVerdict: { dev: {}, test: { s7e1: ["t2"] } } }));
    expect(r.outcome.kind).toBe("adapter_selected");
    const view = r.taskViews?.find((v) => v.split === "test");
    expect(view?.rows.find((x) => x.taskId === "t2")).toEqual({
      split: "test",
      taskId: "t2",
      group: "g2",
      base: "fail_hidden",
      other: null,
      category: "excluded",
      inProcess: true,
    });
    expect(r.summary[1].n).toBe(2); // the excluded pair is not counted
    expect(r.isolation?.find((i) => i.split === "test" && i.modelKey === "base")).toEqual({
      split: "test",
      modelKey: "base",
      total: 3,
      inProcess: 1,
    });
    const csv = reportToCsv(r).split("\n");
    expect(csv[0]).toBe("split,task_id,source_group,base_verdict,sft_verdict,category,compared,in_process");
    expect(csv).toContain("test,t2,g2,fail_hidden,,excluded,seed 7 · epoch 1,true");
    const md = reportToMarkdown(r);
    expect(md).toContain("- Excluded (test, base vs seed 7 · epoch 1): 1 pair excluded: no verdict — `t2`");
    expect(md).toContain("- Dev contamination (dev vs SFT data): 0 of 0 dev tasks overlap");
    expect(md).toContain("  - test · base: 1 of 3 verdicts from in-process grading");
  });

  it("no in-process verdict: says all verdicts come from the isolated judge (control for the count above)", () => {
    const r = buildReport(input([1, 1, 1, 0], { base: out([1, 0]), s7e1: out([1, 1]) }));
    expect(r.isolation?.every((i) => i.inProcess === 0)).toBe(true);
    expect(reportToMarkdown(r)).toContain("- Grading isolation: all verdicts from the isolated judge");
  });
});

describe("report header", () => {
  it("marks the selected adapter and those on test, takes the model hash from the protocol, and exports it", () => {
    const header = reportHeader({
      experiment: {
        id: "e",
        name: "view",
        createdAt: "2026-01-01T00:00:00.000Z",
        reportAt: "2026-01-01T00:03:05.000Z",
      },
      baseModel: config.baseModel,
      training: config.training,
      seeds: config.seeds,
      protocol: recorded,
      selectedKey: "s7e1",
      testKeys: ["base", "s7e1"],
      adapters: [
        { seed: 7, epoch: 2, sha256: "e".repeat(64), method: "lora-fp32", trainJobId: "j" },
        { seed: 7, epoch: 1, sha256: "d".repeat(64), method: "lora-fp32", trainJobId: "j" },
      ],
      dataset: {
        id: "d",
        name: "sft",
        hash: "f".repeat(64),
        samples: 9,
        tasks: 8,
        oracleSamples: 9,
        supervisedTokens: 1234,
        totalTokens: 5000,
      },
      split: {
        id: "s",
        name: "split",
        seed: 3,
        manifestHash: "b".repeat(64),
        poolSnapshotHash: "0".repeat(64),
        counts: { train: { tasks: 8, groups: 8 }, dev: { tasks: 4, groups: 4 }, test: { tasks: 3, groups: 3 } },
      },
      jobs: [{ type: "train", count: 1, firstStart: null, lastFinish: null }],
      trainJobs: [{ seed: 7, jobId: "j" }],
      hardware: [
        {
          id: "a",
          name: "local",
          os: "linux",
          cpuCores: 2,
          ramMb: 8192,
          gpus: [],
          torch: "2.5",
          cuda: null,
          jobTypes: ["train"],
          attempts: 1,
        },
      ],
    });
    expect(header.experiment.durationS).toBe(185);
    expect(header.adapters.map((a) => [a.epoch, a.selected, a.onTest])).toEqual([
      [1, true, true],
      [2, false, false],
    ]);
    expect(header.baseModel.weightsSha256).toBe("a".repeat(64));
    const md = reportToMarkdown(buildReport({ ...input([1, 1, 1, 0], { base: out([1]), s7e1: out([1]) }), header }));
    expect(md).toContain("took 3 min 05 s");
    expect(md).toContain("| seed 7 · epoch 1 | lora-fp32 | `dddddddddddd` | `j` | selected, on test |");
    expect(md).toContain("1234 supervised tokens");
    expect(md).toContain("- Hardware: local: 2 CPU cores, 8 GiB RAM, no GPU (torch 2.5) — ran train (1 attempts)");
  });
});
