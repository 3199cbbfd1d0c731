import { describe, expect, it } from "vitest";
import { ExperimentConfig, LORA_DEFAULT_TARGETS } from "@agentlab/core";
import { defaultForm, toConfig } from "./form";

const ids = {
  splitId: "00000000-0000-4000-8000-000000000001",
  providerId: "00000000-0000-4000-8000-000000000002",
  datasetId: "00000000-0000-4000-8000-000000000003",
};

describe("experiment form", () => {
  it("turns the fields into a valid config with a teacher recipe", () => {
    const c = ExperimentConfig.parse(
      toConfig({ ...defaultForm, ...ids, name: " demo ", baseModel: "/models/tiny", seeds: "3, 5", budget: "1.5" }),
    );
    expect(c.name).toBe("demo");
    expect(c.datasetId).toBeUndefined();
    expect(c.teacher).toMatchObject({ providerId: ids.providerId, n: 1, budgetUsd: 1.5 });
    expect(c.baseModel).toEqual({ source: "path", ref: "/models/tiny" });
    expect(c.seeds).toEqual([3, 5]);
    expect(c.training.lora.targets).toEqual([...LORA_DEFAULT_TARGETS]);
  });

  it("names the dataset only when an existing one is chosen, and hub ids are hub models", () => {
    const c = toConfig({ ...defaultForm, ...ids, name: "x", data: "dataset", baseModel: "Qwen/Qwen2.5-0.5B" });
    expect(c.datasetId).toBe(ids.datasetId);
    expect(c.baseModel.source).toBe("hub");
  });

  it("refuses non-numbers", () => {
    expect(() => toConfig({ ...defaultForm, ...ids, name: "x", baseModel: "/m", epochs: "two" })).toThrow(
      /epochs must be a number/,
    );
    expect(() => toConfig({ ...defaultForm, ...ids, name: "x", baseModel: "/m", seeds: "1, x" })).toThrow(/each seed/);
  });
});
