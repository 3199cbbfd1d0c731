// MinHash signatures over token shingles and LSH banding, to find near-duplicate tasks in
// different source groups (a mutated copy filed under another group would leak across a split).

export const MINHASH = { perms: 64, bands: 16, shingle: 5 } as const;
const ROWS = MINHASH.perms / MINHASH.bands;

/** 32-bit FNV-1a of a string. */
export function fnv1a(s: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

// murmur3's finalizer: a cheap, well-mixed permutation of 32-bit values.
function fmix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

// Fixed per-permutation salts, so signatures are comparable across processes and imports.
const SALTS: number[] = Array.from({ length: MINHASH.perms }, (_, i) =>
  fmix32(0x9e3779b9 ^ Math.imul(i + 1, 0x7feb352d)),
);

/**
 * One 32-bit hash per window of k consecutive tokens (one window for lists shorter than k). Built
 * from per-token hashes, so no window string is ever materialized: this runs over every task.
 */
export function windowHashes(tokens: readonly string[], k: number, seed = 0x811c9dc5): Uint32Array {
  const th = new Uint32Array(tokens.length);
  for (let i = 0; i < tokens.length; i++) th[i] = fnv1a(tokens[i] ?? "", seed);
  const count = Math.max(1, tokens.length - k + 1);
  const out = new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    let h = seed;
    const end = Math.min(i + k, th.length);
    for (let j = i; j < end; j++) h = Math.imul(h ^ (th[j] ?? 0), 0x01000193);
    out[i] = fmix32(h);
  }
  return out;
}

/** Hashes of the k-token shingles of a token list. */
export const shingleHashes = (tokens: readonly string[], k: number = MINHASH.shingle): Uint32Array =>
  windowHashes(tokens, k);

/** A MinHash signature, as signed 32-bit integers so that it stores directly in an int4[] column. */
export function minhashSignature(tokens: readonly string[]): number[] {
  const shingles = shingleHashes(tokens);
  const sig = new Array<number>(MINHASH.perms).fill(0xffffffff);
  for (let p = 0; p < MINHASH.perms; p++) {
    const salt = SALTS[p] ?? 0;
    let min = 0xffffffff;
    for (let s = 0; s < shingles.length; s++) {
      const v = fmix32((shingles[s] ?? 0) ^ salt);
      if (v < min) min = v;
    }
    sig[p] = min;
  }
  return sig.map((v) => v | 0);
}

/** Estimated Jaccard similarity: the share of permutations on which the minima agree. */
export function estimateJaccard(a: readonly number[], b: readonly number[]): number {
  let same = 0;
  for (let i = 0; i < MINHASH.perms; i++) if (a[i] === b[i]) same += 1;
  return same / MINHASH.perms;
}

export type SignedTask = { id: string; group: string; signature: readonly number[] };
/** A proposal to merge two source groups, as a reviewer decided it. */
export const MERGE_STATUSES = ["pending", "accepted", "rejected"] as const;

export type GroupMergeProposal = {
  groupA: string;
  groupB: string;
  similarity: number;
  taskA: string;
  taskB: string;
  pairs: number;
};

/**
 * Near-duplicate pairs across different groups via LSH (16 bands of 4 rows: pairs above ~0.5 Jaccard
 * collide in some band with high probability), verified against `threshold` on the full signature.
 * One proposal per group pair, carrying its most similar task pair. `onlyInvolving` limits the work
 * to pairs that touch those task ids (new tasks of an import against the whole pool).
 */
export function proposeGroupMerges(
  tasks: readonly SignedTask[],
  opts: { threshold?: number; onlyInvolving?: ReadonlySet<string> } = {},
): GroupMergeProposal[] {
  // 0.7: in a short program a single changed token already drops the Jaccard of 5-shingles to ~0.8.
  const threshold = opts.threshold ?? 0.7;
  const buckets = new Map<string, number[]>();
  for (let t = 0; t < tasks.length; t++) {
    const sig = tasks[t]?.signature ?? [];
    for (let b = 0; b < MINHASH.bands; b++) {
      const key = `${b}:${sig.slice(b * ROWS, (b + 1) * ROWS).join(",")}`;
      const list = buckets.get(key);
      if (list) list.push(t);
      else buckets.set(key, [t]);
    }
  }
  const seen = new Set<string>();
  const byGroups = new Map<string, GroupMergeProposal>();
  for (const members of buckets.values()) {
    if (members.length < 2) continue;
    for (let i = 0; i < members.length; i++) {
      for (let j = i + 1; j < members.length; j++) {
        const a = tasks[members[i] ?? 0];
        const b = tasks[members[j] ?? 0];
        if (!a || !b || a.group === b.group) continue;
        if (opts.onlyInvolving && !opts.onlyInvolving.has(a.id) && !opts.onlyInvolving.has(b.id)) continue;
        const [x, y] = a.group < b.group ? [a, b] : [b, a];
        const pairKey = `${x.id}\u0000${y.id}`;
        if (seen.has(pairKey)) continue;
        seen.add(pairKey);
        const sim = estimateJaccard(x.signature, y.signature);
        if (sim < threshold) continue;
        const gKey = `${x.group}\u0000${y.group}`;
        const prev = byGroups.get(gKey);
        if (!prev)
          byGroups.set(gKey, { groupA: x.group, groupB: y.group, similarity: sim, taskA: x.id, taskB: y.id, pairs: 1 });
        else {
          prev.pairs += 1;
          if (sim > prev.similarity) Object.assign(prev, { similarity: sim, taskA: x.id, taskB: y.id });
        }
      }
    }
  }
  return [...byGroups.values()].sort(
    (p, q) =>
      q.similarity - p.similarity ||
      (p.groupA < q.groupA ? -1 : p.groupA > q.groupA ? 1 : p.groupB < q.groupB ? -1 : 1),
  );
}
