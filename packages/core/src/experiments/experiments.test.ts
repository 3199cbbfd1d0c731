import { describe, expect, it } from "vitest";
import { ExperimentConfig } from "./config";
import { nextStages, stagePlan, type StageRecord } from "./stages";
import { bestEpochPerSeed, selectByDev, type DevCandidate } from "./selection";
import { assertSameProtocol, checkProtocol, recipeMismatches, type RecordedProtocol } from "./protocol";
import { buildReport, type ReportInput, type TaskOutcome } from "./report";
import { reportToCsv, reportToJson, reportToMarkdown } from "./export";
import { comparePaired } from "../stats/compare";
import { contaminationCheck, devContaminationCheck } from "./contamination";
import type { TaskSpec } from "../tasks/spec";

const config = ExperimentConfig.parse({
  name: "exp",
  splitId: "00000000-0000-4000-8000-000000000001",
  teacher: { providerId: "00000000-0000-4000-8000-000000000002" },
  baseModel: { source: "path", ref: "/models/tiny" },
  evaluation: { graderVersion: "g1" },
  seeds: [11, 22],
  bootstrap: { iterations: 500, seed: 1 },
});
const adapter = (seedIndex: number, epoch: number) => ({
  model: "adapter" as const,
  seed: config.seeds[seedIndex] ?? 0,
  seedIndex,
  epoch,
});
const cand = (ref: DevCandidate["ref"], passed: number, n = 10): DevCandidate => ({ ref, passed, n });

describe("stage machine", () => {
  const plan = stagePlan(config);
  const rec = (key: string, state: StageRecord["state"]): StageRecord => ({ key, state });
  it("starts with collect and the base's dev evaluation", () => {
    const s = nextStages(plan, []);
    expect(s.status === "running" && s.runnable.map((x) => x.key)).toEqual(["collect", "dev_eval:base"]);
  });
  it("resumes from the last finished stage: a running train stage is runnable again, later ones wait", () => {
    const done = ["collect", "verify", "dataset", "dev_eval:base"].map((k) => rec(k, "succeeded"));
    const s = nextStages(plan, [...done, rec("train:s11", "succeeded"), rec("train:s22", "running")]);
    expect(s.status === "running" && s.runnable.map((x) => x.key)).toEqual(["train:s22", "dev_eval:s11"]);
  });
  it("stops on a failed stage and finishes when all succeeded", () => {
    expect(nextStages(plan, [{ key: "verify", state: "failed", error: "boom" }])).toEqual({
      status: "failed",
      stage: "verify",
      error: "boom",
    });
    expect(
      nextStages(
        plan,
        plan.map((p) => rec(p.key, "succeeded")),
      ),
    ).toEqual({ status: "succeeded" });
  });
});

describe("dev selection", () => {
  it("a tie keeps the base", () => {
    const d = selectByDev([cand(adapter(0, 1), 5), cand({ model: "base" }, 5), cand(adapter(1, 2), 4)]);
    expect(d.outcome).toBe("base_kept");
    expect(d.selected).toEqual({ model: "base" });
    expect(d.reason).toMatch(/No adapter beat the base/);
    expect(d.table[0]?.selected).toBe(true);
  });
  it("ties between epochs keep the lower seed index, then the earlier epoch", () => {
    const d = selectByDev([
      cand(adapter(1, 1), 7),
      cand(adapter(0, 2), 7),
      cand(adapter(0, 1), 6),
      cand({ model: "base" }, 5),
    ]);
    expect(d.selected).toEqual(adapter(0, 2));
    const e = selectByDev([cand(adapter(0, 2), 7), cand(adapter(0, 1), 7), cand({ model: "base" }, 5)]);
    expect(e.selected).toEqual(adapter(0, 1));
    expect(e.outcome).toBe("adapter_selected");
  });
  it("refuses candidates evaluated on different task counts", () => {
    expect(() => selectByDev([cand({ model: "base" }, 5, 10), cand(adapter(0, 1), 5, 9)])).toThrow(/same dev tasks/);
  });
  it("picks each seed's best epoch", () => {
    const best = bestEpochPerSeed([
      cand(adapter(0, 1), 3),
      cand(adapter(0, 2), 4),
      cand(adapter(1, 1), 5),
      cand(adapter(1, 2), 5),
      cand({ model: "base" }, 9),
    ]);
    expect(best.map((b) => b.ref)).toEqual([adapter(0, 2), adapter(1, 1)]);
  });
});

// What one evaluation recorded (core RecordedProtocol): a greedy CPU run of a local model folder.
const recorded: RecordedProtocol = {
  promptTemplateHash: config.evaluation.promptTemplateHash,
  chatTemplateSha256: "c".repeat(64),
  decoding: { doSample: false, temperature: 1, topP: 1 },
  maxNewTokens: config.evaluation.maxNewTokens,
  samples: 1,
  seed: 0,
  stop: ["<|im_end|>"],
  generationConfig: "recipe",
  backend: "transformers",
  backendVersion: "4.57.1",
  dtype: "float32",
  device: "cpu",
  model: { ref: "/models/tiny", revision: null, weightsSha256: "a".repeat(64) },
  adapterSha256: null,
  trainingMethod: null,
  graderVersion: config.evaluation.graderVersion,
};

describe("protocol check", () => {
  const p = recorded;
  it("accepts identical protocols and names every mismatch", () => {
    expect(checkProtocol({ base: p, sft: { ...p } }).ok).toBe(true);
    const bad = checkProtocol({ base: p, sft: { ...p, maxNewTokens: 256, graderVersion: "g2" } });
    expect(bad.ok).toBe(false);
    expect(bad.mismatches.map((m) => m.field)).toEqual(["maxNewTokens", "graderVersion"]);
    expect(() => assertSameProtocol({ base: p, sft: { ...p, decoding: { ...p.decoding, temperature: 0.7 } } })).toThrow(
      /different protocols: decoding/,
    );
    // Environment fields count too; the adapter hash and training method differ by design.
    expect(
      checkProtocol({
        base: p,
        sft: {
          ...p,
          dtype: "bfloat16",
          backendVersion: "4.58.0",
          adapterSha256: "b".repeat(64),
          trainingMethod: "lora-fp32",
        },
      }).mismatches.map((m) => m.field),
    ).toEqual(["backend", "dtype"]);
  });
  it("checks a generation against the recipe and the trained adapter", () => {
    const ev = { ...config.evaluation, device: "cpu" as const, dtype: "float32" as const };
    const { graderVersion: _g, ...gen } = recorded;
    const expected = { promptTemplateHash: recorded.promptTemplateHash, adapterSha256: null };
    expect(recipeMismatches(gen, ev, expected)).toEqual([]);
    expect(recipeMismatches({ ...gen, generationConfig: "checkpoint", dtype: "bfloat16" }, ev, expected)).toEqual([
      "dtype bfloat16 ≠ float32",
      "generationConfig checkpoint ≠ recipe",
    ]);
    expect(
      recipeMismatches({ ...gen, adapterSha256: "d".repeat(64) }, ev, {
        ...expected,
        adapterSha256: "e".repeat(64),
      })[0],
    ).toMatch(/^adapter hash mismatch/);
    expect(
      recipeMismatches({ ...gen, model: { ref: "x", revision: null, weightsSha256: null } }, ev, expected),
    ).toEqual(["the base model is identified by neither a resolved revision nor a weights hash"]);
  });
});

const outcomes = (passes: readonly number[]): TaskOutcome[] =>
  passes.map((v, i) => ({ taskId: `t${i}`, group: `g${Math.floor(i / 2)}`, verdict: v ? "pass" : "fail_hidden" }));
const leak = contaminationCheck({ test: [], train: [], sft: [], dev: [] });

function input(
  selection: ReturnType<typeof selectByDev>,
  test: Record<string, TaskOutcome[]>,
  testAdapters: ReportInput["testAdapters"],
): ReportInput {
  return {
    experimentId: "e1",
    name: "exp",
    generatedAt: "2026-01-01T00:00:00.000Z",
    config,
    selection,
    protocols: { base: recorded, sft: recorded },
    dev: { base: outcomes([1, 0, 0, 0]), s11e1: outcomes([1, 1, 0, 0]), s22e1: outcomes([1, 0, 0, 0]) },
    test,
    testAdapters,
    contamination: leak,
  };
}

describe("report", () => {
  it("compares the selected adapter on test, labels a small sample not significant, pools seeds", () => {
    const sel = selectByDev([cand({ model: "base" }, 1, 4), cand(adapter(0, 1), 2, 4), cand(adapter(1, 1), 1, 4)]);
    const r = buildReport(
      input(
        sel,
        {
          base: outcomes([1, 0, 0, 0, 1, 0]),
          s11e1: outcomes([1, 1, 1, 0, 1, 0]),
          s22e1: outcomes([0, 1, 0, 0, 1, 0]),
        },
        [adapter(0, 1), adapter(1, 1)],
      ),
    );
    const test = r.summary[1];
    expect(test?.base.value).toBeCloseTo(2 / 6, 12);
    expect(test?.sft?.value).toBeCloseTo(4 / 6, 12);
    // 3 source groups of 2 tasks: group sums 1, 1, 0, so p = P(|T| ≥ 2) over 4 sign flips = 0.5.
    expect([
      test.improved,
      test.regressed,
      test.stats?.p,
      test.stats?.test,
      test.stats?.groups,
      test.stats?.reliable,
    ]).toEqual([2, 0, 0.5, "cluster sign-flip (exact)", 3, false]);
    expect(r.outcome.headline).toMatch(/only 3 source groups: the interval is unreliable/i);
    // Dev chose the adapter: descriptive numbers only, no p-value or significance in the row's type or data.
    const dev = r.summary[0];
    expect(dev).toMatchObject({
      split: "dev",
      base: 0.25,
      sft: 0.5,
      delta: 0.25,
      note: "selection split: optimistic by construction",
    });
    expect(Object.keys(dev).filter((k) => /^(p|stats|significant|label)$/.test(k))).toEqual([]);
    // `agentlab stats compare` on the per-task table reproduces the test row: one comparePaired.
    const pairs = r.tasks
      .filter((t) => t.split === "test")
      .map((t) => ({ group: t.group, base: t.base === "pass" ? 1 : 0, treated: t.sft === "pass" ? 1 : 0 }));
    expect(test.stats).toEqual(
      comparePaired(pairs, { iterations: config.bootstrap.iterations, seed: config.bootstrap.seed }),
    );
    expect(test?.significant).toBe(false);
    expect(test?.label).toMatch(/not significant/);
    expect(r.outcome.kind).toBe("adapter_selected");
    expect(r.seeds?.perSeed.map((s) => [s.seed, s.stats.improved, s.stats.regressed, s.stats.test])).toEqual([
      [11, 2, 0, "cluster sign-flip (exact)"],
      [22, 1, 1, "cluster sign-flip (exact)"],
    ]);
    expect(r.seeds?.pooled.delta).toBeCloseTo((2 / 6 + 0) / 2, 12);
    expect(r.devCurve.points).toEqual([
      { seed: 11, epoch: 1, pass1: 0.5 },
      { seed: 22, epoch: 1, pass1: 0.25 },
    ]);
    expect(r.tasks.filter((t) => t.split === "test").map((t) => t.category)).toEqual([
      "both_pass",
      "improved",
      "improved",
      "both_fail",
      "both_pass",
      "both_fail",
    ]);
    const md = reportToMarkdown(r);
    expect(md).toContain("| split | Base | SFT | Δ | improved / regressed |");
    expect(md).toContain("| test | 33.3% [");
    expect(md).toContain(
      "| dev | 25.0% | 50.0% | +25.0 pp | 1 / 0 | — | — | — | selection split: optimistic by construction |",
    );
    expect(reportToCsv(r).split("\n")[0]).toBe(
      "split,task_id,source_group,base_verdict,sft_verdict,category,compared,in_process",
    );
    expect(JSON.parse(reportToJson(r)).outcome.kind).toBe("adapter_selected");
  });
  it("base kept: shows the base's test result and claims no gain", () => {
    const sel = selectByDev([cand({ model: "base" }, 2, 4), cand(adapter(0, 1), 2, 4)]);
    const r = buildReport(input(sel, { base: outcomes([1, 0, 1, 0]), s11e1: outcomes([1, 1, 1, 1]) }, [adapter(0, 1)]));
    expect(r.outcome.kind).toBe("base_kept");
    expect(r.outcome.headline).toMatch(/no gain is claimed/);
    expect(r.summary[1]).toMatchObject({ sft: null, stats: null, base: { value: 0.5 } });
    expect(reportToMarkdown(r)).toContain("| test | 50.0% [");
  });
  it("refuses to compare evaluations under different protocols", () => {
    const sel = selectByDev([cand({ model: "base" }, 1, 4), cand(adapter(0, 1), 2, 4)]);
    const bad = {
      ...input(sel, { base: outcomes([1]), s11e1: outcomes([1]) }, [adapter(0, 1)]),
      protocols: { base: recorded, sft: { ...recorded, promptTemplateHash: "0".repeat(64) } },
    };
    expect(() => buildReport(bad)).toThrow(/different protocols: promptTemplateHash/);
  });
  it("CSV defuses formula-like cells", () => {
    const sel = selectByDev([cand({ model: "base" }, 1, 4), cand(adapter(0, 1), 2, 4)]);
    const r = buildReport(
      input(
        sel,
        {
          base: [{ taskId: "=cmd", group: "g", verdict: "pass" }],
          s11e1: [{ taskId: "=cmd", group: "g", verdict: "pass" }],
        },
        [adapter(0, 1)],
      ),
    );
    expect(reportToCsv(r)).toContain(`test,"'=cmd",g,pass,pass,both_pass`);
  });
});

describe("contamination", () => {
  const task = (id: string, code: string): Pick<TaskSpec, "id" | "instruction" | "files"> => ({
    id,
    instruction: "Fix it.",
    files: [{ path: "solution.py", role: "main", content: code }],
  });
  const doc = (t: Pick<TaskSpec, "id" | "instruction" | "files">, ordinal = 0) => ({
    taskId: t.id,
    ordinal,
    text: `${t.instruction}\n${t.files.map((f) => f.content).join("\n")}`,
    task: t,
  });
  it("flags exact and normalized copies of test tasks in train, dev and the SFT data", () => {
    const code = "def add(a, b):\n    return a - b\n";
    const r = contaminationCheck({
      test: [task("t", code)],
      train: [task("tr", code)],
      sft: [doc(task("s", code))],
      dev: [task("d", "# note\ndef add(a,  b):\n    return a - b")],
    });
    expect(r.testTasksWithLeak).toBe(1);
    expect(
      r.pairs.filter((p) => p.exact || p.normalized).map((p) => [p.otherTaskId, p.otherPart, p.exact, p.normalized]),
    ).toEqual([
      ["sft:s", "train", true, true],
      ["tr", "train", true, true],
      ["d", "dev", false, true],
    ]);
  });
  it("flags a dev task that is in the SFT data, and not a dev task that is not (control)", () => {
    const long = Array.from({ length: 30 }, (_, i) => `x${i} = compute(${i}, y${i})`).join("\n");
    const devTask = task("d1", `def f(y0):\n${long}\n`);
    const clean = task("d2", "def g(q):\n    return q * 2\n");
    const r = devContaminationCheck({
      dev: [devTask, clean],
      sft: [doc(devTask), doc(task("s1", "def h():\n    return 1\n"))],
    });
    expect(r.testTasksWithLeak).toBe(1);
    expect(r.pairs.map((p) => [p.testTaskId, p.otherTaskId, p.exact])).toEqual([
      ["d1", "sft:d1", true],
      ["d1", "sft:d1#0", false],
    ]);
    expect(r.pairs[1]?.sharedNgrams).toBeGreaterThan(0); // the sample's text alone is caught by 13-grams
  });
});
