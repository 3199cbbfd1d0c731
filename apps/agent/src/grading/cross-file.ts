import { CrossFileAnswer, type TaskSpec } from "@agentlab/core";
import type { SandboxConfig } from "../sandbox/types";
import { runGraderHelper } from "./helper-run";

// Client of apps/agent/grader/cross_file.py for the admission audit: one task line in, one answer
// line out, naming the dependency symbols the task's reference fix reads.

/** The `uses` of cross_file.py's answer for `taskId`; anything but exactly that one answer is an error. */
export function parseCrossFile(stdout: string, taskId: string): string[] {
  const lines = stdout.split("\n").filter((l) => l.trim() !== "");
  if (lines.length !== 1) throw new Error(`cross-file check: expected one answer line, got ${lines.length}`);
  let raw: unknown;
  try {
    raw = JSON.parse(lines[0] ?? "");
  } catch {
    throw new Error(`cross-file check: unreadable output ${stdout.slice(0, 200)}`);
  }
  const answer = CrossFileAnswer.safeParse(raw);
  if (!answer.success) {
    const issue = answer.error.issues[0];
    throw new Error(
      `cross-file check: answer field "${issue?.path.join(".") ?? "?"}" is invalid: ${issue?.message ?? "?"}`,
    );
  }
  if (answer.data.id !== taskId)
    throw new Error(`cross-file check: answer field "id" is ${answer.data.id}, expected ${taskId}`);
  return answer.data.uses;
}

export async function crossFileSandboxed(cfg: SandboxConfig, task: TaskSpec): Promise<string[]> {
  const stdout = await runGraderHelper(cfg, "cross_file.py", `${JSON.stringify(task)}\n`, {
    what: "cross-file check",
    wallTimeoutS: 30,
    maxOutputBytes: 1 << 20,
  });
  return parseCrossFile(stdout, task.id);
}
