// The learning proof's direct evaluation path, shared by the learning-proof test's arms and the
// demo's A/A control: generate with the trainer (base or a trained snapshot), parse, grade with the
// real judge, and compare with the report's own clustered statistics. Each answer keeps the hash of
// the rendered prompt it was generated for (the trainer's task_prompts_sha256), so pairing can
// refuse a row whose answer was generated for another task (pairOutcomes).
import {
  comparePaired,
  mainPaths,
  parseAnswer,
  renderRepairPrompt,
  type PairedComparison,
  type TaskSpec,
  type TrainerEvent,
} from "@agentlab/core";
import type { Grader } from "../apps/agent/src/grading/grader";
import { runPython } from "../apps/agent/src/trainer/python";

export type Snapshot = { path: string; sha256: string };
export type Sampling = { seed: number; temperature: number };

/** One model's graded answers on the tasks: pass (1) or fail (0), and the prompt hash of each answer. */
export type Outcomes = Map<string, { pass: number; promptSha256: string | null }>;

export function generateSpec(base: string, tasks: readonly TaskSpec[], adapter?: Snapshot, sampling?: Sampling) {
  return {
    base_model: base,
    prompts: tasks.map((t) => ({ task_id: t.id, messages: renderRepairPrompt(t) })),
    max_new_tokens: 80,
    backend: "transformers" as const,
    device: "cpu" as const,
    batch_size: 16,
    ...(adapter ? { adapter: adapter.path, expected_adapter_sha256: adapter.sha256 } : {}),
    ...(sampling ? { do_sample: true, temperature: sampling.temperature, top_p: 1, seed: sampling.seed } : {}),
  };
}

export type Answers = Map<string, { text: string; promptSha256: string | null }>;

/** The answers of a generate run by task id, each with its prompt hash from the run's summary. */
export function answersOf(events: readonly TrainerEvent[], hashes: Record<string, string> = {}): Answers {
  return new Map(
    events.flatMap((e) =>
      e.event === "generation" ? [[e.task_id, { text: e.text, promptSha256: hashes[e.task_id] ?? null }] as const] : [],
    ),
  );
}

export async function generate(python: string, spec: ReturnType<typeof generateSpec>): Promise<Answers> {
  const events: TrainerEvent[] = [];
  const res = await runPython("generate", spec, { python, onEvent: (e) => events.push(e) });
  return answersOf(events, res.generate?.task_prompts_sha256);
}

/** 1 when the answer parses and the real judge passes it. All at once: the grader's sandboxes share the queue. */
export async function grade(grader: Grader, tasks: readonly TaskSpec[], answers: Answers): Promise<Outcomes> {
  const scores = await Promise.all(
    tasks.map(async (t) => {
      const a = answers.get(t.id);
      const parsed = parseAnswer(a?.text ?? "", mainPaths(t));
      const pass = parsed.ok
        ? (await grader.grade(t, parsed.files, { expectedIds: null })).verdict === "pass"
          ? 1
          : 0
        : 0;
      return [t.id, { pass, promptSha256: a?.promptSha256 ?? null }] as const;
    }),
  );
  return new Map(scores);
}

/**
 * The paired rows of two evaluations of the same tasks, clustered as the report clusters them
 * (declared cluster, else source group). Refuses a row whose two answers were generated for
 * different rendered prompts: a task id shifted on one side would otherwise pair one task's base
 * answer with another task's adapter answer and the statistics would read it as a change.
 */
export function pairOutcomes(tasks: readonly TaskSpec[], base: Outcomes, treated: Outcomes) {
  return tasks.map((t) => {
    const b = base.get(t.id);
    const a = treated.get(t.id);
    if (!b || !a) throw new Error(`task ${t.id} has no answer on one side`);
    if (b.promptSha256 !== a.promptSha256 || !b.promptSha256)
      throw new Error(
        `refusing to pair task ${t.id}: its answers were generated for different prompts (${String(b.promptSha256).slice(0, 12)} vs ${String(a.promptSha256).slice(0, 12)})`,
      );
    return { group: t.source_group, cluster: t.cluster, base: b.pass, treated: a.pass };
  });
}

export const compareOutcomes = (tasks: readonly TaskSpec[], base: Outcomes, treated: Outcomes): PairedComparison =>
  comparePaired(pairOutcomes(tasks, base, treated), { iterations: 2000, seed: 0 });

export const passRateOf = (o: Outcomes) => [...o.values()].reduce((s, x) => s + x.pass, 0) / Math.max(1, o.size);
