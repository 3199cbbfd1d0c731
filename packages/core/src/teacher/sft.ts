import { canonicalJson, sha256Hex } from "../hash";
import type { CandidateFile } from "../grading/schemas";
import type { SftSample } from "../trainer/schemas";
import { formatAnswer } from "./answer";
import { renderRepairPrompt, type PublicContext } from "./prompt";

// Verified SFT data: the prompt exactly as a teacher saw it, and the passing fix in the answer
// format the template asks for, so that a trained model learns to answer in the parsable format.

export function sftSample(task: PublicContext, fixed: readonly CandidateFile[]): SftSample {
  return { messages: [...renderRepairPrompt(task), { role: "assistant", content: formatAnswer(fixed) }] };
}

/**
 * One JSONL line of a dataset; keys in canonical order so that the bytes are reproducible. An
 * unsupervised turn keeps its `train: false`; every other message is role and content, as lines
 * were before the flag existed (their hashes unchanged).
 */
export const sftLine = (s: SftSample): string =>
  canonicalJson({
    messages: s.messages.map((m) =>
      m.train === false ? { role: m.role, content: m.content, train: false } : { role: m.role, content: m.content },
    ),
  });

export const sampleHash = (s: SftSample): string => sha256Hex(sftLine(s));

/** Deterministic order of a dataset: by sample hash, so that insertion order never changes the snapshot. */
export function orderSamples<T extends { hash: string }>(samples: readonly T[]): T[] {
  return [...samples].sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0));
}

/**
 * The snapshot hash is the sha256 of the exported JSONL bytes (one line per sample in
 * `orderSamples` order, each ending in "\n"), so `sha256sum export.jsonl` verifies an export.
 */
export function datasetHash(lines: readonly string[]): string {
  return sha256Hex(lines.map((l) => `${l}\n`).join(""));
}
