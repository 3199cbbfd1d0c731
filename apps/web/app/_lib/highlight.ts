import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import diff from "highlight.js/lib/languages/diff";
import json from "highlight.js/lib/languages/json";
import python from "highlight.js/lib/languages/python";

// Only the grammars the lab shows (task code, diffs, payloads, shell commands) are registered.
hljs.registerLanguage("python", python);
hljs.registerLanguage("json", json);
hljs.registerLanguage("bash", bash);
hljs.registerLanguage("diff", diff);

export type CodeLanguage = "python" | "json" | "bash" | "diff" | "text";

export function languageForPath(path: string): CodeLanguage {
  if (path.endsWith(".py")) return "python";
  if (path.endsWith(".json") || path.endsWith(".jsonl")) return "json";
  if (path.endsWith(".sh")) return "bash";
  if (path.endsWith(".diff") || path.endsWith(".patch")) return "diff";
  return "text";
}

/** HTML with token spans; highlight.js escapes the source, so the result is safe to inject. */
export function highlightToHtml(code: string, language: CodeLanguage): string {
  if (language === "text") return escapeHtml(code);
  return hljs.highlight(code, { language, ignoreIllegals: true }).value;
}

export function escapeHtml(s: string): string {
  return s
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#x27;");
}
