import type { TaskSpec } from "../tasks/spec";
import { exactContentHash, normalizedContentHash, taskTokens } from "../tasks/fingerprint";
import { leakageReport, type LeakTask, type LeakageReport } from "../tasks/leakage";
import type { SplitPart } from "../tasks/split";

type Visible = Pick<TaskSpec, "id" | "instruction" | "files">;

/** One SFT sample as trained on: the task it was made for and every message's text. */
export type SftDoc = { taskId: string; ordinal: number; text: string; task: Visible | null };

const leakTask = (t: Visible, part: SplitPart): LeakTask => ({
  taskId: t.id,
  part,
  tokens: taskTokens(t),
  exactHash: exactContentHash(t),
  normalizedHash: normalizedContentHash(t),
});

// The sample's text (prompt with the buggy code, and the answer) tokenized like task code, so that
// its 13-grams line up with a task's code tokens; it never equals a task exactly, the task behind
// it (listed separately) carries the exact and normalized checks.
const sftDocTask = (d: SftDoc): LeakTask =>
  leakTask(
    { id: `sft:${d.taskId}#${d.ordinal}`, instruction: "", files: [{ path: "sample", role: "main", content: d.text }] },
    "train",
  );

function sftTasks(sft: readonly SftDoc[]): LeakTask[] {
  const behind = new Map<string, Visible>();
  for (const d of sft) if (d.task) behind.set(d.task.id, d.task);
  // Listed as "train": what the model learned from, whatever part the task claims to be in.
  return [...[...behind.values()].map((t) => leakTask({ ...t, id: `sft:${t.id}` }, "train")), ...sft.map(sftDocTask)];
}

/**
 * Test tasks against everything the experiment learned from or selected on: the split's train
 * tasks, the dev tasks, and the SFT data itself (the tasks behind its samples and the samples'
 * text); exact, normalized and 13-gram overlap, reusing the split's leakage check. SFT entries
 * are named `sft:<task>` (the task behind a sample) and `sft:<task>#<ordinal>` (a sample's text).
 */
export function contaminationCheck(input: {
  test: readonly Visible[];
  train: readonly Visible[];
  dev: readonly Visible[];
  sft: readonly SftDoc[];
}): LeakageReport {
  return leakageReport([
    ...input.train.map((t) => leakTask(t, "train")),
    ...input.dev.map((t) => leakTask(t, "dev")),
    ...sftTasks(input.sft),
    ...input.test.map((t) => leakTask(t, "test")),
  ]);
}

/**
 * Dev tasks against the SFT data: a dev task the model was trained on makes selection measure
 * memorisation. In the result, `testTaskId` is the dev task (the checked side).
 */
export function devContaminationCheck(input: { dev: readonly Visible[]; sft: readonly SftDoc[] }): LeakageReport {
  return leakageReport([...sftTasks(input.sft), ...input.dev.map((t) => leakTask(t, "test"))]);
}
