import type { z } from "zod";

// zod issues as people read them: one list of messages per field (dotted path, so a nested
// recipe field such as `training.epochs` keeps its place), and one line for logs and the CLI.
// z.flattenError keeps only the first path segment, which loses exactly the nested form fields.

export type FieldIssues = { formErrors: string[]; fieldErrors: Record<string, string[]> };

type Issue = Pick<z.core.$ZodIssue, "path" | "message" | "code"> & { input?: unknown };

const pathKey = (path: readonly PropertyKey[]): string =>
  path.map((p) => (typeof p === "symbol" ? p.toString() : String(p))).join(".");

/** zod's wording for a missing value is "Invalid input: expected string, received undefined"; say what it means. */
function readable(issue: Issue): string {
  if (issue.code === "invalid_type" && /received undefined$/.test(issue.message)) return "required";
  return issue.message.replace(/^Invalid input: /, "");
}

export function issuesByField(issues: readonly Issue[]): FieldIssues {
  const out: FieldIssues = { formErrors: [], fieldErrors: {} };
  for (const issue of issues) {
    const msg = readable(issue);
    if (issue.path.length === 0) out.formErrors.push(msg);
    else (out.fieldErrors[pathKey(issue.path)] ??= []).push(msg);
  }
  return out;
}

/** "name: required; training.epochs: Too big: expected number to be <=50". */
export function summarizeFieldIssues(f: FieldIssues): string {
  const parts = [
    ...f.formErrors,
    ...Object.entries(f.fieldErrors).flatMap(([k, msgs]) => msgs.map((m) => `${k}: ${m}`)),
  ];
  return parts.length ? parts.join("; ") : "invalid input";
}

/** Whether a string is zod's serialized issue list (tRPC's message for an input error), and its issues. */
export function parseSerializedIssues(message: string): Issue[] | null {
  if (!message.trimStart().startsWith("[")) return null;
  try {
    const parsed: unknown = JSON.parse(message);
    if (!Array.isArray(parsed) || parsed.length === 0) return null;
    const ok = parsed.every(
      (i) =>
        typeof i === "object" &&
        i !== null &&
        Array.isArray((i as Issue).path) &&
        typeof (i as Issue).message === "string",
    );
    return ok ? (parsed as Issue[]) : null;
  } catch {
    return null;
  }
}
