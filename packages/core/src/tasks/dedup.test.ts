import { describe, expect, it } from "vitest";
import { normalizePython, pythonTokens } from "./pynorm";
import { normalizedCodeHash, taskFingerprint, taskTokens } from "./fingerprint";
import { estimateJaccard, minhashSignature, proposeGroupMerges } from "./minhash";

const task = (content: string, over = {}) => ({
  instruction: "Fix it.",
  files: [{ path: "solution.py", role: "main" as const, content }],
  public_tests: [{ path: "test_p.py", content: "assert 1" }],
  hidden_tests: [{ path: "test_h.py", content: "assert 2" }],
  ...over,
});

describe("Python normalizer", () => {
  it("drops comments and whitespace but keeps strings whole, even with # and quotes inside", () => {
    const code = `def f(x):  # add one\n    s = "a # not a comment"\n    t = 'it\\'s'\n    u = """multi\n# line"""\n    return x+1 # done\n`;
    expect(pythonTokens(code)).toEqual([
      "def",
      "f",
      "(",
      "x",
      ")",
      ":",
      "s",
      "=",
      '"a # not a comment"',
      "t",
      "=",
      "'it\\'s'",
      "u",
      "=",
      '"""multi\n# line"""',
      "return",
      "x",
      "+",
      "1",
    ]);
  });

  it("handles prefixes, numbers and multi-char operators", () => {
    expect(pythonTokens("x **= rb'\\d' + f\"{y}\" // 1.5e-3 -> 0x1F")).toEqual([
      "x",
      "**=",
      "rb'\\d'",
      "+",
      'f"{y}"',
      "//",
      "1.5e-3",
      "->",
      "0x1F",
    ]);
  });

  it("gives equal hashes to programs differing in comments and spacing only", () => {
    const a = task("def f(x):\n    return x + 1\n");
    const b = task("# header\ndef f( x ):\n\n        return x+1   # inline\n");
    const c = task("def f(x):\n    return x + 2\n");
    expect(normalizedCodeHash(a)).toBe(normalizedCodeHash(b));
    expect(normalizedCodeHash(a)).not.toBe(normalizedCodeHash(c));
    // A comment marker inside a string is content, not a comment.
    expect(normalizePython('s = "#x"')).not.toBe(normalizePython('s = "#y"'));
  });
});

describe("fingerprint", () => {
  it("covers instruction, files and both test sets, ignoring listing order", () => {
    const a = task("x = 1");
    expect(taskFingerprint(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(taskFingerprint(a)).toBe(taskFingerprint({ ...a }));
    expect(taskFingerprint(a)).not.toBe(taskFingerprint({ ...a, instruction: "Fix it!" }));
    expect(taskFingerprint(a)).not.toBe(
      taskFingerprint({ ...a, hidden_tests: [{ path: "test_h.py", content: "assert 3" }] }),
    );
    expect(taskFingerprint(a)).not.toBe(taskFingerprint({ ...a, public_tests: [] }));
    const two = [
      { path: "a.py", role: "main" as const, content: "1" },
      { path: "b.py", role: "dependency" as const, content: "2" },
    ];
    expect(taskFingerprint({ ...a, files: two })).toBe(taskFingerprint({ ...a, files: [...two].reverse() }));
  });
});

describe("MinHash near-duplicates", () => {
  const prog = (n: number) =>
    Array.from({ length: 40 }, (_, i) => `def f${n}_${i}(a, b):\n    return a * ${i} + b - ${n}\n`).join("");
  it("estimates similarity and proposes merging groups that hold near-copies", () => {
    const base = prog(1);
    const near = base.replace("return a * 3 + b", "return a * 3 - b"); // one token changed
    const other = prog(2);
    const sig = (c: string) => minhashSignature(taskTokens(task(c)));
    expect(estimateJaccard(sig(base), sig(base))).toBe(1);
    expect(estimateJaccard(sig(base), sig(near))).toBeGreaterThan(0.8);
    expect(estimateJaccard(sig(base), sig(other))).toBeLessThan(0.5);
    const tasks = [
      { id: "a", group: "g1", signature: sig(base) },
      { id: "a2", group: "g1", signature: sig(base) }, // same group: never proposed
      { id: "b", group: "g2", signature: sig(near) },
      { id: "c", group: "g3", signature: sig(other) },
    ];
    const props = proposeGroupMerges(tasks);
    expect(props.map((p) => [p.groupA, p.groupB, p.pairs])).toEqual([["g1", "g2", 2]]);
    expect(proposeGroupMerges(tasks, { onlyInvolving: new Set(["c"]) })).toEqual([]);
  });
});
