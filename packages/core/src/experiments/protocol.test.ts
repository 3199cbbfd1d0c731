import { describe, expect, it } from "vitest";
import { DomainError } from "../errors";
import { answerProtocol, protocolsByModel, promptMismatches, type RecordedProtocol } from "./protocol";

// The rendered prompts (per task) must be the same for every compared model. A
// date-dependent chat template rendered on another day, or a changed template, gives the adapter
// different prompts than the base under an unchanged template hash; the comparison is refused.

const h = (c: string) => c.repeat(64);
const base: RecordedProtocol = {
  promptTemplateHash: h("1"),
  chatTemplateSha256: h("c"),
  decoding: { doSample: false, temperature: 1, topP: 1 },
  maxNewTokens: 64,
  samples: 1,
  seed: 0,
  stop: ["<|im_end|>"],
  generationConfig: "recipe",
  backend: "transformers",
  backendVersion: "5.24.0",
  dtype: "float32",
  device: "cpu",
  model: { ref: "/models/tiny", revision: null, weightsSha256: h("a") },
  adapterSha256: null,
  trainingMethod: null,
  graderVersion: "g1",
};
const adapter: RecordedProtocol = { ...base, adapterSha256: h("b"), trainingMethod: "lora-fp32" };

type Row = { split: string; modelKey: string; taskId: string; protocol: unknown };
const rows = (modelKey: string, p: RecordedProtocol, prompts: Record<string, string | null>, split = "test"): Row[] =>
  Object.entries(prompts).map(([taskId, promptSha256]) => ({
    split,
    modelKey,
    taskId,
    protocol: { ...p, promptSha256 },
  }));

describe("rendered-prompt hashes in the protocol", () => {
  const same = { t1: h("d"), t2: h("e") };

  it("accepts equal prompts per task (different tasks differ) and leaves the hash out of the per-model protocol", () => {
    const all = [...rows("base", base, same), ...rows("s1e1", adapter, same)];
    expect(promptMismatches(all)).toEqual([]);
    const byModel = protocolsByModel(all);
    // one entry per model although every task has its own prompt hash
    expect(Object.keys(byModel)).toEqual(["test:base", "test:s1e1"]);
    expect(byModel["test:base"]).not.toHaveProperty("promptSha256");
  });

  it("refuses a comparison whose adapter saw another rendered prompt (e.g. another date string) for a task", () => {
    // positive control: only t2's prompt changed (the adapter's evaluation rendered another date)
    const changed = [...rows("base", base, same), ...rows("s1e1", adapter, { ...same, t2: h("f") })];
    expect(promptMismatches(changed)).toEqual([
      { split: "test", taskId: "t2", values: { base: h("e"), s1e1: h("f") } },
    ]);
    expect(() => protocolsByModel(changed)).toThrow(DomainError);
    expect(() => protocolsByModel(changed)).toThrow(
      /rendered prompts differ between models on 1 task\(s\), e\.g\. test task t2/,
    );
  });

  it("refuses mispaired rows: the adapter's answers stored under task ids shifted by one", () => {
    // Each answer carries the hash of the prompt it was generated for, so a row whose task id was
    // shifted pairs the base's answer to t1 with an answer to t2's prompt and is refused.
    const prompts = { t1: h("1"), t2: h("2"), t3: h("3"), t4: h("4") };
    const ids = Object.keys(prompts);
    const shifted = Object.fromEntries(
      ids.map((id, i) => [ids[(i + 1) % ids.length] ?? id, prompts[id as keyof typeof prompts]]),
    );
    const mispaired = [...rows("base", base, prompts), ...rows("s1e1", adapter, shifted)];
    expect(promptMismatches(mispaired).map((m) => m.taskId)).toEqual(ids);
    expect(() => protocolsByModel(mispaired)).toThrow(/rendered prompts differ between models on 4 task\(s\)/);
    // positive control: the same rows paired by their own task ids are accepted
    expect(() => protocolsByModel([...rows("base", base, prompts), ...rows("s1e1", adapter, prompts)])).not.toThrow();
  });

  it("compares within a split only, and never against records without a hash", () => {
    // the same task id on dev and test is two evaluations; an old record has no hash to compare
    const split = [...rows("base", base, same, "dev"), ...rows("base", base, { t1: h("9") }, "test")];
    expect(promptMismatches(split)).toEqual([]);
    const old = [...rows("base", base, { t1: null }), ...rows("s1e1", adapter, { t1: h("d") })];
    expect(promptMismatches(old)).toEqual([]);
    // samples of one model on one task that saw different prompts are caught too
    const samples = [...rows("base", base, { t1: h("d") }), ...rows("base", base, { t1: h("5") })];
    expect(promptMismatches(samples).map((m) => Object.keys(m.values))).toEqual([["base", "base (another sample)"]]);
  });

  it("takes each answer's prompt hash from the generate summary, refusing a summary that lacks the task", () => {
    const { graderVersion: _g, ...gen } = base;
    const summary = (task_prompts_sha256?: Record<string, string>) => ({ task_prompts_sha256 });
    expect(answerProtocol(gen, summary({ t1: h("d") }), "t1").promptSha256).toBe(h("d"));
    expect(answerProtocol(gen, summary(undefined), "t1").promptSha256).toBeNull();
    expect(() => answerProtocol(gen, summary({ t1: h("d") }), "t2")).toThrow(/no task_prompts_sha256 entry for t2/);
  });
});
