"use client";

import { useQuery } from "@tanstack/react-query";
import { z } from "zod";

// GET /api/health is plain HTTP (load balancers and `npm start` probe it), not a tRPC procedure.
const LocalAgent = z.discriminatedUnion("state", [
  z.object({ state: z.literal("off") }),
  z.object({ state: z.literal("running"), restarts: z.number() }),
  z.object({ state: z.literal("restarting"), restarts: z.number(), retryInS: z.number() }),
]);
export const Health = z.object({
  status: z.string(),
  database: z.string(),
  agentsOnline: z.number(),
  // Absent from a server older than this page: treated as "off".
  localAgent: LocalAgent.default({ state: "off" }),
});
export type Health = z.infer<typeof Health>;

export function useHealth(refetchInterval = 5_000) {
  return useQuery({
    queryKey: ["agentlab", "health"],
    refetchInterval,
    queryFn: async (): Promise<Health> => {
      const res = await fetch("/api/health", { headers: { accept: "application/json" } });
      // 503 still carries the JSON body that says what is degraded.
      return Health.parse(await res.json());
    },
  });
}
