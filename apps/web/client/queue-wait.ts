// One sentence for a queued job (db queueWaits), shared by the experiment page and the CLI.

type Wait = {
  ahead: number;
  fitting: { name: string }[];
  busy: { type: string; agentName: string }[];
  unfit: { name: string; missing: string }[];
};

export function queueWaitText(w: Wait): string {
  if (w.fitting.length === 0) {
    const why = w.unfit.map((u) => `${u.name} lacks ${u.missing}`).join("; ");
    return `queued: no online agent can take it${why ? ` (${why})` : " (no agent online)"}`;
  }
  const parts = [`queued${w.ahead ? `, ${w.ahead} job${w.ahead === 1 ? "" : "s"} ahead` : ""}`];
  if (w.busy.length) parts.push(`behind ${w.busy.map((b) => `${b.type} on ${b.agentName}`).join(", ")}`);
  else parts.push(`next for ${w.fitting.map((a) => a.name).join(", ")}`);
  return parts.join(" · ");
}
