import { z } from "zod";
import { canonicalJson, sha256Hex } from "../hash";
import type { TaskSpec } from "../tasks/spec";
import type { ChatMessage } from "../trainer/schemas";

// The repair prompt (architecture brief §2/§3). Only the public context reaches a model: the
// instruction, main and dependency files, and public tests. Hidden tests and the reference are
// dropped by `publicContext` before rendering, so no caller can leak them by accident.

export const PROMPT_TEMPLATE_VERSION = "repair-v1";

/** What a model may see of a task. */
export type PublicContext = Pick<TaskSpec, "instruction" | "files" | "public_tests">;

const TEMPLATE = {
  version: PROMPT_TEMPLATE_VERSION,
  system:
    "You are an expert Python engineer who repairs buggy code. Answer with the complete fixed contents of every file marked MAIN, " +
    "each in its own fenced ```python code block, with the file's path alone on the line just before the block. " +
    "Do not change dependency files or tests. Do not add explanations after the code.",
  header: "## Task",
  mainHeading: "## File to fix (MAIN): ",
  depHeading: "## Dependency file (read-only): ",
  testHeading: "## Public test (read-only): ",
  noTests: "(no public tests)",
  footer: "Reply with the fixed MAIN file(s) only, each as:\n<path>\n```python\n<complete file contents>\n```",
} as const;

/** Identifies the template text and layout; recorded with every candidate and SFT sample. */
export const PROMPT_TEMPLATE_HASH = sha256Hex(canonicalJson(TEMPLATE));

export const REPAIR_SYSTEM_PROMPT: string = TEMPLATE.system;

const byPath = <T extends { path: string }>(xs: readonly T[]): T[] =>
  [...xs].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));

/**
 * How much of the public context a prompt shows (a recipe's training and evaluation settings; the
 * studies' "does public context help" factor): everything, or all but the dependency files, or all
 * but the public tests. The MAIN files and the instruction are always shown.
 */
export const PromptVariant = z.enum(["full", "no_dependencies", "no_public_tests"]);
export type PromptVariant = z.infer<typeof PromptVariant>;

/**
 * The prompt's identity as recorded with answers and SFT snapshots: the template's hash for the full
 * context (what every answer stored before variants existed recorded), else the template and the
 * variant hashed together, so base and adapter answers under different variants never compare equal.
 */
export function promptHashOf(variant: PromptVariant = "full"): string {
  return variant === "full"
    ? PROMPT_TEMPLATE_HASH
    : sha256Hex(canonicalJson({ template: PROMPT_TEMPLATE_HASH, variant }));
}

/**
 * Strips everything a model must never see, and what the variant leaves out. The result is a fresh
 * object, not a view of the task.
 */
export function publicContext(task: PublicContext, variant: PromptVariant = "full"): PublicContext {
  const files = variant === "no_dependencies" ? task.files.filter((f) => f.role === "main") : task.files;
  const tests = variant === "no_public_tests" ? [] : task.public_tests;
  return {
    instruction: task.instruction,
    files: byPath(files).map((f) => ({ path: f.path, role: f.role, content: f.content })),
    public_tests: byPath(tests).map((f) => ({ path: f.path, content: f.content })),
  };
}

export const mainPaths = (task: Pick<TaskSpec, "files">): string[] =>
  byPath(task.files.filter((f) => f.role === "main")).map((f) => f.path);

// A fence longer than any backtick run inside the content, so file text never closes it early.
export function fenceFor(content: string): string {
  const longest = Math.max(2, ...(content.match(/`+/g) ?? []).map((m) => m.length));
  return "`".repeat(longest + 1);
}

const block = (heading: string, path: string, content: string): string => {
  const fence = fenceFor(content);
  const body = content.endsWith("\n") ? content : `${content}\n`;
  return `${heading}${path}\n${fence}python\n${body}${fence}`;
};

/** The user turn: public context only. */
export function renderUserPrompt(task: PublicContext): string {
  const ctx = publicContext(task);
  const parts: string[] = [TEMPLATE.header, ctx.instruction.trim()];
  for (const f of ctx.files.filter((x) => x.role === "main"))
    parts.push(block(TEMPLATE.mainHeading, f.path, f.content));
  for (const f of ctx.files.filter((x) => x.role === "dependency"))
    parts.push(block(TEMPLATE.depHeading, f.path, f.content));
  if (ctx.public_tests.length === 0) parts.push(TEMPLATE.noTests);
  for (const t of ctx.public_tests) parts.push(block(TEMPLATE.testHeading, t.path, t.content));
  parts.push(TEMPLATE.footer);
  return parts.join("\n\n");
}

/** System + user messages sent to a teacher (and used as the prefix of SFT samples). */
export function renderRepairPrompt(task: PublicContext): ChatMessage[] {
  return [
    { role: "system", content: REPAIR_SYSTEM_PROMPT },
    { role: "user", content: renderUserPrompt(task) },
  ];
}
