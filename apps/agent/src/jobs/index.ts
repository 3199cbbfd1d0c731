import { shellJob } from "./shell";
import type { JobHandler } from "./types";

// Job type → handler. A type missing here is refused by this agent as infra_error.
export function jobHandlers(opts: { graceMs: number }): Record<string, JobHandler> {
  return {
    shell: shellJob(opts.graceMs),
  };
}
