import { mcnemarExact } from "../stats/mcnemar";
import type { TaskOutcome } from "./report-tasks";
import { modelKey, modelLabel, type ModelRef } from "./selection";

// Answers that never got a verdict (the grader's infra_error after the bounded retries) are left
// out of every comparison, so they must be visible on their own: counted per model, and compared
// between the base and each adapter. A model whose answers fail to grade more often than the
// other's loses tasks from the comparison in a way that depends on what it wrote (informative
// missingness); an exact test on the tasks where exactly one side has no verdict flags that.

export type NoVerdictCount = {
  split: "dev" | "test";
  modelKey: string;
  /** Tasks of the split this model was evaluated on: with a verdict plus without one. */
  tasks: number;
  noVerdict: number;
  taskIds: string[];
};

export type NoVerdictAsymmetry = {
  split: "dev" | "test";
  /** modelKey of the model compared with the base. */
  otherKey: string;
  /** Tasks where only the base has no verdict, only the other model, both. */
  baseOnly: number;
  otherOnly: number;
  both: number;
  /** Exact two-sided binomial (McNemar) p on baseOnly vs otherOnly; 1 when neither side lost a task alone. */
  p: number;
  /** p below the report's alpha: one side loses verdicts more often than the other. */
  flagged: boolean;
  note: string;
};

export type NoVerdictSection = { counts: NoVerdictCount[]; asymmetry: NoVerdictAsymmetry[] };

type Input = {
  dev: Record<string, TaskOutcome[]>;
  test: Record<string, TaskOutcome[]>;
  noVerdict?: { dev: Record<string, string[]>; test: Record<string, string[]> };
};

const baseFirst = (a: string, b: string) => (a === "base" ? -1 : b === "base" ? 1 : a < b ? -1 : a > b ? 1 : 0);

/** Per split and model (the base first), and base vs every other model of that split. */
export function noVerdictSection(input: Input, alpha: number, table: readonly { ref: ModelRef }[]): NoVerdictSection {
  const labels = (key: string) => {
    const row = table.find((r) => modelKey(r.ref) === key);
    return row ? modelLabel(row.ref) : key;
  };
  const counts: NoVerdictCount[] = [];
  const asymmetry: NoVerdictAsymmetry[] = [];
  for (const split of ["dev", "test"] as const) {
    const missing = input.noVerdict?.[split] ?? {};
    const keys = [...new Set([...Object.keys(input[split]), ...Object.keys(missing)])].sort(baseFirst);
    const lost = new Map(keys.map((k) => [k, new Set(missing[k] ?? [])]));
    for (const k of keys) {
      const ids = [...(lost.get(k) ?? [])].sort();
      counts.push({
        split,
        modelKey: k,
        tasks: (input[split][k]?.length ?? 0) + ids.length,
        noVerdict: ids.length,
        taskIds: ids,
      });
    }
    const base = lost.get("base");
    if (!base) continue;
    for (const k of keys) {
      if (k === "base") continue;
      const other = lost.get(k) ?? new Set<string>();
      const both = [...base].filter((t) => other.has(t)).length;
      const baseOnly = base.size - both;
      const otherOnly = other.size - both;
      const p = mcnemarExact(baseOnly, otherOnly);
      const flagged = p < alpha;
      asymmetry.push({
        split,
        otherKey: k,
        baseOnly,
        otherOnly,
        both,
        p,
        flagged,
        note: asymmetryNote(baseOnly, otherOnly, p, flagged, labels(k)),
      });
    }
  }
  return { counts, asymmetry };
}

function asymmetryNote(baseOnly: number, otherOnly: number, p: number, flagged: boolean, label: string): string {
  if (baseOnly + otherOnly === 0) return `no task lost its verdict on one side only (base vs ${label})`;
  const head = `no verdict on one side only: base ${baseOnly}, ${label} ${otherOnly} (exact binomial p = ${p.toPrecision(3)})`;
  return flagged
    ? `${head} — ASYMMETRIC: one model's answers fail to grade more often, so the comparison may be biased`
    : head;
}

/** "none of N answers" or "k of N answers without a verdict", for the page and the Markdown. */
export const noVerdictText = (c: Pick<NoVerdictCount, "tasks" | "noVerdict">): string =>
  c.noVerdict === 0
    ? `every one of ${c.tasks} answers graded`
    : `${c.noVerdict} of ${c.tasks} answers without a verdict (left out of every comparison)`;
