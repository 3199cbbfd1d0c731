import { canonicalJson, sha256Hex } from "../hash";
import type { TaskSpec } from "./spec";
import { normalizePython, pythonTokens } from "./pynorm";

type Visible = Pick<TaskSpec, "instruction" | "files" | "public_tests" | "hidden_tests">;
type Named = { path: string };
const byPath = <T extends Named>(xs: readonly T[]): T[] =>
  [...xs].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

/**
 * sha256 over the canonical JSON of everything a model can see plus the hidden tests (brief §3).
 * Lists are ordered by path so that listing order does not change identity; metadata, id, group and
 * reference are excluded because they do not change what a model is asked or how it is graded.
 */
export function taskFingerprint(t: Visible): string {
  return sha256Hex(
    canonicalJson({
      v: 1,
      instruction: t.instruction,
      files: byPath(t.files).map((f) => ({ path: f.path, role: f.role, content: f.content })),
      public_tests: byPath(t.public_tests).map((f) => ({ path: f.path, content: f.content })),
      hidden_tests: byPath(t.hidden_tests).map((f) => ({ path: f.path, content: f.content })),
    }),
  );
}

/** The task's code (main and dependency files) ordered by path: what code-duplicate checks compare. */
export const taskCode = (t: Pick<TaskSpec, "files">): string =>
  byPath(t.files)
    .map((f) => f.content)
    .join("\n");

/** Hash of the normalized code: equal for tasks whose programs differ only in comments and whitespace. */
export function normalizedCodeHash(t: Pick<TaskSpec, "files">): string {
  return sha256Hex(canonicalJson(byPath(t.files).map((f) => normalizePython(f.content))));
}

/** Lowercased words of free text (instructions), for n-gram overlap with code tokens. */
export const textWords = (s: string): string[] => s.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];

/** Tokens of instruction + code used by near-duplicate and 13-gram leakage checks. */
export const taskTokens = (t: Pick<TaskSpec, "instruction" | "files">): string[] => [
  ...textWords(t.instruction),
  ...pythonTokens(taskCode(t)),
];

/** Hash of instruction and code exactly as written (the "exact" leakage check). */
export const exactContentHash = (t: Pick<TaskSpec, "instruction" | "files">): string =>
  sha256Hex(canonicalJson([t.instruction, taskCode(t)]));

/** Hash of normalized instruction (case and spacing) and normalized code (the "normalized" leakage check). */
export const normalizedContentHash = (t: Pick<TaskSpec, "instruction" | "files">): string =>
  sha256Hex(canonicalJson([textWords(t.instruction).join(" "), normalizePython(taskCode(t))]));
