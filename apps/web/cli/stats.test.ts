import { describe, expect, it } from "vitest";
import { Writable } from "node:stream";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { comparePaired, comparisonRecord, mulberry32 } from "@agentlab/core";
import { main } from "./main";

function run(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const sink = (into: string[]) => new Writable({ write: (c: Buffer, _e, cb) => (into.push(c.toString()), cb()) });
  return main(args, { out: sink(out), err: sink(err), cwd: process.cwd() }, {}).then((code) => ({
    code,
    out: out.join(""),
    err: err.join(""),
  }));
}

const dir = mkdtempSync(join(tmpdir(), "stats-cli-"));
const write = (name: string, lines: readonly unknown[]) => {
  const path = join(dir, name);
  writeFileSync(path, lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n") + "\n");
  return path;
};

// Two comparisons, interleaved: "late" appears first, so it must be printed first.
const r = mulberry32(9);
const rows = Array.from({ length: 240 }, (_, i) => {
  const name = i % 2 ? "late" : "early";
  const group = `g${Math.floor(i / 8)}`;
  const base = r() < 0.4 ? 1 : 0;
  return {
    comparison: i === 0 ? "late" : name,
    task: `t${i}`,
    group,
    base,
    adapter: name === "early" ? Math.round(r() * 4) / 4 : base || r() < 0.3 ? 1 : 0,
  };
});

describe("agentlab stats compare", () => {
  it("prints one JSON line per comparison, in order of first appearance, computed by the report's comparePaired", async () => {
    const file = write("ok.jsonl", rows);
    const res = await run(["stats", "compare", file, "--json", "--iterations", "2000", "--seed", "4"]);
    expect(res).toMatchObject({ code: 0, err: "" });
    const lines = res.out
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => l.comparison)).toEqual(["late", "early"]);
    for (const l of lines) {
      expect(Object.keys(l)).toEqual(
        expect.arrayContaining([
          "comparison",
          "n",
          "groups",
          "delta",
          "ci",
          "p",
          "test",
          "significant",
          "mde",
          "reliable",
          "ci_method",
        ]),
      );
      const pairs = rows
        .filter((x) => x.comparison === l.comparison)
        .map((x) => ({ group: x.group, base: x.base, treated: x.adapter }));
      expect(l).toEqual(comparisonRecord(String(l.comparison), comparePaired(pairs, { iterations: 2000, seed: 4 })));
    }
    expect(lines[0]).toMatchObject({ n: 121, groups: 30, test: "cluster sign-flip (exact)" });
    // Same input and seed, same numbers; the table form lists both comparisons.
    expect((await run(["stats", "compare", file, "--json", "--iterations", "2000", "--seed", "4"])).out).toBe(res.out);
    const tableOut = (await run(["stats", "compare", file, "--iterations", "2000"])).out.split("\n");
    expect(tableOut[0]).toMatch(
      /^comparison\s+n\s+units\s+Δ pp\s+95% CI \(pp\)\s+interval\s+p\s+test\s+significant\s+MDE pp$/,
    );
    expect(tableOut.slice(1, 3).map((l) => l.split(/\s+/)[0])).toEqual(["late", "early"]);
  });

  it("uses exact McNemar when every group holds one 0/1 task", async () => {
    const file = write(
      "mcnemar.jsonl",
      Array.from({ length: 12 }, (_, i) => ({
        comparison: "c",
        task: i,
        group: i,
        base: i < 10 ? 0 : 1,
        adapter: i < 10 ? 1 : 0,
      })),
    );
    const res = await run(["stats", "compare", file, "--json", "--iterations", "500"]);
    expect(JSON.parse(res.out)).toMatchObject({
      test: "exact McNemar",
      p: expect.closeTo(79 / 2048, 12),
      n: 12,
      groups: 12,
    });
  });

  it("refuses bad lines naming the file, line and field, and prints no comparison", async () => {
    const file = write("bad.jsonl", [
      rows[0],
      { ...rows[1], base: 1.5 },
      "{not json",
      { comparison: "x", task: "a", base: 0, adapter: 1 },
      rows[0],
    ]);
    const res = await run(["stats", "compare", file, "--json"]);
    expect(res.code).toBe(1);
    expect(res.out).toBe("");
    expect(res.err.split("\n")).toEqual(
      expect.arrayContaining([
        `${file}:2: base: must lie in [0, 1]`,
        expect.stringMatching(
          new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:3: \\(line\\): not valid JSON`),
        ),
        `${file}:4: group: must be a non-empty string or an integer`,
        `${file}:5: task: task "t0" already paired in comparison "late" on line 1`,
      ]),
    );
    expect((await run(["stats", "compare", join(dir, "missing.jsonl")])).code).toBe(1);
    expect((await run(["stats", "compare", write("empty.jsonl", [""])])).err).toContain(
      ":1: (file): no paired outcomes",
    );
    expect((await run(["stats", "compare", file, "--alpha", "2"])).code).toBe(2);
  });
});
