import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { runProcessTree } from "./process-tree";

// The result of a job must not overtake its output: a process that writes just under one pipe
// buffer and exits at once can be reaped before its output is read.
describe("runProcessTree", () => {
  it("delivers all output of a process that exits right after writing it", async () => {
    for (let i = 0; i < 20; i++) {
      let out = "";
      const res = await runProcessTree({
        argv: ["python3", "-c", "import os; os.write(1, b'x' * 60000)"],
        env: { PATH: "/usr/bin:/bin" },
        cwd: tmpdir(),
        signal: new AbortController().signal,
        graceMs: 100,
        maxOutputBytes: 1 << 20,
        onOutput: (_stream, data) => {
          out += data;
        },
      });
      expect(res.exitCode).toBe(0);
      expect(out.length).toBe(60000);
    }
  });
});
