import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import {
  canonicalJson,
  chainTranscript,
  EMPTY_TRANSCRIPT_HASH,
  initialObservation,
  makeState,
  sha256Hex,
  ToolCall,
  transcriptHashOf,
  type BranchPointKind,
  type BudgetCounters,
  type BudgetExhaustion,
  type EpisodeBudget,
  type EpisodeRun,
  type EpisodeState,
  type EpisodeStep,
  type GradeResult,
  type StepRole,
  type TaskSpec,
  type ToolResult,
} from "@agentlab/core";
import type { EnvironmentDeps } from "./deps";
import { EpisodeInfraError } from "./deps";
import { truncateObservation } from "./observe";
import { executeTool, type Executed } from "./tools";
import { Workspace } from "./workspace";

// The repair environment, the source of truth for episodes. It has the shape of TRL's
// `environment_factory` (GRPOTrainer): `reset()` starts an episode and returns its first message,
// each public tool method (list_files, read_file, edit_file, run_public_tests, submit) returns the
// text the model sees, and `reward` is read once the episode is over. The RL trainer will wrap it
// as a thin Python class whose reset() and five methods forward to this object over the agent's
// trainer channel, and whose reward function reads `reward`; nothing of the rules lives there.
//
// The budget is enforced here, never by the policy: every call costs a turn (a refused one too);
// run_public_tests is refused once its runs are spent; each observation is cut to its cap; when
// the turns or the transcript's size run out after a call, or the wall clock before one, the
// environment submits the workspace as it is. The verdict is the judge's, through the Grader.

export type ResumeFrom = { state: EpisodeState; transcript: readonly EpisodeStep[] };
export type PolicyView = {
  task: { id: string; instruction: string };
  firstObservation: string;
  /** Every step so far, a continuation's inherited prefix included. */
  transcript: readonly EpisodeStep[];
  seed: number;
};

type Submission = { grade: GradeResult; by: "policy" | "budget"; exhausted: BudgetExhaustion | null };

export class RepairEnvironment {
  private ws: Workspace | null = null;
  private steps: EpisodeStep[] = [];
  private prefix = 0;
  private counters: BudgetCounters = { turns: 0, testRuns: 0, contextChars: 0, wallMs: 0 };
  private seed = 0;
  private tree = "";
  private transcriptHash = EMPTY_TRANSCRIPT_HASH;
  private baseWallMs = 0;
  private startedAt = 0;
  private fromState: string | null = null;
  private current: EpisodeState | null = null;
  private branchPoints: { state: string; kind: BranchPointKind }[] = [];
  private submission: Submission | null = null;
  private first = "";

  constructor(
    private readonly deps: EnvironmentDeps,
    readonly task: TaskSpec,
    readonly budget: EpisodeBudget,
  ) {}

  private get now(): number {
    return this.deps.now ? this.deps.now() : performance.now();
  }

  /** A fresh episode (the task's visible files), or a continuation from a stored state with a new seed. */
  async reset(opts: { seed: number; from?: ResumeFrom }): Promise<string> {
    const root = mkdtempSync(join(this.deps.scratch, "episode-ws-"));
    const visible = [...this.task.files.map(({ path, content }) => ({ path, content })), ...this.task.public_tests];
    this.seed = opts.seed;
    this.submission = null;
    this.branchPoints = [];
    if (opts.from) {
      const { state, transcript } = opts.from;
      if (transcriptHashOf(transcript) !== state.transcriptHash || transcript.length !== state.t)
        throw new Error(`the transcript given does not match state ${state.hash}`);
      this.ws = this.deps.store.rebuild(state.treeHash, root);
      this.steps = [...transcript];
      this.counters = { ...state.counters };
      this.tree = state.treeHash;
      this.transcriptHash = state.transcriptHash;
      this.fromState = state.hash;
    } else {
      this.ws = Workspace.create(root, visible);
      this.steps = [];
      this.tree = this.deps.store.putTree(this.ws.files());
      this.transcriptHash = EMPTY_TRANSCRIPT_HASH;
      this.fromState = null;
    }
    this.first = initialObservation(this.task, this.ws.list());
    if (!opts.from) this.counters = { turns: 0, testRuns: 0, contextChars: this.first.length, wallMs: 0 };
    this.prefix = this.steps.length;
    this.baseWallMs = this.counters.wallMs;
    this.startedAt = this.now;
    this.current = this.recordState();
    if (!opts.from) this.branchPoints.push({ state: this.current.hash, kind: "start" });
    return this.first;
  }

  // ------------------------------------------------------------------ the tools (TRL: one method each)

  /** List the workspace's files. */
  list_files = (): Promise<string> => this.text({ tool: "list_files", args: {} });
  /** Read lines start..end (1-based, inclusive) of a file; without them, the whole file. */
  read_file = (path: string, start?: number, end?: number): Promise<string> =>
    this.text({ tool: "read_file", args: { path, ...(start ? { start } : {}), ...(end ? { end } : {}) } });
  /** Replace the one occurrence of `old` in `path` by `new`; an empty `old` creates the file. */
  edit_file = (path: string, old: string, replacement: string): Promise<string> =>
    this.text({ tool: "edit_file", args: { path, old, new: replacement } });
  /** Run the public tests on the workspace; a summary comes back. */
  run_public_tests = (): Promise<string> => this.text({ tool: "run_public_tests", args: {} });
  /** Submit the workspace to the hidden tests; the episode ends. */
  submit = (): Promise<string> => this.text({ tool: "submit", args: {} });

  /** 1 for a pass, 0 for any other verdict, null before the episode is over. */
  get reward(): number | null {
    return this.submission ? (this.submission.grade.verdict === "pass" ? 1 : 0) : null;
  }

  /** The workspace's folder (diagnostics and tests; a policy never sees it). */
  get root(): string | null {
    return this.ws?.root ?? null;
  }

  get done(): boolean {
    return this.submission !== null;
  }

  view(): PolicyView {
    return {
      task: { id: this.task.id, instruction: this.task.instruction },
      firstObservation: this.first,
      transcript: this.steps,
      seed: this.seed,
    };
  }

  private async text(raw: unknown): Promise<string> {
    return (await this.call(raw)).output;
  }

  // ------------------------------------------------------------------ one turn

  /** Executes one call as the policy sent it (parsed here: a malformed call is a refused turn). */
  async call(raw: unknown): Promise<ToolResult> {
    if (this.submission || !this.ws) throw new Error("the episode is over (or was never reset)");
    if (this.wallMs() >= this.budget.wallTimeS * 1000) return this.autoSubmit("wall_time");
    const parsed = ToolCall.safeParse(raw);
    const call = parsed.success ? parsed.data : asRawCall(raw);
    const t0 = this.now;
    let done: Executed;
    if (!parsed.success) done = { kind: "refused", refusal: "bad_call", output: `not a tool call: ${describe(raw)}` };
    else if (parsed.data.tool === "submit") {
      const grade = await this.judge();
      this.record("assistant", call, { kind: "ok", output: "submitted; the episode is over" }, t0);
      this.submission = { grade, by: "policy", exhausted: null };
      return this.lastResult();
    } else if (parsed.data.tool === "run_public_tests" && this.counters.testRuns >= this.budget.maxTestRuns)
      done = { kind: "refused", refusal: "test_budget", output: `no test runs left (${this.budget.maxTestRuns} used)` };
    else {
      if (parsed.data.tool === "run_public_tests") this.counters.testRuns += 1;
      done = await executeTool(this.deps, this.task, this.ws, parsed.data);
    }
    this.record("assistant", call, done, t0);
    if (done.kind === "ok" && done.testsFailed)
      this.branchPoints.push({ state: this.stateNow().hash, kind: "after_failed_tests" });
    const result = this.lastResult();
    if (this.counters.turns >= this.budget.maxTurns) await this.autoSubmit("turns");
    else if (this.counters.contextChars >= this.budget.maxContextChars) await this.autoSubmit("context");
    return result;
  }

  private async autoSubmit(reason: BudgetExhaustion): Promise<ToolResult> {
    const t0 = this.now;
    const grade = await this.judge();
    const output = `budget exhausted (${reason}): the workspace was submitted as it is`;
    this.record("environment", { tool: "submit", args: {} }, { kind: "ok", output }, t0, false);
    this.submission = { grade, by: "budget", exhausted: reason };
    return this.lastResult();
  }

  /** The workspace's files less the public tests, graded by the judge like every candidate. */
  private async judge(): Promise<GradeResult> {
    const ws = this.ws;
    if (!ws) throw new Error("no workspace");
    const publicPaths = new Set(this.task.public_tests.map((t) => t.path));
    const candidate = ws.files().filter((f) => !publicPaths.has(f.path));
    const cached = this.deps.grades?.get(this.tree);
    if (cached) return cached;
    const { refs, grader, isolation, limits, signal } = this.deps;
    const ref = await refs.get(this.task, { isolation, limits, given: this.deps.expectedTestIds, signal });
    if (!ref.ok) throw new EpisodeInfraError(ref.error, ref.kind === "infra_error" ? "infra_error" : "user_error");
    const grade = await grader.grade(this.task, candidate, {
      expectedIds: ref.ids,
      expectedSkips: ref.skipped,
      limits: ref.limits,
      isolation,
      signal,
    });
    if (grade.verdict === "infra_error") throw new EpisodeInfraError(grade.reasons.join("; "), "infra_error");
    this.deps.grades?.set(this.tree, grade);
    return grade;
  }

  private record(role: StepRole, call: EpisodeStep["call"], done: Executed, t0: number, countTurn = true): void {
    const ws = this.ws;
    if (!ws) throw new Error("no workspace");
    if (done.kind === "error") throw new EpisodeInfraError(done.output, "infra_error");
    const cut = truncateObservation(done.output, this.budget.maxObservationChars);
    const result: ToolResult = {
      status: done.kind,
      refusal: done.kind === "refused" ? done.refusal : null,
      output: cut.text,
      truncated: cut.truncated,
    };
    const before = this.tree;
    if (done.kind === "ok" && done.changed) this.tree = this.deps.store.putTree(ws.files());
    const step: EpisodeStep = {
      index: this.steps.length,
      role,
      call,
      result,
      resultHash: sha256Hex(canonicalJson(result)),
      snapshotBefore: before,
      snapshotAfter: this.tree,
      wallMs: this.now - t0,
    };
    this.steps.push(step);
    this.transcriptHash = chainTranscript(this.transcriptHash, step);
    if (countTurn) this.counters.turns += 1;
    this.counters.contextChars += canonicalJson(call).length + result.output.length;
    this.current = this.recordState();
  }

  private lastResult(): ToolResult {
    const last = this.steps[this.steps.length - 1];
    if (!last) throw new Error("no step yet");
    return last.result;
  }

  private wallMs(): number {
    return this.baseWallMs + (this.now - this.startedAt);
  }

  private recordState(): EpisodeState {
    this.counters.wallMs = Math.round(this.wallMs());
    const state = makeState({
      treeHash: this.tree,
      t: this.steps.length,
      transcriptHash: this.transcriptHash,
      counters: { ...this.counters },
      seed: this.seed,
    });
    this.deps.store.putState(state);
    return state;
  }

  private stateNow(): EpisodeState {
    if (!this.current) throw new Error("not reset");
    return this.current;
  }

  /** The finished run: the steps taken since reset, its branch points and the judge's verdict. */
  run(): EpisodeRun {
    const s = this.submission;
    if (!s) throw new Error("the episode is not over");
    return {
      seed: this.seed,
      fromState: this.fromState,
      steps: this.steps.slice(this.prefix),
      branchPoints: this.branchPoints,
      finalState: this.stateNow().hash,
      submittedBy: s.by,
      exhausted: s.exhausted,
      verdict: s.grade.verdict,
      grade: s.grade,
      counters: { ...this.counters },
    };
  }

  /** The steps from the task's start (a continuation's inherited prefix included). */
  transcript(): readonly EpisodeStep[] {
    return this.steps;
  }
}

function asRawCall(raw: unknown): { tool: string; args: unknown } {
  if (raw && typeof raw === "object" && "tool" in raw)
    return {
      tool: String((raw as { tool: unknown }).tool).slice(0, 100),
      args: (raw as { args?: unknown }).args ?? null,
    };
  return { tool: "?", args: raw ?? null };
}

const describe = (raw: unknown): string => {
  const text = JSON.stringify(raw) ?? String(raw);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
};
