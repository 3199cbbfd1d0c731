"use client";

import Link from "next/link";
import { DATA_QUALITY_LABELS, type StudyReport } from "@agentlab/core";
import { interval, pct, pp, pValue } from "../../client/format";
import { Section } from "../_components/PageHeader";
import { StateBadge } from "../_components/StatusBadges";
import { Table, type Column } from "../_components/Table";

// A study as the study page and its share link show it: its arms' columns, the test-read ledger,
// and the report: the arms × metrics matrix, the Holm-adjusted primary contrasts (non-significant
// reads as such), the A/A arm and token matching.

type ArmRow = { name: string; role: string; factor: string | null; state: string };

/** The arm columns every view of a study shows (the study page adds each arm's progress). */
export const armColumns = <A extends ArmRow>(): Column<A>[] => [
  { key: "name", header: "Arm", cell: (a) => a.name },
  { key: "role", header: "Role", cell: (a) => a.role },
  { key: "factor", header: "Factor", cell: (a) => a.factor ?? "—" },
  { key: "state", header: "State", cell: (a) => <StateBadge state={a.state} /> },
];

/** The study's one test claim, and how often its split's test set has been read in all (once reported). */
export function StudyLedger({
  claim,
  arms,
  report,
}: {
  claim: { claimedAt: Date | string; models: string[] } | null;
  arms: number;
  report: StudyReport | null;
}) {
  return (
    <Section title="Test-read ledger" className="mb-4">
      <p className="px-4 py-3 text-sm">
        {claim
          ? `Claimed once at ${new Date(claim.claimedAt).toISOString()} for ${claim.models.length} models over ${arms} arms.`
          : "Not claimed yet: the test set is read once, after every arm's dev selection is frozen."}
        {report ? ` The split's test set has been read ${report.testClaim.readsOfSplit} time(s) in all.` : ""}
      </p>
    </Section>
  );
}

/** The report's sections; `linkArms`: each arm links to its experiment (inside the workspace only). */
export function StudyReportSections({ r, linkArms = false }: { r: StudyReport; linkArms?: boolean }) {
  return (
    <>
      <Section title="Arms × metrics" className="mb-4">
        <Table
          bare
          rows={r.arms}
          rowKey={(a) => a.name}
          columns={[
            {
              key: "arm",
              header: "Arm",
              cell: (a) => (linkArms ? <Link href={`/experiments/${a.experimentId}`}>{a.name}</Link> : a.name),
            },
            {
              key: "factor",
              header: "Factor",
              cell: (a) => (a.role === "aa" ? "A/A (other seeds)" : (a.factor ?? "reference")),
            },
            { key: "dev", header: "Dev pass@1 (selection, optimistic)", cell: (a) => pct(a.dev) },
            { key: "test", header: "Test pass@1", cell: (a) => pct(a.test) },
            { key: "tokens", header: "Supervised tokens", cell: (a) => a.supervisedTokens ?? "—" },
            {
              key: "quality",
              header: "SFT answers",
              cell: (a) => (a.dataQuality ? DATA_QUALITY_LABELS[a.dataQuality] : "—"),
            },
            { key: "samples", header: "Samples", cell: (a) => a.trainSamples ?? "—" },
            { key: "tasks", header: "Train tasks", cell: (a) => a.trainTasks ?? "—" },
            { key: "seeds", header: "Seeds", cell: (a) => a.seeds.join(", ") },
            { key: "steps", header: "Steps per seed", cell: (a) => a.steps.map((n) => n ?? "—").join(", ") },
          ]}
        />
      </Section>
      <Section title={`Primary contrasts (Holm over ${r.contrasts.length}, α = ${r.alpha})`} className="mb-4">
        <Table
          bare
          rows={r.contrasts}
          rowKey={(c) => c.arms.join(" vs ")}
          columns={[
            { key: "arms", header: "Treated − control", cell: (c) => `${c.arms[0]} − ${c.arms[1]}` },
            { key: "delta", header: "Δ test", cell: (c) => `${pp(c.delta)} ${interval(c.interval[0], c.interval[1])}` },
            { key: "p", header: "p", cell: (c) => pValue(c.p) },
            { key: "holm", header: "p (Holm)", cell: (c) => pValue(c.p_holm) },
            {
              key: "sig",
              header: "Result",
              cell: (c) =>
                c.significant
                  ? "significant"
                  : c.scope === "given-seeds"
                    ? "not significant (fewer than 3 seeds: holds given these seeds only)"
                    : "not significant",
            },
            { key: "units", header: "Tasks / units", cell: (c) => `${c.n} / ${c.units}` },
          ]}
        />
        <p className="px-4 py-2 text-xs text-zinc-500">{r.methods.holm}</p>
      </Section>
      {r.aa ? (
        <Section title="A/A arm (the empirical null)" className="mb-4">
          <p className="px-4 py-3 text-sm">
            {r.aa.arms[0]} − {r.aa.arms[1]}: Δ {pp(r.aa.delta)} {interval(r.aa.interval[0], r.aa.interval[1])}, p{" "}
            {pValue(r.aa.p)} (the same recipe under other seeds; not adjusted, not a primary contrast)
          </p>
        </Section>
      ) : null}
      <Section title="Token matching" className="mb-4">
        <p className="px-4 py-3 text-sm">
          {r.tokens.matching
            ? `Demanded within ±${(100 * r.tokens.matching.tolerance).toFixed(2)}%; `
            : "Not demanded by the definition; "}
          largest gap to the reference:{" "}
          {r.tokens.maxRelativeGap === null ? "—" : `${(100 * r.tokens.maxRelativeGap).toFixed(2)}%`}.
        </p>
      </Section>
    </>
  );
}
