import type { Services } from "../services";
import { syncGrades } from "./grading";
import { syncReplays } from "./datasets";
import { syncTokenizeJobs } from "./token-counts";

/** One pass of every teacher bookkeeping step; run when a grade or tokenize job ends and by the slow sweep (background.ts). */
export async function syncTeacher(services: Services): Promise<void> {
  await syncGrades(services);
  await syncReplays(services);
  await syncTokenizeJobs(services);
}
