import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CandidateFile, GradingIsolation, TaskSpec, taskFingerprint, type GradeResult } from "@agentlab/core";
import { z } from "zod";
import { Grader } from "../grading/grader";
import { selfTest } from "../sandbox/selftest";
import type { SandboxConfig } from "../sandbox/types";

// `agentlab-agent grade`: offline verdicts in the sandbox, for one candidate or a batch.
//   grade --task TASK.json --candidate FILE [--json] [--backend bwrap|process] [--isolation judge|in_process]
//   grade --batch FILE.jsonl [--json] [--backend …] [--isolation …]
// A batch line is {"task": PATH, "candidate": PATH}; lines are graded in order by one warm grader
// (one sandbox) and answered with one result line each, in order. A candidate FILE is the new
// content of the task's single main file, or a JSON array of {path, content} for several.
// Exit: single: 0 pass, 1 any other verdict; batch: 0 when every line was graded, 1 when a line
// could not be (its line says why); 2 usage; 3 the sandbox failed its self-test.

const USAGE = `usage: agentlab-agent grade --task TASK.json --candidate FILE [--json] [--backend bwrap|process] [--isolation judge|in_process]
       agentlab-agent grade --batch FILE.jsonl [--json] [--backend bwrap|process] [--isolation judge|in_process]`;
export const defaultGraderDir = (): string => resolve(dirname(fileURLToPath(import.meta.url)), "../../grader");

const BatchLine = z.strictObject({ task: z.string().min(1), candidate: z.string().min(1) });
type Loaded = { task: TaskSpec; candidate: CandidateFile[] };

class InputError extends Error {}

function readTask(path: string): TaskSpec {
  if (!existsSync(path)) throw new InputError(`${path}: no such task file`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new InputError(`${path}: not JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  const parsed = TaskSpec.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InputError(
      `${path}: invalid task at ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}`,
    );
  }
  return parsed.data;
}

function readCandidate(path: string, task: TaskSpec): CandidateFile[] {
  if (!existsSync(path)) throw new InputError(`${path}: no such candidate file`);
  const text = readFileSync(path, "utf8");
  if (path.endsWith(".json")) {
    const files = z.array(CandidateFile).min(1).safeParse(JSON.parse(text));
    if (!files.success) throw new InputError(`${path}: a .json candidate must be an array of {path, content}`);
    return files.data;
  }
  const main = task.files.filter((f) => f.role === "main");
  if (main.length !== 1)
    throw new InputError(`${path}: the task has ${main.length} main files; give a .json array of {path, content}`);
  return [{ path: main[0]?.path ?? "", content: text }];
}

/** Relative batch paths are taken from the working directory, else from the batch file's folder. */
const locate = (p: string, base: string): string => (isAbsolute(p) || existsSync(p) ? p : join(base, p));

export async function gradeCommand(argv: string[]): Promise<number> {
  const opt = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const backend = opt("backend") ?? "bwrap";
  const isolation = GradingIsolation.safeParse(opt("isolation") ?? "judge");
  const batch = opt("batch");
  const single = opt("task") && opt("candidate");
  if (
    (!batch && !single) ||
    (batch && single) ||
    (backend !== "bwrap" && backend !== "process") ||
    !isolation.success
  ) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  const json = argv.includes("--json");
  const cfg: SandboxConfig = {
    backend,
    graderDir: defaultGraderDir(),
    uid: 65534,
    gid: 65534,
    scratchDir: join(process.cwd(), ".agentlab", "scratch"),
  };
  const st = await selfTest(cfg);
  if (!st.ok) {
    process.stderr.write(`sandbox self-test failed: ${st.detail}\n`);
    return 3;
  }
  const grader = new Grader(cfg, { workers: 1 });
  const references = new Map<string, { ids: string[]; result: GradeResult }>();
  const gradeOne = async ({ task, candidate }: Loaded): Promise<GradeResult> => {
    const key = taskFingerprint(task);
    let ref = references.get(key);
    if (!ref) {
      ref = await grader.referenceIds(task, undefined, { isolation: isolation.data });
      references.set(key, ref);
    }
    if (ref.result.verdict !== "pass")
      return {
        ...ref.result,
        verdict: "infra_error",
        reasons: [`the task's reference does not pass: ${ref.result.verdict}`, ...ref.result.reasons],
      };
    return grader.grade(task, candidate, { expectedIds: ref.ids, isolation: isolation.data });
  };
  const print = (line: number | null, r: GradeResult | { error: string }, task?: string) => {
    if (json) process.stdout.write(`${JSON.stringify(line === null ? r : { line, task, ...r })}\n`);
    else if ("error" in r) process.stdout.write(`${line === null ? "" : `${line}: `}error: ${r.error}\n`);
    else {
      process.stdout.write(
        `${line === null ? "" : `${line}: ${task} `}${r.verdict}${r.unsandboxed ? " (UNSANDBOXED)" : ""}${r.isolation === "in_process" ? " (IN-PROCESS)" : ""}\n`,
      );
      if (line === null) for (const reason of r.reasons.slice(0, 10)) process.stdout.write(`  ${reason}\n`);
    }
  };
  try {
    if (!batch) {
      const taskPath = opt("task") ?? "";
      let loaded: Loaded;
      try {
        const task = readTask(taskPath);
        loaded = { task, candidate: readCandidate(opt("candidate") ?? "", task) };
      } catch (e) {
        if (!(e instanceof InputError)) throw e;
        process.stderr.write(`${e.message}\n`);
        return 2;
      }
      const result = await gradeOne(loaded);
      print(null, result);
      return result.verdict === "pass" ? 0 : 1;
    }
    if (!existsSync(batch)) {
      process.stderr.write(`${batch}: no such batch file\n`);
      return 2;
    }
    const base = dirname(batch);
    let failed = false;
    const lines = readFileSync(batch, "utf8").split("\n");
    for (let i = 0; i < lines.length; i++) {
      const text = lines[i]?.trim() ?? "";
      if (!text) continue;
      const n = i + 1;
      try {
        let raw: unknown;
        try {
          raw = JSON.parse(text);
        } catch {
          throw new InputError(`${batch}:${n}: not a JSON object`);
        }
        const entry = BatchLine.safeParse(raw);
        if (!entry.success)
          throw new InputError(
            `${batch}:${n}: ${entry.error.issues[0]?.path.join(".") || "line"}: ${entry.error.issues[0]?.message ?? "invalid"}`,
          );
        const task = readTask(locate(entry.data.task, base));
        const result = await gradeOne({ task, candidate: readCandidate(locate(entry.data.candidate, base), task) });
        print(n, result, task.id);
      } catch (e) {
        if (!(e instanceof InputError)) throw e;
        failed = true;
        print(n, { error: e.message });
      }
    }
    return failed ? 1 : 0;
  } finally {
    grader.close();
  }
}
