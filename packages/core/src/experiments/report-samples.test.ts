import { describe, expect, it } from "vitest";
import { ExperimentConfig } from "./config";
import { contaminationCheck } from "./contamination";
import { reportToCsv, reportToMarkdown } from "./export";
import { generationCacheKey, evaluationCacheKeys, generationProtocolHash } from "./generation-cache";
import { checkProtocol, recipeMismatches, type RecordedProtocol } from "./protocol";
import { buildReport, type ReportInput } from "./report";
import { groupVerdicts, outcomeScore, type VerdictRow } from "./report-samples";
import { selectByDev } from "./selection";
import type { TaskSpec } from "../tasks/spec";

// Multi-sample evaluation in core: the protocol check covers samples, verdict rows
// group into per-task rates, and buildReport on n = 4 pairs rates and adds the samples section
// while a one-answer report carries none of it.

const cfg = (evaluation: Record<string, unknown>) =>
  ExperimentConfig.parse({
    name: "exp",
    splitId: "00000000-0000-4000-8000-000000000001",
    teacher: { providerId: "00000000-0000-4000-8000-000000000002" },
    baseModel: { source: "path", ref: "/models/tiny" },
    evaluation: { graderVersion: "g1", ...evaluation },
    seeds: [11],
    bootstrap: { iterations: 500, seed: 1 },
  });
const sampled = cfg({ samples: 4, decoding: { doSample: true, temperature: 0.7, topP: 0.9 }, seed: 3 });
const greedy = cfg({});

const recorded = (samples: number, seed: number): RecordedProtocol => ({
  promptTemplateHash: sampled.evaluation.promptTemplateHash,
  chatTemplateSha256: "c".repeat(64),
  decoding:
    samples > 1 ? { doSample: true, temperature: 0.7, topP: 0.9 } : { doSample: false, temperature: 1, topP: 1 },
  maxNewTokens: 512,
  samples,
  seed,
  stop: ["<|im_end|>"],
  generationConfig: "recipe",
  backend: "transformers",
  backendVersion: "5.24.0",
  dtype: "float32",
  device: "cpu",
  model: { ref: "/models/tiny", revision: null, weightsSha256: "a".repeat(64) },
  adapterSha256: null,
  trainingMethod: null,
  graderVersion: "g1",
});

describe("the protocol with samples", () => {
  it("refuses n > 1 with greedy decoding, and refuses samples or seed that differ between models", () => {
    expect(() => cfg({ samples: 4 })).toThrow(/samples > 1 needs sampled decoding/);
    expect(greedy.evaluation).toMatchObject({ samples: 1, seed: 0, answerCache: "experiment" });
    const p = recorded(4, 3);
    expect(checkProtocol({ base: p, s11e1: { ...p } }).ok).toBe(true);
    expect(
      checkProtocol({ "dev:base": p, "test:s11e1": { ...p, samples: 8, seed: 4 } }).mismatches.map((m) => m.field),
    ).toEqual(["samples", "seed"]);
    const { graderVersion: _g, ...gen } = p;
    const ev = { ...sampled.evaluation, device: "cpu" as const, dtype: "float32" as const };
    const expected = { promptTemplateHash: p.promptTemplateHash, adapterSha256: null };
    expect(recipeMismatches(gen, ev, expected)).toEqual([]);
    expect(recipeMismatches({ ...gen, samples: 1, seed: 0 }, ev, expected)).toEqual(["samples 1 ≠ 4", "seed 0 ≠ 3"]);
  });
  it("keys cached answers by prompt, model, protocol and sample index", () => {
    const task: TaskSpec = {
      id: "t1",
      source_group: "t",
      language: "python",
      instruction: "Fix f.",
      metadata: {},
      files: [{ path: "solution.py", role: "main", content: "def f():\n    return 0\n" }],
      public_tests: [],
      hidden_tests: [{ path: "test_h.py", content: "def test():\n    pass\n" }],
      reference: [{ path: "solution.py", content: "def f():\n    return 1\n" }],
    };
    const keys = (t: TaskSpec) => evaluationCacheKeys([t], sampled.evaluation, sampled.baseModel, null).get(t.id) ?? [];
    const k = keys(task);
    expect(k.length).toBe(4);
    expect(new Set(k).size).toBe(4);
    // The hidden tests and the reference are not in the prompt: they decide no answer.
    expect(keys({ ...task, reference: [] })).toEqual(k);
    expect(keys({ ...task, instruction: "Fix g." })[0]).not.toBe(k[0]);
    const h = generationProtocolHash(sampled.evaluation, sampled.baseModel);
    // The grader version decides no answer; the seed, the adapter and the model do.
    expect(generationProtocolHash({ ...sampled.evaluation, graderVersion: "g2" }, sampled.baseModel)).toBe(h);
    expect(generationProtocolHash({ ...sampled.evaluation, seed: 4 }, sampled.baseModel)).not.toBe(h);
    expect(generationProtocolHash(sampled.evaluation, { ...sampled.baseModel, ref: "/models/other" })).not.toBe(h);
    const base = { promptFingerprint: "p", protocolHash: h, adapterSha256: null, sampleIndex: 0 };
    expect(generationCacheKey({ ...base, adapterSha256: "d".repeat(64) })).not.toBe(generationCacheKey(base));
  });
});

const rows = (model: string, passesPerTask: readonly number[], n: number): VerdictRow[] =>
  passesPerTask.flatMap((c, t) =>
    Array.from({ length: n }, (_, i) => ({
      modelKey: model,
      taskId: `t${t}`,
      group: `g${t}`,
      sampleIndex: i,
      seed: n > 1 ? 100 + i : null,
      verdict: i < c ? "pass" : "fail_hidden",
      isolation: "judge" as const,
    })),
  );

function input(config: ExperimentConfig, n: number, base: number[], sft: number[]): ReportInput {
  const selection = selectByDev([
    { ref: { model: "base" }, passed: 1, n: 4 },
    { ref: { model: "adapter", seed: 11, seedIndex: 0, epoch: 1 }, passed: 3, n: 4 },
  ]);
  const grouped = groupVerdicts([...rows("base", base, n), ...rows("s11e1", sft, n)], n);
  const p = recorded(n, n > 1 ? 3 : 0);
  return {
    experimentId: "e1",
    name: "exp",
    generatedAt: "2026-01-01T00:00:00.000Z",
    config,
    selection,
    protocols: { base: p, sft: p },
    dev: grouped,
    test: grouped,
    testAdapters: [{ model: "adapter", seed: 11, seedIndex: 0, epoch: 1 }],
    contamination: contaminationCheck({ test: [], train: [], sft: [], dev: [] }),
  };
}

describe("a report with samples = 4", () => {
  // 12 tasks, one per group; passes out of 4 per task for the base and the adapter.
  const base = [0, 1, 1, 2, 0, 1, 3, 0, 1, 2, 0, 1];
  const sft = [2, 3, 1, 4, 1, 2, 4, 2, 1, 3, 2, 2];
  const r = buildReport(input(sampled, 4, base, sft));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length / 4;

  it("groups verdicts into per-task rates and pairs the rates", () => {
    const g = groupVerdicts(rows("base", [3], 4), 4).base?.[0];
    expect(g?.samples?.map((x) => [x.index, x.seed, x.verdict])).toEqual([
      [0, 100, "pass"],
      [1, 101, "pass"],
      [2, 102, "pass"],
      [3, 103, "fail_hidden"],
    ]);
    expect(g && outcomeScore(g)).toBe(0.75);
    expect(groupVerdicts(rows("base", [1], 1), 1).base?.[0]?.samples).toBeUndefined();
    const test = r.summary[1];
    expect(test.base.value).toBeCloseTo(mean(base), 12);
    expect(test.sft?.value).toBeCloseTo(mean(sft), 12);
    expect(test.stats?.delta).toBeCloseTo(mean(sft) - mean(base), 12);
    expect(test.stats?.test).toBe("cluster sign-flip (exact)");
    // Rates up on 10 tasks, equal on 2 (1/4 = 1/4 and 1/4 = 1/4: "same rate").
    expect([test.improved, test.regressed]).toEqual([10, 0]);
    expect(r.tasks.filter((t) => t.split === "test" && t.category === "same_rate").length).toBe(2);
    expect(r.seeds?.perSeed[0]?.stats.delta).toBeCloseTo(mean(sft) - mean(base), 12);
  });
  it("adds pass@1, the rate-change histogram and the MDE for n vs one sample", () => {
    const s = r.samples;
    expect(s?.samples).toBe(4);
    expect(s?.passAtK.find((t) => t.split === "test" && t.modelKey === "s11e1")?.rows).toEqual([
      { k: 1, value: expect.closeTo(mean(sft), 12), tasks: 12 },
    ]);
    expect(s?.histogram?.bins.map((b) => b.count)).toEqual([0, 0, 0, 0, 2, 5, 5, 0, 0]);
    expect(s?.mde?.mdeOneSample).toBeGreaterThan(s?.mde?.mde ?? Infinity);
    const md = reportToMarkdown(r);
    expect(md).toContain("## Samples: 4 answers per task (temperature 0.7, top_p 0.9, seed 3)");
    expect(md).toContain(
      "| t3 | g3 | 2/4 (pass, pass, fail_hidden, fail_hidden) | 4/4 (pass, pass, pass, pass) | improved |",
    );
    const csv = reportToCsv(r).split("\n");
    expect(csv[0]).toBe(
      "split,task_id,source_group,base_verdict,sft_verdict,category,compared,in_process,base_rate,sft_rate,base_samples,sft_samples",
    );
    expect(csv.find((l) => l.startsWith("test,t3,"))).toBe(
      'test,t3,g3,pass,pass,improved,seed 11 · epoch 1,false,0.5,1,"2/4 (pass, pass, fail_hidden, fail_hidden)","4/4 (pass, pass, pass, pass)"',
    );
  });
  it("leaves a one-answer report as before: no samples section, columns or rates", () => {
    const one = buildReport(input(greedy, 1, [0, 1, 1, 0], [1, 1, 1, 0]));
    expect(one.samples).toBeUndefined();
    expect("samples" in one).toBe(false);
    expect(one.tasks.some((t) => "baseRate" in t)).toBe(false);
    expect(one.taskViews?.flatMap((v) => v.rows).some((t) => "baseSamples" in t)).toBe(false);
    expect(reportToCsv(one).split("\n")[0]).toBe(
      "split,task_id,source_group,base_verdict,sft_verdict,category,compared,in_process",
    );
    expect(reportToMarkdown(one)).not.toContain("## Samples");
  });
});
