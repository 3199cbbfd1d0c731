// `npm run bench -- stats`: `agentlab stats compare` on 1,000 comparisons of ~300 paired tasks
// (~100 source groups of 1–5 tasks), end to end through the CLI (read, validate, compare, print),
// with the report's default sizes (10,000 bootstrap resamples, 20,000 sign flips when Monte Carlo).
// Three files: 0/1 outcomes, pass rates in quarters (both exact sign-flip by the lattice DP), and
// continuous pass rates (Monte-Carlo sign flips). Prints one JSON line.
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { mulberry32 } from "@agentlab/core";
import { main } from "../apps/web/cli/main";

const COMPARISONS = Number(process.env.BENCH_STATS_COMPARISONS ?? 1000);
const dir = mkdtempSync(join(tmpdir(), "bench-stats-"));

function file(kind: "binary" | "quarters" | "continuous"): string {
  const rand = mulberry32(kind.length);
  const out: string[] = [];
  const outcome = (p: number) =>
    kind === "binary"
      ? rand() < p
        ? 1
        : 0
      : kind === "quarters"
        ? Math.round(4 * Math.min(1, Math.max(0, p + (rand() - 0.5) / 2))) / 4
        : Math.min(1, Math.max(0, p + (rand() - 0.5) / 3));
  for (let c = 0; c < COMPARISONS; c++) {
    let task = 0;
    for (let g = 0; task < 300; g++) {
      const pi = rand();
      const size = 1 + Math.floor(rand() * 5);
      const lift = (rand() - 0.4) * 0.3;
      for (let t = 0; t < size && task < 300; t++, task++) {
        out.push(
          JSON.stringify({
            comparison: `c${c}`,
            task: `t${task}`,
            group: `g${g}`,
            base: outcome(pi),
            adapter: outcome(Math.min(1, Math.max(0, pi + lift))),
          }),
        );
      }
    }
  }
  const path = join(dir, `${kind}.jsonl`);
  writeFileSync(path, out.join("\n") + "\n");
  return path;
}

async function timed(path: string) {
  let lines = 0;
  const out = new Writable({ write: (c: Buffer, _e, cb) => ((lines += c.toString().split("\n").length - 1), cb()) });
  const err = new Writable({ write: (c: Buffer, _e, cb) => (process.stderr.write(c), cb()) });
  const t0 = performance.now();
  const code = await main(["stats", "compare", path, "--json"], { out, err, cwd: process.cwd() }, {});
  const s = (performance.now() - t0) / 1000;
  if (code !== 0 || lines !== COMPARISONS) throw new Error(`stats compare exited ${code} with ${lines} lines`);
  return {
    s: Number(s.toFixed(2)),
    perComparisonMs: Number(((1000 * s) / COMPARISONS).toFixed(2)),
    mb: Number((statSync(path).size / 1e6).toFixed(1)),
  };
}

try {
  const result: Record<string, unknown> = { bench: "stats", comparisons: COMPARISONS, rowsPerComparison: 300 };
  for (const kind of ["binary", "quarters", "continuous"] as const) result[kind] = await timed(file(kind));
  console.log(JSON.stringify(result));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
