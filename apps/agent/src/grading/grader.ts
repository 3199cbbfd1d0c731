import { createHash, randomBytes } from "node:crypto";
import {
  decideVerdict,
  DEFAULT_GRADE_LIMITS,
  GRADER_VERSION,
  GradeLimits,
  type CandidateFile,
  type GradeResult,
  type GradingIsolation,
  type TaskSpec,
  type TestOutcome,
} from "@agentlab/core";
import { Zygote } from "../sandbox/zygote";
import {
  emptyResponse,
  lingerKey,
  type RunnerRequest,
  type RunnerResponse,
  type RunnerTest,
} from "../sandbox/runner-wire";
import type { SandboxConfig } from "../sandbox/types";

// Three-layer grading (syntax → public tests → hidden tests) by a judge the candidate cannot
// reach (brief §5, docs/grading.md): the tests run in a judge process, the candidate's module in
// a separate sandboxed process that never sees the tests or the reference. The candidate side is
// rebuilt for every candidate from the task's pristine files with only the main files replaced.

export type GradeOptions = {
  /** Ids from the reference run; null computes nothing and skips the id-set check (reference runs). */
  expectedIds: readonly string[] | null;
  /** Tests the reference skipped: the same skip is no failure of the candidate. */
  expectedSkips?: readonly string[];
  limits?: Partial<GradeLimits>;
  /** The task's mode from its audit; default the isolated judge. */
  isolation?: GradingIsolation;
  /** The job's signal: an abort (shutdown, cancel) kills the sandbox and yields infra_error. */
  signal?: AbortSignal;
  /** A session's result for its candidate `index`, as soon as it is known (progress). */
  onResult?: (index: number, result: GradeResult) => void;
};

/** The candidate's files restricted to the task's main files; everything else is reported and ignored. */
export function buildWorkspace(
  task: TaskSpec,
  candidate: CandidateFile[],
): { files: CandidateFile[]; main: CandidateFile[]; ignored: string[] } {
  const mainPaths = new Set(task.files.filter((f) => f.role === "main").map((f) => f.path));
  const byPath = new Map<string, string>();
  const ignored: string[] = [];
  for (const c of candidate) {
    if (mainPaths.has(c.path)) byPath.set(c.path, c.content);
    else ignored.push(c.path);
  }
  const files = task.files.map((f) => ({
    path: f.path,
    content: f.role === "main" ? (byPath.get(f.path) ?? f.content) : f.content,
  }));
  return { files, main: files.filter((f) => mainPaths.has(f.path)), ignored };
}

export function makeCanary(task: TaskSpec): { path: string; content: string; id: string } {
  const taken = new Set([...task.files, ...task.public_tests, ...task.hidden_tests].map((f) => f.path));
  for (;;) {
    const tag = randomBytes(6).toString("hex");
    const path = `test_${tag}.py`;
    if (taken.has(path)) continue;
    return { path, id: `test_${tag}::test_${tag}`, content: `def test_${tag}():\n    assert False, "canary"\n` };
  }
}

const asOutcomes = (tests: RunnerTest[] | null): TestOutcome[] | null =>
  tests?.map((t) => ({
    id: t.id,
    layer: t.layer === "public" || t.layer === "hidden" || t.layer === "canary" ? t.layer : "hidden",
    outcome:
      t.outcome === "passed" || t.outcome === "failed" || t.outcome === "error" || t.outcome === "skipped"
        ? t.outcome
        : "error",
    message: t.message ?? "",
  })) ?? null;

/** How long a sandbox keeps a single grade's judge session open for the same task's next grade. */
export const DEFAULT_LINGER_MS = 1000;
/** Canaries kept per task for lingering sessions: a task's next grade must send the same request. */
const CANARIES_KEPT = 256;

export class Grader {
  private readonly idle: Zygote[] = [];
  private readonly waiting: ((z: Zygote) => void)[] = [];
  private readonly all: Zygote[] = [];
  private readonly limits: GradeLimits;
  /** The judge's canary per task (insertion order: the oldest goes first), so that grades of one task
   * in a row are one request and the sandbox's lingering session takes them (zygote.ts). */
  private readonly canaries = new Map<string, ReturnType<typeof makeCanary>>();

  constructor(
    private readonly cfg: SandboxConfig,
    opts: { workers: number; limits?: Partial<GradeLimits>; lingerMs?: number },
  ) {
    this.limits = GradeLimits.parse({ ...DEFAULT_GRADE_LIMITS, ...opts.limits });
    for (let i = 0; i < Math.max(1, opts.workers); i++) {
      const z = new Zygote(cfg, this.limits, opts.lingerMs ?? DEFAULT_LINGER_MS);
      this.all.push(z);
      this.idle.push(z);
    }
  }

  get backend() {
    return this.cfg.backend;
  }

  /** How many candidates it grades at once (its warm sandboxes). */
  get workers(): number {
    return this.all.length;
  }

  /** An idle sandbox, the one whose lingering session is for `key` when there is one. */
  private acquire(key?: string): Promise<Zygote> {
    const at = key === undefined ? -1 : this.idle.findIndex((x) => x.lingeringOn === key);
    const z = at >= 0 ? this.idle.splice(at, 1)[0] : this.idle.pop();
    if (z) return Promise.resolve(z);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(z: Zygote): void {
    const next = this.waiting.shift();
    if (next) next(z);
    else this.idle.push(z);
  }

  async runRaw(req: RunnerRequest, signal?: AbortSignal): Promise<RunnerResponse> {
    const z = await this.acquire(req.isolation === "judge" ? lingerKey(req) : undefined);
    try {
      return await z.request(req, signal);
    } catch (e) {
      return emptyResponse({ infra_error: e instanceof Error ? e.message : String(e) });
    } finally {
      this.release(z);
    }
  }

  async grade(task: TaskSpec, candidate: CandidateFile[], opts: GradeOptions): Promise<GradeResult> {
    const [one] = await this.gradeSession(task, [candidate], opts);
    if (!one) throw new Error("a judge session answered no candidate");
    return one;
  }

  /**
   * Several candidates of one task in one judge session (one warm sandbox, the workspace made
   * once, a fresh judge and candidate process per candidate): one result per candidate, in order.
   * The in-process mode grades one candidate per request. After an abort, the candidates the
   * session never started get no result (the array is shorter).
   */
  async gradeSession(task: TaskSpec, candidates: CandidateFile[][], opts: GradeOptions): Promise<GradeResult[]> {
    const asked = GradeLimits.parse({ ...this.limits, ...opts.limits });
    // A reference run measures the task: only the wall clock bounds its tests, never the per-test
    // budget meant for candidates (derived from this run: budgetFromReference).
    const limits =
      opts.expectedIds === null ? { ...asked, testTimeoutS: Math.max(asked.testTimeoutS, asked.wallTimeoutS) } : asked;
    const isolation = opts.isolation ?? "judge";
    const canary = this.canaryFor(task, limits, isolation);
    const tests = [
      ...task.public_tests.map((t) => ({ ...t, layer: "public" as const })),
      ...task.hidden_tests.map((t) => ({ ...t, layer: "hidden" as const })),
      { path: canary.path, content: canary.content, layer: "canary" as const },
    ];
    const support = task.files.filter((f) => f.role !== "main").map(({ path, content }) => ({ path, content }));
    const original = task.files.filter((f) => f.role === "main").map(({ path, content }) => ({ path, content }));
    const spaces = candidates.map((c) => buildWorkspace(task, c));
    const request = (main: CandidateFile[]): RunnerRequest => ({
      candidate: main,
      original,
      support,
      tests,
      limits,
      isolation,
    });
    const answers =
      isolation === "judge" && spaces.length > 1
        ? await this.runSession(
            request(spaces[0]?.main ?? []),
            spaces.slice(1).map((w) => w.main),
            opts.signal,
            (i, res) => opts.onResult?.(i, this.resultOf(res, spaces[i]?.ignored ?? [], isolation, canary.id, opts)),
          )
        : await Promise.all(spaces.map((w) => this.runRaw(request(w.main), opts.signal)));
    return answers
      .filter((res) => !res.unsent)
      .map((res, i) => this.resultOf(res, spaces[i]?.ignored ?? [], isolation, canary.id, opts));
  }

  /**
   * In the judge, one canary per task and limits (the candidate never sees the tests, so it never
   * learns it; a session shares one already); in-process, where the candidate runs beside the
   * tests, a fresh one per grade.
   */
  private canaryFor(task: TaskSpec, limits: GradeLimits, isolation: GradingIsolation) {
    if (isolation !== "judge") return makeCanary(task);
    const key = createHash("sha256")
      .update(JSON.stringify([task.files, task.public_tests, task.hidden_tests, limits]))
      .digest("hex");
    const kept = this.canaries.get(key);
    if (kept) return kept;
    const made = makeCanary(task);
    if (this.canaries.size >= CANARIES_KEPT) this.canaries.delete(this.canaries.keys().next().value ?? "");
    this.canaries.set(key, made);
    return made;
  }

  private async runSession(
    req: RunnerRequest,
    more: CandidateFile[][],
    signal: AbortSignal | undefined,
    onAnswer: (index: number, res: RunnerResponse) => void,
  ) {
    const z = await this.acquire();
    try {
      return await z.session(req, more, signal, onAnswer);
    } catch (e) {
      const error = emptyResponse({ infra_error: e instanceof Error ? e.message : String(e) });
      return [req, ...more].map(() => ({ ...error }));
    } finally {
      this.release(z);
    }
  }

  private resultOf(
    res: RunnerResponse,
    ignored: string[],
    isolation: GradingIsolation,
    canaryId: string,
    opts: GradeOptions,
  ): GradeResult {
    const decision = decideVerdict({
      interrupted: res.interrupted,
      events: res.events,
      infraError: res.infra_error,
      syntaxErrors: res.syntax_errors ?? [],
      limit: res.limit,
      limitDetail: res.limit_detail ?? "",
      runnerLost: res.runner_lost,
      exitCode: res.exit_code,
      junit: asOutcomes(res.junit),
      plugin: asOutcomes(res.plugin),
      canaryId,
      expectedIds: opts.expectedIds,
      expectedSkips: opts.expectedSkips ?? [],
    });
    const unsandboxed = this.cfg.backend !== "bwrap";
    return {
      verdict: decision.verdict,
      backend: this.cfg.backend,
      isolation,
      unsandboxed,
      graderVersion: GRADER_VERSION,
      reasons: decision.reasons,
      tests: (asOutcomes(res.junit) ?? []).filter((t) => t.layer !== "canary"),
      ignoredCandidatePaths: ignored,
      exitCode: res.exit_code,
      signal: res.signal,
      stdoutTail: (res.stdout ?? "").slice(-4000),
      stderrTail: (res.stderr ?? "").slice(-2000),
      candidateOutputTail: (res.candidate_output ?? "").slice(-4000),
      wallTimeMs: res.wall_ms ?? 0,
      cpuTimeMs: res.cpu_ms,
      peakMemoryKb: res.cgroup_peak_kb ?? res.maxrss_kb,
      judgeStart: res.judge_start,
      candidateStart: res.candidate_start,
    };
  }

  /** Ids the reference solution produces (canary excluded), those it skips, and its own grade result. */
  async referenceIds(
    task: TaskSpec,
    limits?: Partial<GradeLimits>,
    opts: { isolation?: GradingIsolation; signal?: AbortSignal } = {},
  ): Promise<{ ids: string[]; skipped: string[]; result: GradeResult }> {
    const result = await this.grade(task, task.reference, { expectedIds: null, limits, ...opts });
    const skipped = result.tests.filter((t) => t.outcome === "skipped").map((t) => t.id);
    return { ids: result.tests.map((t) => t.id).sort(), skipped: skipped.sort(), result };
  }

  /**
   * Candidates' limits after a reference run: the per-test budget at least 3× the reference's wall
   * clock (a correct but slower program must not time out where the reference barely fits), and a
   * wall clock with room for that. Never below what was asked.
   */
  budgetFromReference(reference: GradeResult, limits?: Partial<GradeLimits>): Partial<GradeLimits> {
    const asked = GradeLimits.parse({ ...this.limits, ...limits });
    const ref = (3 * reference.wallTimeMs) / 1000;
    return {
      ...limits,
      testTimeoutS: Math.min(600, Math.max(asked.testTimeoutS, ref)),
      wallTimeoutS: Math.min(600, Math.max(asked.wallTimeoutS, ref + 2)),
    };
  }

  /** Every process of every warm sandbox, and how often they were started (diagnostics). */
  sandboxes(): { processes: number[]; starts: number; replacedBecause: string | null }[] {
    return this.all.map((z) => ({ processes: z.processes(), starts: z.starts, replacedBecause: z.replacedBecause }));
  }

  close(): void {
    for (const z of this.all) z.stop();
  }
}
