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
  // The submit's own result ("submitted") follows the last turn: nothing to learn after it.
  const messages: SftSample["messages"] = transcriptMessages(first, turns).slice(0, -1);
  for (const i of masked) {
    const m = messages[2 + 2 * i];
    if (m) messages[2 + 2 * i] = { ...m, train: false as const };
  }
  return { messages };
}

type TranscriptMessage = { role: "system" | "user" | "assistant"; content: string };

/**
 * The one rendering of an episode as chat: the system prompt, the first message, then per turn the
 * call as an assistant message (index 2 + 2i) and its result as the user message after it. SFT
 * samples and same-state DPO pairs (branchPrompt, continuationText) are all read from it.
 */
export function transcriptMessages(first: string, turns: readonly TrajectoryTurn[]): TranscriptMessage[] {
  const messages: TranscriptMessage[] = [
    { role: "system", content: EPISODE_SYSTEM_PROMPT },
    { role: "user", content: first },
  ];
  for (const t of turns)
    messages.push({ role: "assistant", content: callText(t) }, { role: "user", content: t.output });
  return messages;
}

/**
 * A same-state DPO pair's prompt: the transcript to the branching state. The trainer's pair prompt
 * holds system and user turns only (dpo_data.load_pairs refuses an assistant turn), so the calls
 * before the state and their results are written into the one user turn after the first message,
 * each call as its assistant text. A start state (t = 0) gives exactly the episode's own opening.
 */
export function branchPrompt(
  first: string,
  prefix: readonly TrajectoryTurn[],
): { role: "system" | "user"; content: string }[] {
  const [system, opening, ...rest] = transcriptMessages(first, prefix);
  if (!system || !opening) throw new Error("an episode transcript starts with its system prompt and first message");
  if (rest.length === 0)
    return [
      { role: "system", content: system.content },
      { role: "user", content: opening.content },
    ];
  const history = rest.map((m, i) =>
    m.role === "assistant" ? `[call ${i / 2 + 1}] ${m.content}` : `[result ${(i + 1) / 2}]\n${m.content}`,
  );
  return [
    { role: "system", content: system.content },
    { role: "user", content: [opening.content, "", "Your calls so far and their results:", ...history].join("\n") },
  ];
}

/**
 * A continuation as one assistant answer: its policy calls in order, one per line, as the
 * transcript writes them. The trainer supervises the whole answer (no mask inside one message), so
 * the tool results between the calls are left out: scored, they would make the preference partly
 * about predicting the environment's output (a test report that passed), not about the policy's
 * calls. The environment's own turns (a budget's submit) are no policy call and are left out too.
 */
export function continuationText(turns: readonly TrajectoryTurn[]): string {
  return turns
    .filter((t) => t.role === "assistant")
    .map((t) => callText(t))
    .join("\n");
}
