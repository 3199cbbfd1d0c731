import { createServer, type Server, type Socket } from "node:net";
import { createInterface } from "node:readline";
import {
  GrpoRewardRequest,
  mainPaths,
  parseAnswer,
  taskFingerprint,
  type GradeBatchItemResult,
  type GradeBatchJobPayload,
  type GrpoItemVerdict,
  type GrpoRewardResponse,
  type JobPayload,
} from "@agentlab/core";
import type { JobHandler, JobContext } from "./types";

// The grpo trainer's reward requests, answered by this agent's isolated judge: the trainer sends
// each batch of completions as one JSON line on a Unix socket; every completion's answer is
// parsed into files (no files: `unparseable`) and the parsed ones are graded in grade-batch jobs
// run in-process by the agent's own grade-batch handler (the same judge sessions, reference ids
// and limits as any evaluation). One verdict per completion goes back, in order.

type GrpoTask = JobPayload<"grpo">["tasks"][number];

/** The most items one grade-batch payload carries (core GRADE_BATCH_MAX_ITEMS). */
const BATCH_MAX = 64;

/** Judge reasons the audit counts beside the verdict. */
const FLAG_PATTERNS: [RegExp, string][] = [
  [/refus|forbidden|not allowed/i, "refused"],
  [/canary/i, "canary"],
  [/conftest|plugin|pytest/i, "test_harness"],
];

function flagsOf(reasons: readonly string[]): string[] {
  const out = new Set<string>();
  for (const r of reasons) for (const [re, flag] of FLAG_PATTERNS) if (re.test(r)) out.add(flag);
  return [...out];
}

export function verdictOf(r: GradeBatchItemResult | undefined): GrpoItemVerdict {
  if (!r) return { verdict: "infra_error", flags: ["no_result"] };
  if (r.status === "error") return { verdict: "infra_error", flags: [r.reason] };
  return { verdict: r.grade.verdict, flags: flagsOf(r.grade.reasons) };
}

export type RewardStats = { batches: number; graded: number; gradeTimeS: number };

/**
 * Grades one request's completions: unparseable ones get their verdict here, the rest go to the
 * grade-batch handler in chunks of at most BATCH_MAX.
 */
export async function gradeCompletions(
  ctx: JobContext,
  gradeBatch: JobHandler,
  tasks: Map<string, GrpoTask>,
  req: GrpoRewardRequest,
): Promise<GrpoItemVerdict[]> {
  const verdicts: (GrpoItemVerdict | undefined)[] = req.items.map(() => undefined);
  const pending: { index: number; task: GrpoTask; files: { path: string; content: string }[] }[] = [];
  req.items.forEach((item, index) => {
    const task = tasks.get(item.task_id);
    if (!task) throw new Error(`reward request names task ${item.task_id}, which this job does not train on`);
    const answer = parseAnswer(item.completion, mainPaths(task.task));
    if (!answer.ok) verdicts[index] = { verdict: "unparseable", flags: [] };
    else pending.push({ index, task, files: answer.files });
  });
  for (let k = 0; k < pending.length; k += BATCH_MAX) {
    const chunk = pending.slice(k, k + BATCH_MAX);
    // by fingerprint: two task ids with the same content are one task to the grader
    const used = new Map(chunk.map((p) => [taskFingerprint(p.task.task), p.task]));
    const payload: GradeBatchJobPayload = {
      tasks: [...used].map(([fingerprint, t]) => ({
        fingerprint,
        task: t.task,
        ...(t.expectedTestIds ? { expectedTestIds: t.expectedTestIds } : {}),
      })),
      items: chunk.map((p) => ({
        key: `r${req.id}-${p.index}`,
        task: taskFingerprint(p.task.task),
        candidate: p.files,
        limits: p.task.limits,
        isolation: p.task.isolation,
      })),
    };
    const out = await gradeBatch({ ...ctx, type: "grade-batch", payload, progress: () => {} });
    const items = (out.result?.items ?? []) as GradeBatchItemResult[];
    // A batch the handler refused or cut short: its ungraded items come back as infra_error (masked).
    if (out.reason !== "succeeded")
      ctx.log.warn({ reason: out.reason, error: out.error }, "reward batch not fully graded");
    const byKey = new Map(items.map((r) => [r.key, r]));
    for (const p of chunk) verdicts[p.index] = verdictOf(byKey.get(`r${req.id}-${p.index}`));
  }
  return verdicts.map((v) => v ?? { verdict: "infra_error", flags: ["no_result"] });
}

/**
 * The shuffled-reward control: each consecutive group of `groupSize` (TRL lays a prompt's
 * completions out together) permuted among itself (Fisher-Yates with `random`), so every group
 * keeps its verdicts' counts and none moves to another prompt's group.
 */
export function shuffleWithinGroups<T>(items: readonly T[], groupSize: number, random: () => number): T[] {
  const out = [...items];
  for (let start = 0; start < out.length; start += groupSize) {
    const end = Math.min(out.length, start + groupSize);
    for (let i = end - 1; i > start; i--) {
      const j = start + Math.floor(random() * (i - start + 1));
      const a = out[i];
      const b = out[j];
      if (a === undefined || b === undefined) continue;
      out[i] = b;
      out[j] = a;
    }
  }
  return out;
}

/** Listens on `path`; each line from the trainer is a request, each answer one line back. */
export async function serveRewards(
  path: string,
  answer: (req: GrpoRewardRequest) => Promise<GrpoItemVerdict[]>,
  stats: RewardStats,
): Promise<Server> {
  const serve = (sock: Socket) => {
    // one request at a time per connection: the trainer waits for each answer
    let queue = Promise.resolve();
    createInterface({ input: sock }).on("line", (line) => {
      queue = queue.then(async () => {
        let reply: GrpoRewardResponse;
        const started = performance.now();
        let id = 0;
        try {
          const req = GrpoRewardRequest.parse(JSON.parse(line));
          id = req.id;
          const verdicts = await answer(req);
          const gradeTimeS = (performance.now() - started) / 1000;
          stats.batches += 1;
          stats.graded += verdicts.length;
          stats.gradeTimeS += gradeTimeS;
          reply = { id, verdicts, grade_time_s: gradeTimeS };
        } catch (err) {
          reply = { id, error: err instanceof Error ? err.message : String(err) };
        }
        if (!sock.destroyed) sock.write(`${JSON.stringify(reply)}\n`);
      });
    });
    sock.on("error", () => sock.destroy());
  };
  const server = createServer(serve);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  return server;
}
