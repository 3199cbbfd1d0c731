import type { Services } from "../services";

/**
 * Removes unfinished uploads nobody wrote to within AGENTLAB_UPLOAD_EXPIRY_MS, at start and then
 * every tenth of that period (at most hourly), so abandoned partials cannot fill the disk.
 * Returns a stopper.
 */
export function startUploadSweep(services: Pick<Services, "artifacts" | "env" | "log">): () => void {
  const expiry = services.env.AGENTLAB_UPLOAD_EXPIRY_MS;
  const sweep = () =>
    services.artifacts
      .sweepPartials(expiry)
      .then((n) => (n ? services.log.info({ removed: n }, "expired partial uploads removed") : undefined))
      .catch((err: unknown) => services.log.error({ err }, "partial upload sweep failed"));
  void sweep();
  const timer = setInterval(sweep, Math.min(3600_000, Math.max(1000, Math.floor(expiry / 10))));
  timer.unref();
  return () => clearInterval(timer);
}
