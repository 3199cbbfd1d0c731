import { canonicalJson, sha256Hex } from "../hash";
import type { EpisodeState, EpisodeStep, SnapshotManifest } from "./schemas";

// Content addresses of episode data, computed the same way on the agent (which produces them) and
// the server (which checks them before storing): a tree by its sorted (path, sha256) list, a
// transcript by a hash chain over its steps, a state by every field but its own hash.

/** The hash of the empty transcript, where every chain starts. */
export const EMPTY_TRANSCRIPT_HASH = sha256Hex("agentlab-episode-transcript/1");

export function treeHash(manifest: SnapshotManifest): string {
  const files = [...manifest.files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return sha256Hex(canonicalJson({ files }));
}

export const stepContentHash = (step: EpisodeStep): string => sha256Hex(canonicalJson(step));

export const chainTranscript = (previous: string, step: EpisodeStep): string =>
  sha256Hex(`${previous}:${stepContentHash(step)}`);

export function transcriptHashOf(steps: readonly EpisodeStep[]): string {
  let h = EMPTY_TRANSCRIPT_HASH;
  for (const s of steps) h = chainTranscript(h, s);
  return h;
}

export function stateHash(state: Omit<EpisodeState, "hash">): string {
  const { treeHash: tree, t, transcriptHash, counters, seed } = state;
  return sha256Hex(canonicalJson({ treeHash: tree, t, transcriptHash, counters, seed }));
}

export const makeState = (fields: Omit<EpisodeState, "hash">): EpisodeState => ({ ...fields, hash: stateHash(fields) });
