import { canonicalJson } from "../hash";
import type { ExperimentReport } from "./report";
import type { TaskViewRow } from "./report-tasks";
import { checksMarkdown, headerMarkdown } from "./export-header";
import { testClaimText, testReadsText } from "./test-reads";
import { answerContaminated, CONTAMINATED_NOTE } from "./answer-contamination";
import { samplesCell, samplesMarkdown } from "./export-samples";
import {
  comparisonNote,
  devMarkdownRow,
  formatPct as pct,
  mdCell as md,
  seedsMarkdown,
  SUMMARY_HEADER,
  testMarkdownRow,
} from "./export-stats";

// Exports of a stored report. Pure, so the page, the share view and the CLI give identical files.

export const reportToJson = (r: ExperimentReport): string =>
  JSON.stringify(JSON.parse(canonicalJson(r)), null, 2) + "\n";

const csvCell = (v: string | number | boolean | null): string => {
  const s = v === null ? "" : String(v);
  // Quote anything a spreadsheet could misread, and defuse formula injection from task ids.
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) || safe !== s ? `"${safe.replace(/"/g, '""')}"` : safe;
};

/**
 * The per-task table of the page, one row per task and split: the task view (excluded pairs
 * included, `compared` names the model against the base); reports built before it, the paired rows.
 */
export function reportToCsv(r: ExperimentReport): string {
  const header = [
    "split",
    "task_id",
    "source_group",
    "base_verdict",
    "sft_verdict",
    "category",
    "compared",
    "in_process",
    // Multi-sample reports only: each side's pass rate and every sample's verdict.
    ...(r.samples ? ["base_rate", "sft_rate", "base_samples", "sft_samples"] : []),
  ];
  const sampled = (t: TaskViewRow) =>
    r.samples
      ? [
          t.baseRate ?? null,
          t.otherRate ?? null,
          samplesCell(t.baseRate, t.baseSamples),
          samplesCell(t.otherRate, t.otherSamples),
        ]
      : [];
  const rows = r.taskViews
    ? r.taskViews.flatMap((v) =>
        v.rows.map((t) => [
          t.split,
          t.taskId,
          t.group,
          t.base,
          t.other,
          t.category,
          v.otherLabel,
          t.inProcess,
          ...sampled(t),
        ]),
      )
    : r.tasks.map((t) => [t.split, t.taskId, t.group, t.base, t.sft, t.category, r.outcome.selectedLabel, null]);
  return [header.join(","), ...rows.map((row) => row.map(csvCell).join(","))].join("\n") + "\n";
}

export function reportToMarkdown(r: ExperimentReport): string {
  // Reports stored before version 2 lack the statistics below; say so instead of printing garbage.
  if ((r as { version: number }).version !== 2)
    return `# ${md(r.name)}\n\nThis report was built by an earlier version; rebuild it to export its statistics.\n`;
  const out: string[] = [`# ${md(r.name)}`, ""];
  if (r.disclaimer) out.push(`> **${md(r.disclaimer)}**`, "");
  if (r.answerContamination && answerContaminated(r.answerContamination))
    out.push(`> **CONTAMINATED: ${md(CONTAMINATED_NOTE)}**`, "");
  out.push(`**Outcome:** ${md(r.outcome.headline)}`, "", md(r.outcome.reason), "");
  if (r.testReads)
    out.push(
      "## Test reads of this split",
      "",
      md(testReadsText(r.testReads)),
      "",
      ...r.testReads.claims.map((c, i) => `${i + 1}. ${md(testClaimText(c))}`),
      "",
    );
  if (r.header) out.push(...headerMarkdown(r.header));
  const [dev, test] = r.summary;
  out.push(
    "## Summary (pass@1; test: 95% intervals clustered by source group)",
    "",
    ...SUMMARY_HEADER,
    devMarkdownRow(dev),
    testMarkdownRow(test),
    "",
  );
  if (dev.sftLabel)
    out.push(`- dev: ${md(dev.sftLabel)}; no p-value and no significance on dev: the adapter was chosen there.`);
  if (test.stats) out.push(`- test: ${md(test.sftLabel ?? "")}; ${md(comparisonNote(test.stats))}`);
  out.push(`- ${md(r.methods.test)} ${md(r.methods.significance)}`, `- ${md(r.methods.mde)}`);
  out.push(
    "",
    "## Dev selection",
    "",
    md(r.selection.rule),
    "",
    "| model | dev pass@1 | passed / n | selected |",
    "|---|---|---|---|",
  );
  for (const row of r.selection.table)
    out.push(`| ${md(row.label)} | ${pct(row.pass1)} | ${row.passed} / ${row.n} | ${row.selected ? "✔" : ""} |`);
  if (r.samples) out.push("", ...samplesMarkdown(r.samples));
  if (r.seeds) out.push("", "## Seeds (test, each seed's best dev epoch)", "", ...seedsMarkdown(r.seeds));
  out.push("", "## Checks", "", ...checksMarkdown(r));
  if (!r.taskViews) {
    out.push("", "## Per-task (test)", "", "| task | group | base | SFT | |", "|---|---|---|---|---|");
    for (const t of r.tasks.filter((x) => x.split === "test"))
      out.push(`| ${md(t.taskId)} | ${md(t.group)} | ${t.base} | ${t.sft} | ${t.category} |`);
  }
  for (const v of [...(r.taskViews ?? [])].reverse()) {
    out.push(
      "",
      `## Per-task (${v.split}): base vs ${md(v.otherLabel)}`,
      "",
      md(v.shown),
      "",
      `| task | group | base | ${md(v.otherLabel)} | | in-process |`,
      "|---|---|---|---|---|---|",
    );
    for (const t of v.rows) {
      const [b, o] = r.samples
        ? [samplesCell(t.baseRate, t.baseSamples), samplesCell(t.otherRate, t.otherSamples)]
        : [t.base ?? "no verdict", t.other ?? "no verdict"];
      out.push(`| ${md(t.taskId)} | ${md(t.group)} | ${b} | ${o} | ${t.category} | ${t.inProcess ? "yes" : ""} |`);
    }
  }
  return out.join("\n") + "\n";
}
