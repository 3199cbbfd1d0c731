import type { CandidateFile } from "../grading/schemas";
import { fenceFor } from "./prompt";

// The answer format of the repair template: each fixed main file in a fenced code block, its path
// alone on the line before. Parsing is strict enough that a wrong or missing file is caught here
// (graded fail_syntax with the reason) rather than silently graded against the buggy original.

export type ParsedAnswer = { ok: true; files: CandidateFile[] } | { ok: false; reason: string };

type Block = { path: string | null; content: string };

/** Renders fixed files in the answer format (the assistant turn of SFT samples, the reference provider's reply). */
export function formatAnswer(files: readonly CandidateFile[]): string {
  return files
    .map((f) => {
      const fence = fenceFor(f.content);
      const body = f.content.endsWith("\n") ? f.content : `${f.content}\n`;
      return `${f.path}\n${fence}python\n${body}${fence}`;
    })
    .join("\n\n");
}

// A path line may be decorated the way chat models like to: `**solution.py**`, `# File: x.py`, "x.py:".
function pathFromLine(line: string): string | null {
  let s = line.trim();
  s = s.replace(/^#+\s*/, "").replace(/^(file|path|filename)\s*:\s*/i, "");
  s = s
    .replace(/^[*_`"']+|[*_`"']+$/g, "")
    .replace(/:$/, "")
    .replace(/^[*_`"']+|[*_`"']+$/g, "")
    .trim();
  return /^[A-Za-z0-9._/-]+\.[A-Za-z0-9]+$/.test(s) ? s : null;
}

// A closing fence uses the opening's character and is at least as long (CommonMark).
const isClosing = (line: string, fence: string): boolean => {
  const t = line.trim();
  return t.length >= fence.length && t === (fence[0] ?? "`").repeat(t.length);
};

function extractBlocks(text: string): { blocks: Block[]; unclosed: boolean } {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const blocks: Block[] = [];
  let lastText: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    const open = /^\s*(`{3,}|~{3,})\s*([\w+-]*)\s*$/.exec(line);
    if (!open) {
      if (line.trim() !== "") lastText = line;
      continue;
    }
    const fence = open[1] ?? "```";
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const l = lines[j] ?? "";
      if (isClosing(l, fence)) break;
      body.push(l);
    }
    if (j >= lines.length) return { blocks, unclosed: true };
    blocks.push({
      path: lastText === null ? null : pathFromLine(lastText),
      content: body.length ? `${body.join("\n")}\n` : "",
    });
    lastText = null;
    i = j;
  }
  return { blocks, unclosed: false };
}

/** Parses a model's answer against the task's main file paths. */
export function parseAnswer(text: string, mains: readonly string[]): ParsedAnswer {
  if (mains.length === 0) return { ok: false, reason: "the task has no main file" };
  if (text.trim() === "") return { ok: false, reason: "empty answer" };
  const { blocks, unclosed } = extractBlocks(text);
  if (blocks.length === 0)
    return { ok: false, reason: unclosed ? "unclosed code block" : "no fenced code block in the answer" };
  const named = blocks.filter((b) => b.path !== null);
  const wrong = named.filter((b) => b.path !== null && !mains.includes(b.path));
  const files = new Map<string, string>();
  for (const b of named) {
    if (b.path === null || !mains.includes(b.path)) continue;
    if (files.has(b.path)) return { ok: false, reason: `more than one code block for ${b.path}` };
    files.set(b.path, b.content);
  }
  // One main file and one anonymous block: the block is that file (models often omit the path line).
  if (files.size === 0 && mains.length === 1 && blocks.length === 1 && wrong.length === 0) {
    return nonEmpty([{ path: mains[0] ?? "", content: blocks[0]?.content ?? "" }]);
  }
  if (files.size === 0 && wrong.length > 0)
    return {
      ok: false,
      reason: `wrong file: ${wrong.map((b) => b.path).join(", ")} is not a main file (expected ${mains.join(", ")})`,
    };
  if (files.size === 0)
    return {
      ok: false,
      reason: `${blocks.length} code blocks without a path line; expected one block for ${mains.join(", ")}`,
    };
  const missing = mains.filter((p) => !files.has(p));
  if (missing.length > 0) return { ok: false, reason: `no code block for main file ${missing.join(", ")}` };
  return nonEmpty(mains.map((p) => ({ path: p, content: files.get(p) ?? "" })));
}

function nonEmpty(files: CandidateFile[]): ParsedAnswer {
  const empty = files.filter((f) => f.content.trim() === "");
  if (empty.length > 0) return { ok: false, reason: `empty code block for ${empty.map((f) => f.path).join(", ")}` };
  return { ok: true, files };
}
