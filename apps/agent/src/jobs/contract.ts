import { checkJobResult, parseJobPayload, type JobType } from "@agentlab/core";
import type { JobHandler, TypedHandler } from "./types";

/**
 * A typed handler behind its type's contract (JOB_CONTRACTS in core): the payload is parsed before
 * the handler runs (a payload that breaks the contract is the sender's user_error), and a success's
 * result is parsed before it is sent (one that breaks it is this agent's fault: infra_error).
 */
export function contracted<T extends JobType>(type: T, handler: TypedHandler<T>): JobHandler {
  return async (ctx) => {
    const parsed = parseJobPayload(type, ctx.payload);
    if (!parsed.ok) return { reason: "user_error", error: parsed.error };
    const out = await handler(ctx, parsed.payload);
    if (out.reason !== "succeeded") return out;
    const checked = checkJobResult(type, out.result);
    if (!checked.ok) return { reason: "infra_error", error: checked.error };
    return { ...out, result: checked.result };
  };
}
