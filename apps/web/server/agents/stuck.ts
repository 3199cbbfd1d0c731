import { Capabilities, requirementText, whyUnclaimable, type AgentOffer, type Unclaimable } from "@agentlab/core";
import { listAgents, queuedJobNeeds, type Db } from "@agentlab/db";

export type StuckGroup = { types: string; requires: string; count: number; oldestAt: Date; stuck: Unclaimable };

/**
 * The agents as the claim sees them: their registration (labels, the shell opt-in, GPUs capped by
 * the latest report), not what they report; capabilities that do not parse (an old agent) count as none.
 */
export async function agentOffers(db: Db): Promise<AgentOffer[]> {
  return (await listAgents(db)).map((a) => {
    const caps = Capabilities.safeParse(a.capabilities);
    const offered = caps.success
      ? {
          ...caps.data,
          labels: [],
          shellJobs: a.shellJobs && caps.data.shellJobs,
          gpus: caps.data.gpus
            .slice(0, a.gpuCount)
            .map((g) => ({ ...g, memoryMb: Math.min(g.memoryMb, a.gpuMemoryMb) })),
        }
      : null;
    return {
      name: a.name,
      online: a.online,
      revoked: a.revokedAt !== null,
      drain: a.drain,
      labels: a.labels,
      capabilities: offered,
    };
  });
}

/**
 * Queued jobs (of one experiment, one job, or all) that no online agent can claim, grouped by
 * their requirement, each with the reason and the fix. Empty when every queued job has someone.
 */
export async function explainStuck(
  db: Db,
  opts: { experimentId?: string; jobId?: string } = {},
): Promise<StuckGroup[]> {
  const [needs, agents] = await Promise.all([queuedJobNeeds(db, opts), agentOffers(db)]);
  const byReason = new Map<string, StuckGroup>();
  for (const n of needs) {
    const stuck = whyUnclaimable(n, agents);
    if (!stuck) continue;
    const key = `${stuck.reason}|${requirementText(n)}`;
    const g = byReason.get(key);
    if (g) {
      g.count += n.count;
      if (!g.types.split(", ").includes(n.type)) g.types += `, ${n.type}`;
      if (n.oldestAt < g.oldestAt) g.oldestAt = n.oldestAt;
    } else
      byReason.set(key, { types: n.type, requires: requirementText(n), count: n.count, oldestAt: n.oldestAt, stuck });
  }
  return [...byReason.values()].sort((a, b) => b.count - a.count);
}
