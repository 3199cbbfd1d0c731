import type { GradeVerdict, KilledMutant } from "../grading/schemas";
import type { TaskSpec } from "../tasks";
import { formatAnswer } from "../teacher/answer";
import { failingLayer, type FailingLayer, type RejectedAnswer } from "./pairs";

// Near-miss rejected answers: the task's own buggy main file and the mutants of its reference that
// the admission audit saw the tests kill. Each is one bug away from a passing program, so a pair
// against a verified answer holds the repair itself (pairs against broken or syntax-failing samples
// teach "write valid code", not the fix). The labels are the audit's verdicts, never guessed.

/** The most near-miss pairs one task gives (the buggy file first, then killed mutants). */
export const NEAR_MISS_PAIRS_PER_TASK = 4;

/** What a task's newest admission audit stored: the buggy file's verdict and its killed mutants. */
export type NearMissAudit = {
  buggyVerdict: GradeVerdict;
  buggyFailingTests: readonly string[];
  killed: readonly KilledMutant[];
  /** How the audit graded (a verdict from in-process grading is forgeable: such a task gives no pair). */
  isolation: string;
};

// A mutant caught by the hidden tests is the closest to a real repair; a public-test failure next.
const LAYER_ORDER: Record<FailingLayer, number> = { hidden: 0, public: 1, limits: 2, syntax: 3, tampered: 4 };

/**
 * The task's near-miss rejected answers in the answer format (every MAIN file, the mutated one
 * replaced): the buggy file first, then killed mutants by failing layer (hidden first), path and line.
 * A mutant whose verdict is not a model failure (an infra error) is left out.
 */
export function nearMissRejected(
  task: Pick<TaskSpec, "id" | "files" | "reference">,
  audit: NearMissAudit,
): RejectedAnswer[] {
  const mains = task.files.filter((f) => f.role === "main");
  const out: RejectedAnswer[] = [
    {
      taskId: task.id,
      source: "buggy",
      modelKey: "buggy",
      sample: 0,
      text: formatAnswer(mains.map((f) => ({ path: f.path, content: f.content }))),
      verdict: audit.buggyVerdict,
      tests: [],
      failedTestIds: audit.buggyFailingTests,
    },
  ];
  const reference = new Map(task.reference.map((r) => [r.path, r.content]));
  const ranked = audit.killed
    .map((m) => ({ m, layer: failingLayer(m.verdict) }))
    .filter((x): x is { m: KilledMutant; layer: FailingLayer } => x.layer !== null)
    .filter((x) => mains.some((f) => f.path === x.m.path))
    .sort(
      (a, b) =>
        LAYER_ORDER[a.layer] - LAYER_ORDER[b.layer] ||
        (a.m.path < b.m.path ? -1 : a.m.path > b.m.path ? 1 : 0) ||
        a.m.line - b.m.line ||
        (a.m.operator < b.m.operator ? -1 : a.m.operator > b.m.operator ? 1 : 0),
    );
  for (const [i, { m }] of ranked.entries()) {
    const files = mains.map((f) => ({
      path: f.path,
      content: f.path === m.path ? m.source : (reference.get(f.path) ?? f.content),
    }));
    out.push({
      taskId: task.id,
      source: "mutant",
      modelKey: "mutant",
      sample: i,
      text: formatAnswer(files),
      verdict: m.verdict,
      tests: [],
      failedTestIds: m.failingTests,
    });
  }
  return out;
}
