// Pure helpers about jobs shared by the list, the overview and the detail page.

/** What a job's row says it is doing: the command line for shell jobs, else nothing. */
export function jobSummary(job: { type: string; payload: unknown }): string {
  const argv = (job.payload as { argv?: unknown } | null)?.argv;
  if (job.type === "shell" && Array.isArray(argv)) return argv.map(String).join(" ");
  return "";
}

/** What an agent must offer to claim the job, e.g. "labels a100 · 1 GPU ≥ 40 GiB"; "" when any agent will do. */
export function requirementSummary(job: {
  requiredLabels: string[];
  minGpus: number;
  minGpuMemoryMb: number;
  sandbox: string | null;
}): string {
  const parts: string[] = [];
  if (job.requiredLabels.length) parts.push(`labels ${job.requiredLabels.join(", ")}`);
  if (job.minGpus)
    parts.push(
      `${job.minGpus} GPU${job.minGpus > 1 ? "s" : ""}${job.minGpuMemoryMb ? ` ≥ ${Math.round(job.minGpuMemoryMb / 1024)} GiB` : ""}`,
    );
  else if (job.minGpuMemoryMb) parts.push(`GPU ≥ ${Math.round(job.minGpuMemoryMb / 1024)} GiB`);
  if (job.sandbox) parts.push(`sandbox ${job.sandbox}`);
  return parts.join(" · ");
}
