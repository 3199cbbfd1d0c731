import { describe, expect, it } from "vitest";
import { DpoRecipe, ExperimentConfig, GrpoRecipe } from "../experiments/config";
import { evaluationCacheKeys } from "../experiments/generation-cache";
import { GrpoJobPayload } from "../jobs/grpo";
import { generateJobPayload, grpoJobPayload, samplingConfig } from "../jobs/recipe";
import type { TaskSpec } from "../tasks/spec";
import { PROMPT_TEMPLATE_HASH, promptHashOf, publicContext, renderUserPrompt, type PromptVariant } from "./prompt";

// The prompt variants: what a prompt leaves out of the public context, and the recipe fields that
// carry them into the evaluation's and training's jobs, answers and cache keys.

const task: TaskSpec = {
  id: "t/1",
  source_group: "t",
  language: "python",
  instruction: "Fix add.",
  files: [
    { path: "solution.py", role: "main", content: "from helpers import HELPER\n\ndef add(a, b):\n    return a - b\n" },
    { path: "helpers.py", role: "dependency", content: "HELPER = 1  # DEPENDENCY_MARKER\n" },
  ],
  public_tests: [
    {
      path: "test_public.py",
      content: "from solution import add\n\ndef test_one():\n    assert add(1, 1) == 2  # PUBLIC_TEST_MARKER\n",
    },
  ],
  hidden_tests: [{ path: "test_hidden.py", content: "def test_h():\n    pass\n" }],
  reference: [{ path: "solution.py", content: "def add(a, b):\n    return a + b\n" }],
  metadata: {},
};

const recipe = (over: { training?: object; evaluation?: object } = {}) =>
  ExperimentConfig.parse({
    name: "exp",
    splitId: "00000000-0000-4000-8000-000000000001",
    teacher: { providerId: "00000000-0000-4000-8000-000000000002" },
    baseModel: { source: "path", ref: "/models/tiny" },
    training: { epochs: 1, ...over.training },
    evaluation: { graderVersion: "g1", ...over.evaluation },
    method: "sft+grpo",
  });

const userPrompt = (messages: readonly { role: string; content: string }[]) =>
  messages.find((m) => m.role === "user")?.content ?? "";

describe("prompt variants", () => {
  it("leave out the dependency files or the public tests, never the MAIN file or the instruction", () => {
    const full = renderUserPrompt(publicContext(task));
    // the control: the full context shows both parts
    expect(full).toContain("DEPENDENCY_MARKER");
    expect(full).toContain("PUBLIC_TEST_MARKER");
    expect(renderUserPrompt(publicContext(task, "full"))).toBe(full);
    const noDeps = renderUserPrompt(publicContext(task, "no_dependencies"));
    expect(noDeps).not.toContain("DEPENDENCY_MARKER");
    expect(noDeps).toContain("PUBLIC_TEST_MARKER");
    const noTests = renderUserPrompt(publicContext(task, "no_public_tests"));
    expect(noTests).not.toContain("PUBLIC_TEST_MARKER");
    expect(noTests).toContain("(no public tests)");
    expect(noTests).toContain("DEPENDENCY_MARKER");
    for (const p of [noDeps, noTests]) {
      expect(p).toContain("return a - b");
      expect(p).toContain("Fix add.");
    }
  });

  it("name the prompt: the template's hash for the full context (as before variants), another per variant", () => {
    expect(promptHashOf()).toBe(PROMPT_TEMPLATE_HASH);
    expect(promptHashOf("full")).toBe(PROMPT_TEMPLATE_HASH);
    const hashes = new Set((["full", "no_dependencies", "no_public_tests"] as PromptVariant[]).map(promptHashOf));
    expect(hashes.size).toBe(3);
  });

  it("a recipe without the field is the full context; the evaluation's variant reaches the generate job and its cache keys", () => {
    const plain = recipe();
    expect(plain.training.promptVariant).toBeUndefined();
    expect(plain.evaluation.promptVariant).toBeUndefined();
    expect(() => recipe({ evaluation: { promptVariant: "no_docs" } })).toThrow();
    const before = generateJobPayload(plain, [task], null);
    expect(before.promptTemplateHash).toBe(PROMPT_TEMPLATE_HASH);
    expect(userPrompt(before.spec.prompts[0]?.messages ?? [])).toContain("DEPENDENCY_MARKER");
    const noDeps = recipe({ evaluation: { promptVariant: "no_dependencies" } });
    const after = generateJobPayload(noDeps, [task], null);
    expect(after.promptTemplateHash).toBe(promptHashOf("no_dependencies"));
    expect(userPrompt(after.spec.prompts[0]?.messages ?? [])).not.toContain("DEPENDENCY_MARKER");
    // a shared answer cache never hands one variant's answers to another
    const keys = (c: ExperimentConfig) => evaluationCacheKeys([task], c.evaluation, c.baseModel, null).get(task.id);
    expect(keys(noDeps)).not.toEqual(keys(plain));
    expect(keys(recipe({ evaluation: { promptVariant: "full" } }))).toEqual(keys(plain));
  });

  it("training's variant reaches the DPO rounds' sampling on train and the GRPO prompts, not the evaluation", () => {
    const c = recipe({ training: { promptVariant: "no_public_tests" } });
    const sampling = samplingConfig(c, DpoRecipe.parse({}));
    expect(sampling.evaluation.promptVariant).toBe("no_public_tests");
    expect(generateJobPayload(sampling, [task], null).promptTemplateHash).toBe(promptHashOf("no_public_tests"));
    expect(generateJobPayload(c, [task], null).promptTemplateHash).toBe(PROMPT_TEMPLATE_HASH);
    const grpo = GrpoJobPayload.parse(grpoJobPayload(c, GrpoRecipe.parse({}), { seed: 1, tasks: [task], start: null }));
    expect(grpo.promptVariant).toBe("no_public_tests");
    const plain = GrpoJobPayload.parse(
      grpoJobPayload(recipe(), GrpoRecipe.parse({}), { seed: 1, tasks: [task], start: null }),
    );
    expect(plain.promptVariant).toBeUndefined();
  });
});
