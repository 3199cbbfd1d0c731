import { describe, expect, it } from "vitest";
import { Writable } from "node:stream";
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { comparePaired, comparisonRecord, mulberry32, poolSeeds, pooledRecord, seedsDraw } from "@agentlab/core";
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
      expect(l).toEqual(
        comparisonRecord(String(l.comparison), comparePaired(pairs, { iterations: 2000, seed: 4, mde: "approximate" })),
      );
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

  it("states how the MDE was obtained: the formula by default, the report's simulation with --mde simulated", async () => {
    // "late" without its first row (a pass rate) holds 0/1 outcomes only.
    const file = write(
      "mde.jsonl",
      rows.filter((r) => r.comparison === "late" && r.task !== "t0"),
    );
    const sim = JSON.parse(
      (await run(["stats", "compare", file, "--json", "--iterations", "300", "--mde", "simulated"])).out,
    ) as Record<string, unknown>;
    const approx = JSON.parse((await run(["stats", "compare", file, "--json", "--iterations", "300"])).out) as Record<
      string,
      unknown
    >;
    expect(sim.mde_method).toBe("simulated");
    expect(approx.mde_method).toBe("approximate");
    expect({ ...approx, mde: 0, mde_method: "" }).toEqual({ ...sim, mde: 0, mde_method: "" });
    expect((await run(["stats", "compare", file, "--mde", "exact"])).code).toBe(2);
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

  it("pools comparisons whose lines carry a seed with the report's poolSeeds, clustered by the declared cluster", async () => {
    const draw = seedsDraw(30, 3, 0.1, 0.05, 5);
    const cluster = (group: string) => `k${Number(group.slice(1)) % 12}`;
    const lines = draw.tasks.flatMap((t) =>
      t.bySeed.map((a, j) => ({
        comparison: "seeded",
        task: t.taskId,
        group: t.group,
        cluster: cluster(t.group),
        seed: `s${j}`,
        base: t.base,
        adapter: a,
      })),
    );
    // One task without its third seed is left out, as the report leaves it out.
    const file = write("seeds.jsonl", lines.slice(0, -1));
    const res = await run(["stats", "compare", file, "--json", "--iterations", "500", "--seed", "2"]);
    expect(res).toMatchObject({ code: 0, err: "" });
    const out = JSON.parse(res.out) as Record<string, unknown>;
    const kept = draw.tasks.slice(0, -1).map((t) => ({ ...t, cluster: cluster(t.group) }));
    const expected = pooledRecord(
      "seeded",
      ["s0", "s1", "s2"],
      1,
      poolSeeds(kept, [0, 1, 2], { iterations: 500, seed: 2, alpha: 0.05, permutations: 20_000, mde: "approximate" }),
    );
    expect(out).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(out).toMatchObject({ seeds: 3, scope: "recipe", interval_method: "seeds-t", unit: "cluster", units: 12 });
    expect((out.per_seed as unknown[]).length).toBe(3);
    // Two seeds: "given these seeds", never significant.
    const two = write(
      "two.jsonl",
      lines.filter((l) => l.seed !== "s2"),
    );
    const r2 = JSON.parse((await run(["stats", "compare", two, "--json", "--iterations", "300"])).out) as Record<
      string,
      unknown
    >;
    expect(r2).toMatchObject({ seeds: 2, scope: "given-seeds", significant: false });
  });

  it("names the line and field of seed and cluster mistakes", async () => {
    const ok = { comparison: "c", task: "a", group: "g1", seed: 1, base: 0, adapter: 1 };
    const file = write("bad-seeds.jsonl", [
      ok,
      { ...ok, seed: undefined },
      { ...ok, seed: 1 },
      { ...ok, seed: 2, group: "g2" },
      { ...ok, task: "b", seed: 1.5 },
      { ...ok, task: "c", cluster: {} },
      { comparison: "plain", task: "a", group: "g", base: 0, adapter: 1 },
      { comparison: "plain", task: "b", group: "g", seed: 3, base: 0, adapter: 1 },
    ]);
    const res = await run(["stats", "compare", file, "--json"]);
    expect(res.code).toBe(1);
    expect(res.out).toBe("");
    expect(res.err.split("\n")).toEqual(
      expect.arrayContaining([
        `${file}:2: seed: comparison "c" has seeds (line 1): every line of it needs one`,
        `${file}:3: task: task "a" already paired in comparison "c" for seed "1" on line 1`,
        `${file}:4: group: task "a" of comparison "c" has another group on line 1`,
        `${file}:5: seed: must be a non-empty string or an integer`,
        `${file}:6: cluster: must be a non-empty string or an integer`,
        `${file}:8: seed: comparison "plain" has no seed on line 7: give every line of it a seed or none`,
      ]),
    );
  });

  it("runs through the installed entry (bin/agentlab.mjs) and prints the new fields", () => {
    const file = write(
      "entry.jsonl",
      Array.from({ length: 32 }, (_, i) => ({
        comparison: "control",
        task: i,
        group: i,
        base: i % 3 ? 0 : 1,
        adapter: i % 3 ? 0 : 1,
      })),
    );
    const out = execFileSync(
      process.execPath,
      [join(__dirname, "../bin/agentlab.mjs"), "stats", "compare", file, "--json"],
      {
        encoding: "utf8",
      },
    );
    const r = JSON.parse(out) as Record<string, unknown>;
    // No changed pair among 32 singletons: the exact bound, ±10.9 pp, not [0, 0].
    expect(r).toMatchObject({
      comparison: "control",
      delta: 0,
      interval_method: "exact-no-discordance",
      unit: "source_group",
      units: 32,
      significant: false,
    });
    expect(r.interval).toEqual([expect.closeTo(-0.1089, 4), expect.closeTo(0.1089, 4)]);
    expect(Object.keys(r)).toEqual(
      expect.arrayContaining([
        "comparison",
        "delta",
        "interval",
        "p",
        "significant",
        "mde",
        "interval_method",
        "unit",
        "units",
      ]),
    );
  });
});
