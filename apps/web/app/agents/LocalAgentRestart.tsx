"use client";

import { useMutation } from "@tanstack/react-query";
import { Button } from "../_components/Button";
import { ErrorBox } from "../_components/ErrorBox";
import { useHealth } from "../_lib/health";
import { useTRPC } from "../_lib/trpc";

/** For admins, where this server supervises a local agent: its state, restarts, and a Restart action. */
export function LocalAgentRestart() {
  const trpc = useTRPC();
  const health = useHealth();
  const restart = useMutation(trpc.agents.restartLocal.mutationOptions({ onSettled: () => void health.refetch() }));
  const local = health.data?.localAgent;
  if (!local || local.state === "off") return null;
  return (
    <span className="flex items-center gap-2 text-xs text-zinc-600" data-testid="local-agent">
      local agent {local.state === "running" ? "running" : `restarting in ${local.retryInS} s`}
      {local.restarts ? ` · restarted ${local.restarts}×` : ""}
      <Button
        size="sm"
        disabled={restart.isPending}
        onClick={() =>
          // Its running jobs are handed back and run again (elsewhere or after the restart).
          window.confirm("Restart the local agent? Its running jobs are handed back and requeued.") && restart.mutate()
        }
      >
        Restart local agent
      </Button>
      <ErrorBox error={restart.error} title="Not restarted" />
    </span>
  );
}
