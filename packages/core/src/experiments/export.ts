import { canonicalJson } from "../hash";
import type { ExperimentReport, Interval, SummaryRow } from "./report";

// Exports of a stored report. Pure, so the page, the share view and the CLI give identical files.

export const reportToJson = (r: ExperimentReport): string => JSON.stringify(JSON.parse(canonicalJson(r)), null, 2) + "\n";

const csvCell = (v: string | number | boolean | null): string => {
  const s = v === null ? "" : String(v);
  // Quote anything a spreadsheet could misread, and defuse formula injection from task ids.
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) || safe !== s ? `"${safe.replace(/"/g, '""')}"` : safe;
};

/** The per-task paired table, one row per task and split. */
export function reportToCsv(r: ExperimentReport): string {
  const header = ["split", "task_id", "source_group", "base_verdict", "sft_verdict", "category"];
  const rows = r.tasks.map((t) => [t.split, t.taskId, t.group, t.base, t.sft, t.category].map(csvCell).join(","));
  return [header.join(","), ...rows].join("\n") + "\n";
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const withCi = (i: Interval | null) => (i ? `${pct(i.value)} [${pct(i.lo)}, ${pct(i.hi)}]` : "—");
const pp = (i: Interval | null) => (i ? `${i.value >= 0 ? "+" : ""}${(100 * i.value).toFixed(1)} pp [${(100 * i.lo).toFixed(1)}, ${(100 * i.hi).toFixed(1)}]` : "—");
const md = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

export function summaryMarkdownRow(s: SummaryRow): string {
  const ir = s.sft ? `${s.improved} / ${s.regressed}` : "—";
  return `| ${s.split} | ${withCi(s.base)} | ${withCi(s.sft)} | ${pp(s.delta)} | ${ir} |`;
}

export function reportToMarkdown(r: ExperimentReport): string {
  const out: string[] = [`# ${md(r.name)}`, ""];
  if (r.disclaimer) out.push(`> **${md(r.disclaimer)}**`, "");
  out.push(`**Outcome:** ${md(r.outcome.headline)}`, "", md(r.outcome.reason), "");
  out.push("## Summary (pass@1, 95% cluster-bootstrap intervals)", "", "| split | Base | SFT | Δ | improved / regressed |", "|---|---|---|---|---|");
  for (const s of r.summary) out.push(summaryMarkdownRow(s));
  out.push("");
  for (const s of r.summary) if (s.sft) out.push(`- ${s.split}: ${md(s.sftLabel ?? "")}; exact McNemar p = ${s.mcnemarP?.toPrecision(3)}; ${md(s.label)}`);
  out.push("", "## Dev selection", "", md(r.selection.rule), "", "| model | dev pass@1 | passed / n | selected |", "|---|---|---|---|");
  for (const row of r.selection.table) out.push(`| ${md(row.label)} | ${pct(row.pass1)} | ${row.passed} / ${row.n} | ${row.selected ? "✔" : ""} |`);
  if (r.seeds) {
    out.push("", "## Seeds (test, each seed's best dev epoch)", "", "| seed | SFT | Δ | improved / regressed | McNemar p |", "|---|---|---|---|---|");
    for (const s of r.seeds.perSeed) {
      out.push(`| ${s.seed} | ${pct(s.treatedPass)} | ${pp({ value: s.delta, lo: s.interval.lo, hi: s.interval.hi })} | ${s.improved} / ${s.regressed} | ${s.mcnemarP.toPrecision(3)} |`);
    }
    const p = r.seeds.pooled;
    out.push(`| pooled | ${pct(p.treatedPass)} | ${pp({ value: p.mean, lo: p.lo, hi: p.hi })} | | |`, "", md(r.seeds.method));
  }
  const c = r.contamination;
  out.push("", "## Checks", "");
  out.push(`- Protocol: ${r.protocol.ok ? "identical for every compared evaluation" : `MISMATCH (${r.protocol.mismatches.map((m) => m.field).join(", ")})`}`);
  out.push(`- Contamination (test vs SFT data and dev): ${c.testTasksWithLeak} of ${c.testTasks} test tasks overlap; exact ${c.exactPairs}, normalized ${c.normalizedPairs}, ${c.n}-gram ${c.ngramPairs} pairs`);
  out.push("", "## Per-task (test)", "", "| task | group | base | SFT | |", "|---|---|---|---|---|");
  for (const t of r.tasks.filter((x) => x.split === "test")) out.push(`| ${md(t.taskId)} | ${md(t.group)} | ${t.base} | ${t.sft} | ${t.category} |`);
  return out.join("\n") + "\n";
}
