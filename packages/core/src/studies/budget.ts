import { DomainError } from "../errors";
import { mulberry32 } from "../stats/random";

// Token matching (brief §11): arms of one question train on the same number of supervised tokens,
// so a difference between them is not "more data". Whole tasks are drawn (a task's samples stay
// together, like source groups in splits), stratified by source group so a budget does not end up
// as the few groups with the longest answers, until the total lies within B ± tolerance.

/** One SFT sample with its supervised-token count as the base model's tokenizer measured it. */
export type BudgetSample = { taskId: string; group: string; tokens: number };

export type BudgetResult = {
  /** Drawn tasks, in draw order. */
  taskIds: string[];
  /** Indices into the input of every sample of the drawn tasks, ascending. */
  sampleIndices: number[];
  tokens: number;
  target: number;
  tolerance: number;
  /** Relative gap (tokens − B) / B. */
  gap: number;
  /** Drawn tasks per source group, against the pool's. */
  groups: Record<string, { drawn: number; pool: number }>;
};

/** ±0.5%: the matching the study report states. */
export const BUDGET_TOLERANCE = 0.005;

type Task = { id: string; group: string; tokens: number; samples: number[]; key: number };

/**
 * Draws whole tasks to B supervised tokens. Within each source group the tasks are shuffled
 * (seeded); the groups are interleaved systematically (the k-th of n tasks of a group sits at
 * (k + u)/n, u drawn per group), so any prefix of the order holds each group in proportion to its
 * size. Tasks are taken in that order; one that would overshoot B·(1 + tolerance) is skipped, and
 * the draw stops as soon as the total reaches B·(1 − tolerance). Refused when the pool cannot reach it.
 */
export function budget(
  samples: readonly BudgetSample[],
  target: number,
  seed: number,
  tolerance = BUDGET_TOLERANCE,
): BudgetResult {
  if (!(Number.isFinite(target) && target > 0))
    throw new DomainError("BAD_REQUEST", "budget: B must be a positive number of tokens");
  if (!(tolerance >= 0 && tolerance < 1)) throw new DomainError("BAD_REQUEST", "budget: tolerance must lie in [0, 1)");
  const byTask = new Map<string, Task>();
  samples.forEach((s, i) => {
    if (!(Number.isInteger(s.tokens) && s.tokens >= 0))
      throw new DomainError("BAD_REQUEST", `budget: sample ${i} (task ${s.taskId}) has no token count`);
    const t = byTask.get(s.taskId) ?? { id: s.taskId, group: s.group, tokens: 0, samples: [], key: 0 };
    if (t.group !== s.group)
      throw new DomainError("BAD_REQUEST", `budget: task ${s.taskId} is in two source groups (${t.group}, ${s.group})`);
    t.tokens += s.tokens;
    t.samples.push(i);
    byTask.set(s.taskId, t);
  });
  const lo = target * (1 - tolerance);
  const hi = target * (1 + tolerance);
  const total = [...byTask.values()].reduce((s, t) => s + t.tokens, 0);
  if (total < lo)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `budget: ${target} supervised tokens is unreachable: the pool holds ${total} over ${byTask.size} tasks`,
    );
  const rand = mulberry32(seed);
  const groups = new Map<string, Task[]>();
  for (const t of [...byTask.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)))
    (groups.get(t.group) ?? groups.set(t.group, []).get(t.group) ?? []).push(t);
  const order: Task[] = [];
  for (const name of [...groups.keys()].sort()) {
    const ts = groups.get(name) ?? [];
    for (let i = ts.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [ts[i], ts[j]] = [ts[j] as Task, ts[i] as Task];
    }
    const u = rand();
    ts.forEach((t, k) => {
      t.key = (k + u) / ts.length;
      order.push(t);
    });
  }
  order.sort((a, b) => a.key - b.key || (a.group < b.group ? -1 : a.group > b.group ? 1 : 0));
  const drawn: Task[] = [];
  let tokens = 0;
  for (const t of order) {
    if (tokens >= lo) break;
    if (tokens + t.tokens > hi) continue;
    drawn.push(t);
    tokens += t.tokens;
  }
  if (tokens < lo) tokens = closeGap(order, drawn, tokens, lo, hi);
  if (tokens < lo)
    throw new DomainError(
      "PRECONDITION_FAILED",
      `budget: no draw of whole tasks reaches ${target} ± ${(100 * tolerance).toFixed(1)}% supervised tokens ` +
        `(got ${tokens}; tasks are too long for the tolerance)`,
    );
  const counts: Record<string, { drawn: number; pool: number }> = {};
  for (const [name, ts] of groups) counts[name] = { drawn: 0, pool: ts.length };
  for (const t of drawn) {
    const c = counts[t.group];
    if (c) c.drawn++;
  }
  return {
    taskIds: drawn.map((t) => t.id),
    sampleIndices: drawn.flatMap((t) => t.samples).sort((a, b) => a - b),
    tokens,
    target,
    tolerance,
    gap: (tokens - target) / target,
    groups: counts,
  };
}

/**
 * The greedy pass ended short of the window: swap one drawn task (latest first, so the earliest
 * and most representative draws stay) for an undrawn one that lands the total inside [lo, hi].
 * Returns the new total (unchanged when no single swap does it).
 */
function closeGap(order: readonly Task[], drawn: Task[], tokens: number, lo: number, hi: number): number {
  const taken = new Set(drawn);
  const rest = order.filter((t) => !taken.has(t));
  for (let i = drawn.length - 1; i >= 0; i--) {
    const d = drawn[i] as Task;
    const u = rest.find((t) => tokens - d.tokens + t.tokens >= lo && tokens - d.tokens + t.tokens <= hi);
    if (u) {
      drawn[i] = u;
      return tokens - d.tokens + u.tokens;
    }
  }
  return tokens;
}
