import { z } from "zod";
import type { PairedInput } from "./clusters";
import type { PairedComparison } from "./compare";

// The input and output of `agentlab stats compare FILE.jsonl`: one paired outcome per line,
// one JSON record per comparison out, computed by the same comparePaired as the report.

const id = z
  .union([z.string().min(1, "must be a non-empty string or an integer"), z.number().int()], {
    error: "must be a non-empty string or an integer",
  })
  .transform(String);
const outcome = z
  .number({ error: "must be a number: 0, 1 or a pass rate in [0, 1]" })
  .min(0, "must lie in [0, 1]")
  .max(1, "must lie in [0, 1]");

/** `{"comparison": NAME, "task": ID, "group": SOURCE_GROUP, "base": 0|1|rate, "adapter": 0|1|rate}`; other fields are ignored. */
export const PairedOutcomeLine = z.object({
  comparison: z.string({ error: "must be a non-empty string" }).min(1, "must be a non-empty string"),
  task: id,
  group: id,
  base: outcome,
  adapter: outcome,
});
export type PairedOutcomeLine = z.infer<typeof PairedOutcomeLine>;

export type LineProblem = { line: number; field: string; message: string };
export type ParsedComparisons = {
  comparisons: { name: string; pairs: PairedInput[] }[];
  problems: LineProblem[];
  lines: number;
};

/** Parses the JSONL text; comparisons keep the order of their first line. A task may appear once per comparison. */
export function parsePairedOutcomes(text: string): ParsedComparisons {
  const problems: LineProblem[] = [];
  const byName = new Map<string, { pairs: PairedInput[]; firstLine: Map<string, number> }>();
  const lines = text.split("\n");
  let count = 0;
  lines.forEach((raw, i) => {
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
    const c = byName.get(r.data.comparison) ?? { pairs: [], firstLine: new Map<string, number>() };
    byName.set(r.data.comparison, c);
    const seen = c.firstLine.get(r.data.task);
    if (seen !== undefined) {
      problems.push({
        line,
        field: "task",
        message: `task ${JSON.stringify(r.data.task)} already paired in comparison ${JSON.stringify(r.data.comparison)} on line ${seen}`,
      });
      return;
    }
    c.firstLine.set(r.data.task, line);
    c.pairs.push({ group: r.data.group, base: r.data.base, treated: r.data.adapter });
  });
  if (count === 0 && problems.length === 0) problems.push({ line: 1, field: "(file)", message: "no paired outcomes" });
  return { comparisons: [...byName].map(([name, c]) => ({ name, pairs: c.pairs })), problems, lines: count };
}

export const formatLineProblem = (p: LineProblem, file: string) => `${file}:${p.line}: ${p.field}: ${p.message}`;

/** The output record of one comparison (snake_case, as JSON). */
export function comparisonRecord(name: string, c: PairedComparison) {
  return {
    comparison: name,
    n: c.n,
    groups: c.groups,
    delta: c.delta,
    ci: c.ci,
    p: c.p,
    test: c.test,
    significant: c.significant,
    alpha: c.alpha,
    reliable: c.reliable,
    ci_method: c.ciMethod,
    se: c.se,
    mde: c.mde,
    power: c.power,
    base_pass: c.basePass,
    adapter_pass: c.treatedPass,
    improved: c.improved,
    regressed: c.regressed,
    iterations: c.iterations,
    seed: c.seed,
  };
}
export type ComparisonRecord = ReturnType<typeof comparisonRecord>;
