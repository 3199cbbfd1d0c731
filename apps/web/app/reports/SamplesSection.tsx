import { formatMde, formatPct, type SamplesSection as Samples } from "@agentlab/core";
import { Cell, Explain, StatTable } from "./StatsTables";

// The multi-sample part of a report: pass@k per split and model, the test comparison's
// minimum detectable effect with n samples next to the one-sample projection, and the histogram
// of per-task pass-rate changes. Everything comes from the stored report.

const pp = (x: number) => `${x >= 0 ? "+" : ""}${(100 * x).toFixed(1)} pp`;

export function SamplesSection({ samples: s }: { samples: Samples }) {
  const ks = [...new Set(s.passAtK.flatMap((t) => t.rows.map((r) => r.k)))].sort((a, b) => a - b);
  const most = Math.max(1, ...(s.histogram?.bins.map((b) => b.count) ?? [1]));
  return (
    <div className="space-y-4" data-testid="samples-section">
      <p className="text-sm text-zinc-700">
        {s.samples} answers per task, sampled at temperature {s.decoding.temperature}, top_p {s.decoding.topP}, seed{" "}
        {s.decoding.seed}. Each task&apos;s outcome is its pass rate; the summary&apos;s test and interval compare those
        rates.
      </p>
      <StatTable testId="pass-at-k" head={["split", "model", ...ks.map((k) => `pass@${k}`), "tasks"]}>
        {s.passAtK.map((t) => (
          <tr key={`${t.split}:${t.modelKey}`}>
            <Cell left>{t.split}</Cell>
            <Cell left>{t.label}</Cell>
            {ks.map((k) => {
              const r = t.rows.find((x) => x.k === k);
              return <Cell key={k}>{r ? formatPct(r.value) : "—"}</Cell>;
            })}
            <Cell>{t.rows[0]?.tasks ?? 0}</Cell>
          </tr>
        ))}
      </StatTable>
      {s.mde && (
        <p className="text-sm" data-testid="samples-mde">
          Minimum detectable effect on test (80% power): <strong>{formatMde(s.mde)}</strong> with {s.samples} samples
          per task; {s.mde.mdeOneSample === null ? "—" : formatMde({ mde: s.mde.mdeOneSample })} projected for one
          sample per task.
        </p>
      )}
      {s.histogram && (
        <div>
          <p className="mb-1 text-xs font-semibold text-zinc-600">
            Per-task pass-rate change on test, {s.histogram.comparison}
          </p>
          <div className="flex h-32 items-end gap-1" data-testid="rate-histogram" role="img" aria-label="histogram">
            {s.histogram.bins.map((b) => (
              <div key={b.change} className="flex w-12 flex-col items-center justify-end gap-0.5">
                <span className="text-[10px] tabular-nums text-zinc-600">{b.count}</span>
                <div
                  className={b.change > 0 ? "w-8 bg-emerald-500" : b.change < 0 ? "w-8 bg-red-400" : "w-8 bg-zinc-400"}
                  style={{ height: `${(80 * b.count) / most}px` }}
                  title={`${pp(b.change)}: ${b.count} tasks`}
                />
                <span className="text-[10px] tabular-nums text-zinc-500">{pp(b.change)}</span>
              </div>
            ))}
          </div>
        </div>
      )}
      <Explain>
        <p>{s.methods.passAtK}</p>
        <p>{s.methods.rates}</p>
        <p>{s.methods.mde}</p>
      </Explain>
    </div>
  );
}
