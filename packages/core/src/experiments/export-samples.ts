import type { TaskViewRow } from "./report-tasks";
import type { SamplesSection } from "./report-samples";
import { formatMde, formatPct, mdCell } from "./export-stats";

// The multi-sample parts of the exports, next to each other so the Markdown and the
// CSV say the same thing. A one-answer report has no samples section and none of this is printed.

const pp = (x: number) => `${(100 * x).toFixed(1)} pp`;

/** "3/4 (pass, fail, pass, pass)": a side's pass count and every sample's verdict, in sample order. */
export function samplesCell(rate: number | null | undefined, xs: TaskViewRow["baseSamples"]): string {
  if (rate === null || rate === undefined || !xs || xs.length === 0) return "no verdict";
  const passes = xs.filter((x) => x.verdict === "pass").length;
  return `${passes}/${xs.length} (${xs.map((x) => x.verdict).join(", ")})`;
}

export function samplesMarkdown(s: SamplesSection): string[] {
  const ks = [...new Set(s.passAtK.flatMap((t) => t.rows.map((r) => r.k)))].sort((a, b) => a - b);
  const out = [
    `## Samples: ${s.samples} answers per task (temperature ${s.decoding.temperature}, top_p ${s.decoding.topP}, seed ${s.decoding.seed})`,
    "",
    `| split | model | ${ks.map((k) => `pass@${k}`).join(" | ")} | tasks |`,
    `|---|---|${ks.map(() => "---|").join("")}---|`,
  ];
  for (const t of s.passAtK) {
    const cells = ks.map((k) => {
      const r = t.rows.find((x) => x.k === k);
      return r ? formatPct(r.value) : "—";
    });
    out.push(`| ${t.split} | ${mdCell(t.label)} | ${cells.join(" | ")} | ${t.rows[0]?.tasks ?? 0} |`);
  }
  if (s.mde) {
    const one = s.mde.mdeOneSample === null ? "—" : formatMde({ mde: s.mde.mdeOneSample });
    out.push(
      "",
      `Minimum detectable effect on test at 80% power: ${formatMde(s.mde)} with ${s.samples} samples per task; ${one} projected for one sample per task (SE ${pp(s.mde.se)} vs ${pp(s.mde.seOneSample)}).`,
    );
  }
  if (s.histogram) {
    out.push(
      "",
      `Per-task pass-rate change, ${mdCell(s.histogram.comparison)} (test):`,
      "",
      "| change | tasks |",
      "|---|---|",
    );
    for (const b of s.histogram.bins) out.push(`| ${b.change >= 0 ? "+" : ""}${pp(b.change)} | ${b.count} |`);
  }
  out.push("", `- ${mdCell(s.methods.passAtK)}`, `- ${mdCell(s.methods.rates)}`, `- ${mdCell(s.methods.mde)}`);
  return out;
}
