import type { Capabilities } from "@agentlab/core/protocol/capabilities";
import { megabytes } from "../../client/format";

// One-line summaries of what an agent reported at connect, for the agents table.

export function gpuSummary(caps: Pick<Capabilities, "gpus"> | null): string {
  if (!caps || caps.gpus.length === 0) return "none";
  const groups = new Map<string, number>();
  for (const g of caps.gpus) {
    const key = `${g.name} · ${megabytes(g.memoryMb)}`;
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  return [...groups].map(([k, n]) => `${n}× ${k}`).join(", ");
}

export function runtimeSummary(caps: Pick<Capabilities, "python" | "torch" | "cuda"> | null): string {
  if (!caps) return "—";
  const parts = [
    caps.python ? `py ${caps.python}` : "no python",
    caps.torch ? `torch ${caps.torch}` : null,
    caps.cuda ? `CUDA ${caps.cuda}` : null,
  ];
  return parts.filter(Boolean).join(" · ");
}

/** Online agents whose last beat is older than this look stuck even before the lease reaper acts. */
export const STALE_HEARTBEAT_MS = 30_000;

export function isStale(lastHeartbeatAt: string | Date | null, online: boolean, now: number): boolean {
  if (!online || !lastHeartbeatAt) return false;
  return now - new Date(lastHeartbeatAt).getTime() > STALE_HEARTBEAT_MS;
}
