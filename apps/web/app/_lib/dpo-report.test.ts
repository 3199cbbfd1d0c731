import { describe, expect, it } from "vitest";
import { dpoSection, grpoSection, modelKey, type ModelRef } from "@agentlab/core";
import { dpoDevSeries, dpoThreeWay, grpoDevSeries, grpoThreeWay, threeWayRows } from "./dpo-report";

// The section comes from core's own builder (dpoSection), so the helper reads what reports store.
const base: ModelRef = { model: "base" };
const sft: ModelRef = { model: "adapter", seed: 1, seedIndex: 0, epoch: 1 };
const dpo = (epoch: number, round = 1, seed = 1): ModelRef => ({ model: "dpo", seed, seedIndex: 0, round, epoch });
const tasks = Array.from({ length: 10 }, (_, i) => ({ id: `t${i}`, group: `g${i}` }));
const outcomes = (passes: number) =>
  tasks.map((t, i) => ({ taskId: t.id, group: t.group, verdict: i < passes ? "pass" : "fail_hidden" }));
const row = (ref: ModelRef, passed: number) => ({ ref, label: "", n: 10, passed, pass1: passed / 10, selected: false });
const stats = { iterations: 200, seed: 1, alpha: 0.05 };

describe("threeWayRows", () => {
  it("orders base–SFT, base–DPO, SFT–DPO with the stored comparisons", () => {
    const test = { base: outcomes(2), [modelKey(sft)]: outcomes(5), [modelKey(dpo(2))]: outcomes(7) };
    const s = dpoSection({ rounds: [], table: [row(base, 2), row(sft, 5), row(dpo(2), 6)], test, stats });
    const rows = threeWayRows(dpoThreeWay(s));
    expect(rows.map((r) => [r.title, r.kind])).toEqual([
      ["base vs SFT", "compared"],
      ["base vs DPO", "compared"],
      ["SFT vs DPO", "compared"],
    ]);
    const deltas = rows.map((r) => (r.kind === "compared" ? r.comparison.row.stats?.delta : null));
    expect(deltas).toEqual([3 / 10, 5 / 10, 2 / 10]);
  });

  it("says why a comparison is missing: no model of a kind on dev, or no test answers", () => {
    const onlySft = dpoSection({
      rounds: [],
      table: [row(base, 2), row(sft, 5)],
      test: { base: outcomes(2), [modelKey(sft)]: outcomes(5) },
      stats,
    });
    expect(threeWayRows(dpoThreeWay(onlySft)).map((r) => (r.kind === "missing" ? r.reason : "ok"))).toEqual([
      "ok",
      "no DPO epoch was evaluated on dev",
      "no DPO epoch was evaluated on dev",
    ]);
    const untested = dpoSection({
      rounds: [],
      table: [row(base, 2), row(sft, 5), row(dpo(1), 6)],
      test: { base: outcomes(2), [modelKey(sft)]: outcomes(5) },
      stats,
    });
    expect(threeWayRows(dpoThreeWay(untested)).map((r) => r.kind)).toEqual(["compared", "missing", "missing"]);
    expect(threeWayRows(dpoThreeWay(untested))[1]).toMatchObject({ reason: /no graded test answers/ });
  });
});

describe("the sft+rft control", () => {
  it("is labelled RFT in the selection labels, the three comparisons and the dev series, never DPO", () => {
    const rft: ModelRef = { model: "dpo", seed: 1, seedIndex: 0, round: 1, epoch: 2, objective: "rft" };
    const test = { base: outcomes(2), [modelKey(sft)]: outcomes(5), [modelKey(rft)]: outcomes(6) };
    const s = dpoSection({ rounds: [], table: [row(base, 2), row(sft, 5), row(rft, 6)], test, stats });
    expect(s.arm).toBe("RFT");
    expect(threeWayRows(dpoThreeWay(s)).map((r) => r.title)).toEqual(["base vs SFT", "base vs RFT", "SFT vs RFT"]);
    expect(s.comparisons.map((c) => c.bLabel)).toContain("RFT r1 · seed 1 · epoch 2");
    expect(s.note).toContain("SFT and RFT models");
    expect(dpoDevSeries(s.devPoints, s.arm)[0]?.name).toBe("RFT r1 · seed 1");
    // the key is the slot's, whatever it trained: evaluations stored under it are found
    expect(modelKey(rft)).toBe(modelKey(dpo(2)));
  });
});

describe("dpoDevSeries", () => {
  it("one series per round and seed, epochs in order", () => {
    const series = dpoDevSeries([
      { round: 2, seed: 1, epoch: 1, pass1: 0.5 },
      { round: 1, seed: 1, epoch: 2, pass1: 0.4 },
      { round: 1, seed: 1, epoch: 1, pass1: 0.3 },
      { round: 1, seed: 2, epoch: 1, pass1: 0.2 },
    ]);
    expect(series.map((s) => [s.name, s.points.map((p) => p.x)])).toEqual([
      ["DPO r1 · seed 1", [1, 2]],
      ["DPO r1 · seed 2", [1]],
      ["DPO r2 · seed 1", [1]],
    ]);
    expect(dpoDevSeries([])).toEqual([]);
  });
});

describe("the sft+grpo section", () => {
  const grpo = (snapshot: number): ModelRef => ({ model: "grpo", seed: 1, seedIndex: 0, epoch: snapshot });

  it("compares base, SFT and the dev-best GRPO snapshot, and draws one dev series per seed", () => {
    const test = { base: outcomes(2), [modelKey(sft)]: outcomes(5), [modelKey(grpo(2))]: outcomes(8) };
    const table = [row(base, 2), row(sft, 5), row(grpo(1), 6), row(grpo(2), 7)];
    const s = grpoSection({ table, test, stats });
    const rows = threeWayRows(grpoThreeWay(s));
    expect(rows.map((r) => [r.title, r.kind])).toEqual([
      ["base vs SFT", "compared"],
      ["base vs GRPO", "compared"],
      ["SFT vs GRPO", "compared"],
    ]);
    expect(rows.map((r) => (r.kind === "compared" ? r.comparison.row.stats?.delta : null))).toEqual([0.3, 0.6, 0.3]);
    expect(grpoDevSeries(s.devPoints).map((x) => [x.name, x.points.map((p) => [p.x, p.y])])).toEqual([
      [
        "GRPO · seed 1",
        [
          [1, 0.6],
          [2, 0.7],
        ],
      ],
    ]);
  });

  it("names the missing GRPO snapshot in its own words", () => {
    const s = grpoSection({ table: [row(base, 2), row(sft, 5)], test: { base: outcomes(2) }, stats });
    expect(threeWayRows(grpoThreeWay(s)).map((r) => (r.kind === "missing" ? r.reason : "ok"))).toEqual([
      "one of the two models has no graded test answers",
      "no GRPO snapshot was evaluated on dev",
      "no GRPO snapshot was evaluated on dev",
    ]);
  });
});
