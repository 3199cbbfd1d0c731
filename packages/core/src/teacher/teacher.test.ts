import { describe, expect, it } from "vitest";
import type { TaskSpec } from "../tasks/spec";
import { PROMPT_TEMPLATE_HASH, mainPaths, renderRepairPrompt, renderUserPrompt } from "./prompt";
import { formatAnswer, parseAnswer } from "./answer";
import { candidateCacheKey, paramsHash, sampleSeed } from "./cache";
import { budgetReached, callCost } from "./cost";
import { datasetHash, orderSamples, sampleHash, sftLine, sftSample } from "./sft";

const task: TaskSpec = {
  id: "t1",
  source_group: "g1",
  language: "python",
  instruction: "Fix add.",
  files: [
    { path: "solution.py", role: "main", content: "def add(a, b):\n    return a - b\n" },
    { path: "helpers.py", role: "dependency", content: "HELPER = 1\n" },
  ],
  public_tests: [
    { path: "test_public.py", content: "from solution import add\n\ndef test_one():\n    assert add(1, 1) == 2\n" },
  ],
  hidden_tests: [{ path: "test_hidden.py", content: "SECRET_HIDDEN_MARKER = 1\n" }],
  reference: [{ path: "solution.py", content: "def add(a, b):\n    return a + b  # SECRET_REFERENCE_MARKER\n" }],
  metadata: {},
};

describe("repair prompt", () => {
  it("shows the public context and never hidden tests or the reference", () => {
    const text = renderRepairPrompt(task)
      .map((m) => m.content)
      .join("\n");
    expect(text).toContain("return a - b");
    expect(text).toContain("HELPER = 1");
    expect(text).toContain("def test_one");
    expect(text).toContain("Fix add.");
    expect(text).not.toContain("SECRET_HIDDEN_MARKER");
    expect(text).not.toContain("SECRET_REFERENCE_MARKER");
    expect(text).not.toContain("test_hidden.py");
  });

  it("does not depend on file order and has a stable template hash", () => {
    const shuffled = { ...task, files: [...task.files].reverse() };
    expect(renderUserPrompt(shuffled)).toBe(renderUserPrompt(task));
    expect(PROMPT_TEMPLATE_HASH).toMatch(/^[0-9a-f]{64}$/);
    expect(mainPaths(task)).toEqual(["solution.py"]);
  });

  it("uses a longer fence when a file contains backticks", () => {
    const t = { ...task, files: [{ path: "solution.py", role: "main" as const, content: 'X = """```"""\n' }] };
    expect(renderUserPrompt(t)).toContain('````python\nX = """```"""\n````');
  });
});

describe("answer parser", () => {
  const mains = ["solution.py"];
  it("round-trips the answer format", () => {
    const files = [{ path: "solution.py", content: "def add(a, b):\n    return a + b\n" }];
    expect(parseAnswer(formatAnswer(files), mains)).toEqual({ ok: true, files });
    const two = [
      { path: "a.py", content: "A = 1\n" },
      { path: "b/c.py", content: "X = '```'\n" },
    ];
    expect(parseAnswer(`Here you go:\n\n${formatAnswer(two)}\nDone.`, ["a.py", "b/c.py"])).toEqual({
      ok: true,
      files: two,
    });
  });

  it("accepts one anonymous block for one main file and decorated path lines", () => {
    expect(parseAnswer("Sure!\n```python\nx = 1\n```\n", mains)).toEqual({
      ok: true,
      files: [{ path: "solution.py", content: "x = 1\n" }],
    });
    expect(parseAnswer("**`solution.py`**:\n```py\nx = 2\n```", mains)).toEqual({
      ok: true,
      files: [{ path: "solution.py", content: "x = 2\n" }],
    });
    expect(parseAnswer("# File: solution.py\n~~~\nx = 3\n~~~", mains)).toEqual({
      ok: true,
      files: [{ path: "solution.py", content: "x = 3\n" }],
    });
  });

  it("gives a reason for malformed answers", () => {
    expect(parseAnswer("", mains)).toEqual({ ok: false, reason: "empty answer" });
    expect(parseAnswer("def add(a, b): return a + b", mains)).toEqual({
      ok: false,
      reason: "no fenced code block in the answer",
    });
    expect(parseAnswer("```python\nx = 1\n", mains)).toEqual({ ok: false, reason: "unclosed code block" });
    expect(parseAnswer("helpers.py\n```python\nx = 1\n```", mains)).toMatchObject({
      ok: false,
      reason: expect.stringContaining("wrong file: helpers.py"),
    });
    expect(parseAnswer("```python\nx = 1\n```\n```python\ny = 2\n```", mains)).toMatchObject({
      ok: false,
      reason: expect.stringContaining("2 code blocks without a path line"),
    });
    expect(parseAnswer("solution.py\n```\nx\n```\nsolution.py\n```\ny\n```", mains)).toEqual({
      ok: false,
      reason: "more than one code block for solution.py",
    });
    expect(parseAnswer("a.py\n```\nx\n```", ["a.py", "b.py"])).toEqual({
      ok: false,
      reason: "no code block for main file b.py",
    });
    expect(parseAnswer("solution.py\n```python\n\n```", mains)).toEqual({
      ok: false,
      reason: "empty code block for solution.py",
    });
  });

  it("keeps a named main block and ignores an unnamed usage example beside it", () => {
    expect(parseAnswer("solution.py\n```python\nx = 1\n```\nUsage:\n```python\nprint(x)\n```", mains)).toEqual({
      ok: true,
      files: [{ path: "solution.py", content: "x = 1\n" }],
    });
  });
});

describe("cache key and cost", () => {
  const base = {
    fingerprint: "f",
    promptHash: PROMPT_TEMPLATE_HASH,
    model: "m",
    paramsHash: paramsHash({ temperature: 0.8 }),
    sampleIndex: 0,
  };
  it("changes with every component and ignores parameter key order", () => {
    const k = candidateCacheKey(base);
    expect(candidateCacheKey({ ...base })).toBe(k);
    for (const change of [
      { fingerprint: "g" },
      { promptHash: "p" },
      { model: "m2" },
      { paramsHash: paramsHash({ temperature: 0.7 }) },
      { sampleIndex: 1 },
    ]) {
      expect(candidateCacheKey({ ...base, ...change })).not.toBe(k);
    }
    expect(paramsHash({ a: 1, b: 2 }, { x: 1 })).toBe(paramsHash({ b: 2, a: 1, c: undefined }, { x: 1 }));
    expect(paramsHash({ a: 1 }, { x: 1 })).not.toBe(paramsHash({ a: 1 }, { x: 2 }));
    expect(() => candidateCacheKey({ ...base, sampleIndex: -1 })).toThrow();
    expect(sampleSeed(undefined, 3)).toBeUndefined();
    expect(sampleSeed(10, 3)).toBe(13);
  });

  it("prices usage per million tokens and checks the cap", () => {
    expect(
      callCost({ promptTokens: 1_000_000, completionTokens: 500_000 }, { inputPerMTok: 3, outputPerMTok: 15 }),
    ).toBeCloseTo(10.5, 10);
    expect(callCost({ promptTokens: 10, completionTokens: 10 }, null)).toBe(0);
    expect(budgetReached(0.5, 1)).toBe(false);
    expect(budgetReached(1, 1)).toBe(true);
    expect(budgetReached(0, 0)).toBe(true);
    expect(budgetReached(100, undefined)).toBe(false);
  });
});

describe("SFT samples and snapshots", () => {
  const fixed = [{ path: "solution.py", content: "def add(a, b):\n    return a + b\n" }];
  it("builds system/user/assistant messages whose answer parses back to the fix", () => {
    const s = sftSample(task, fixed);
    expect(s.messages.map((m) => m.role)).toEqual(["system", "user", "assistant"]);
    expect(s.messages[1]?.content).toBe(renderUserPrompt(task));
    expect(parseAnswer(s.messages[2]?.content ?? "", ["solution.py"])).toEqual({ ok: true, files: fixed });
    expect(JSON.stringify(s)).not.toContain("SECRET_HIDDEN_MARKER");
  });

  it("hashes the export bytes independent of insertion order", () => {
    const a = sftSample(task, fixed);
    const b = sftSample({ ...task, instruction: "Other." }, fixed);
    const rows = [a, b].map((s) => ({ line: sftLine(s), hash: sampleHash(s) }));
    const h1 = datasetHash(orderSamples(rows).map((r) => r.line));
    const h2 = datasetHash(orderSamples([...rows].reverse()).map((r) => r.line));
    expect(h1).toBe(h2);
    expect(datasetHash([rows[0]?.line ?? ""])).not.toBe(h1);
    expect(JSON.parse(sftLine(a))).toEqual(a);
  });
});
