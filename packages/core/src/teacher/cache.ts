import { canonicalJson, sha256Hex } from "../hash";

// Candidates are reused across experiments and pools when everything that determines them is
// equal: what the model saw and is graded against (task fingerprint), how it was asked (prompt
// template hash), who answered (model) and how (sampling + extra parameters), and which sample.

export type CacheKeyParts = {
  fingerprint: string;
  promptHash: string;
  model: string;
  paramsHash: string;
  sampleIndex: number;
};

/** Hash of the request parameters; key order and undefined fields do not matter. */
export function paramsHash(params: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  const clean = JSON.parse(JSON.stringify({ params, extra })) as unknown;
  return sha256Hex(canonicalJson({ v: 1, ...(clean as object) }));
}

export function candidateCacheKey(k: CacheKeyParts): string {
  if (!Number.isInteger(k.sampleIndex) || k.sampleIndex < 0)
    throw new RangeError("sampleIndex must be a non-negative integer");
  return sha256Hex(
    canonicalJson({
      v: 1,
      fingerprint: k.fingerprint,
      promptHash: k.promptHash,
      model: k.model,
      paramsHash: k.paramsHash,
      sampleIndex: k.sampleIndex,
    }),
  );
}

/**
 * The seed sent for one sample: distinct per sample index so that n samples are n draws, and
 * stable so that a re-run asks the same question. Absent when the user set no seed.
 */
export const sampleSeed = (seed: number | undefined, sampleIndex: number): number | undefined =>
  seed === undefined ? undefined : seed + sampleIndex;
