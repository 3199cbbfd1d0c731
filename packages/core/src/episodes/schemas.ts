import { z } from "zod";
import { GradeResult, GradeVerdict } from "../grading/schemas";

// Agentic repair episodes (architecture brief §11): a policy calls tools on a workspace made from a
// task's visible files; the agent enforces the budget and the verdict comes from the judge only.
// The tool set follows SWE-agent / mini-swe-agent: read a window of a file with line numbers, an
// exact-match string replacement that must match once (a refused edit changes nothing and costs a
// turn), the test command, and an explicit submit. Everything here crosses the agent ↔ server
// boundary inside the `episode` job's payload and result.

const Sha256 = z.string().regex(/^[a-f0-9]{64}$/, "a sha256 hex digest");

export const EPISODE_TOOLS = ["list_files", "read_file", "edit_file", "run_public_tests", "submit"] as const;
export const EpisodeToolName = z.enum(EPISODE_TOOLS);
export type EpisodeToolName = z.infer<typeof EpisodeToolName>;

const NoArgs = z.strictObject({});
const LineNumber = z.number().int().min(1);

/** One tool call as the environment executes it; anything else a policy sends is a refused turn (`bad_call`). */
export const ToolCall = z.discriminatedUnion("tool", [
  z.strictObject({ tool: z.literal("list_files"), args: NoArgs }),
  z.strictObject({
    tool: z.literal("read_file"),
    // 1-based, inclusive; absent = from the first / to the last line.
    args: z.strictObject({
      path: z.string().describe("a path relative to the workspace"),
      start: LineNumber.optional().describe("first line, 1-based (default: the first)"),
      end: LineNumber.optional().describe("last line, inclusive (default: the last)"),
    }),
  }),
  z.strictObject({
    tool: z.literal("edit_file"),
    // `old` must occur exactly once; an empty `old` creates `path`, which must not exist yet.
    args: z.strictObject({
      path: z.string().describe("a path relative to the workspace"),
      old: z.string().describe("text that occurs exactly once in the file; empty creates a new file"),
      new: z.string().describe("its replacement"),
    }),
  }),
  z.strictObject({ tool: z.literal("run_public_tests"), args: NoArgs }),
  z.strictObject({ tool: z.literal("submit"), args: NoArgs }),
]);
export type ToolCall = z.infer<typeof ToolCall>;

/**
 * `ok`: the tool did its work. `refused`: nothing changed (bad call, path outside the workspace,
 * no or several matches, an edit that would not parse, the test-run budget spent); it still costs
 * a turn. `error`: the tool itself could not run (sandbox failure); the episode ends as infra_error.
 */
export const ToolStatus = z.enum(["ok", "refused", "error"]);
export type ToolStatus = z.infer<typeof ToolStatus>;

export const ToolRefusal = z.enum([
  "bad_call",
  "path_refused",
  "not_found",
  "exists",
  "no_match",
  "ambiguous_match",
  "syntax_error",
  "test_budget",
]);
export type ToolRefusal = z.infer<typeof ToolRefusal>;

export const ToolResult = z.strictObject({
  status: ToolStatus,
  refusal: ToolRefusal.nullable(),
  /** What the policy sees, cut to the budget's observation cap. */
  output: z.string(),
  truncated: z.boolean(),
});
export type ToolResult = z.infer<typeof ToolResult>;

/** Enforced by the environment, never by the policy. */
export const EpisodeBudget = z.strictObject({
  maxTurns: z.number().int().min(1).max(500).default(30),
  maxTestRuns: z.number().int().min(0).max(100).default(8),
  /** Characters of one tool result the policy sees (head and tail kept, the middle elided). */
  maxObservationChars: z.number().int().min(200).max(200_000).default(6000),
  /** Characters of the whole transcript (calls and observations); past it the workspace is submitted. */
  maxContextChars: z.number().int().min(1000).max(4_000_000).default(120_000),
  wallTimeS: z.number().positive().max(3600).default(600),
});
export type EpisodeBudget = z.infer<typeof EpisodeBudget>;
export const DEFAULT_EPISODE_BUDGET: EpisodeBudget = EpisodeBudget.parse({});

export const BudgetCounters = z.strictObject({
  turns: z.number().int().min(0),
  testRuns: z.number().int().min(0),
  contextChars: z.number().int().min(0),
  wallMs: z.number().min(0),
});
export type BudgetCounters = z.infer<typeof BudgetCounters>;

/** Why the environment, not the policy, ended the episode by submitting the workspace as it was. */
export const BudgetExhaustion = z.enum(["turns", "context", "wall_time"]);
export type BudgetExhaustion = z.infer<typeof BudgetExhaustion>;

/** `assistant`: the policy's call; `environment`: the submit the environment made on an exhausted budget. */
export const StepRole = z.enum(["assistant", "environment"]);
export type StepRole = z.infer<typeof StepRole>;

/** A workspace tree: sorted (path, content hash) pairs; its hash is the tree hash. File contents live in the blobs. */
export const SnapshotManifest = z.strictObject({
  files: z.array(z.strictObject({ path: z.string(), sha256: Sha256 })),
});
export type SnapshotManifest = z.infer<typeof SnapshotManifest>;

export const EpisodeStep = z.strictObject({
  /** 0-based position in the episode's transcript (a continuation keeps counting from its state). */
  index: z.number().int().min(0),
  role: StepRole,
  /** The call as the policy sent it when it did not parse, else the parsed call. */
  call: z.union([ToolCall, z.strictObject({ tool: z.string(), args: z.unknown() })]),
  result: ToolResult,
  resultHash: Sha256,
  snapshotBefore: Sha256,
  snapshotAfter: Sha256,
  wallMs: z.number().min(0),
});
export type EpisodeStep = z.infer<typeof EpisodeStep>;

/**
 * A resumable point of an episode: the workspace tree, the transcript up to step `t` (its chained
 * hash), the budget counters and the seed a continuation from here samples with. `hash` is the
 * sha256 of the canonical JSON of every other field: the state's content address.
 */
export const EpisodeState = z.strictObject({
  hash: Sha256,
  treeHash: Sha256,
  t: z.number().int().min(0),
  transcriptHash: Sha256,
  counters: BudgetCounters,
  seed: z.number().int().min(0),
});
export type EpisodeState = z.infer<typeof EpisodeState>;

/** Why a state is a branch point: the start, or right after a run_public_tests that failed (a recovery state). */
export const BranchPointKind = z.enum(["start", "after_failed_tests"]);
export type BranchPointKind = z.infer<typeof BranchPointKind>;

export const SubmittedBy = z.enum(["policy", "budget"]);

/** One run to a verdict: the main episode, or a continuation from a stored state. */
export const EpisodeRun = z.strictObject({
  seed: z.number().int().min(0),
  /** null: from the task's start (t = 0 with an empty transcript). */
  fromState: Sha256.nullable(),
  steps: z.array(EpisodeStep),
  /** Branch points this run passed through, by state hash (every state is in the result's `states`). */
  branchPoints: z.array(z.strictObject({ state: Sha256, kind: BranchPointKind })),
  finalState: Sha256,
  submittedBy: SubmittedBy,
  exhausted: BudgetExhaustion.nullable(),
  /** The judge's verdict on the submitted workspace; the reward is 1 for `pass`, else 0. */
  verdict: GradeVerdict,
  grade: GradeResult,
  counters: BudgetCounters,
});
export type EpisodeRun = z.infer<typeof EpisodeRun>;

/** A state's value estimate: the pass rate of the continuations run from it. */
export const StateValue = z.strictObject({
  state: Sha256,
  kind: BranchPointKind,
  continuations: z.number().int().min(0),
  passes: z.number().int().min(0),
  passRate: z.number().min(0).max(1).nullable(),
});
export type StateValue = z.infer<typeof StateValue>;
