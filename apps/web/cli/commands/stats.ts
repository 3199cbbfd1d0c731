import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { compareFileComparison, formatLineProblem, parsePairedOutcomes, type ComparisonRecord } from "@agentlab/core";
import { num, str, UsageError, writeLine, type Command } from "../command";

// Offline re-analysis of paired outcomes with the report's own statistics (comparePaired, and
// poolSeeds for comparisons whose lines carry a seed).

const MAX_PROBLEMS = 50;
const pp = (x: number) => `${x >= 0 ? "+" : ""}${(100 * x).toFixed(1)}`;

function table(rows: ComparisonRecord[]): string[] {
  const head = [
    "comparison",
    "n",
    "units",
    "Δ pp",
    "95% CI (pp)",
    "interval",
    "p",
    "test",
    "significant",
    "MDE pp",
    "",
  ];
  const body = rows.map((r) => [
    r.comparison,
    String(r.n),
    `${r.units} ${r.unit === "cluster" ? "clusters" : "groups"}`,
    pp(r.delta),
    `[${pp(r.interval[0])}, ${pp(r.interval[1])}]`,
    r.interval_method,
    r.p.toPrecision(3),
    r.test,
    "scope" in r && r.scope === "given-seeds" ? "given these seeds" : r.significant ? "yes" : "no",
    r.mde === null ? "—" : r.mde >= 1 ? ">100" : (100 * r.mde).toFixed(1),
    [r.reliable ? "" : "interval unreliable (< 10 units)", "seeds" in r ? `pooled over ${r.seeds} seeds` : ""]
      .filter(Boolean)
      .join("; "),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? "").length)));
  return [head, ...body].map((cells) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd(),
  );
}

const compare: Command = {
  name: "stats compare",
  usage:
    "agentlab stats compare FILE.jsonl [--json] [--alpha 0.05] [--iterations 10000] [--permutations 20000] [--seed 0] [--mde approximate|simulated]",
  summary:
    'paired outcomes {"comparison","task","group","cluster"?,"seed"?,"base","adapter"} per line → clustered test, interval, MDE per comparison, pooled over seeds where given (offline)',
  options: {
    json: { type: "boolean" },
    alpha: { type: "string" },
    iterations: { type: "string" },
    permutations: { type: "string" },
    seed: { type: "string" },
    mde: { type: "string" },
  },
  async run({ positionals, values }, ctx) {
    const file = str(positionals[0], "FILE");
    const opts = {
      alpha: num(values.alpha, "--alpha", 0.05),
      iterations: num(values.iterations, "--iterations", 10_000),
      permutations: num(values.permutations, "--permutations", 20_000),
      seed: num(values.seed, "--seed", 0),
    };
    if (!(opts.alpha > 0 && opts.alpha < 1)) throw new UsageError("--alpha must lie in (0, 1)");
    if (!Number.isInteger(opts.iterations) || opts.iterations < 100)
      throw new UsageError("--iterations must be an integer ≥ 100");
    if (!Number.isInteger(opts.permutations) || opts.permutations < 100)
      throw new UsageError("--permutations must be an integer ≥ 100");
    if (!Number.isInteger(opts.seed) || opts.seed < 0) throw new UsageError("--seed must be a non-negative integer");
    // The report's simulated MDE costs ~10× a comparison; a file of thousands of comparisons asks for it.
    const mde = values.mde ?? "approximate";
    if (mde !== "simulated" && mde !== "approximate") throw new UsageError("--mde must be approximate or simulated");
    let text: string;
    try {
      text = await readFile(resolve(ctx.cwd, file), "utf8");
    } catch (err) {
      writeLine(ctx.err, `agentlab: cannot read ${file}: ${(err as Error).message}`);
      return 1;
    }
    const parsed = parsePairedOutcomes(text);
    if (parsed.problems.length > 0) {
      for (const p of parsed.problems.slice(0, MAX_PROBLEMS)) writeLine(ctx.err, formatLineProblem(p, file));
      if (parsed.problems.length > MAX_PROBLEMS)
        writeLine(ctx.err, `… and ${parsed.problems.length - MAX_PROBLEMS} more`);
      writeLine(ctx.err, `${file}: ${parsed.problems.length} problem(s); nothing was compared`);
      return 1;
    }
    const rows = parsed.comparisons.map((c) => compareFileComparison(c, { ...opts, mde }));
    if (values.json) for (const r of rows) writeLine(ctx.out, JSON.stringify(r));
    else for (const line of table(rows)) writeLine(ctx.out, line);
    return 0;
  },
};

export const statsCommands = [compare];
