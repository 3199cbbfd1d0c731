import { describe, expect, it } from "vitest";
import { parseJobPayload } from "../jobs/contracts";
import { SANDBOXED_JOB_TYPES } from "../jobs/schemas";
import type { TaskSpec } from "../tasks/spec";
import { EMPTY_TRANSCRIPT_HASH, makeState, stateHash, transcriptHashOf, treeHash } from "./hashing";
import { ToolCall } from "./schemas";

const task: TaskSpec = {
  id: "t/0",
  source_group: "t",
  language: "python",
  instruction: "Fix f.",
  metadata: {},
  files: [{ path: "solution.py", role: "main", content: "def f():\n    return 0\n" }],
  public_tests: [],
  hidden_tests: [{ path: "test_h.py", content: "def test():\n    pass\n" }],
  reference: [{ path: "solution.py", content: "def f():\n    return 1\n" }],
};
const ref = [{ path: "solution.py", content: "def f():\n    return 1\n" }];

describe("episode job contract", () => {
  it("runs in the sandbox only", () => {
    expect(SANDBOXED_JOB_TYPES).toContain("episode");
  });

  it("hands the reference to the scripted controls that apply it, and to nothing else", () => {
    const solver = { task, policy: { kind: "scripted", name: "solver" }, seed: 1 };
    expect(parseJobPayload("episode", { ...solver, controlReference: ref }).ok).toBe(true);
    const missing = parseJobPayload("episode", solver);
    expect(missing.ok).toBe(false);
    if (!missing.ok) expect(missing.error).toContain("controlReference");
    const wrong = { task, policy: { kind: "scripted", name: "wrong" }, seed: 1 };
    expect(parseJobPayload("episode", wrong).ok).toBe(true);
    expect(parseJobPayload("episode", { ...wrong, controlReference: ref }).ok).toBe(false);
    expect(parseJobPayload("episode", { ...wrong, policy: { kind: "teacher", name: "x" } }).ok).toBe(false);
  });

  it("fills the budget's defaults and refuses an unknown budget key", () => {
    const p = parseJobPayload("episode", { task, policy: { kind: "scripted", name: "wrong" }, seed: 1 });
    expect(p.ok && p.payload.budget.maxTurns).toBe(30);
    const typo = parseJobPayload("episode", {
      task,
      policy: { kind: "scripted", name: "wrong" },
      seed: 1,
      budget: { maxTurn: 3 },
    });
    expect(typo.ok).toBe(false);
  });

  it("tool calls: the five tools with their arguments, nothing else", () => {
    expect(ToolCall.safeParse({ tool: "read_file", args: { path: "a.py", start: 1, end: 3 } }).success).toBe(true);
    expect(ToolCall.safeParse({ tool: "read_file", args: { path: "a.py", start: 0 } }).success).toBe(false);
    expect(ToolCall.safeParse({ tool: "bash", args: { cmd: "ls" } }).success).toBe(false);
    expect(ToolCall.safeParse({ tool: "submit", args: { verdict: "pass" } }).success).toBe(false);
  });
});

describe("content addresses", () => {
  it("a tree hash ignores file order and sees every content change", () => {
    const a = { path: "a.py", sha256: "a".repeat(64) };
    const b = { path: "b.py", sha256: "b".repeat(64) };
    expect(treeHash({ files: [a, b] })).toBe(treeHash({ files: [b, a] }));
    expect(treeHash({ files: [a, b] })).not.toBe(treeHash({ files: [a, { ...b, sha256: "c".repeat(64) }] }));
  });

  it("a state's hash covers its seed and counters", () => {
    const fields = {
      treeHash: "a".repeat(64),
      t: 0,
      transcriptHash: transcriptHashOf([]),
      counters: { turns: 0, testRuns: 0, contextChars: 0, wallMs: 0 },
      seed: 1,
    };
    expect(fields.transcriptHash).toBe(EMPTY_TRANSCRIPT_HASH);
    expect(makeState(fields).hash).toBe(stateHash(fields));
    expect(stateHash({ ...fields, seed: 2 })).not.toBe(stateHash(fields));
    expect(stateHash({ ...fields, counters: { ...fields.counters, testRuns: 1 } })).not.toBe(stateHash(fields));
  });
});
