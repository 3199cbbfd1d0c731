import { ProgressBar } from "../_components/ProgressBar";

// The collected and graded progress of one collection, on the collection list and detail pages.
export function CollectionBars({
  c,
}: {
  c: { samplesDone: number; samplesFailed: number; samplesTotal: number; verdicts?: Record<string, number> };
}) {
  const total = Math.max(1, c.samplesTotal);
  const graded = c.verdicts
    ? Object.entries(c.verdicts)
        .filter(([k]) => k !== "ungraded")
        .reduce((a, [, v]) => a + v, 0)
    : null;
  return (
    <div className="space-y-1.5">
      <ProgressBar
        value={(c.samplesDone + c.samplesFailed) / total}
        label={`collected ${c.samplesDone}/${c.samplesTotal}${c.samplesFailed ? ` (${c.samplesFailed} failed)` : ""}`}
      />
      {graded !== null ? (
        <ProgressBar value={graded / Math.max(1, c.samplesDone)} label={`graded ${graded}/${c.samplesDone}`} />
      ) : null}
    </div>
  );
}
