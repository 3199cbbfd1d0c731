import { z } from "zod";
import { windowHashes } from "./minhash";
import { SplitPart } from "./split";

// Leakage between a split's test part and the parts a model learns from or is selected on: exact
// copies, copies up to comments/whitespace/case, and shared 13-grams of instruction + code tokens.

export const LeakPair = z.object({
  testTaskId: z.string(),
  otherTaskId: z.string(),
  otherPart: SplitPart,
  exact: z.boolean(),
  normalized: z.boolean(),
  sharedNgrams: z.number().int(),
  /** Shared n-grams over the test task's distinct n-grams. */
  overlap: z.number(),
});
export type LeakPair = z.infer<typeof LeakPair>;

export const LeakageReport = z.object({
  n: z.number().int(),
  testTasks: z.number().int(),
  testTasksWithLeak: z.number().int(),
  exactPairs: z.number().int(),
  normalizedPairs: z.number().int(),
  ngramPairs: z.number().int(),
  /** n-grams found in more than this many train/dev tasks are treated as boilerplate and ignored. */
  maxDocFreq: z.number().int(),
  /** Most severe first; `truncated` says when more pairs exist than are listed. */
  pairs: z.array(LeakPair),
  truncated: z.boolean(),
});
export type LeakageReport = z.infer<typeof LeakageReport>;

export type LeakTask = {
  taskId: string;
  part: SplitPart;
  tokens: readonly string[];
  exactHash: string;
  normalizedHash: string;
};

export type LeakageOptions = { n?: number; maxDocFreq?: number; minSharedNgrams?: number; maxPairs?: number };

// Two independent 32-bit window hashes packed into one safe integer: collisions are negligible at pool scale.
function ngramKeys(tokens: readonly string[], n: number): Set<number> {
  const out = new Set<number>();
  if (tokens.length < n) return out;
  const a = windowHashes(tokens, n, 0x811c9dc5);
  const b = windowHashes(tokens, n, 0x01000193);
  for (let i = 0; i < a.length; i++) out.add((a[i] ?? 0) * 0x200000 + ((b[i] ?? 0) & 0x1fffff));
  return out;
}

export function leakageReport(tasks: readonly LeakTask[], opts: LeakageOptions = {}): LeakageReport {
  const n = opts.n ?? 13;
  const maxDocFreq = opts.maxDocFreq ?? 50;
  const minShared = opts.minSharedNgrams ?? 1;
  const maxPairs = opts.maxPairs ?? 2000;
  const others = tasks.filter((t) => t.part !== "test");
  const tests = tasks.filter((t) => t.part === "test");

  const byExact = groupBy(others, (t) => t.exactHash);
  const byNormalized = groupBy(others, (t) => t.normalizedHash);
  const postings = new Map<number, number[]>();
  others.forEach((t, idx) => {
    for (const k of ngramKeys(t.tokens, n)) {
      const list = postings.get(k);
      if (list) list.push(idx);
      else postings.set(k, [idx]);
    }
  });

  const pairs: LeakPair[] = [];
  const leaking = new Set<string>();
  let exactPairs = 0;
  let normalizedPairs = 0;
  let ngramPairs = 0;
  for (const t of tests) {
    const found = new Map<number, LeakPair>();
    const pairFor = (idx: number): LeakPair => {
      let p = found.get(idx);
      const o = others[idx];
      if (!p && o) {
        p = {
          testTaskId: t.taskId,
          otherTaskId: o.taskId,
          otherPart: o.part,
          exact: false,
          normalized: false,
          sharedNgrams: 0,
          overlap: 0,
        };
        found.set(idx, p);
      }
      return p as LeakPair;
    };
    for (const idx of byExact.get(t.exactHash) ?? []) pairFor(idx).exact = true;
    for (const idx of byNormalized.get(t.normalizedHash) ?? []) pairFor(idx).normalized = true;
    const keys = ngramKeys(t.tokens, n);
    const shared = new Map<number, number>();
    for (const k of keys) {
      const list = postings.get(k);
      if (!list || list.length > maxDocFreq) continue;
      for (const idx of list) shared.set(idx, (shared.get(idx) ?? 0) + 1);
    }
    for (const [idx, count] of shared) {
      if (count < minShared && !found.has(idx)) continue;
      const p = pairFor(idx);
      p.sharedNgrams = count;
      p.overlap = keys.size ? Math.round((count / keys.size) * 1e4) / 1e4 : 0;
    }
    for (const p of found.values()) {
      if (p.exact) exactPairs += 1;
      if (p.normalized) normalizedPairs += 1;
      if (p.sharedNgrams >= minShared) ngramPairs += 1;
      leaking.add(t.taskId);
      pairs.push(p);
    }
  }
  pairs.sort(
    (a, b) =>
      severity(b) - severity(a) ||
      (a.testTaskId < b.testTaskId ? -1 : a.testTaskId > b.testTaskId ? 1 : a.otherTaskId < b.otherTaskId ? -1 : 1),
  );
  return {
    n,
    testTasks: tests.length,
    testTasksWithLeak: leaking.size,
    exactPairs,
    normalizedPairs,
    ngramPairs,
    maxDocFreq,
    pairs: pairs.slice(0, maxPairs),
    truncated: pairs.length > maxPairs,
  };
}

const severity = (p: LeakPair): number => (p.exact ? 4 : 0) + (p.normalized ? 2 : 0) + p.overlap;

function groupBy<T>(xs: readonly T[], key: (x: T) => string): Map<string, number[]> {
  const m = new Map<string, number[]>();
  xs.forEach((x, i) => {
    const k = key(x);
    const list = m.get(k);
    if (list) list.push(i);
    else m.set(k, [i]);
  });
  return m;
}
