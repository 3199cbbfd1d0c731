import type { z } from "zod";
import { DEFAULT_TASK_LIMITS, TaskSpec, type TaskLimits, type TaskProblem, type TaskProblemCode } from "./spec";
import { maybeGunzip, splitLines, type RawLine } from "./lines";
import { storableText, unstorableTextReason } from "../security/pg-text";

// Validation of Task spec v1 that reports every problem of every line (not just the first), each
// with its 1-based line number and the field path, so a user can fix a whole file in one pass.

export type ValidTask = { line: number; task: TaskSpec; bytes: number };
/** `group` is the line's source_group when it has one, valid or not (the file's group limit counts it). */
export type LineResult = { task: TaskSpec | null; problems: TaskProblem[]; group?: string };

const utf8 = new TextDecoder("utf-8", { fatal: true });
const lossy = new TextDecoder("utf-8");
const utf8Length = (s: string): number => new TextEncoder().encode(s).length;

/** A stateful validator: duplicate ids are detected across the lines it has seen. */
export function createTaskValidator(limits: Partial<TaskLimits> = {}) {
  const lim: TaskLimits = { ...DEFAULT_TASK_LIMITS, ...limits };
  const firstLineOfId = new Map<string, number>();

  function check(raw: RawLine): LineResult {
    const { line } = raw;
    const problems: TaskProblem[] = [];
    const add = (field: string, code: TaskProblemCode, message: string) =>
      problems.push({ line, field, code, message });
    if (raw.overlong || raw.bytes.length > lim.maxTaskBytes) {
      add("", "too_large", `task is larger than the ${lim.maxTaskBytes}-byte limit per task`);
      return { task: null, problems };
    }
    let text: string;
    let badUtf8 = false;
    try {
      text = utf8.decode(raw.bytes);
    } catch {
      // Decode lossily to still find and report the fields that hold the bad bytes (and every other problem).
      badUtf8 = true;
      text = lossy.decode(raw.bytes);
    }
    // Counted on the text before parsing: the parse itself, zod and the field walks recurse.
    if (nestingDepth(text, lim.maxDepth) > lim.maxDepth) {
      add("", "too_deep", `nesting is deeper than the ${lim.maxDepth}-level limit (maxDepth)`);
      return { task: null, problems };
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      if (badUtf8) add("", "invalid_utf8", "line is not valid UTF-8");
      add("", "invalid_json", `not valid JSON: ${(err as Error).message}`);
      return { task: null, problems };
    }
    if (!isRecord(value)) {
      add("", "wrong_type", "each line must be a JSON object");
      return { task: null, problems };
    }
    const parsed = TaskSpec.safeParse(value);
    if (!parsed.success) for (const issue of parsed.error.issues) problems.push(fromZodIssue(line, issue, value));
    checkStrings(value, "", badUtf8, add);
    if (badUtf8 && !problems.some((p) => p.code === "invalid_utf8")) add("", "invalid_utf8", "line is not valid UTF-8");
    checkFiles(value, lim, add);
    const id = typeof value.id === "string" ? value.id : undefined;
    if (id !== undefined) {
      const first = firstLineOfId.get(id);
      if (first !== undefined) add("id", "duplicate_id", `duplicate id "${id}" (first used on line ${first})`);
      else firstLineOfId.set(id, line);
      for (const p of problems) p.taskId = id;
    }
    const group = typeof value.source_group === "string" ? value.source_group : undefined;
    return { task: problems.length === 0 && parsed.success ? parsed.data : null, problems, group };
  }

  return { check, limits: lim };
}

export type ValidationResult = { tasks: ValidTask[]; problems: TaskProblem[]; lines: number };

/**
 * Validates a whole .jsonl or .jsonl.gz byte stream; tasks are kept only while no problem was found.
 * The file-wide limits (maxTasks, maxGroups, maxImportBytes) stop the reading at the line that
 * crosses them, with one problem naming the limit, so an oversized file costs no more than the limit.
 */
export async function validateTaskStream(
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  opts: { limits?: Partial<TaskLimits>; onLine?: (line: number) => void } = {},
): Promise<ValidationResult> {
  const v = createTaskValidator(opts.limits);
  const lim = v.limits;
  const tasks: ValidTask[] = [];
  const problems: TaskProblem[] = [];
  const groups = new Set<string>();
  const size = { bytes: 0, over: false };
  let lines = 0;
  let count = 0;
  const rawLines = splitLines(countBytes(maybeGunzip(chunks), lim.maxImportBytes, size), {
    maxLineBytes: lim.maxTaskBytes,
  });
  for await (const raw of stopAtByteLimit(rawLines)) {
    lines = raw.line;
    count += 1;
    if (count > lim.maxTasks) {
      problems.push(
        fileLimit(raw.line, "", "too_many_tasks", `the file holds more than ${lim.maxTasks} tasks (limit maxTasks)`),
      );
      break;
    }
    const res = v.check(raw);
    problems.push(...res.problems);
    if (res.group !== undefined) groups.add(res.group);
    if (groups.size > lim.maxGroups) {
      problems.push(
        fileLimit(
          raw.line,
          "source_group",
          "too_many_groups",
          `the file holds more than ${lim.maxGroups} source groups (limit maxGroups)`,
        ),
      );
      break;
    }
    // Once the file is known to be bad its tasks are dropped: nothing from it will be imported.
    if (res.task && problems.length === 0) tasks.push({ line: raw.line, task: res.task, bytes: raw.bytes.length });
    else if (problems.length > 0) tasks.length = 0;
    opts.onLine?.(raw.line);
  }
  if (size.over) {
    problems.push(
      fileLimit(
        lines + 1,
        "",
        "too_large",
        `the file is larger than the ${lim.maxImportBytes}-byte limit (maxImportBytes)`,
      ),
    );
  }
  if (problems.length > 0) tasks.length = 0;
  if (!size.over && (lines === 0 || (tasks.length === 0 && problems.length === 0))) {
    problems.push({ line: 1, field: "", code: "empty_file", message: "the file holds no tasks" });
  }
  return { tasks, problems, lines };
}

const fileLimit = (line: number, field: string, code: TaskProblemCode, message: string): TaskProblem => ({
  line,
  field,
  code,
  message,
});

class ByteLimitReached extends Error {}

/** Passes chunks through until `max` bytes were seen; then fails with ByteLimitReached (and says so in `size.over`). */
async function* countBytes(
  chunks: AsyncIterable<Uint8Array>,
  max: number,
  size: { bytes: number; over: boolean },
): AsyncGenerator<Uint8Array> {
  for await (const chunk of chunks) {
    size.bytes += chunk.length;
    if (size.bytes > max) {
      size.over = true;
      throw new ByteLimitReached();
    }
    yield chunk;
  }
}

// Ends the line stream where the byte limit cut it, so the cut-off last line is not also reported as bad JSON.
async function* stopAtByteLimit(lines: AsyncIterable<RawLine>): AsyncGenerator<RawLine> {
  try {
    yield* lines;
  } catch (err) {
    if (!(err instanceof ByteLimitReached)) throw err;
  }
}

/**
 * The deepest nesting of arrays and objects in a JSON text, brackets inside strings not counted;
 * stops counting once past `stopAbove` (the answer is then only known to exceed it).
 */
export function nestingDepth(text: string, stopAbove = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > stopAbove) return deepest;
      }
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/** Why a path may not be used inside a task workspace, or null when it is safe. */
export function unsafePathReason(path: string, maxChars = DEFAULT_TASK_LIMITS.maxPathChars): string | null {
  if (path.length === 0) return "is empty";
  if (path.length > maxChars) return `is longer than ${maxChars} characters`;
  if (path.includes("\0")) return "contains a NUL character";
  if (path.includes("\\")) return "contains a backslash (use POSIX paths)";
  if (path.startsWith("/")) return "is absolute (must be relative)";
  if (/^[A-Za-z]:/.test(path)) return "starts with a drive letter";
  const segments = path.split("/");
  if (segments.includes("..")) return "contains a '..' segment";
  if (segments.some((s) => s === "" || s === ".")) return "contains an empty or '.' segment";
  return null;
}

type Add = (field: string, code: TaskProblemCode, message: string) => void;

const FILE_LISTS = ["files", "public_tests", "hidden_tests", "reference"] as const;

function checkFiles(task: Record<string, unknown>, lim: TaskLimits, add: Add) {
  // files and tests share the workspace root, so their paths must not collide; reference is separate.
  const workspace = new Map<string, string>();
  const referencePaths = new Map<string, string>();
  const mainPaths = new Set<string>();
  for (const list of FILE_LISTS) {
    const entries = task[list];
    if (!Array.isArray(entries)) continue;
    entries.forEach((entry, i) => {
      if (!isRecord(entry)) return;
      const field = `${list}[${i}]`;
      const { path, content } = entry;
      if (typeof path === "string") {
        const why = unsafePathReason(path, lim.maxPathChars);
        if (why) add(`${field}.path`, "unsafe_path", `unsafe path ${JSON.stringify(path)}: ${why}`);
        const seen = list === "reference" ? referencePaths : workspace;
        const prev = seen.get(path);
        if (prev) add(`${field}.path`, "duplicate_path", `path "${path}" is already used by ${prev}`);
        else seen.set(path, field);
        if (list === "files" && entry.role === "main") mainPaths.add(path);
      }
      if (
        typeof content === "string" &&
        content.length > lim.maxFileBytes / 4 &&
        utf8Length(content) > lim.maxFileBytes
      ) {
        add(`${field}.content`, "too_large", `file is larger than the ${lim.maxFileBytes}-byte limit per file`);
      }
    });
  }
  const files = task.files;
  if (Array.isArray(files) && files.length > 0 && !files.some((f) => isRecord(f) && f.role === "main")) {
    add("files", "no_main_file", 'no file has role "main"; at least one main file is required');
  }
  const reference = task.reference;
  if (Array.isArray(reference)) {
    reference.forEach((r, i) => {
      if (isRecord(r) && typeof r.path === "string" && !mainPaths.has(r.path)) {
        add(`reference[${i}].path`, "reference_not_main", `reference path "${r.path}" names no main file`);
      }
    });
  }
}

/** Finds strings that are not valid Unicode: bytes that failed to decode, or JSON-escaped lone surrogates. */
function checkStrings(value: unknown, field: string, badUtf8: boolean, add: Add) {
  if (typeof value === "string") {
    if (badUtf8 && value.includes("\uFFFD")) add(field, "invalid_utf8", "contains bytes that are not valid UTF-8");
    else {
      // What the database cannot store (NUL, a lone surrogate): named here instead of a failed insert.
      const why = unstorableTextReason(value);
      // A NUL in a file's path is reported once, as the unsafe path it is (checkFiles).
      const pathNul = field.endsWith(".path") && value.includes("\u0000");
      if (why && !pathNul) add(field, "invalid_utf8", why);
    }
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => checkStrings(v, `${field}[${i}]`, badUtf8, add));
  } else if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) {
      const at = field ? `${field}.${storableText(k)}` : storableText(k);
      const why = unstorableTextReason(k);
      if (why) add(at, "invalid_utf8", `its key ${why}`);
      checkStrings(v, at, badUtf8, add);
    }
  }
}

function fromZodIssue(line: number, issue: z.core.$ZodIssue, root: unknown): TaskProblem {
  const field = issue.path
    .map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join("");
  const actual = lookup(root, issue.path);
  if (issue.code === "invalid_type") {
    if (actual === undefined)
      return { line, field, code: "missing_field", message: `missing required field "${field}"` };
    return { line, field, code: "wrong_type", message: `expected ${issue.expected}, got ${describe(actual)}` };
  }
  if (issue.code === "too_small" && field === "hidden_tests")
    return { line, field, code: "no_hidden_test", message: "at least one hidden test is required" };
  if (issue.code === "too_small" && field === "files")
    return { line, field, code: "no_main_file", message: "files is empty; at least one main file is required" };
  return { line, field, code: "invalid_value", message: issue.message };
}

function lookup(root: unknown, path: PropertyKey[]): unknown {
  let cur: unknown = root;
  for (const key of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}

const describe = (v: unknown): string => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
