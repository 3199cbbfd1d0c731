import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { TaskSpec, type GradeResult } from "@agentlab/core";
import { Grader } from "../grading/grader";
import { selfTest } from "../sandbox/selftest";
import type { SandboxConfig } from "../sandbox/types";

// `agentlab-agent grade --task TASK.json --candidate FILE [--json] [--backend bwrap|process]`:
// grades one candidate offline and prints the verdict. Exit 0 on pass, 1 on any other verdict,
// 2 on usage errors.

const USAGE = "usage: agentlab-agent grade --task TASK.json --candidate FILE [--json] [--backend bwrap|process]";
export const defaultGraderDir = (): string => resolve(dirname(fileURLToPath(import.meta.url)), "../../grader");

export async function gradeCommand(argv: string[]): Promise<number> {
  const opt = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const taskPath = opt("task");
  const candPath = opt("candidate");
  const backend = opt("backend") ?? "bwrap";
  if (!taskPath || !candPath || (backend !== "bwrap" && backend !== "process")) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const parsed = TaskSpec.safeParse(JSON.parse(readFileSync(taskPath, "utf8")));
  if (!parsed.success) {
    process.stderr.write(`invalid task: ${parsed.error.message}\n`);
    return 2;
  }
  const task = parsed.data;
  const main = task.files.filter((f) => f.role === "main");
  if (main.length !== 1) {
    process.stderr.write("the task must have exactly one main file for --candidate FILE\n");
    return 2;
  }
  const cfg: SandboxConfig = { backend, graderDir: defaultGraderDir(), uid: 65534, gid: 65534, scratchDir: join(process.cwd(), ".agentlab", "scratch") };
  const st = await selfTest(cfg);
  if (!st.ok) {
    process.stderr.write(`sandbox self-test failed: ${st.detail}\n`);
    return 3;
  }
  const grader = new Grader(cfg, { workers: 1 });
  try {
    const ref = await grader.referenceIds(task);
    let result: GradeResult;
    if (ref.result.verdict !== "pass") result = { ...ref.result, verdict: "infra_error", reasons: [`reference does not pass: ${ref.result.verdict}`, ...ref.result.reasons] };
    else result = await grader.grade(task, [{ path: main[0]?.path ?? "", content: readFileSync(candPath, "utf8") }], { expectedIds: ref.ids });
    if (argv.includes("--json")) process.stdout.write(`${JSON.stringify(result)}\n`);
    else {
      process.stdout.write(`${result.verdict}${result.unsandboxed ? " (UNSANDBOXED)" : ""}\n`);
      for (const r of result.reasons.slice(0, 10)) process.stdout.write(`  ${r}\n`);
    }
    return result.verdict === "pass" ? 0 : 1;
  } finally {
    grader.close();
  }
}
