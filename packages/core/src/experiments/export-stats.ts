import type { PooledResult } from "../stats/pooling";
import type { PairedComparison } from "../stats/compare";
import type { DevSummaryRow, Interval, TestSummaryRow } from "./report-stats";

// Markdown for the report's statistics (summary rows, seeds). Shared by the exports and kept
// apart from the rest of the Markdown so the inference rules live next to each other.

/** Markdown-safe table cell text. */
export const mdCell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");
export const formatPct = (x: number) => `${(100 * x).toFixed(1)}%`;
const signed = (x: number) => `${x >= 0 ? "+" : ""}${(100 * x).toFixed(1)}`;
const withCi = (i: Interval | null) => (i ? `${formatPct(i.value)} [${formatPct(i.lo)}, ${formatPct(i.hi)}]` : "—");
/** Δ in percentage points with its interval, e.g. "+3.2 pp [-1.0, 7.5]". */
export const formatDeltaPp = (delta: number, ci: readonly [number, number]) =>
  `${signed(delta)} pp [${signed(ci[0])}, ${signed(ci[1])}]`;
/** The MDE in pp, or "—" when the differences do not vary. */
export const formatMde = (s: Pick<PairedComparison, "mde">) =>
  s.mde === null ? "—" : s.mde >= 1 ? "> 100 pp (none detectable)" : `${(100 * s.mde).toFixed(1)} pp`;

export const SUMMARY_HEADER = [
  "| split | Base | SFT | Δ | improved / regressed | test | p | MDE (80% power) | |",
  "|---|---|---|---|---|---|---|---|---|",
];

export function devMarkdownRow(s: DevSummaryRow): string {
  const sft = s.sft === null ? "—" : formatPct(s.sft);
  const delta = s.delta === null ? "—" : `${signed(s.delta)} pp`;
  return `| dev | ${formatPct(s.base)} | ${sft} | ${delta} | ${s.sft === null ? "—" : `${s.improved} / ${s.regressed}`} | — | — | — | ${mdCell(s.note)} |`;
}

export function testMarkdownRow(s: TestSummaryRow): string {
  const t = s.stats;
  if (!t) return `| test | ${withCi(s.base)} | — | — | — | — | — | — | ${mdCell(s.label)} |`;
  return `| test | ${withCi(s.base)} | ${withCi(s.sft)} | ${formatDeltaPp(t.delta, t.ci)} | ${s.improved} / ${s.regressed} | ${mdCell(t.test)} | ${t.p.toPrecision(3)} | ${formatMde(t)} | ${mdCell(s.label)} |`;
}

/** One line on what the test row's numbers rest on. */
export function comparisonNote(t: PairedComparison): string {
  const units = unitsText(t);
  const unreliable = t.reliable ? "" : `; **interval unreliable: only ${units}**`;
  const grouped = t.unit === "cluster" ? ` (${t.sourceGroups} source groups)` : "";
  return `${t.n} paired tasks in ${units}${grouped}; interval (${t.intervalMethod}): ${t.ciMethod}${unreliable}`;
}

/** "12 clusters" or "30 source groups": the unit the inference treated as independent. */
export const unitsText = (t: Pick<PairedComparison, "unit" | "units">) =>
  `${t.units} ${t.unit === "cluster" ? "cluster" : "source group"}${t.units === 1 ? "" : "s"}`;

export function seedsMarkdown(s: PooledResult): string[] {
  const out = [
    "| seed | SFT | Δ | improved / regressed | test | p | MDE | significant |",
    "|---|---|---|---|---|---|---|---|",
  ];
  for (const r of s.perSeed) {
    const t = r.stats;
    out.push(
      `| ${r.seed} | ${formatPct(t.treatedPass)} | ${formatDeltaPp(t.delta, t.ci)} | ${t.improved} / ${t.regressed} | ${mdCell(t.test)} | ${t.p.toPrecision(3)} | ${formatMde(t)} | ${t.significant ? "yes" : "no"} |`,
    );
  }
  const p = s.pooled;
  const verdict =
    p.scope === "given-seeds" ? "given these seeds (< 3 seeds: no claim for the recipe)" : p.significant ? "yes" : "no";
  out.push(
    `| pooled (${p.seeds}) | ${formatPct(p.treatedPass)} | ${formatDeltaPp(p.delta, p.ci)} | | ${mdCell(p.test)} | ${p.p.toPrecision(3)} | ${formatMde(p)} | ${verdict} |`,
  );
  out.push(
    "",
    `Per-seed Δ: sd ${(100 * s.spread.sd).toFixed(1)} pp, min ${signed(s.spread.min)} pp, max ${signed(s.spread.max)} pp.`,
    "",
    mdCell(s.method),
  );
  return out;
}
