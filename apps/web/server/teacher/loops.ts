import type { Services } from "../services";
import { syncGrades } from "./grading";
import { syncReplays } from "./datasets";
import { syncTokenizeJobs } from "./token-counts";

/** One pass of every teacher bookkeeping step; also run on demand by the routers' reads. */
export async function syncTeacher(services: Services): Promise<void> {
  await syncGrades(services);
  await syncReplays(services);
  await syncTokenizeJobs(services);
}

/** Background loop for the server's main (wired by app startup); returns a stopper. */
export function startTeacherLoops(services: Services, intervalMs = 2000): () => void {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    syncTeacher(services)
      .catch((err: unknown) => services.log.error({ err }, "teacher sync failed"))
      .finally(() => (busy = false));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
