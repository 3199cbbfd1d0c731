import { formatDeltaPp, formatMde, formatPct, type ExperimentReport, type PooledResult } from "@agentlab/core";

// The report's statistics: the summary (dev descriptive, test the one inference) and the seeds.
// Every figure comes from the stored report; nothing is recomputed in the browser.

const ci = (i: { value: number; lo: number; hi: number } | null) => (i ? `${formatPct(i.value)} [${formatPct(i.lo)}, ${formatPct(i.hi)}]` : "—");
const pp = (x: number) => `${x >= 0 ? "+" : ""}${(100 * x).toFixed(1)} pp`;

export function SummaryTable({ report }: { report: ExperimentReport }) {
  const [dev, test] = report.summary;
  const t = test.stats;
  return (
    <>
      <table className="w-full text-sm" data-testid="summary-table">
        <thead>
          <tr><th className="text-left">split</th><th>Base</th><th>SFT</th><th>Δ</th><th>improved / regressed</th><th>test</th><th>p</th><th>MDE (80% power)</th><th></th></tr>
        </thead>
        <tbody>
          <tr>
            <td>dev</td><td>{formatPct(dev.base)}</td><td>{dev.sft === null ? "—" : formatPct(dev.sft)}</td><td>{dev.delta === null ? "—" : pp(dev.delta)}</td>
            <td>{dev.sft === null ? "—" : `${dev.improved} / ${dev.regressed}`}</td><td>—</td><td>—</td><td>—</td><td className="text-amber-800">{dev.note}</td>
          </tr>
          <tr>
            <td>test</td><td>{ci(test.base)}</td><td>{ci(test.sft)}</td><td>{t ? formatDeltaPp(t.delta, t.ci) : "—"}</td>
            <td>{t ? `${test.improved} / ${test.regressed}` : "—"}</td><td>{t?.test ?? "—"}</td><td>{t ? t.p.toPrecision(3) : "—"}</td><td>{t ? formatMde(t) : "—"}</td>
            <td className={test.significant ? "font-semibold text-emerald-800" : ""}>{test.label}</td>
          </tr>
        </tbody>
      </table>
      {t && (
        <p className="mt-2 text-xs text-zinc-600">
          {t.n} paired tasks in {t.groups} source groups. Interval: {t.ciMethod}.{" "}
          {!t.reliable && <strong className="text-amber-800">Only {t.groups} source groups: the interval is unreliable. </strong>}
          {report.methods.significance}
        </p>
      )}
    </>
  );
}

export function SeedsTable({ seeds }: { seeds: PooledResult }) {
  const p = seeds.pooled;
  return (
    <>
      <table className="w-full text-sm" data-testid="seeds-table">
        <thead>
          <tr><th className="text-left">seed</th><th>SFT</th><th>Δ</th><th>improved / regressed</th><th>test</th><th>p</th><th>MDE</th><th>significant</th></tr>
        </thead>
        <tbody>
          {seeds.perSeed.map(({ seed, stats: s }) => (
            <tr key={seed}>
              <td>seed {seed}</td><td>{formatPct(s.treatedPass)}</td><td>{formatDeltaPp(s.delta, s.ci)}</td><td>{s.improved} / {s.regressed}</td>
              <td>{s.test}</td><td>{s.p.toPrecision(3)}</td><td>{formatMde(s)}</td><td>{s.significant ? "yes" : "no"}</td>
            </tr>
          ))}
          <tr className="font-medium">
            <td>pooled ({p.seeds})</td><td>{formatPct(p.treatedPass)}</td><td>{formatDeltaPp(p.delta, p.ci)}</td><td /><td>{p.test}</td><td>{p.p.toPrecision(3)}</td><td>{formatMde(p)}</td><td>{p.significant ? "yes" : "no"}</td>
          </tr>
        </tbody>
      </table>
      <p className="mt-2 text-xs text-zinc-600">
        Per-seed Δ: sd {(100 * seeds.spread.sd).toFixed(1)} pp, min {pp(seeds.spread.min)}, max {pp(seeds.spread.max)}. {seeds.method}
      </p>
    </>
  );
}
