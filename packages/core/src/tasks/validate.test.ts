import { describe, expect, it } from "vitest";
import { createTaskValidator, nestingDepth, validateTaskStream } from "./validate";
import { formatProblem, type TaskProblem } from "./spec";

const enc = new TextEncoder();
const good = (over: Record<string, unknown> = {}) => ({
  id: "t1",
  source_group: "g/1",
  language: "python",
  instruction: "Fix the bug.",
  files: [{ path: "solution.py", role: "main", content: "def f(x):\n    return x - 1\n" }],
  public_tests: [{ path: "test_public.py", content: "from solution import f\ndef test_a():\n    assert f(1) == 2\n" }],
  hidden_tests: [{ path: "test_hidden.py", content: "from solution import f\ndef test_b():\n    assert f(2) == 3\n" }],
  reference: [{ path: "solution.py", content: "def f(x):\n    return x + 1\n" }],
  metadata: { origin: "unit" },
  ...over,
});
const line = (v: unknown) => enc.encode(JSON.stringify(v));
const check = (v: unknown, limits = {}) =>
  createTaskValidator(limits).check({ line: 7, bytes: v instanceof Uint8Array ? v : line(v) });
const only = (problems: TaskProblem[]) => problems.map((p) => ({ field: p.field, code: p.code }));

describe("Task spec v1 validation", () => {
  it("accepts a well-formed task", () => {
    const res = check(good());
    expect(res.problems).toEqual([]);
    expect(res.task?.id).toBe("t1");
  });

  it("reports a missing field with line and field", () => {
    const { instruction: _i, ...rest } = good();
    const res = check(rest);
    expect(res.task).toBeNull();
    expect(res.problems).toEqual([
      {
        line: 7,
        field: "instruction",
        code: "missing_field",
        message: 'missing required field "instruction"',
        taskId: "t1",
      },
    ]);
    expect(formatProblem(res.problems[0] as TaskProblem, "a.jsonl")).toBe(
      'a.jsonl:7: instruction: missing required field "instruction" [missing_field]',
    );
  });

  it("reports a wrong type", () => {
    const res = check(good({ files: [{ path: "solution.py", role: "main", content: 42 }] }));
    expect(res.problems).toEqual([
      expect.objectContaining({
        field: "files[0].content",
        code: "wrong_type",
        message: "expected string, got number",
      }),
    ]);
  });

  it("reports a duplicate id with the line of the first use", () => {
    const v = createTaskValidator();
    expect(v.check({ line: 1, bytes: line(good()) }).problems).toEqual([]);
    expect(v.check({ line: 2, bytes: line(good()) }).problems).toEqual([
      expect.objectContaining({
        line: 2,
        field: "id",
        code: "duplicate_id",
        message: 'duplicate id "t1" (first used on line 1)',
      }),
    ]);
  });

  it.each([
    ["../x", "contains a '..' segment"],
    ["/etc/x", "is absolute (must be relative)"],
    ["a\\b.py", "contains a backslash (use POSIX paths)"],
    ["a\u0000b.py", "contains a NUL character"],
    ["a//b.py", "contains an empty or '.' segment"],
    ["x".repeat(256), "is longer than 255 characters"],
  ])("rejects the unsafe path %j", (path, why) => {
    const res = check(good({ public_tests: [{ path, content: "x" }] }));
    expect(res.problems).toEqual([
      expect.objectContaining({
        field: "public_tests[0].path",
        code: "unsafe_path",
        message: `unsafe path ${JSON.stringify(path)}: ${why}`,
      }),
    ]);
  });

  it("reports invalid UTF-8 in the field that holds it", () => {
    const text = JSON.stringify(good({ instruction: "Fix XX now." }));
    const bytes = enc.encode(text);
    const at = text.indexOf("XX");
    bytes[at] = 0xc3; // a lead byte followed by an ASCII byte: not UTF-8
    bytes[at + 1] = 0x28;
    const res = check(bytes);
    expect(res.problems).toEqual([
      expect.objectContaining({
        field: "instruction",
        code: "invalid_utf8",
        message: "contains bytes that are not valid UTF-8",
      }),
    ]);
  });

  it("reports a lone surrogate escape as invalid UTF-8", () => {
    const res = check(enc.encode(JSON.stringify(good()).replace("Fix the bug.", "Fix \\ud800 it")));
    expect(only(res.problems)).toEqual([{ field: "instruction", code: "invalid_utf8" }]);
  });

  it("enforces the per-file and per-task size limits (configurable)", () => {
    const big = good({ files: [{ path: "solution.py", role: "main", content: "x".repeat(2000) }], reference: [] });
    expect(check(big, { maxFileBytes: 1000 }).problems).toEqual([
      expect.objectContaining({
        field: "files[0].content",
        code: "too_large",
        message: "file is larger than the 1000-byte limit per file",
      }),
    ]);
    expect(check(big, { maxTaskBytes: 1500 }).problems).toEqual([
      expect.objectContaining({
        field: "",
        code: "too_large",
        message: "task is larger than the 1500-byte limit per task",
      }),
    ]);
    expect(check(big).problems).toEqual([]);
  });

  it("requires a main file and a hidden test", () => {
    const res = check(
      good({ files: [{ path: "helpers.py", role: "dependency", content: "" }], hidden_tests: [], reference: [] }),
    );
    expect(res.problems).toEqual([
      expect.objectContaining({
        field: "hidden_tests",
        code: "no_hidden_test",
        message: "at least one hidden test is required",
      }),
      expect.objectContaining({
        field: "files",
        code: "no_main_file",
        message: 'no file has role "main"; at least one main file is required',
      }),
    ]);
  });

  it("rejects a reference path that names no main file", () => {
    const res = check(good({ reference: [{ path: "other.py", content: "" }] }));
    expect(res.problems).toEqual([
      expect.objectContaining({
        field: "reference[0].path",
        code: "reference_not_main",
        message: 'reference path "other.py" names no main file',
      }),
    ]);
  });

  it("rejects colliding workspace paths and bad JSON", () => {
    const res = check(good({ hidden_tests: [{ path: "solution.py", content: "" }] }));
    expect(res.problems).toEqual([
      expect.objectContaining({
        field: "hidden_tests[0].path",
        code: "duplicate_path",
        message: 'path "solution.py" is already used by files[0]',
      }),
    ]);
    expect(only(check(enc.encode("{not json")).problems)).toEqual([{ field: "", code: "invalid_json" }]);
    expect(only(check([1, 2]).problems)).toEqual([{ field: "", code: "wrong_type" }]);
  });

  it("reports every problem of a line at once", () => {
    const res = check(
      good({
        id: "bad id!",
        language: "rust",
        files: [{ path: "../s.py", role: "main", content: "" }],
        reference: [{ path: "s.py", content: "" }],
      }),
    );
    expect(only(res.problems)).toEqual([
      { field: "id", code: "invalid_value" },
      { field: "language", code: "invalid_value" },
      { field: "files[0].path", code: "unsafe_path" },
      { field: "reference[0].path", code: "reference_not_main" },
    ]);
  });
});

describe("validateTaskStream", () => {
  const file = (objs: unknown[]) => enc.encode(objs.map((o) => JSON.stringify(o)).join("\n") + "\n");

  it("reads .jsonl and .jsonl.gz alike, in arbitrary chunks, skipping blank lines", async () => {
    const bytes = file([good({ id: "a" }), good({ id: "b" })]);
    const chunks = [bytes.subarray(0, 10), bytes.subarray(10, 333), bytes.subarray(333)];
    const res = await validateTaskStream(chunks);
    expect(res.problems).toEqual([]);
    expect(res.tasks.map((t) => [t.line, t.task.id])).toEqual([
      [1, "a"],
      [2, "b"],
    ]);
    const gz = new Uint8Array(
      await new Response(new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer(),
    );
    const res2 = await validateTaskStream([gz.subarray(0, 5), gz.subarray(5)]);
    expect(res2.tasks.map((t) => t.task.id)).toEqual(["a", "b"]);
  });

  it("accepts CRLF line ends and a last line without a newline", async () => {
    const text = [good({ id: "a" }), good({ id: "b" })].map((o) => JSON.stringify(o)).join("\r\n");
    const res = await validateTaskStream([enc.encode(text)]);
    expect(res.problems).toEqual([]);
    expect(res.tasks.map((t) => t.task.id)).toEqual(["a", "b"]);
  });

  it("keeps no task once any line is bad, and numbers lines from 1", async () => {
    const objs = Array.from({ length: 20 }, (_, i) => good({ id: `t${i}` }));
    objs[12] = good({ id: "t12", hidden_tests: [] });
    const res = await validateTaskStream([file(objs)]);
    expect(res.tasks).toEqual([]);
    expect(res.problems).toEqual([expect.objectContaining({ line: 13, code: "no_hidden_test", taskId: "t12" })]);
  });

  it("reports an overlong line without buffering it, and an empty file", async () => {
    const res = await validateTaskStream([file([good({ instruction: "x".repeat(5000) })])], {
      limits: { maxTaskBytes: 1000 },
    });
    expect(only(res.problems)).toEqual([{ field: "", code: "too_large" }]);
    expect(only((await validateTaskStream([enc.encode("\n\n")])).problems)).toEqual([
      { field: "", code: "empty_file" },
    ]);
  });
});

describe("file limits", () => {
  it("counts nesting outside strings only, and stops past the limit", () => {
    expect(nestingDepth('{"a":[{"b":"[[[[{{{{"}]}')).toBe(3);
    expect(nestingDepth('{"a":"\\"[[["}')).toBe(1);
    expect(nestingDepth(`${"[".repeat(100)}${"]".repeat(100)}`, 10)).toBe(11);
  });

  it("refuses a line nested past maxDepth and a file past maxTasks, naming the limit", async () => {
    const line = (depth: number) => `{"id":"x","metadata":{"v":${"[".repeat(depth)}${"]".repeat(depth)}}}\n`;
    const deep = await validateTaskStream([new TextEncoder().encode(line(40))]);
    expect(deep.problems).toEqual([
      expect.objectContaining({ line: 1, code: "too_deep", message: expect.stringContaining("maxDepth") }),
    ]);
    const many = await validateTaskStream([new TextEncoder().encode("{}\n{}\n{}\n")], { limits: { maxTasks: 2 } });
    expect(many.problems.at(-1)).toMatchObject({ line: 3, code: "too_many_tasks" });
    expect(many.problems.at(-1)?.message).toContain("maxTasks");
  });
});
