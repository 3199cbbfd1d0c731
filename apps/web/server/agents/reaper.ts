import { reapJobs } from "@agentlab/db";
import type { Services } from "../services";
import { startLoop, type Loop } from "../events/loop";

// The reaper: expired leases become agent_lost (requeued while attempts remain), overlong runs time
// out. Lease expiry is time, not an event, so this loop is the clock (every third of a lease TTL).
// Leases in the table were renewed by agents talking to the previous server process; while this
// one was down nobody could renew them. So the reaper first waits at least one lease TTL (and
// never less than 10 s: an agent retries its connection every ≤ 4 s, then says hello and renews
// its leases at once), and only leases nobody came back for expire. Revoked agents' leases are
// released on purpose and reaped at once.
export function startReaper(services: Services): Loop {
  const { env, db, queue } = services;
  const reapFrom = Date.now() + Math.max(env.AGENTLAB_LEASE_TTL_MS, 10_000);
  return startLoop({
    name: "reaper",
    log: services.log,
    everyMs: Math.max(250, Math.floor(env.AGENTLAB_LEASE_TTL_MS / 3)),
    async run() {
      const reaped = await reapJobs(db, 30, { onlyRevokedAgents: Date.now() < reapFrom });
      if (reaped.length === 0) return;
      services.log.warn({ reaped: reaped.map(({ ended: _, ...r }) => r) }, "reaped jobs with expired leases");
      for (const r of reaped) if (r.ended) queue.events.publish(r.ended);
      if (reaped.some((r) => r.state === "queued")) queue.jobsAvailable();
    },
  });
}
