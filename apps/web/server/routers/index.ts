import { router } from "../trpc/init";
import { agentsRouter } from "./agents";
import { jobsRouter } from "./jobs";

// One router per domain (apps/web/server/routers/<domain>.ts).
export const appRouter = router({
  agents: agentsRouter,
  jobs: jobsRouter,
});

export type AppRouter = typeof appRouter;
