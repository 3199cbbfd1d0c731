import type { TaskSpec } from "../tasks/spec";
import { exactContentHash, normalizedContentHash, taskTokens } from "../tasks/fingerprint";
import { leakageReport, type LeakTask, type LeakageReport } from "../tasks/leakage";

type Visible = Pick<TaskSpec, "id" | "instruction" | "files">;

const leakTask = (t: Visible, part: LeakTask["part"]): LeakTask => ({
  taskId: t.id,
  part,
  tokens: taskTokens(t),
  exactHash: exactContentHash(t),
  normalizedHash: normalizedContentHash(t),
});

/**
 * Test tasks against what the experiment learned from (the tasks behind the SFT dataset, reported
 * as part "train") and selected on (dev): exact, normalized and 13-gram overlap, reusing the
 * split's leakage check.
 */
export function contaminationCheck(input: { test: readonly Visible[]; sft: readonly Visible[]; dev: readonly Visible[] }): LeakageReport {
  return leakageReport([...input.sft.map((t) => leakTask(t, "train")), ...input.dev.map((t) => leakTask(t, "dev")), ...input.test.map((t) => leakTask(t, "test"))]);
}
