import { describe, expect, it } from "vitest";
import { ExperimentConfig } from "@agentlab/core";
import { defaultForm, toConfig } from "./form";

// The form's multi-sample fields become the recipe's evaluation protocol.
const ids = { splitId: "00000000-0000-4000-8000-000000000001", providerId: "00000000-0000-4000-8000-000000000002" };

describe("experiment form: samples per task", () => {
  it("is one greedy answer by default, reusing stored answers", () => {
    const c = ExperimentConfig.parse(toConfig({ ...defaultForm, ...ids, name: "x", baseModel: "/m" }));
    expect(c.evaluation).toMatchObject({
      samples: 1,
      decoding: { doSample: false, temperature: 1, topP: 1 },
      answerCache: "shared",
    });
  });
  it("samples n answers at the given temperature and top_p", () => {
    const f = { ...defaultForm, ...ids, name: "x", baseModel: "/m", evalSamples: "8", evalTemperature: "0.6" };
    const c = ExperimentConfig.parse(toConfig({ ...f, evalTopP: "0.9", reuseAnswers: false }));
    expect(c.evaluation).toMatchObject({
      samples: 8,
      decoding: { doSample: true, temperature: 0.6, topP: 0.9 },
      answerCache: "experiment",
    });
    expect(() => toConfig({ ...f, evalTemperature: "hot" })).toThrow(/temperature must be a number/);
  });
});
