import type { ReactNode } from "react";

export type Tone = "neutral" | "blue" | "green" | "amber" | "red" | "violet";

const tones: Record<Tone, string> = {
  neutral: "bg-zinc-100 text-zinc-700 ring-zinc-200",
  blue: "bg-blue-50 text-blue-700 ring-blue-200",
  green: "bg-emerald-50 text-emerald-700 ring-emerald-200",
  amber: "bg-amber-50 text-amber-800 ring-amber-200",
  red: "bg-red-50 text-red-700 ring-red-200",
  violet: "bg-violet-50 text-violet-700 ring-violet-200",
};

const dots: Record<Tone, string> = {
  neutral: "bg-zinc-400",
  blue: "bg-blue-500",
  green: "bg-emerald-500",
  amber: "bg-amber-500",
  red: "bg-red-500",
  violet: "bg-violet-500",
};

export function Badge({
  tone = "neutral",
  dot = false,
  pulse = false,
  children,
  title,
}: {
  tone?: Tone;
  dot?: boolean;
  pulse?: boolean;
  children: ReactNode;
  title?: string;
}) {
  return (
    <span
      title={title}
      className={`inline-flex items-center gap-1.5 whitespace-nowrap rounded-md px-1.5 py-0.5 text-xs font-medium ring-1 ring-inset ${tones[tone]}`}
    >
      {dot ? <span className={`size-1.5 rounded-full ${dots[tone]} ${pulse ? "animate-pulse" : ""}`} /> : null}
      {children}
    </span>
  );
}

// One colour per state and reason across the app, so a glance at any table reads the same way.
const stateTones: Record<string, Tone> = {
  queued: "neutral",
  running: "blue",
  canceling: "amber",
  succeeded: "green",
  failed: "red",
  canceled: "neutral",
  // terminal reasons
  user_error: "red",
  agent_lost: "amber",
  timeout: "amber",
  infra_error: "violet",
  // grading verdicts (used by later pages)
  pass: "green",
  fail_syntax: "red",
  fail_public: "red",
  fail_hidden: "red",
  resource_limit: "amber",
  tampered: "violet",
};

export const toneFor = (state: string | null | undefined): Tone =>
  state ? (stateTones[state] ?? "neutral") : "neutral";

/** A job state, terminal reason or verdict, coloured consistently; live states pulse. */
export function StateBadge({ state, title }: { state: string | null | undefined; title?: string }) {
  if (!state) return <span className="text-zinc-400">—</span>;
  const live = state === "running" || state === "canceling";
  return (
    <Badge tone={toneFor(state)} dot pulse={live} title={title}>
      {state.replace(/_/g, " ")}
    </Badge>
  );
}
