import type { Logger } from "pino";

type Failing = { failRunning(why: string): void };
type Emitter = Pick<NodeJS.Process, "on" | "off">;

/**
 * A rejection nobody awaited (a background upload, a stray timer's promise) would end the agent
 * process by default, and with it every job on the box and the agent itself (the local agent of
 * `npm start` is not restarted). Instead it is logged and fails the running jobs with its message:
 * it cannot be pinned on one of them, and what it left half-done is theirs.
 */
export function failJobsOnUnhandledRejections(proc: Emitter, supervisor: Failing, log: Logger): () => void {
  const onRejection = (reason: unknown) => {
    const why = reason instanceof Error ? reason.message : String(reason);
    log.error({ err: reason }, "unhandled rejection in the agent: failing the running jobs, the agent keeps running");
    supervisor.failRunning(`unhandled rejection: ${why}`);
  };
  proc.on("unhandledRejection", onRejection);
  return () => proc.off("unhandledRejection", onRejection);
}
