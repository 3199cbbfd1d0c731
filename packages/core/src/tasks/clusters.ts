import { sha256Hex } from "../hash";
import { minhashSignature, proposeGroupMerges } from "./minhash";
import { normalizePython, pythonTokens } from "./pynorm";
import type { TaskTestFile } from "./spec";

// Cluster proposals: tasks of different source groups whose references are the same program (up
// to comments and whitespace) or nearly so are not independent units for inference: a model that
// learned one answer passes them all. The import names them and proposes one cluster per family;
// the task file declares it (`cluster`), and the report then clusters its statistics by it.

/** The reference files' code, ordered by path (what answer comparisons look at). */
export const referenceCode = (files: readonly Pick<TaskTestFile, "path" | "content">[]): string =>
  [...files]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((f) => f.content)
    .join("\n");

export type ClusterCandidate = {
  id: string;
  group: string;
  cluster?: string | null;
  reference: readonly Pick<TaskTestFile, "path" | "content">[];
};

export type ClusterProposal = {
  /** The cluster the tasks already declare when some do, else `answer-<hash>` of the shared reference. */
  cluster: string;
  tasks: number;
  groups: number;
  sampleTaskIds: string[];
};

export type ClusterProposals = { total: number; proposals: ClusterProposal[] };

/**
 * Families of tasks whose references are identical after normalization, or near-identical
 * (estimated Jaccard of 5-shingles ≥ `threshold`, MinHash/LSH over one representative per distinct
 * reference, so a family of thousands costs one signature), spanning at least two source groups and
 * not already inside one declared cluster. Largest first, at most `max`; `total` counts them all.
 */
export function proposeClusters(
  tasks: readonly ClusterCandidate[],
  opts: { threshold?: number; max?: number } = {},
): ClusterProposals {
  const byRef = new Map<string, ClusterCandidate[]>();
  const codeOf = new Map<string, string>();
  for (const t of tasks) {
    const code = normalizePython(referenceCode(t.reference));
    const h = sha256Hex(code);
    const list = byRef.get(h);
    if (list) list.push(t);
    else {
      byRef.set(h, [t]);
      codeOf.set(h, code);
    }
  }
  const hashes = [...byRef.keys()];
  const parent = new Map(hashes.map((h) => [h, h]));
  const find = (h: string): string => {
    let r = h;
    while (parent.get(r) !== r) r = parent.get(r) ?? r;
    parent.set(h, r);
    return r;
  };
  const reps = hashes.map((h) => ({
    id: h,
    group: h,
    signature: minhashSignature(pythonTokens(codeOf.get(h) ?? "")),
  }));
  for (const p of proposeGroupMerges(reps, { threshold: opts.threshold ?? 0.9 })) {
    const [a, b] = [find(p.groupA), find(p.groupB)];
    if (a !== b) parent.set(a < b ? b : a, a < b ? a : b);
  }
  const families = new Map<string, ClusterCandidate[]>();
  for (const h of hashes) {
    const root = find(h);
    const list = families.get(root) ?? [];
    list.push(...(byRef.get(h) ?? []));
    families.set(root, list);
  }
  const proposals: ClusterProposal[] = [];
  for (const [root, members] of families) {
    const groups = new Set(members.map((m) => m.group));
    if (groups.size < 2) continue;
    const declared = members.map((m) => m.cluster).filter((c): c is string => !!c);
    const first = declared[0];
    if (first && declared.length === members.length && declared.every((c) => c === first)) continue;
    proposals.push({
      cluster: mostCommon(declared) ?? `answer-${root.slice(0, 10)}`,
      tasks: members.length,
      groups: groups.size,
      sampleTaskIds: members
        .map((m) => m.id)
        .sort()
        .slice(0, 5),
    });
  }
  proposals.sort((a, b) => b.tasks - a.tasks || (a.cluster < b.cluster ? -1 : 1));
  return { total: proposals.length, proposals: proposals.slice(0, opts.max ?? 20) };
}

function mostCommon(xs: readonly string[]): string | null {
  const n = new Map<string, number>();
  for (const x of xs) n.set(x, (n.get(x) ?? 0) + 1);
  let best: string | null = null;
  for (const [k, v] of n) if (best === null || v > (n.get(best) ?? 0)) best = k;
  return best;
}
