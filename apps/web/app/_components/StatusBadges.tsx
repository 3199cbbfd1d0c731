import { Badge, type Tone } from "./Badge";

// Badges for the run states and grader verdicts that several pages show (collections, experiments).

const stateTone: Record<string, Tone> = {
  queued: "neutral",
  running: "blue",
  grading: "violet",
  done: "green",
  stopped_budget: "amber",
  failed: "red",
  canceled: "neutral",
};
export const StateBadge = ({ state }: { state: string }) => (
  <Badge tone={stateTone[state] ?? "neutral"} dot pulse={state === "running" || state === "grading"}>
    {state.replace("_", " ")}
  </Badge>
);

const verdictTone: Record<string, Tone> = {
  pass: "green",
  fail_syntax: "amber",
  fail_public: "red",
  fail_hidden: "red",
  tampered: "violet",
  infra_error: "neutral",
};
export const VerdictBadge = ({ verdict }: { verdict: string | null }) => (
  <Badge tone={verdict ? (verdictTone[verdict] ?? "red") : "neutral"}>{verdict ?? "ungraded"}</Badge>
);

export const OracleBadge = () => (
  <Badge tone="amber" title="Answers come from the task's reference solution, not from a model">
    reference oracle
  </Badge>
);
