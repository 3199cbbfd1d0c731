import type { EpisodeStep } from "@agentlab/core";

// How tool results read to a policy, after SWE-agent / mini-swe-agent: file windows with line
// numbers and a header naming the range and the file's length, long outputs cut in the middle
// with a note saying how much was left out (the head and the tail are where errors are).

/** `text` cut to `max` characters: head and tail kept, the elided middle announced. */
export function truncateObservation(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  const note = `\n[... ${text.length - max} characters elided; narrow the request ...]\n`;
  const keep = Math.max(0, max - note.length);
  const head = Math.ceil(keep / 2);
  return { text: text.slice(0, head) + note + text.slice(text.length - (keep - head)), truncated: true };
}

/** A window of a file, 1-based inclusive, with cat -n style numbers. */
export function fileWindow(path: string, content: string, start?: number, end?: number): string {
  const lines = content.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  const total = content === "" ? 0 : lines.length;
  const from = Math.min(start ?? 1, Math.max(total, 1));
  const to = Math.min(end ?? total, total);
  const body = lines
    .slice(from - 1, to)
    .map((l, i) => `${String(from + i).padStart(6)}\t${l}`)
    .join("\n");
  return `[${path}: lines ${from}-${to} of ${total}]\n${body}`;
}

/** The lines of a fileWindow observation back as text (what a scripted policy reads). */
export function windowText(observation: string): string {
  const [, ...rows] = observation.split("\n");
  return rows.map((r) => r.slice(r.indexOf("\t") + 1)).join("\n");
}

/** Steps that called `tool` and were not refused. */
export const okCalls = (steps: readonly EpisodeStep[], tool: string) =>
  steps.filter((s) => s.call.tool === tool && s.result.status === "ok");
