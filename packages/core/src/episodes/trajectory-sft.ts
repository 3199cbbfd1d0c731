import { z } from "zod";
import { canonicalJson, sha256Hex } from "../hash";
import type { TaskSpec } from "../tasks/spec";
import type { SftSample } from "../trainer/schemas";

// An episode as a policy reads it, and a verified trajectory as multi-turn SFT data. The first
// message is the environment's (the instruction, the workspace's files, the tools); each policy
// call is one assistant turn written as a JSON object, each observation the user turn after it.
// The trainer supervises the assistant turns only, so the tool results are masked (and, on request,
// a recovery's failed attempt: failedAttemptTurns); the final submit is the last turn. A
// local-model policy reads and writes the same text.

export const EPISODE_SYSTEM_PROMPT =
  "You repair a Python program in a workspace, one tool call a turn. Answer every turn with exactly one " +
  'JSON object {"tool": NAME, "args": {...}} and nothing else; the tool\'s result comes back as the next message.';

/** The first message of an episode: the task's instruction and the tools' contract. */
export function initialObservation(task: Pick<TaskSpec, "instruction">, files: readonly string[]): string {
  return [
    task.instruction,
    "",
    `Files in the workspace: ${files.join(", ")}`,
    "Tools: list_files(), read_file(path, start, end), edit_file(path, old, new) — `old` must occur exactly once; " +
      "an empty `old` creates a new file —, run_public_tests(), submit(). The hidden tests run when you submit.",
  ].join("\n");
}

/** The paths of a fresh episode's workspace: the task's files and public tests, sorted as the workspace lists them. */
export const startingPaths = (task: Pick<TaskSpec, "files" | "public_tests">): string[] =>
  [...task.files.map((f) => f.path), ...task.public_tests.map((t) => t.path)].sort();

/** Identifies the episode prompt (system text and first-message layout); recorded with its SFT snapshots. */
export const EPISODE_PROMPT_HASH = sha256Hex(
  canonicalJson({
    system: EPISODE_SYSTEM_PROMPT,
    first: initialObservation({ instruction: "{instruction}" }, ["{files}"]),
  }),
);

/** A policy call as the assistant turn that makes it. */
export const callText = (call: { tool: string; args: unknown }): string =>
  canonicalJson({ tool: call.tool, args: call.args ?? {} });

/**
 * `success`: a pass without a failed public-test run before it; `recovery`: a pass reached after a
 * failed run (the recovery states of research question 3). `both` takes either.
 */
export const TrajectoryKind = z.enum(["success", "recovery"]);
export type TrajectoryKind = z.infer<typeof TrajectoryKind>;
export const TrajectorySelection = z.enum(["success", "recovery", "both"]);
export type TrajectorySelection = z.infer<typeof TrajectorySelection>;

export const selects = (selection: TrajectorySelection, kind: TrajectoryKind): boolean =>
  selection === "both" || selection === kind;

/** The first line of a run_public_tests observation that passed; the environment writes it, never the policy. */
export const PUBLIC_TESTS_PASSED = "public tests: passed";

export type TrajectoryTurn = {
  role: "assistant" | "environment";
  tool: string;
  args: unknown;
  status: string;
  output: string;
  /** The call changed the workspace's files. */
  changed: boolean;
};

/**
 * `recovery` when a public-test run failed on a workspace the policy had already changed (a failed
 * attempt it then repaired); a failing run on the untouched task, reproducing the bug, is no
 * failed attempt.
 */
export function trajectoryKind(turns: readonly TrajectoryTurn[]): TrajectoryKind {
  return failedRuns(turns).length ? "recovery" : "success";
}

/** The indexes of the public-test runs that failed on a workspace the policy had already changed. */
function failedRuns(turns: readonly TrajectoryTurn[]): number[] {
  let edited = false;
  return turns.flatMap((t, i) => {
    if (t.changed) edited = true;
    const failed = t.tool === "run_public_tests" && t.status === "ok" && !t.output.startsWith(PUBLIC_TESTS_PASSED);
    return failed && edited ? [i] : [];
  });
}

/**
 * A recovery trajectory's failed attempt: its `edit_file` calls before the last public-test run
 * that failed on the edited workspace (the edits that run showed wrong). Masked, they stay in the
 * context the recovery reads, so the sample teaches reading the failure and repairing it, not the
 * wrong edit. Empty for a success trajectory.
 */
export function failedAttemptTurns(turns: readonly TrajectoryTurn[]): Set<number> {
  const last = failedRuns(turns).at(-1) ?? -1;
  return new Set(turns.flatMap((t, i) => (i < last && t.tool === "edit_file" ? [i] : [])));
}

/**
 * The SFT sample of a trajectory that the policy ended by its own submit. A turn the environment
 * made (a budget's submit) is no policy behaviour to learn: such a trajectory is refused.
 * `maskFailedAttempts`: the failed attempt's turns are marked `train: false` (context, not labels).
 */
export function trajectorySftSample(
  first: string,
  turns: readonly TrajectoryTurn[],
  opts: { maskFailedAttempts?: boolean } = {},
): SftSample {
  const last = turns[turns.length - 1];
  if (!last || last.role !== "assistant" || last.tool !== "submit")
    throw new Error("a trajectory for SFT ends with the policy's own submit");
  if (turns.some((t) => t.role !== "assistant")) throw new Error("a trajectory for SFT has policy turns only");
  const masked = opts.maskFailedAttempts ? failedAttemptTurns(turns) : new Set<number>();
  const messages: SftSample["messages"] = [
    { role: "system", content: EPISODE_SYSTEM_PROMPT },
    { role: "user", content: first },
  ];
  turns.forEach((t, i) => {
    messages.push({ role: "assistant", content: callText(t), ...(masked.has(i) ? { train: false as const } : {}) });
    if (i < turns.length - 1) messages.push({ role: "user", content: t.output });
  });
  return { messages };
}
