import { router } from "../trpc/init";
import { agentsRouter } from "./agents";
import { authRouter } from "./auth";
import { usersRouter } from "./users";
import { tokensRouter } from "./api-tokens";
import { jobsRouter } from "./jobs";
import { providersRouter } from "./providers";
import { collectionsRouter } from "./collections";
import { datasetsRouter } from "./datasets";
import { poolsRouter } from "./pools";
import { tasksRouter } from "./tasks";
import { splitsRouter } from "./splits";
import { experimentsRouter } from "./experiments";
import { reportsRouter } from "./reports";
import { shareRouter } from "./share";
import { auditsRouter } from "./audits";
import { runsRouter } from "./runs";
import { pairsRouter } from "./pairs";
import { dpoRouter } from "./dpo";
import { grpoRouter } from "./grpo";
import { modelsRouter } from "./models";
import { studiesRouter } from "./studies";
import { episodesRouter } from "./episodes";

// One router per domain (apps/web/server/routers/<domain>.ts).
export const appRouter = router({
  agents: agentsRouter,
  auth: authRouter,
  users: usersRouter,
  tokens: tokensRouter,
  jobs: jobsRouter,
  providers: providersRouter,
  collections: collectionsRouter,
  datasets: datasetsRouter,
  pools: poolsRouter,
  tasks: tasksRouter,
  splits: splitsRouter,
  experiments: experimentsRouter,
  reports: reportsRouter,
  share: shareRouter,
  audits: auditsRouter,
  runs: runsRouter,
  pairs: pairsRouter,
  dpo: dpoRouter,
  grpo: grpoRouter,
  models: modelsRouter,
  studies: studiesRouter,
  episodes: episodesRouter,
});

export type AppRouter = typeof appRouter;
