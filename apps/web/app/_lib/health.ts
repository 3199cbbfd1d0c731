"use client";

import { useQuery } from "@tanstack/react-query";
import { z } from "zod";

// GET /api/health is plain HTTP (load balancers and `npm start` probe it), not a tRPC procedure.
export const Health = z.object({ status: z.string(), database: z.string(), agentsOnline: z.number() });
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
