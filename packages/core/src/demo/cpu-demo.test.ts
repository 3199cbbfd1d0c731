import { describe, expect, it } from "vitest";
import type { TaskSpec } from "../tasks/spec";
import { formatAnswer } from "../teacher/answer";
import { CPU_DEMO_SHAPE, cpuDemoWarmupSamples, promptTemplateText } from "./cpu-demo";

const task = (id: string, cluster: string, n: number): TaskSpec => ({
  id,
  source_group: id,
  cluster,
  language: "python",
  instruction: `Fix f${n}.`,
  files: [{ path: "solution.py", role: "main", content: `def f${n}(x):\n    return x < ${n}\n` }],
  public_tests: [
    { path: "test_public.py", content: `from solution import *\n\ndef test_one():\n    assert f${n}(0)\n` },
  ],
  hidden_tests: [{ path: "test_hidden.py", content: "HIDDEN_MARKER = 1\n" }],
  reference: [{ path: "solution.py", content: `def f${n}(x):\n    return x <= ${n}\n` }],
  metadata: {},
});

const answer = (s: { messages: { role: string; content: string }[] }) =>
  s.messages.find((m) => m.role === "assistant")?.content ?? "";

describe("the CPU demo's warm-up data", () => {
  const warm = task("w", "learnable/at_most_x", 7);
  const cold = task("c", "learnable/keep_inc", 9);
  const samples = cpuDemoWarmupSamples([warm, cold]);

  it("answers a warm shape's task with its repair, every other task with its own buggy file", () => {
    const repair = formatAnswer(warm.reference);
    expect(samples.filter((s) => answer(s) === repair)).toHaveLength(CPU_DEMO_SHAPE.repairCopies);
    // The cold task: its echo and its renamed copies, never its repair.
    const echo = formatAnswer([{ path: "solution.py", content: cold.files[0]?.content ?? "" }]);
    // Its renamed copies draw integers from the cold train tasks: with one such task, its own.
    expect(samples.filter((s) => answer(s) === echo)).toHaveLength(1 + CPU_DEMO_SHAPE.copies);
    expect(samples.some((s) => answer(s) === formatAnswer(cold.reference))).toBe(false);
    expect(samples).toHaveLength(CPU_DEMO_SHAPE.repairCopies + 1 + CPU_DEMO_SHAPE.copies);
  });

  it("reads no hidden test, and is the same for the same tasks", () => {
    expect(JSON.stringify(samples)).not.toContain("HIDDEN_MARKER");
    expect(cpuDemoWarmupSamples([warm, cold])).toEqual(samples);
    // Control: without warm clusters there is no repair in the data at all.
    const none = cpuDemoWarmupSamples([{ ...warm, cluster: "other" }, cold]);
    expect(none.some((s) => answer(s).includes("<="))).toBe(false);
  });

  it("gives the tokenizer the template's words from a train prompt, and refuses no tasks", () => {
    expect(promptTemplateText([cold])).toContain("Fix f9.");
    expect(() => promptTemplateText([])).toThrow(/no train tasks/);
  });
});
