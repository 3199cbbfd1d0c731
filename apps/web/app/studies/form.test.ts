import { describe, expect, it } from "vitest";
import { checkStudyDefinition } from "@agentlab/core";
import { describeError } from "../../client/errors";
import { FieldIssuesError, atPath, defaultStudyForm, parseValue, toDefinition, type StudyForm } from "./form";

const SPLIT = "00000000-0000-4000-8000-000000000001";
const PROVIDER = "00000000-0000-4000-8000-00000000000a";
const filled = (over: Partial<StudyForm> = {}): StudyForm => ({
  ...defaultStudyForm,
  name: "lr",
  splitId: SPLIT,
  baseModel: "/models/tiny",
  providerId: PROVIDER,
  referenceExtra: '{"training": {"epochs": 2}}',
  arms: [{ name: "high-lr", factor: "training.learningRate", value: "1e-3", primary: true }],
  ...over,
});

const check = (f: StudyForm) => {
  const d = toDefinition(f);
  if ("issues" in d) throw new Error("form refused");
  return checkStudyDefinition(d.definition);
};

describe("the study form", () => {
  it("turns an arm's factor and value into its recipe part, and the form into a definition core accepts", () => {
    expect(atPath("training.lora.r", 64)).toEqual({ training: { lora: { r: 64 } } });
    expect(parseValue("1e-3")).toBe(0.001);
    expect(parseValue("no-deps")).toBe("no-deps");
    const r = check(filled({ aaSeeds: "4, 5, 6", tokenMatching: true, tolerancePct: "0.5" }));
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    expect(r.arms.map((a) => [a.name, a.role, a.factor])).toEqual([
      ["reference", "reference", null],
      ["high-lr", "arm", "training.learningRate"],
      ["A/A", "aa", null],
    ]);
    expect(r.definition.contrasts).toEqual([{ arms: ["high-lr", "reference"] }]);
    expect(r.definition.tokenMatching?.tolerance).toBeCloseTo(0.005);
    expect(r.definition.baseModel).toEqual({ source: "path", ref: "/models/tiny" });
  });

  it("shows core's refusals under the arm's own fields, carried like a server refusal", () => {
    // A value of the wrong type: under the arm's value, at the recipe field's path.
    const typed = check(
      filled({ arms: [{ name: "x", factor: "training.learningRate", value: "fast", primary: true }] }),
    );
    if (typed.ok) throw new Error("accepted a text learning rate");
    expect(Object.keys(describeError(new FieldIssuesError(typed.issues)).fields)).toEqual([
      "arms.0.recipe.training.learningRate",
    ]);
    // An arm equal to the reference in its factor: under the arm's factor.
    const same = check(filled({ arms: [{ name: "x", factor: "training.epochs", value: "2", primary: true }] }));
    if (same.ok) throw new Error("accepted an arm equal to the reference");
    expect(describeError(new FieldIssuesError(same.issues)).fields).toEqual({
      "arms.0.factor": ['arm "x" does not differ from the reference in its factor training.epochs'],
    });
    // Positive control: the same arm with another value passes.
    expect(check(filled({ arms: [{ name: "x", factor: "training.epochs", value: "3", primary: true }] })).ok).toBe(
      true,
    );
  });

  it("names the reference recipe when its JSON does not parse", () => {
    const d = toDefinition(filled({ referenceExtra: "{epochs: 2" }));
    expect("issues" in d && Object.keys(d.issues.fieldErrors)).toEqual(["reference.recipe"]);
  });
});
