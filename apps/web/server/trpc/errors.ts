import { TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import { isDomainError, type DomainErrorCode } from "@agentlab/core";

// The one place domain error codes become tRPC (and so HTTP) codes.
const toTrpc: Record<DomainErrorCode, TRPC_ERROR_CODE_KEY> = {
  BAD_REQUEST: "BAD_REQUEST",
  UNAUTHORIZED: "UNAUTHORIZED",
  FORBIDDEN: "FORBIDDEN",
  NOT_FOUND: "NOT_FOUND",
  CONFLICT: "CONFLICT",
  PRECONDITION_FAILED: "PRECONDITION_FAILED",
  PAYLOAD_TOO_LARGE: "PAYLOAD_TOO_LARGE",
  TOO_MANY_REQUESTS: "TOO_MANY_REQUESTS",
  INTERNAL: "INTERNAL_SERVER_ERROR",
};

export function toTRPCError(err: unknown): TRPCError {
  if (err instanceof TRPCError) return err;
  if (isDomainError(err)) return new TRPCError({ code: toTrpc[err.code], message: err.message, cause: err });
  // Anything else is a bug or an outage: its message may hold internals, so it is masked.
  return new TRPCError({
    code: "INTERNAL_SERVER_ERROR",
    message: "internal error",
    cause: err instanceof Error ? err : undefined,
  });
}
