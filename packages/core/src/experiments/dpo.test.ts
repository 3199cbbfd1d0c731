import { describe, expect, it } from "vitest";
import { DPO_LR_DIVISOR, DpoRecipe, ExperimentConfig, dpoRecipeOf, type ExperimentConfigInput } from "./config";
import { devCandidates } from "./dev-candidates";
import { dpoJobPayload, samplingConfig } from "../jobs/recipe";
import { dpoSection } from "./report-dpo";
import { bestEpochPerSeed, modelKey, selectByDev, type DevCandidate, type ModelRef } from "./selection";
import { stagePlan } from "./stages";
import { parseStageOutput } from "./stage-outputs";

// The sft+dpo recipe, its stage plan, the three-way selection and the report's DPO part.

const input = (over: Partial<ExperimentConfigInput> = {}): ExperimentConfigInput => ({
  name: "e",
  splitId: "00000000-0000-4000-8000-000000000001",
  teacher: { providerId: "00000000-0000-4000-8000-000000000002" },
  baseModel: { source: "path", ref: "/m" },
  evaluation: { graderVersion: "g/1" },
  seeds: [1, 2],
  ...over,
});

describe("the sft+dpo recipe", () => {
  it("leaves a plain recipe as it was and fills the DPO defaults only for sft+dpo", () => {
    const plain = ExperimentConfig.parse(input());
    expect(plain.method).toBeUndefined();
    expect(plain.dpo).toBeUndefined();
    expect(dpoRecipeOf(plain)).toBeNull();
    const dpo = ExperimentConfig.parse(input({ method: "sft+dpo", dpo: { beta: 0.5, rounds: 2 } }));
    expect(dpoRecipeOf(dpo)).toMatchObject({ beta: 0.5, rounds: 2, samples: 4, marginFilter: { mode: "off" } });
    const filled = ExperimentConfig.parse(input({ method: "sft+dpo" }));
    expect(dpoRecipeOf(filled)).toEqual({ ...DpoRecipe.parse({}), learningRate: 2e-4 / DPO_LR_DIVISOR });
  });

  it("defaults to the SFT term on, no margin filter and the DPO rate from the SFT rate; stored recipes keep theirs", () => {
    const fresh = dpoRecipeOf(ExperimentConfig.parse(input({ method: "sft+dpo", training: { learningRate: 3e-3 } })));
    expect(fresh).toMatchObject({ sftWeight: 1, marginFilter: { mode: "off" }, learningRate: 3e-3 / DPO_LR_DIVISOR });
    expect(DPO_LR_DIVISOR).toBeGreaterThanOrEqual(10);
    expect(DPO_LR_DIVISOR).toBeLessThanOrEqual(100);
    // a recipe stored before these defaults (its block filled at creation) parses and means what it meant
    const old = {
      sftWeight: 0,
      learningRate: 5e-5,
      marginFilter: { threshold: 0, mode: "drop" as const, factor: 0.25 },
    };
    const stored = dpoRecipeOf(ExperimentConfig.parse(input({ method: "sft+dpo", dpo: old })));
    expect(stored).toMatchObject(old);
    const sha = "a".repeat(64);
    const cfg = ExperimentConfig.parse(input({ method: "sft+dpo", dpo: old }));
    const opts = { seed: 0, pairsHash: sha, start: null, scoreOnly: false };
    expect(dpoJobPayload(cfg, stored ?? DpoRecipe.parse({}), opts).spec).toMatchObject({
      learning_rate: 5e-5,
      sft_weight: 0,
    });
    // an unresolved block (learningRate absent) still gets the derived rate, never undefined
    expect(dpoJobPayload(cfg, DpoRecipe.parse({}), opts).spec.learning_rate).toBe(2e-4 / DPO_LR_DIVISOR);
  });

  it("refuses bad DPO settings naming the field", () => {
    const issue = (over: Partial<ExperimentConfigInput>) => ExperimentConfig.safeParse(input(over)).error?.issues[0];
    expect(issue({ dpo: { beta: 0.1 } })).toMatchObject({
      path: ["dpo"],
      message: 'dpo settings need method "sft+dpo" (or its control "sft+rft")',
    });
    expect(issue({ method: "sft+dpo", dpo: { beta: 0 } })?.path).toEqual(["dpo", "beta"]);
    expect(issue({ method: "sft+dpo", dpo: { rounds: 5 } })?.path).toEqual(["dpo", "rounds"]);
    expect(issue({ method: "sft+dpo", dpo: { unknown: 1 } as never })?.path).toEqual(["dpo"]);
    expect(issue({ method: "sft+dpo", dpo: { rounds: 4, samples: 8 } })).toBeUndefined(); // positive control
  });

  it("maps the recipe to the sampling protocol and to the dpo job payload", () => {
    const config = ExperimentConfig.parse(
      input({ method: "sft+dpo", dpo: { beta: 0.3, samples: 6, temperature: 0.7, epochs: 3, learningRate: 1e-3 } }),
    );
    const dpo = dpoRecipeOf(config) ?? DpoRecipe.parse({});
    expect(samplingConfig(config, dpo).evaluation).toMatchObject({
      samples: 6,
      decoding: { doSample: true, temperature: 0.7, topP: 1 },
      graderVersion: "g/1",
    });
    const sha = "a".repeat(64);
    const p = dpoJobPayload(config, dpo, {
      seed: 2,
      pairsHash: sha,
      start: { sha256: sha, artifact: sha },
      scoreOnly: false,
    });
    expect(p).toMatchObject({ pairsHash: sha, startAdapterSha256: sha, startAdapterArtifact: sha });
    expect(p.spec).toMatchObject({
      beta: 0.3,
      epochs: 3,
      learning_rate: 1e-3,
      seed: 2,
      score_only: false,
      sft_weight: 1, // the default SFT term
    });
    expect(dpoJobPayload(config, dpo, { seed: 1, pairsHash: sha, start: null, scoreOnly: true })).toMatchObject({
      startAdapterArtifact: null,
      startAdapterSha256: null,
      spec: { score_only: true },
    });
    expect(() =>
      dpoJobPayload(config, dpo, { seed: 1, pairsHash: sha, start: { sha256: sha, artifact: null }, scoreOnly: false }),
    ).toThrow("no archive");
  });
});

describe("the sft+dpo stage plan", () => {
  it("is the SFT plan unchanged for a plain recipe", () => {
    expect(stagePlan(ExperimentConfig.parse(input())).map((s) => s.key)).toEqual([
      "collect",
      "verify",
      "dataset",
      "train:s1",
      "train:s2",
      "dev_eval:base",
      "dev_eval:s1",
      "dev_eval:s2",
      "select",
      "test_eval",
      "report",
    ]);
  });

  it("inserts per round: start → sample → pairs → dpo per seed → dev eval, and selects after every dev evaluation", () => {
    const plan = stagePlan(ExperimentConfig.parse(input({ method: "sft+dpo", dpo: { rounds: 2 } })));
    const by = new Map(plan.map((s) => [s.key, s]));
    expect(by.get("dpo_start:r1")?.after).toEqual(["dev_eval:base", "dev_eval:s1", "dev_eval:s2"]);
    expect(by.get("sample:r1")?.after).toEqual(["dpo_start:r1"]);
    expect(by.get("pairs:r1")?.after).toEqual(["sample:r1"]);
    expect(by.get("dpo:s2:r1")).toMatchObject({ kind: "dpo", after: ["pairs:r1"], round: 1 });
    expect(by.get("dev_eval:dpo:s2:r1")).toMatchObject({ kind: "dev_eval", after: ["dpo:s2:r1"] });
    expect(by.get("dpo_start:r2")?.after).toEqual(["dev_eval:dpo:s1:r1", "dev_eval:dpo:s2:r1"]);
    expect(by.get("select")?.after).toEqual([
      "dev_eval:base",
      "dev_eval:s1",
      "dev_eval:s2",
      "dev_eval:dpo:s1:r1",
      "dev_eval:dpo:s2:r1",
      "dev_eval:dpo:s1:r2",
      "dev_eval:dpo:s2:r2",
    ]);
    expect(new Set(plan.map((s) => s.key)).size).toBe(plan.length);
    // every dependency is a stage of the plan
    for (const s of plan) for (const a of s.after) expect(by.has(a)).toBe(true);
  });
});

const base: ModelRef = { model: "base" };
const sft = (seedIndex: number, epoch: number): ModelRef => ({
  model: "adapter",
  seed: seedIndex + 1,
  seedIndex,
  epoch,
});
const dpo = (round: number, seedIndex: number, epoch: number): ModelRef => ({
  model: "dpo",
  seed: seedIndex + 1,
  seedIndex,
  round,
  epoch,
});
const cand = (ref: ModelRef, passed: number): DevCandidate => ({ ref, n: 10, passed });

describe("selection among base, SFT and DPO", () => {
  it("keeps the simpler model on a tie: base before SFT before DPO, earlier round, lower seed, earlier epoch", () => {
    const pick = (cs: DevCandidate[]) => selectByDev(cs).selected;
    expect(pick([cand(dpo(1, 0, 1), 5), cand(sft(0, 1), 5), cand(base, 5)])).toEqual(base);
    expect(pick([cand(base, 4), cand(dpo(1, 0, 1), 5), cand(sft(0, 2), 5)])).toEqual(sft(0, 2));
    expect(pick([cand(base, 4), cand(sft(0, 1), 5), cand(dpo(2, 0, 1), 6), cand(dpo(1, 1, 2), 6)])).toEqual(
      dpo(1, 1, 2),
    );
    expect(pick([cand(base, 4), cand(dpo(1, 1, 1), 6), cand(dpo(1, 0, 2), 6)])).toEqual(dpo(1, 0, 2));
    // strictly better wins whatever its place in the order
    expect(pick([cand(base, 4), cand(sft(0, 1), 5), cand(dpo(2, 1, 2), 7)])).toEqual(dpo(2, 1, 2));
    const d = selectByDev([cand(base, 4), cand(dpo(1, 0, 1), 6)]);
    expect(d.outcome).toBe("adapter_selected");
    expect(d.rule).toContain("DPO");
    expect(selectByDev([cand(base, 4), cand(sft(0, 1), 6)]).rule).not.toContain("DPO");
  });

  it("counts DPO epochs of every round and seed from stored dev verdicts, and keeps the best per seed by kind", () => {
    const config = ExperimentConfig.parse(
      input({ method: "sft+dpo", dpo: { rounds: 2, epochs: 2 }, training: { epochs: 1 } }),
    );
    const rows = [
      { modelKey: "base", taskId: "t1", verdict: "fail_hidden" },
      { modelKey: modelKey(sft(0, 1)), taskId: "t1", verdict: "pass" },
      { modelKey: modelKey(dpo(1, 0, 2)), taskId: "t1", verdict: "pass" },
      { modelKey: modelKey(dpo(2, 1, 1)), taskId: "t1", verdict: "fail_public" },
      { modelKey: "dpo-s9r1e1", taskId: "t1", verdict: "pass" }, // not a seed of the recipe: ignored
    ];
    const cs = devCandidates(rows, new Set(), config);
    expect(cs.map((c) => modelKey(c.ref))).toEqual(["base", "s1e1", "dpo-s1r1e2", "dpo-s2r2e1"]);
    expect(bestEpochPerSeed(cs, "dpo").map((c) => c.ref)).toEqual([dpo(1, 0, 2), dpo(2, 1, 1)]);
    expect(bestEpochPerSeed(cs).map((c) => c.ref)).toEqual([sft(0, 1)]);
    // the sft+rft control's runs of the same slots are found under the same keys and named RFT
    const rft = ExperimentConfig.parse(
      input({ method: "sft+rft", dpo: { rounds: 2, epochs: 2 }, training: { epochs: 1 } }),
    );
    const rc = devCandidates(rows, new Set(), rft);
    expect(rc.map((c) => modelKey(c.ref))).toEqual(["base", "s1e1", "dpo-s1r1e2", "dpo-s2r2e1"]);
    expect(selectByDev(rc).table.map((r) => r.label)).toEqual([
      "base",
      "seed 1 · epoch 1",
      "RFT r1 · seed 1 · epoch 2",
      "RFT r2 · seed 2 · epoch 1",
    ]);
  });
});

describe("the report's DPO part", () => {
  const o = (taskId: string, group: string, pass: boolean) => ({
    taskId,
    group,
    verdict: pass ? "pass" : "fail_hidden",
  });
  const tasks = Array.from({ length: 12 }, (_, i) => ({ id: `t${i}`, group: `g${i}` }));
  // base passes 2, SFT 6, DPO 8 of 12 (DPO ⊇ SFT ⊇ base)
  const test = {
    base: tasks.map((t, i) => o(t.id, t.group, i < 2)),
    [modelKey(sft(0, 1))]: tasks.map((t, i) => o(t.id, t.group, i < 6)),
    [modelKey(dpo(1, 0, 2))]: tasks.map((t, i) => o(t.id, t.group, i < 8)),
  };
  const row = (ref: ModelRef, passed: number) => ({
    ref,
    label: "",
    n: 10,
    passed,
    pass1: passed / 10,
    selected: false,
  });
  const table = [row(base, 2), row(sft(0, 1), 5), row(dpo(1, 0, 1), 4), row(dpo(1, 0, 2), 6)];
  const stats = { iterations: 500, seed: 1, alpha: 0.05 };

  it("compares base, the dev-best SFT and the dev-best DPO model pairwise on test", () => {
    const s = dpoSection({ rounds: [], table, test, stats });
    expect(s.selectedSft).toEqual(sft(0, 1));
    expect(s.selectedDpo).toEqual(dpo(1, 0, 2));
    expect(s.comparisons.map((c) => [modelKey(c.a), modelKey(c.b)])).toEqual([
      ["base", "s1e1"],
      ["base", "dpo-s1r1e2"],
      ["s1e1", "dpo-s1r1e2"],
    ]);
    expect(s.comparisons.map((c) => c.row.stats?.delta)).toEqual([4 / 12, 6 / 12, 2 / 12]);
    expect(s.comparisons.map((c) => [c.row.improved, c.row.regressed])).toEqual([
      [4, 0],
      [6, 0],
      [2, 0],
    ]);
    expect(s.devPoints).toEqual([
      { round: 1, seed: 1, epoch: 1, pass1: 0.4 },
      { round: 1, seed: 1, epoch: 2, pass1: 0.6 },
    ]);
  });

  it("leaves out a comparison whose model was not evaluated on test", () => {
    const s = dpoSection({ rounds: [], table, test: { base: test.base, s1e1: test.s1e1 ?? [] }, stats });
    expect(s.comparisons.map((c) => c.bLabel)).toEqual(["seed 1 · epoch 1"]);
  });
});

describe("the sft+dpo stage outputs", () => {
  it("parse what the handlers record and name the field of a bad record", () => {
    const sha = "b".repeat(64);
    expect(
      parseStageOutput("dpo", "dpo:s1:r1", {
        round: 1,
        jobId: "j",
        snapshots: [{ epoch: 1, path: "/p", sha256: sha, artifact: sha, rewardMargin: 0.2, preferenceAccuracy: 0.75 }],
      })?.snapshots?.[0]?.preferenceAccuracy,
    ).toBe(0.75);
    expect(() => parseStageOutput("pairs", "pairs:r1", { round: 1, policy: { model: "nope" } })).toThrow(
      "the pairs:r1 stage's recorded output does not fit its schema at policy.model",
    );
  });
});
