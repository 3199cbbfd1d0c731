"use client";

import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../_lib/trpc";

/**
 * "Why is it stuck": shown wherever queued jobs wait (experiment, overview, job page) when no
 * online agent can claim them, with the reason and the fix. Renders nothing otherwise.
 */
export function StuckBanner({
  experimentId,
  jobId,
  enabled = true,
}: {
  experimentId?: string;
  jobId?: string;
  enabled?: boolean;
}) {
  const trpc = useTRPC();
  const stuck = useQuery(
    trpc.agents.whyStuck.queryOptions({ experimentId, jobId }, { enabled, refetchInterval: 5_000 }),
  );
  const groups = stuck.data ?? [];
  if (!enabled || groups.length === 0) return null;
  return (
    <div
      role="alert"
      data-testid="stuck-banner"
      className="space-y-2 rounded-md border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900"
    >
      {groups.map((g) => (
        <div key={`${g.stuck.reason}|${g.requires}`}>
          <p>
            <span className="font-medium">Waiting, and nothing will pick it up: </span>
            {g.count} queued {g.types} job{g.count === 1 ? "" : "s"} — {g.stuck.reason}.
          </p>
          <p className="text-xs">
            <span className="font-medium">Fix: </span>
            {g.stuck.fix}. <span className="text-amber-700">Needs {g.requires}.</span>{" "}
            <Link className="underline" href="/agents">
              Agents
            </Link>
          </p>
        </div>
      ))}
    </div>
  );
}
