import type { LogRow } from "../_lib/types";

// The browser keeps the newest lines only; the full log stays in the database.
export const MAX_LINES = 5000;

/** Appends a page of chunks, ignoring any seq already seen, and trims to the newest `max`. */
export function appendChunks(
  prev: { lines: LogRow[]; dropped: number },
  rows: LogRow[],
  max = MAX_LINES,
): { lines: LogRow[]; dropped: number } {
  const last = prev.lines.at(-1)?.seq ?? -1;
  const fresh = rows.filter((r) => r.seq > last);
  if (fresh.length === 0) return prev;
  const merged = [...prev.lines, ...fresh];
  const over = Math.max(0, merged.length - max);
  return { lines: over ? merged.slice(over) : merged, dropped: prev.dropped + over };
}
