import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fileWindow, truncateObservation, windowText } from "./observe";
import { Workspace } from "./workspace";

const dirs: string[] = [];
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), "agentlab-ws-test-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("workspace confinement", () => {
  it("writes nested new paths where they are named", () => {
    const ws = Workspace.create(join(fresh(), "ws"), [{ path: "a.py", content: "x = 1\n" }]);
    ws.write("report/deep/verdict.json", "{}");
    expect(ws.list()).toEqual(["a.py", "report/deep/verdict.json"]);
  });

  it("refuses .., absolute paths and links; a plain relative path is the control", () => {
    const base = fresh();
    const ws = Workspace.create(join(base, "ws"), [{ path: "a.py", content: "" }]);
    symlinkSync(base, join(ws.root, "up"));
    expect(ws.confine("a.py").ok).toBe(true);
    for (const p of ["../a.py", "/etc/passwd", "up/ws/a.py", "up", "b/../../a.py", "a\\b"])
      expect(ws.confine(p).ok, p).toBe(false);
    expect(ws.list()).toEqual(["a.py"]);
  });
});

describe("observations", () => {
  it("a window numbers lines and reads back to the file", () => {
    const text = "def f(x):\n    return x\n";
    const w = fileWindow("s.py", text);
    expect(w.split("\n")[0]).toBe("[s.py: lines 1-2 of 2]");
    expect(`${windowText(w)}\n`).toBe(text);
    expect(fileWindow("s.py", text, 2, 2)).toContain("     2\t    return x");
  });

  it("a long output keeps its head and tail within the cap", () => {
    const long = `HEAD${"x".repeat(10_000)}TAIL`;
    const cut = truncateObservation(long, 500);
    expect(cut.truncated).toBe(true);
    expect(cut.text.length).toBeLessThanOrEqual(500);
    expect(cut.text.startsWith("HEAD") && cut.text.endsWith("TAIL")).toBe(true);
    expect(truncateObservation("short", 500)).toEqual({ text: "short", truncated: false });
  });
});
