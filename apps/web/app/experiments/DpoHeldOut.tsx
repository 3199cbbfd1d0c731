"use client";

import type { DpoRun } from "../_lib/dpo-curves";

// Each DPO epoch scored on held-out dev pairs (a score job after the run): the Δ log-prob of the
// chosen and rejected answers against the run's start. The train pairs' Δ shows what the loss pushed
// on; this shows whether the chosen answers stayed likely on prompts the run never trained on, and
// warns when they fell.

const nats = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(3)}`;

export function HeldOutScores({ runs }: { runs: DpoRun[] }) {
  const withScores = runs.filter((r) => r.heldOut);
  if (withScores.length === 0) return null;
  const warnings = withScores.flatMap((r) =>
    (r.heldOut?.epochs ?? []).flatMap((e) => (e.warning ? [`seed ${r.seed}, epoch ${e.epoch}: ${e.warning}`] : [])),
  );
  return (
    <div data-testid="dpo-heldout" className="mb-4 max-w-3xl text-xs">
      <h3 className="mb-1 font-medium text-zinc-500">
        Δ log-prob vs the start on held-out dev pairs (near-miss pairs of dev tasks, never trained on; nats per answer)
      </h3>
      <table className="min-w-full text-left">
        <thead>
          <tr className="text-[11px] uppercase tracking-wide text-zinc-500">
            <th className="px-2 py-1">seed</th>
            <th className="px-2 py-1">epoch</th>
            <th className="px-2 py-1 text-right">Δ chosen</th>
            <th className="px-2 py-1 text-right">Δ rejected</th>
            <th className="px-2 py-1 text-right">pairs whose margin grew</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-zinc-100">
          {withScores.flatMap((r) =>
            r.heldOut?.epochs?.length
              ? r.heldOut.epochs.map((e) => (
                  <tr key={`${r.key}:${e.epoch}`}>
                    <td className="px-2 py-1">{r.seed}</td>
                    <td className="px-2 py-1">{e.epoch}</td>
                    <td
                      className={`px-2 py-1 text-right tabular-nums ${e.chosenLogpDelta < 0 ? "text-amber-700" : ""}`}
                    >
                      {nats(e.chosenLogpDelta)}
                    </td>
                    <td className="px-2 py-1 text-right tabular-nums">{nats(e.rejectedLogpDelta)}</td>
                    <td className="px-2 py-1 text-right tabular-nums">{(100 * e.marginGainRate).toFixed(0)}%</td>
                  </tr>
                ))
              : [
                  <tr key={r.key}>
                    <td className="px-2 py-1">{r.seed}</td>
                    <td colSpan={4} className="px-2 py-1 text-zinc-500">
                      {r.heldOut?.note ?? `scoring ${r.heldOut?.pairs ?? 0} held-out pairs…`}
                    </td>
                  </tr>,
                ],
          )}
        </tbody>
      </table>
      {warnings.length ? (
        <ul className="mt-1 text-amber-700" data-testid="dpo-heldout-warning">
          {warnings.map((w) => (
            <li key={w}>{w}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
