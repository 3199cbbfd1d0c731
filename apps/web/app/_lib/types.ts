import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../../server/routers";

// What procedures return as the browser sees it (no transformer: dates arrive as ISO strings).
export type RouterOutputs = inferRouterOutputs<AppRouter>;

export type AgentRow = RouterOutputs["agents"]["list"][number];
export type JobRow = RouterOutputs["jobs"]["list"][number];
export type JobDetail = RouterOutputs["jobs"]["byId"];
export type AttemptRow = JobDetail["attempts"][number];
export type ArtifactRow = JobDetail["artifacts"][number];
export type LogRow = RouterOutputs["jobs"]["logs"][number];
