import { describe, expect, it } from "vitest";
import { cpuDemoRecipe, DpoRecipe, ExperimentConfig, GrpoRecipe, LORA_DEFAULT_TARGETS } from "@agentlab/core";
import { cpuDemoForm, defaultForm, toConfig } from "./form";

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

  it("leaves gradient checkpointing to the trainer unless it is forced on or off", () => {
    const form = { ...defaultForm, ...ids, name: "x", baseModel: "/models/tiny" };
    expect(ExperimentConfig.parse(toConfig(form)).training.gradientCheckpointing).toBeUndefined();
    expect(ExperimentConfig.parse(toConfig({ ...form, checkpointing: "on" })).training.gradientCheckpointing).toBe(
      true,
    );
    expect(ExperimentConfig.parse(toConfig({ ...form, checkpointing: "off" })).training.gradientCheckpointing).toBe(
      false,
    );
  });

  it("sends what the prompts show only when it is not the full context (stored recipes unchanged)", () => {
    const form = { ...defaultForm, ...ids, name: "x", baseModel: "/models/tiny" };
    const plain = toConfig(form);
    expect(plain.training && "promptVariant" in plain.training).toBe(false);
    expect("promptVariant" in plain.evaluation).toBe(false);
    const c = ExperimentConfig.parse(
      toConfig({ ...form, trainPrompt: "no_public_tests", evalPrompt: "no_dependencies" }),
    );
    expect(c.training.promptVariant).toBe("no_public_tests");
    expect(c.evaluation.promptVariant).toBe("no_dependencies");
  });

  it("sends training steps and batch tokens only when filled in (empty: the recipe as before)", () => {
    const form = { ...defaultForm, ...ids, name: "x", baseModel: "/models/tiny" };
    const plain = toConfig(form);
    expect(plain.training && ("steps" in plain.training || "batchTokens" in plain.training)).toBe(false);
    const c = ExperimentConfig.parse(toConfig({ ...form, epochs: "4", trainSteps: " 200 ", batchTokens: "4096" }));
    expect(c.training).toMatchObject({ epochs: 4, steps: 200, batchTokens: 4096 });
    expect(() => toConfig({ ...form, trainSteps: "many" })).toThrow("training steps must be a number");
    // the server's schema judges the rest, naming the field
    const few = ExperimentConfig.safeParse(toConfig({ ...form, epochs: "4", trainSteps: "3" }));
    expect(few.success ? [] : few.error.issues.map((i) => i.path.join("."))).toEqual(["training.steps"]);
  });

  it("names the dataset only when an existing one is chosen, and hub ids are hub models", () => {
    const c = toConfig({ ...defaultForm, ...ids, name: "x", data: "dataset", baseModel: "Qwen/Qwen2.5-0.5B" });
    expect(c.datasetId).toBe(ids.datasetId);
    expect(c.baseModel.source).toBe("hub");
  });

  it("takes the inspected facts: the hub commit is pinned and the shape sizes the jobs", () => {
    const facts = {
      model: "acme/tiny",
      source: "hub" as const,
      revision: "0123456789abcdef0123456789abcdef01234567",
      path: "/cache/models--acme--tiny/snapshots/0123456789abcdef0123456789abcdef01234567",
      architecture: "LlamaForCausalLM",
      model_type: "llama",
      parameters: 600_000,
      layers: 2,
      hidden_size: 64,
      intermediate_size: 128,
      heads: 4,
      kv_heads: 2,
      head_dim: 16,
      vocab_size: 4096,
      tied_embeddings: false,
      dtype: "float32",
      max_positions: 2048,
      weights_bytes: 2_400_000,
      tokenizer: true,
      chat_template: true,
      inspect_s: 3.1,
    };
    const c = ExperimentConfig.parse(
      toConfig({ ...defaultForm, ...ids, name: "x", baseModel: "acme/tiny", baseRevision: "main" }, facts),
    );
    expect(c.baseModel).toMatchObject({ source: "hub", ref: "acme/tiny", revision: facts.revision });
    expect(c.baseModel.shape).toMatchObject({ layers: 2, hiddenSize: 64, kvHeads: 2, vocabSize: 4096 });
    // without facts the typed revision is kept as it is
    expect(
      toConfig({ ...defaultForm, ...ids, name: "x", baseModel: "acme/tiny", baseRevision: "v1" }).baseModel,
    ).toEqual({
      source: "hub",
      ref: "acme/tiny",
      revision: "v1",
    });
  });

  it("sends no dpo block for sft, and the whole block for sft+dpo that the schema accepts", () => {
    const form = { ...defaultForm, ...ids, name: "x", baseModel: "/models/tiny" };
    const sft = toConfig(form);
    expect("method" in sft).toBe(false);
    expect("dpo" in sft).toBe(false);
    const c = ExperimentConfig.parse(
      toConfig({
        ...form,
        method: "sft+dpo",
        dpoBeta: "0.2",
        dpoRounds: "2",
        dpoSamples: "8",
        dpoMarginMode: "downweight",
        dpoMarginFactor: "0.5",
      }),
    );
    expect(c.method).toBe("sft+dpo");
    expect(c.dpo).toEqual({
      ...DpoRecipe.parse({}),
      beta: 0.2,
      rounds: 2,
      samples: 8,
      marginFilter: { threshold: 0, mode: "downweight", factor: 0.5 },
    });
    // the form's defaults are the schema's: the DPO learning rate is left to the server (SFT rate ÷ divisor)
    expect(ExperimentConfig.parse(toConfig({ ...form, method: "sft+dpo" })).dpo).toEqual(DpoRecipe.parse({}));
    expect(DpoRecipe.parse({}).learningRate).toBeUndefined();
    expect(
      ExperimentConfig.parse(toConfig({ ...form, method: "sft+dpo", dpoLearningRate: "1e-5" })).dpo?.learningRate,
    ).toBe(1e-5);
  });

  it("sends the RFT control and non-default pair sources; the default sources send no key (stored hashes unchanged)", () => {
    const form = { ...defaultForm, ...ids, name: "x", baseModel: "/models/tiny" };
    const rft = ExperimentConfig.parse(toConfig({ ...form, method: "sft+rft" }));
    expect(rft.method).toBe("sft+rft");
    expect(rft.dpo?.pairSources).toBeUndefined();
    const sources = ExperimentConfig.parse(
      toConfig({ ...form, method: "sft+dpo", dpoPairSources: ["near_miss", "on_policy"] }),
    );
    expect(sources.dpo?.pairSources).toEqual(["near_miss", "on_policy"]);
    // the swapped-labels control is sent only when chosen; as graded sends no key
    expect(sources.dpo && "labels" in sources.dpo).toBe(false);
    const swapped = ExperimentConfig.parse(toConfig({ ...form, method: "sft+dpo", dpoLabels: "swapped" }));
    expect(swapped.dpo?.labels).toBe("swapped");
    // No source at all is the server's to refuse, under the field.
    expect(ExperimentConfig.safeParse(toConfig({ ...form, method: "sft+dpo", dpoPairSources: [] })).success).toBe(
      false,
    );
  });

  it("leaves the dpo bounds to the server, which names the field", () => {
    const form = { ...defaultForm, ...ids, name: "x", baseModel: "/models/tiny", method: "sft+dpo" as const };
    const bad = ExperimentConfig.safeParse(toConfig({ ...form, dpoBeta: "0", dpoRounds: "9" }));
    expect(bad.success).toBe(false);
    expect(bad.error?.issues.map((i) => i.path.join(".")).sort()).toEqual(["dpo.beta", "dpo.rounds"]);
    expect(() => toConfig({ ...form, dpoBeta: "" })).toThrow(/β must be a number/);
  });

  it("sends the grpo block for sft+grpo that the schema accepts: its defaults are TRL's, the control is a choice", () => {
    const form = { ...defaultForm, ...ids, name: "x", baseModel: "/models/tiny", method: "sft+grpo" as const };
    const plain = ExperimentConfig.parse(toConfig(form));
    expect(plain.method).toBe("sft+grpo");
    expect("dpo" in plain).toBe(false);
    // Left as the form holds it, the block is the recipe schema's own defaults.
    expect(plain.grpo).toEqual(GrpoRecipe.parse({}));
    const tuned = ExperimentConfig.parse(
      toConfig({
        ...form,
        grpoSteps: "20",
        grpoNumGenerations: "4",
        grpoMaxCompletionLength: "96",
        grpoRewardControl: "shuffle_within_group",
      }),
    );
    expect(tuned.grpo).toMatchObject({
      steps: 20,
      numGenerations: 4,
      maxCompletionLength: 96,
      rewardControl: "shuffle_within_group",
    });
    // Bounds are the server's, named by field; a non-number is refused by its label here.
    const bad = ExperimentConfig.safeParse(toConfig({ ...form, grpoNumGenerations: "1" }));
    expect(bad.error?.issues.map((i) => i.path.join("."))).toEqual(["grpo.numGenerations"]);
    expect(() => toConfig({ ...form, grpoSteps: "many" })).toThrow(/GRPO steps must be a number/);
    // Any other method sends no grpo block.
    expect("grpo" in toConfig({ ...form, method: "sft+dpo" })).toBe(false);
  });

  it("refuses non-numbers", () => {
    expect(() => toConfig({ ...defaultForm, ...ids, name: "x", baseModel: "/m", epochs: "two" })).toThrow(
      /epochs must be a number/,
    );
    expect(() => toConfig({ ...defaultForm, ...ids, name: "x", baseModel: "/m", seeds: "1, x" })).toThrow(/each seed/);
  });

  it("sends training.gpus and training.parallel; the schema names training.gpus when out of range", () => {
    const form = { ...defaultForm, ...ids, name: "x", baseModel: "/m" };
    expect(ExperimentConfig.parse(toConfig(form)).training).toMatchObject({ gpus: 1, parallel: "ddp" });
    const four = ExperimentConfig.parse(toConfig({ ...form, gpus: "4", parallel: "fsdp" }));
    expect(four.training).toMatchObject({ gpus: 4, parallel: "fsdp" });
    const bad = ExperimentConfig.safeParse(toConfig({ ...form, gpus: "0" }));
    expect(bad.error?.issues.map((i) => i.path.join("."))).toEqual(["training.gpus"]);
    expect(() => toConfig({ ...form, gpus: "" })).toThrow(/GPUs must be a number/);
  });
});

describe("the CPU demo preset", () => {
  it("fills the form with the recipe `npm run demo` runs, and only that", () => {
    // A form the user had started: a DPO method, sampled evaluation and another split.
    const before = {
      ...defaultForm,
      method: "sft+dpo" as const,
      evalSamples: "4",
      splitId: "x",
      epochs: "2",
      trainSteps: "99",
      batchTokens: "512",
    };
    const filled = { ...cpuDemoForm(before, ids), baseModel: "/agent/models/tiny-demo" };
    const c = ExperimentConfig.parse(toConfig(filled));
    const preset = ExperimentConfig.parse({
      ...cpuDemoRecipe(),
      name: c.name,
      splitId: ids.splitId,
      teacher: { providerId: ids.providerId },
      baseModel: { source: "path", ref: "/agent/models/tiny-demo" },
    });
    expect(c.training).toEqual(preset.training);
    // Only the answer cache differs: the form reuses earlier answers under the same protocol.
    expect({ ...c.evaluation, answerCache: preset.evaluation.answerCache }).toEqual(preset.evaluation);
    expect(c.seeds).toEqual(preset.seeds);
    expect(c.method ?? "sft").toBe("sft");
    expect(c.dpo).toBeUndefined();
    expect(c.teacher).toMatchObject({ providerId: ids.providerId, n: 1 });
    expect(c.name).toMatch(/CPU demo/);
    // Control: the form's defaults are not the preset (the test would pass vacuously otherwise).
    const plain = ExperimentConfig.parse(toConfig({ ...defaultForm, ...ids, name: "x", baseModel: "/m" }));
    expect(plain.training).not.toEqual(preset.training);
  });

  it("keeps a name the user typed", () => {
    expect(cpuDemoForm({ ...defaultForm, name: "mine" }, ids).name).toBe("mine");
  });
});
