import {
  canonicalJson,
  PUBLIC_TESTS_PASSED,
  sha256Hex,
  type CandidateFile,
  type EpisodeStep,
  type ScriptedPolicyName,
  type ToolCall,
} from "@agentlab/core";
import type { PolicyView } from "./environment";
import { okCalls, windowText } from "./observe";

// Scripted policies: positive controls of the environment and of the branch machinery, never
// models. Each decides its next call from the transcript alone (so it resumes from any stored
// state) and knows the reference only through the job payload's controlReference, which the
// server fills for these controls only; the workspace never holds it.

export type EpisodePolicy = {
  name: string;
  /** The policy's identity for the records (a model's would be its weights' hash). */
  hash: string;
  next(view: PolicyView): Promise<unknown>;
};

/** Bump when a scripted policy's behaviour changes: its hash, and so its episodes' identity, change with it. */
const SCRIPTED_VERSION = 2;

/** What the wrong edit appends: valid Python that changes nothing the tests see. */
export const WRONG_EDIT_MARK = "\n# attempted fix: behaviour unchanged\n";

export function scriptedPolicy(name: ScriptedPolicyName, reference: readonly CandidateFile[] = []): EpisodePolicy {
  const hash = sha256Hex(canonicalJson({ kind: "scripted", name, version: SCRIPTED_VERSION }));
  return { name: `scripted:${name}`, hash, next: async (view) => decide(name, reference, view) };
}

function decide(name: ScriptedPolicyName, reference: readonly CandidateFile[], view: PolicyView): ToolCall {
  const steps = view.transcript;
  if (okCalls(steps, "list_files").length === 0) return { tool: "list_files", args: {} };
  const targets = reference.length > 0 ? reference.map((r) => r.path) : mainGuess(steps);
  for (const path of targets)
    if (!steps.some((s) => s.call.tool === "read_file" && argPath(s) === path))
      return { tool: "read_file", args: { path } };
  const tests = okCalls(steps, "run_public_tests");
  const edits = okCalls(steps, "edit_file");
  const lastTests = tests[tests.length - 1];
  const fixing =
    name === "solver" ||
    // the recoverer fixes after its first test run whatever it said (a task whose public tests miss
    // the bug gives no recovery state, but the control still passes)
    (name === "recoverer" && edits.length > 0 && tests.length > 0) ||
    (name === "coin" && coin(view.seed));
  if (fixing) {
    if (tests.length === 0) return { tool: "run_public_tests", args: {} };
    for (const ref of reference) {
      const now = currentContent(steps, ref.path);
      if (now !== null && trimEnd(now) !== trimEnd(ref.content)) return replaceAll(ref.path, now, ref.content);
    }
    if (lastTests && testsFailed(lastTests) && lastTests.index < lastEditIndex(steps))
      return { tool: "run_public_tests", args: {} };
    return { tool: "submit", args: {} };
  }
  // The wrong path: one edit that fixes nothing, the tests, then submit (the recoverer fixes after them).
  const path = targets[0];
  if (path !== undefined && edits.length === 0) {
    const now = currentContent(steps, path);
    if (now !== null) return replaceAll(path, now, now + WRONG_EDIT_MARK);
  }
  if (tests.length === 0 || (lastTests && lastTests.index < lastEditIndex(steps)))
    return { tool: "run_public_tests", args: {} };
  return { tool: "submit", args: {} };
}

const trimEnd = (s: string) => s.replace(/\n+$/, "");

/** Replaces the whole file: the text before its final newline occurs exactly once. */
function replaceAll(path: string, now: string, next: string): ToolCall {
  const old = now.endsWith("\n") ? now.slice(0, -1) : now;
  const replacement = now.endsWith("\n") && next.endsWith("\n") ? next.slice(0, -1) : next;
  return { tool: "edit_file", args: { path, old, new: replacement } };
}

/**
 * A file's content as the transcript shows it: the last whole-file read, then every edit applied
 * since (each exact-match replacement replayed), so no re-read is needed after an own edit.
 */
export function currentContent(steps: readonly EpisodeStep[], path: string): string | null {
  let content: string | null = null;
  for (const s of steps) {
    if (s.result.status !== "ok") continue;
    const c = s.call;
    if (c.tool === "read_file" && argPath(s) === path && !s.result.truncated) {
      const text = windowText(s.result.output);
      content = text === "" ? "" : `${text}\n`;
    } else if (c.tool === "edit_file" && argPath(s) === path && content !== null && isEdit(c.args)) {
      const at = content.indexOf(c.args.old);
      content =
        c.args.old === "" ? c.args.new : content.slice(0, at) + c.args.new + content.slice(at + c.args.old.length);
    }
  }
  return content;
}

const isEdit = (a: unknown): a is { path: string; old: string; new: string } =>
  typeof a === "object" && a !== null && "old" in a && "new" in a;

const argPath = (s: EpisodeStep): string | null => {
  const a = s.call.args;
  return typeof a === "object" && a !== null && "path" in a && typeof a.path === "string" ? a.path : null;
};

const testsFailed = (s: EpisodeStep) => !s.result.output.startsWith(PUBLIC_TESTS_PASSED);
const lastEditIndex = (steps: readonly EpisodeStep[]) =>
  okCalls(steps, "edit_file").reduce((m, s) => Math.max(m, s.index), -1);

/** Without a reference (the wrong policy): the first listed Python file that is not a test. */
function mainGuess(steps: readonly EpisodeStep[]): string[] {
  const listing = okCalls(steps, "list_files")[0]?.result.output.split("\n") ?? [];
  const main = listing.find((p) => p.endsWith(".py") && !/(^|\/)test_[^/]*\.py$|_test\.py$/.test(p));
  return main ? [main] : [];
}

/** A seeded fair coin (mulberry32's first draw): the same seed always flips the same way. */
export function coin(seed: number): boolean {
  let a = (seed + 0x6d2b79f5) | 0;
  a = Math.imul(a ^ (a >>> 15), a | 1);
  a ^= a + Math.imul(a ^ (a >>> 7), a | 61);
  return ((a ^ (a >>> 14)) >>> 0) / 4294967296 < 0.5;
}
