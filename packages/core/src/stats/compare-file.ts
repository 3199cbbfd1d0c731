import { z } from "zod";
import type { PairedInput } from "./clusters";
import { comparePaired, type CompareOptions, type PairedComparison } from "./compare";
import { poolSeeds, type PooledComparison, type SeedTaskOutcome } from "./pooling";

// The input and output of `agentlab stats compare FILE.jsonl`: one paired outcome per line, one
// JSON record per comparison out. A comparison whose lines carry `seed` is pooled over its seeds,
// one without is one paired comparison: the report's own comparePaired and poolSeeds.

const id = z
  .union([z.string().min(1, "must be a non-empty string or an integer"), z.number().int()], {
    error: "must be a non-empty string or an integer",
  })
  .transform(String);
const outcome = z
  .number({ error: "must be a number: 0, 1 or a pass rate in [0, 1]" })
  .min(0, "must lie in [0, 1]")
  .max(1, "must lie in [0, 1]");

/**
 * `{"comparison": NAME, "task": ID, "group": SOURCE_GROUP, "cluster"?: ID, "seed"?: ID, "base": 0|1|rate, "adapter": 0|1|rate}`;
 * other fields are ignored.
 */
export const PairedOutcomeLine = z.object({
  comparison: z.string({ error: "must be a non-empty string" }).min(1, "must be a non-empty string"),
  task: id,
  group: id,
  cluster: id.optional(),
  seed: id.optional(),
  base: outcome,
  adapter: outcome,
});
export type PairedOutcomeLine = z.infer<typeof PairedOutcomeLine>;

export type LineProblem = { line: number; field: string; message: string };

/** One comparison of the file: plain pairs, or per-task outcomes under each seed. */
export type FileComparison =
  | { name: string; kind: "paired"; pairs: PairedInput[] }
  | { name: string; kind: "seeded"; seeds: string[]; tasks: SeedTaskOutcome[]; excluded: number };

export type ParsedComparisons = { comparisons: FileComparison[]; problems: LineProblem[]; lines: number };

type TaskLines = { line: number; group: string; cluster: string | undefined; bySeed: Map<string, [number, number]> };
type Building = { seeded: boolean; firstLine: number; tasks: Map<string, TaskLines>; seeds: Map<string, number> };

function add(c: Building, d: PairedOutcomeLine, line: number, problems: LineProblem[]): void {
  const name = JSON.stringify(d.comparison);
  if ((d.seed !== undefined) !== c.seeded) {
    problems.push({
      line,
      field: "seed",
      message: c.seeded
        ? `comparison ${name} has seeds (line ${c.firstLine}): every line of it needs one`
        : `comparison ${name} has no seed on line ${c.firstLine}: give every line of it a seed or none`,
    });
    return;
  }
  const seed = d.seed ?? "";
  const t = c.tasks.get(d.task);
  if (!t) {
    c.tasks.set(d.task, { line, group: d.group, cluster: d.cluster, bySeed: new Map([[seed, [d.base, d.adapter]]]) });
    if (!c.seeds.has(seed)) c.seeds.set(seed, c.seeds.size);
    return;
  }
  const task = `task ${JSON.stringify(d.task)}`;
  if (t.bySeed.has(seed)) {
    const what = c.seeded ? ` for seed ${JSON.stringify(seed)}` : "";
    problems.push({
      line,
      field: "task",
      message: `${task} already paired in comparison ${name}${what} on line ${t.line}`,
    });
    return;
  }
  if (t.group !== d.group || t.cluster !== d.cluster) {
    const field = t.group !== d.group ? "group" : "cluster";
    problems.push({ line, field, message: `${task} of comparison ${name} has another ${field} on line ${t.line}` });
    return;
  }
  t.bySeed.set(seed, [d.base, d.adapter]);
  if (!c.seeds.has(seed)) c.seeds.set(seed, c.seeds.size);
}

function finish(name: string, c: Building): FileComparison {
  const tasks = [...c.tasks];
  if (!c.seeded)
    return {
      name,
      kind: "paired",
      pairs: tasks.map(([, t]) => {
        const [base, treated] = t.bySeed.get("") ?? [0, 0];
        return { group: t.group, cluster: t.cluster, base, treated };
      }),
    };
  const seeds = [...c.seeds.keys()];
  // As in the report: a task enters the pooled row only with an outcome under every seed.
  const complete = tasks.filter(([, t]) => t.bySeed.size === seeds.length);
  return {
    name,
    kind: "seeded",
    seeds,
    excluded: tasks.length - complete.length,
    tasks: complete.map(([taskId, t]) => {
      const rows = seeds.map((s): [number, number] => t.bySeed.get(s) ?? [0, 0]);
      const bases = rows.map(([b]) => b);
      const shared = bases.every((b) => b === bases[0]);
      return {
        taskId,
        group: t.group,
        cluster: t.cluster,
        base: bases[0] ?? 0,
        ...(shared ? {} : { baseBySeed: bases }),
        bySeed: rows.map(([, a]) => a),
      };
    }),
  };
}

/** Parses the JSONL text; comparisons keep the order of their first line. A task may appear once per comparison (and seed). */
export function parsePairedOutcomes(text: string): ParsedComparisons {
  const problems: LineProblem[] = [];
  const byName = new Map<string, Building>();
  let count = 0;
  text.split("\n").forEach((raw, i) => {
    const line = i + 1;
    const s = raw.trim();
    if (!s) return;
    count++;
    let value: unknown;
    try {
      value = JSON.parse(s);
    } catch (err) {
      problems.push({ line, field: "(line)", message: `not valid JSON (${(err as Error).message})` });
      return;
    }
    const r = PairedOutcomeLine.safeParse(value);
    if (!r.success) {
      for (const issue of r.error.issues)
        problems.push({ line, field: issue.path.join(".") || "(line)", message: issue.message });
      return;
    }
    let c = byName.get(r.data.comparison);
    if (!c) {
      c = { seeded: r.data.seed !== undefined, firstLine: line, tasks: new Map(), seeds: new Map() };
      byName.set(r.data.comparison, c);
    }
    add(c, r.data, line, problems);
  });
  if (count === 0 && problems.length === 0) problems.push({ line: 1, field: "(file)", message: "no paired outcomes" });
  return { comparisons: [...byName].map(([name, c]) => finish(name, c)), problems, lines: count };
}

export const formatLineProblem = (p: LineProblem, file: string) => `${file}:${p.line}: ${p.field}: ${p.message}`;

function baseRecord(name: string, c: PairedComparison | PooledComparison) {
  return {
    comparison: name,
    n: c.n,
    groups: c.groups,
    unit: c.unit,
    units: c.units,
    source_groups: c.sourceGroups,
    delta: c.delta,
    interval: c.ci,
    ci: c.ci,
    interval_method: c.intervalMethod,
    ci_method: c.ciMethod,
    p: c.p,
    test: c.test,
    significant: c.significant,
    alpha: c.alpha,
    reliable: c.reliable,
    se: c.se,
    mde: c.mde,
    mde_method: c.mdeMethod,
    power: c.power,
    base_pass: c.basePass,
    adapter_pass: c.treatedPass,
    iterations: c.iterations,
    seed: c.seed,
  };
}

/** The output record of one plain comparison (snake_case, as JSON). */
export function comparisonRecord(name: string, c: PairedComparison) {
  return { ...baseRecord(name, c), improved: c.improved, regressed: c.regressed };
}

/** The output record of a comparison pooled over seeds: the pooled row, with each seed's row inside. */
export function pooledRecord(
  name: string,
  seeds: readonly string[],
  excluded: number,
  r: ReturnType<typeof poolSeeds>,
) {
  return {
    ...baseRecord(name, r.pooled),
    seeds: r.pooled.seeds,
    scope: r.pooled.scope,
    df: r.pooled.df,
    seed_sd: r.spread.sd,
    excluded_tasks: excluded,
    per_seed: r.perSeed.map((s, i) => ({
      seed: seeds[i] ?? String(s.seed),
      delta: s.stats.delta,
      interval: s.stats.ci,
      interval_method: s.stats.intervalMethod,
      p: s.stats.p,
      significant: s.stats.significant,
    })),
  };
}
export type ComparisonRecord = ReturnType<typeof comparisonRecord> | ReturnType<typeof pooledRecord>;

/** One file comparison through the report's statistics: comparePaired, or poolSeeds when it has seeds. */
export function compareFileComparison(c: FileComparison, opts: CompareOptions): ComparisonRecord {
  if (c.kind === "paired") return comparisonRecord(c.name, comparePaired(c.pairs, opts));
  return pooledRecord(
    c.name,
    c.seeds,
    c.excluded,
    poolSeeds(
      c.tasks,
      c.seeds.map((_, i) => i),
      opts,
    ),
  );
}
