import { diffLines } from "diff";

// Line diffs for the per-task view (jsdiff's diffLines), as rows a table can render: unchanged
// runs longer than twice the context collapse into one "skip" row, as `git diff` would show them.

export type DiffRow =
  | { kind: "same" | "add" | "del"; text: string; oldNo: number | null; newNo: number | null }
  | { kind: "skip"; count: number };

const lines = (s: string) => {
  const xs = s.split("\n");
  if (xs.length > 1 && xs[xs.length - 1] === "") xs.pop();
  return xs;
};

export function diffRows(before: string, after: string, context = 3): DiffRow[] {
  const full: Extract<DiffRow, { text: string }>[] = [];
  let o = 1;
  let n = 1;
  for (const c of diffLines(before, after)) {
    for (const text of lines(c.value)) {
      if (c.added) full.push({ kind: "add", text, oldNo: null, newNo: n++ });
      else if (c.removed) full.push({ kind: "del", text, oldNo: o++, newNo: null });
      else full.push({ kind: "same", text, oldNo: o++, newNo: n++ });
    }
  }
  const keep = full.map(() => false);
  full.forEach((r, i) => {
    if (r.kind === "same") return;
    for (let j = Math.max(0, i - context); j <= Math.min(full.length - 1, i + context); j++) keep[j] = true;
  });
  const out: DiffRow[] = [];
  for (let i = 0; i < full.length; ) {
    if (keep[i]) {
      out.push(full[i] as DiffRow);
      i++;
      continue;
    }
    let j = i;
    while (j < full.length && !keep[j]) j++;
    out.push({ kind: "skip", count: j - i });
    i = j;
  }
  return out;
}

/** Lines added and removed. */
export function diffStat(rows: readonly DiffRow[]): { added: number; removed: number } {
  return { added: rows.filter((r) => r.kind === "add").length, removed: rows.filter((r) => r.kind === "del").length };
}
