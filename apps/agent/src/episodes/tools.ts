import type { TaskSpec, ToolCall, ToolRefusal } from "@agentlab/core";
import type { EnvironmentDeps } from "./deps";
import { fileWindow } from "./observe";
import { checkPythonSyntax, runPublicTests } from "./sandboxed";
import type { Workspace } from "./workspace";

// The tools but submit (which the environment hands to the judge): each returns what the policy
// sees, or a refusal that changed nothing. `changed`: the workspace's files changed.

export type Executed =
  | { kind: "ok"; output: string; changed?: boolean; testsFailed?: boolean }
  | { kind: "refused"; refusal: ToolRefusal; output: string }
  | { kind: "error"; output: string };

/** The task format's default per-file limit: an edit cannot grow a file past what a task may hold. */
const MAX_FILE_CHARS = 256 << 10;

const refuse = (refusal: ToolRefusal, output: string): Executed => ({ kind: "refused", refusal, output });

export async function executeTool(
  deps: EnvironmentDeps,
  task: TaskSpec,
  ws: Workspace,
  call: Exclude<ToolCall, { tool: "submit" }>,
): Promise<Executed> {
  switch (call.tool) {
    case "list_files":
      return { kind: "ok", output: ws.list().join("\n") };
    case "read_file": {
      const { path, start, end } = call.args;
      const c = ws.confine(path);
      if (!c.ok) return refuse("path_refused", `${path}: ${c.reason}`);
      if (start !== undefined && end !== undefined && end < start)
        return refuse("bad_call", `end (${end}) is before start (${start})`);
      const content = ws.read(path);
      if (content === null) return refuse("not_found", `${path}: no such file in the workspace`);
      return { kind: "ok", output: fileWindow(path, content, start, end) };
    }
    case "edit_file":
      return editFile(deps, ws, call.args);
    case "run_public_tests": {
      if (task.public_tests.length === 0) return { kind: "ok", output: "public tests: the task has none" };
      try {
        const { wallTimeoutS, cpuSeconds, memoryMb } = deps.limits;
        const limits = {
          ...(wallTimeoutS ? { wallTimeoutS } : {}),
          ...(cpuSeconds ? { cpuSeconds } : {}),
          ...(memoryMb ? { memoryMb } : {}),
        };
        const r = await runPublicTests(deps.sandbox, deps.scratch, ws, task, limits);
        return { kind: "ok", output: r.output, testsFailed: !r.passed };
      } catch (e) {
        return { kind: "error", output: e instanceof Error ? e.message : String(e) };
      }
    }
  }
}

async function editFile(
  deps: EnvironmentDeps,
  ws: Workspace,
  args: { path: string; old: string; new: string },
): Promise<Executed> {
  const c = ws.confine(args.path);
  if (!c.ok) return refuse("path_refused", `${args.path}: ${c.reason}`);
  const content = ws.read(args.path);
  let next: string;
  let editAt = 0;
  if (args.old === "") {
    if (content !== null || ws.list().some((p) => p.startsWith(`${args.path}/`)))
      return refuse("exists", `${args.path} exists; an empty \`old\` only creates new files`);
    next = args.new;
  } else {
    if (content === null) return refuse("not_found", `${args.path}: no such file in the workspace`);
    const count = occurrences(content, args.old);
    if (count === 0) return refuse("no_match", `\`old\` does not occur verbatim in ${args.path}; nothing was changed`);
    if (count > 1)
      return refuse(
        "ambiguous_match",
        `\`old\` occurs ${count} times in ${args.path}; give more context to make it unique`,
      );
    const at = content.indexOf(args.old);
    editAt = at;
    next = content.slice(0, at) + args.new + content.slice(at + args.old.length);
  }
  if (next.length > MAX_FILE_CHARS)
    return refuse("bad_call", `the edit would make ${args.path} larger than ${MAX_FILE_CHARS} characters`);
  if (args.path.endsWith(".py")) {
    let check: Awaited<ReturnType<typeof checkPythonSyntax>>;
    try {
      check = await checkPythonSyntax(deps.sandbox, deps.scratch, args.path, next);
    } catch (e) {
      return { kind: "error", output: e instanceof Error ? e.message : String(e) };
    }
    if (!check.ok) return refuse("syntax_error", `the edit was not applied: it would not parse\n${check.message}`);
  }
  try {
    ws.write(args.path, next);
  } catch (e) {
    return refuse("path_refused", `${args.path}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const line = next.slice(0, editAt).split("\n").length;
  const span = args.new.split("\n").length;
  return {
    kind: "ok",
    changed: true,
    output: `edited ${args.path}\n${fileWindow(args.path, next, Math.max(1, line - 3), line + span + 2)}`,
  };
}

function occurrences(haystack: string, needle: string): number {
  let n = 0;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + 1)) n += 1;
  return n;
}
