import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeTask } from "./helpers/judge";

// `agentlab-agent grade` and `grade --batch` as a user (or an outside attack suite) runs them:
// a real process, files on disk, verdicts on stdout, exit codes.

const BIN = fileURLToPath(new URL("../../apps/agent/bin/agentlab-agent.mjs", import.meta.url));
const agent = (args: string[], cwd: string) =>
  spawnSync(process.execPath, [BIN, "grade", ...args], { cwd, encoding: "utf8", timeout: 300_000 });
let dir = "";
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "agentlab-grade-cli-"));
  const a = probeTask("cli-a", "hidden-marker-aaaaaaaaaaaa");
  const b = probeTask("cli-b", "hidden-marker-bbbbbbbbbbbb");
  writeFileSync(join(dir, "a.json"), JSON.stringify(a));
  writeFileSync(join(dir, "b.json"), JSON.stringify(b));
  writeFileSync(join(dir, "right.py"), "def f(x):\n    return x + 1\n");
  writeFileSync(join(dir, "wrong.py"), "def f(x):\n    return x\n");
  writeFileSync(
    join(dir, "forged.py"),
    "class E:\n    def __eq__(self, o):\n        return True\ndef f(x):\n    return E()\n",
  );
  writeFileSync(join(dir, "broken.py"), "def f(x) return x\n");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("agentlab-agent grade", () => {
  it("grades one candidate: exit 0 on pass, 1 otherwise, JSON on request", () => {
    const pass = agent(["--task", "a.json", "--candidate", "right.py", "--json"], dir);
    expect(pass.status, pass.stderr).toBe(0);
    const r = JSON.parse(pass.stdout.trim());
    expect(r).toMatchObject({ verdict: "pass", isolation: "judge", unsandboxed: false });
    const fail = agent(["--task", "a.json", "--candidate", "wrong.py"], dir);
    expect(fail.status).toBe(1);
    expect(fail.stdout).toMatch(/^fail_public/);
    expect(agent(["--task", "a.json"], dir).status).toBe(2);
    expect(agent(["--task", "missing.json", "--candidate", "right.py"], dir).status).toBe(2);
  });

  it("grades a batch in order with one result line per input line, and says which lines it could not grade", () => {
    const lines = [
      { task: "a.json", candidate: "right.py" },
      { task: join(dir, "b.json"), candidate: "wrong.py" },
      { task: "a.json", candidate: "forged.py" },
      { task: "b.json", candidate: "broken.py" },
      { task: "a.json", candidate: "nope.py" },
      { task: "b.json", candidate: "right.py" },
    ];
    writeFileSync(join(dir, "batch.jsonl"), `${lines.map((l) => JSON.stringify(l)).join("\n")}\n{"task": 1}\n`);
    const out = agent(["--batch", "batch.jsonl", "--json"], dir);
    expect(out.status, out.stderr).toBe(1);
    const rows = out.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { line: number; verdict?: string; error?: string; task?: string });
    expect(rows.map((r) => r.line)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(rows.map((r) => r.verdict ?? "error")).toEqual([
      "pass",
      "fail_public",
      "fail_public",
      "fail_syntax",
      "error",
      "pass",
      "error",
    ]);
    expect(rows[4]?.error).toContain("nope.py");
    expect(rows[6]?.error).toContain("batch.jsonl:7");
    const plain = agent(["--batch", join(dir, "batch.jsonl")], tmpdir()); // relative paths from the batch file's folder
    expect(plain.stdout.split("\n")[0]).toBe("1: cli-a pass");
  });
});
