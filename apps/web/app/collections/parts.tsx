import { Badge, type Tone } from "../_components/Badge";
import { ProgressBar } from "../_components/ProgressBar";

// Small pieces shared by the collection list and detail pages.

export const usd = (n: number): string => `$${n < 1 ? n.toFixed(4) : n.toFixed(2)}`;

const stateTone: Record<string, Tone> = { queued: "neutral", running: "blue", grading: "violet", done: "green", stopped_budget: "amber", failed: "red", canceled: "neutral" };
export const StateBadge = ({ state }: { state: string }) => <Badge tone={stateTone[state] ?? "neutral"} dot pulse={state === "running" || state === "grading"}>{state.replace("_", " ")}</Badge>;

const verdictTone: Record<string, Tone> = { pass: "green", fail_syntax: "amber", fail_public: "red", fail_hidden: "red", tampered: "violet", infra_error: "neutral" };
export const VerdictBadge = ({ verdict }: { verdict: string | null }) => <Badge tone={verdict ? (verdictTone[verdict] ?? "red") : "neutral"}>{verdict ?? "ungraded"}</Badge>;

export const OracleBadge = () => <Badge tone="amber" title="Answers come from the task's reference solution, not from a model">reference oracle</Badge>;

export function CollectionBars({ c }: { c: { samplesDone: number; samplesFailed: number; samplesTotal: number; verdicts?: Record<string, number> } }) {
  const total = Math.max(1, c.samplesTotal);
  const graded = c.verdicts ? Object.entries(c.verdicts).filter(([k]) => k !== "ungraded").reduce((a, [, v]) => a + v, 0) : null;
  return (
    <div className="space-y-1.5">
      <ProgressBar value={(c.samplesDone + c.samplesFailed) / total} label={`collected ${c.samplesDone}/${c.samplesTotal}${c.samplesFailed ? ` (${c.samplesFailed} failed)` : ""}`} />
      {graded !== null ? <ProgressBar value={graded / Math.max(1, c.samplesDone)} label={`graded ${graded}/${c.samplesDone}`} /> : null}
    </div>
  );
}
