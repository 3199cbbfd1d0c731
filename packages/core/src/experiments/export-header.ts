import { DATA_QUALITY_LABELS } from "../teacher/quality";
import { mdCell as md } from "./export-stats";
import { formatDuration, hardwareText, trainingText, type ReportHeader } from "./report-header";
import type { ExperimentReport } from "./report";
import { isolationText, ISOLATION_NOTE } from "./report-tasks";
import { noVerdictText } from "./report-missing";
import { parsingText, parsingWarns } from "./report-parsing";
import { answerContaminationLines, answerRepeatsText } from "./answer-contamination";

// Markdown for the report header and the checks that sit beside the statistics (isolation,
// excluded pairs, contamination). The same facts and wording as the page (apps/web/app/reports).

const short = (h: string | null) => (h ? `\`${h.slice(0, 12)}\`` : "—");

export function headerMarkdown(h: ReportHeader): string[] {
  const b = h.baseModel;
  const out = ["## What was compared", ""];
  out.push(
    `- Experiment: ${md(h.experiment.name)} (\`${h.experiment.id}\`), created ${h.experiment.createdAt}, report ${h.experiment.reportAt}, took ${formatDuration(h.experiment.durationS)}`,
  );
  out.push(
    `- Base model: ${md(b.ref)} (${b.source}${b.revision ? `, revision asked ${md(b.revision)}` : ""}); resolved revision ${md(b.resolvedRevision ?? "—")}; weights sha256 ${short(b.weightsSha256)}`,
  );
  if (h.adapters.length) {
    out.push("", "| adapter | method | sha256 | train job | |", "|---|---|---|---|---|");
    for (const a of h.adapters)
      out.push(
        `| seed ${a.seed} · epoch ${a.epoch} | ${a.method ?? "—"} | ${short(a.sha256)} | ${a.trainJobId ? `\`${a.trainJobId.slice(0, 8)}\`` : "—"} | ${[a.selected ? "selected" : "", a.onTest ? "on test" : ""].filter(Boolean).join(", ")} |`,
      );
    out.push("");
  }
  const d = h.dataset;
  out.push(
    d
      ? `- SFT dataset: ${md(d.name)}: ${d.samples} samples over ${d.tasks} train tasks (${d.oracleSamples} from the reference oracle)${d.quality && d.quality !== "verified" ? `, ${DATA_QUALITY_LABELS[d.quality]}` : ""}, ${d.supervisedTokens ?? "—"} supervised tokens, hash ${short(d.hash)}`
      : "- SFT dataset: none recorded",
  );
  out.push(`- Training: ${md(trainingText(h.training))}`);
  const s = h.split;
  if (s)
    out.push(
      `- Split: ${md(s.name)} (seed ${s.seed}): train ${s.counts.train.tasks} tasks / ${s.counts.train.groups} groups, dev ${s.counts.dev.tasks} / ${s.counts.dev.groups}, test ${s.counts.test.tasks} / ${s.counts.test.groups}; manifest ${short(s.manifestHash)}`,
    );
  const repeats = h.answerRepeats ? answerRepeatsText(h.answerRepeats) : null;
  if (repeats) out.push(`- **${md(repeats)}**`);
  out.push(`- Jobs: ${h.jobs.map((j) => `${j.count} ${j.type}`).join(", ") || "none"}`);
  out.push(
    ...(h.hardware.length
      ? h.hardware.map((a) => `- Hardware: ${md(hardwareText(a))}`)
      : ["- Hardware: no agent recorded"]),
  );
  return [...out, ""];
}

export function checksMarkdown(r: ExperimentReport): string[] {
  const out: string[] = [];
  const c = r.contamination;
  out.push(
    `- Protocol: ${r.protocol.ok ? "identical for every compared evaluation" : `MISMATCH (${r.protocol.mismatches.map((m) => m.field).join(", ")})`}`,
  );
  const p = r.protocol.protocol;
  if (p)
    out.push(
      `- Protocol recorded: ${md(p.backend)} ${md(p.backendVersion)} · ${md(p.device)} · ${md(p.dtype)} · decoding from the ${p.generationConfig} · max ${p.maxNewTokens} new tokens · grader ${md(p.graderVersion)}`,
    );
  out.push(
    `- Contamination (test vs SFT data and dev): ${c.testTasksWithLeak} of ${c.testTasks} test tasks overlap; exact ${c.exactPairs}, normalized ${c.normalizedPairs}, ${c.n}-gram ${c.ngramPairs} pairs`,
  );
  const dc = r.devContamination;
  if (dc)
    out.push(
      `- Dev contamination (dev vs SFT data): ${dc.testTasksWithLeak} of ${dc.testTasks} dev tasks overlap; exact ${dc.exactPairs}, normalized ${dc.normalizedPairs}, ${dc.n}-gram ${dc.ngramPairs} pairs`,
    );
  if (r.answerContamination)
    for (const l of answerContaminationLines(r.answerContamination))
      out.push(`- ${l.contaminated ? "**CONTAMINATED** " : ""}${md(l.text)}`);
  for (const e of r.excluded ?? [])
    out.push(
      `- Excluded (${e.split}, ${md(e.comparison)}): ${md(e.note)}${e.count ? ` — ${e.taskIds.map((t) => `\`${md(t)}\``).join(", ")}` : ""}`,
    );
  if (r.noVerdict) {
    out.push("- No verdict (grader infra errors after the bounded retries), per model:");
    for (const c of r.noVerdict.counts) out.push(`  - ${c.split} · ${c.modelKey}: ${noVerdictText(c)}`);
    for (const a of r.noVerdict.asymmetry)
      out.push(`  - ${a.split} · base vs ${a.otherKey}: ${a.flagged ? "**" : ""}${md(a.note)}${a.flagged ? "**" : ""}`);
  }
  if (r.parsing) {
    out.push(`- Answers parsed${parsingWarns(r.parsing) ? " (**answers lost to the format**)" : ""}, per model:`);
    for (const p of r.parsing) out.push(`  - ${p.split} · ${p.modelKey}: ${md(parsingText(p))}`);
  }
  if (r.isolation) {
    const inProc = r.isolation.filter((i) => i.inProcess > 0);
    if (inProc.length === 0) out.push("- Grading isolation: all verdicts from the isolated judge");
    else {
      out.push(`- Grading isolation: ${md(ISOLATION_NOTE)}`);
      for (const i of r.isolation) out.push(`  - ${i.split} · ${i.modelKey}: ${isolationText(i)}`);
    }
  }
  return out;
}
