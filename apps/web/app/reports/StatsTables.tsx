import type { ReactNode } from "react";
import { formatDeltaPp, formatMde, formatPct, type ExperimentReport, type PooledResult } from "@agentlab/core";
import { UnitNote } from "./UnitNote";
import { unitText } from "./unit-text";

// The report's statistics: the summary (dev descriptive, test the one inference), the dev
// selection and the seeds, each with a short note on what its numbers mean. Every figure comes
// from the stored report; nothing is recomputed in the browser.

const ci = (i: { value: number; lo: number; hi: number } | null) =>
  i ? `${formatPct(i.value)} [${formatPct(i.lo)}, ${formatPct(i.hi)}]` : "—";
const pp = (x: number) => `${x >= 0 ? "+" : ""}${(100 * x).toFixed(1)} pp`;

const TH = "whitespace-nowrap px-3 py-2 text-[11px] font-semibold uppercase tracking-wide text-zinc-500";
const TD = "px-3 py-1.5 tabular-nums";
const align = (left: boolean | undefined, i = 1) => (left || i === 0 ? "text-left" : "text-right");

/** A column heading; `left` for a text column (numbers are right-aligned, the first column is left). */
export type Head = string | { label: string; left: true };

/** A styled table: a header row and rows of cells, right-aligned numbers, the first column left. */
export function StatTable({ head, children, testId }: { head: Head[]; children: ReactNode; testId?: string }) {
  return (
    <div className="overflow-x-auto rounded-lg border border-zinc-200">
      <table className="w-full border-collapse text-[13px]" data-testid={testId}>
        <thead>
          <tr className="border-b border-zinc-200 bg-zinc-50/80">
            {head.map((h, i) => (
              <th key={i} scope="col" className={`${TH} ${align(typeof h !== "string", i)}`}>
                {typeof h === "string" ? h : h.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-100">{children}</tbody>
      </table>
    </div>
  );
}

/** A cell; `left` for text, `wrap` for long text (numbers stay on one line). */
export const Cell = ({
  children,
  className = "",
  left,
  wrap,
}: {
  children?: ReactNode;
  className?: string;
  left?: boolean;
  wrap?: boolean;
}) => (
  <td className={`${TD} ${align(left)} ${wrap ? "min-w-48" : "whitespace-nowrap"} ${className} first:text-left`}>
    {children}
  </td>
);

/** A figure's explanation, under it. */
export const Explain = ({ children }: { children: ReactNode }) => (
  <div className="mt-2 space-y-1 text-xs leading-relaxed text-zinc-600">{children}</div>
);

export function SummaryTable({ report }: { report: ExperimentReport }) {
  const [dev, test] = report.summary;
  const t = test.stats;
  return (
    <>
      <StatTable
        testId="summary-table"
        head={[
          "split",
          "Base",
          "SFT",
          "Δ",
          "improved / regressed",
          { label: "test", left: true },
          "p",
          "MDE (80% power)",
          { label: "", left: true },
        ]}
      >
        <tr>
          <Cell>dev</Cell>
          <Cell>{formatPct(dev.base)}</Cell>
          <Cell>{dev.sft === null ? "—" : formatPct(dev.sft)}</Cell>
          <Cell>{dev.delta === null ? "—" : pp(dev.delta)}</Cell>
          <Cell>{dev.sft === null ? "—" : `${dev.improved} / ${dev.regressed}`}</Cell>
          <Cell left>—</Cell>
          <Cell>—</Cell>
          <Cell>—</Cell>
          <Cell left wrap className="text-amber-800">
            {dev.note}
          </Cell>
        </tr>
        <tr>
          <Cell>test</Cell>
          <Cell>{ci(test.base)}</Cell>
          <Cell>{ci(test.sft)}</Cell>
          <Cell>{t ? formatDeltaPp(t.delta, t.ci) : "—"}</Cell>
          <Cell>{t ? `${test.improved} / ${test.regressed}` : "—"}</Cell>
          <Cell left>{t?.test ?? "—"}</Cell>
          <Cell>{t ? t.p.toPrecision(3) : "—"}</Cell>
          <Cell>{t ? formatMde(t) : "—"}</Cell>
          <Cell left wrap className={test.significant ? "font-semibold text-emerald-800" : ""}>
            {test.label}
            {t && (
              <>
                <br />
                <UnitNote stats={t} />
              </>
            )}
          </Cell>
        </tr>
      </StatTable>
      <Explain>
        {t && (
          <p>
            {t.n} paired tasks; {unitText(t)}. Interval: {t.ciMethod}.{" "}
            {!t.reliable && (
              <strong className="text-amber-800">
                Only {t.units ?? t.groups} independent units: the interval is unreliable.{" "}
              </strong>
            )}
            {report.methods.significance}
          </p>
        )}
        <p>
          <strong>pass@1</strong>: the share of tasks whose single answer passes every test layer.{" "}
          <strong>Improved</strong>: tasks the base fails and the adapter passes; <strong>regressed</strong>: tasks the
          base passes and the adapter fails; Δ is the difference of the two pass rates in percentage points. The{" "}
          <strong>interval</strong> is the 95% range for Δ (and for each pass rate), resampling whole source groups so
          related tasks are not counted as independent. <strong>p</strong> is the chance of a difference at least this
          large if the adapter changed nothing ({report.methods.test}). The <strong>MDE</strong> is the smallest true Δ
          this many tasks would detect 80% of the time: a smaller real effect can hide behind &quot;not
          significant&quot;. Dev has no p or interval: the adapter was chosen on dev, so its dev numbers are optimistic.
        </p>
      </Explain>
    </>
  );
}

export function SelectionTable({ report }: { report: ExperimentReport }) {
  return (
    <>
      <StatTable testId="selection-table" head={["model", "dev pass@1", "passed / n", "selected"]}>
        {report.selection.table.map((r) => (
          <tr key={r.label} className={r.selected ? "bg-emerald-50/60 font-medium" : ""}>
            <Cell>{r.label}</Cell>
            <Cell>{formatPct(r.pass1)}</Cell>
            <Cell>
              {r.passed} / {r.n}
            </Cell>
            <Cell>{r.selected ? "✔" : ""}</Cell>
          </tr>
        ))}
      </StatTable>
      <Explain>
        <p>{report.selection.rule}</p>
      </Explain>
    </>
  );
}

export function SeedsTable({ seeds }: { seeds: PooledResult }) {
  const p = seeds.pooled;
  return (
    <>
      <StatTable
        testId="seeds-table"
        head={["seed", "SFT", "Δ", "improved / regressed", { label: "test", left: true }, "p", "MDE", "significant"]}
      >
        {seeds.perSeed.map(({ seed, stats: s }) => (
          <tr key={seed}>
            <Cell>seed {seed}</Cell>
            <Cell>{formatPct(s.treatedPass)}</Cell>
            <Cell>{formatDeltaPp(s.delta, s.ci)}</Cell>
            <Cell>
              {s.improved} / {s.regressed}
            </Cell>
            <Cell left>{s.test}</Cell>
            <Cell>{s.p.toPrecision(3)}</Cell>
            <Cell>{formatMde(s)}</Cell>
            <Cell>{s.significant ? "yes" : "no"}</Cell>
          </tr>
        ))}
        <tr className="bg-zinc-50 font-medium">
          <Cell>pooled ({p.seeds})</Cell>
          <Cell>{formatPct(p.treatedPass)}</Cell>
          <Cell>{formatDeltaPp(p.delta, p.ci)}</Cell>
          <Cell />
          <Cell left>{p.test}</Cell>
          <Cell>{p.p.toPrecision(3)}</Cell>
          <Cell>{formatMde(p)}</Cell>
          <Cell>{p.significant ? "yes" : "no"}</Cell>
        </tr>
      </StatTable>
      <p className="mt-1">
        <UnitNote stats={p} />
      </p>
      <Explain>
        <p>
          Each seed trained its own adapter; its row compares that seed&apos;s best dev epoch with the base on test. The
          spread says how much of a result is the luck of one seed.
        </p>
        <p>
          Per-seed Δ: sd {(100 * seeds.spread.sd).toFixed(1)} pp, min {pp(seeds.spread.min)}, max {pp(seeds.spread.max)}
          . {seeds.method}
        </p>
      </Explain>
    </>
  );
}
