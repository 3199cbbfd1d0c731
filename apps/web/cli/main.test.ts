import { describe, expect, it } from "vitest";
import { Writable } from "node:stream";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "./main";
import { readTaskDir } from "./taskdir";

function run(args: string[], env: Record<string, string> = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const sink = (into: string[]) => new Writable({ write: (c: Buffer, _e, cb) => (into.push(c.toString()), cb()) });
  return main(args, { out: sink(out), err: sink(err), cwd: process.cwd() }, env).then((code) => ({
    code,
    out: out.join(""),
    err: err.join(""),
  }));
}

describe("agentlab CLI", () => {
  it("validates offline: exit 0 for a valid file, 1 for an invalid one, with file:line: field messages", async () => {
    expect(await run(["tasks", "validate", "tests/fixtures/tasks/valid.jsonl"])).toMatchObject({
      code: 0,
      out: "tests/fixtures/tasks/valid.jsonl: 12 tasks, valid\n",
    });
    const bad = await run(["tasks", "validate", "tests/fixtures/tasks/invalid.jsonl"]);
    expect(bad.code).toBe(1);
    expect(bad.out.split("\n")).toContain(
      "tests/fixtures/tasks/invalid.jsonl:5: public_tests[0].path: unsafe path \"../escape.py\": contains a '..' segment [unsafe_path]",
    );
    const json = await run(["tasks", "validate", "tests/fixtures/tasks/invalid.jsonl", "--json"]);
    expect(JSON.parse(json.out)).toMatchObject({
      valid: false,
      lines: 11,
      problems: expect.arrayContaining([expect.objectContaining({ line: 7, code: "invalid_utf8" })]),
    });
  });

  it("answers usage errors with exit 2 and needs a token for server commands", async () => {
    expect((await run(["tasks", "validate", "x", "--nope"])).code).toBe(2);
    expect((await run(["bogus"])).code).toBe(2);
    expect((await run([])).code).toBe(0);
    const noToken = await run(["pools", "list"]);
    expect(noToken).toMatchObject({ code: 2 });
    expect(noToken.err).toContain("no API token");
  });

  it("reads the directory layout: task.json scalars, sub-folders, main files from the list or the reference", async () => {
    const tasks = await readTaskDir("tests/fixtures/tasks/dir-layout");
    expect(tasks.map((t) => t.folder)).toEqual(["task-0", "task-1"]);
    const t1 = JSON.parse(tasks[1]?.line ?? "{}") as {
      id: string;
      files: { path: string; role: string }[];
      hidden_tests: unknown[];
    };
    expect(t1.id).toBe("synth/g200/v1");
    expect(t1.files).toEqual([expect.objectContaining({ path: "solution.py", role: "main" })]);
    expect(t1.hidden_tests).toHaveLength(1);
    const dir = mkdtempSync(join(tmpdir(), "taskdir-"));
    const bad = join(dir, "t");
    await import("node:fs/promises").then((fs) => fs.mkdir(join(bad, "files"), { recursive: true }));
    writeFileSync(join(bad, "files", "x.py"), Buffer.from([0xff, 0xfe]));
    await expect(readTaskDir(dir)).rejects.toThrow(/x\.py: not valid UTF-8/);
  });
});
